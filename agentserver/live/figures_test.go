package live_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// TestFigures measures what BENCHMARKS.md reports of the route (section
// "Voice sessions served to browsers"): LIVE_FIGURES=1 runs it, without
// -race. Each figure is the route's pipeline (a browser's websocket, the
// route, geminilive, genai's Live client, the fake) against genai's Live
// client alone on the same fake, in the same process.
func TestFigures(t *testing.T) {
	if os.Getenv("LIVE_FIGURES") != "1" {
		t.Skip("LIVE_FIGURES=1 measures the figures of BENCHMARKS.md")
	}
	e := newEnv(t, setup{live: func(c *live.Config) { c.MaxSessionsPerUser, c.MaxSessions = -1, -1 }})
	chunkOut := make([]byte, 4800) // 100 ms at 24 kHz
	// Every text turn is answered by one chunk stamped with the time the
	// fake made it; "many" by 600 chunks (a minute of speech).
	minute := make([]*genai.LiveServerMessage, 600)
	for i := range minute {
		minute[i] = geminitest.LiveModelAudio(chunkOut)
	}
	e.model.SetLiveReplyFunc(func(m *geminitest.LiveMessage) *geminitest.LiveReply {
		if m.RealtimeInput == nil || m.RealtimeInput.Text == "" {
			return nil
		}
		if m.RealtimeInput.Text == "many" {
			return geminitest.LiveTurn(minute...)
		}
		c := make([]byte, 4800)
		binary.LittleEndian.PutUint64(c, uint64(time.Now().UnixNano()))
		return geminitest.LiveTurn(geminitest.LiveModelAudio(c))
	})
	client, err := genai.NewClient(t.Context(), e.model.LiveClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	raw := func() *genai.Session {
		s, err := client.Live.Connect(t.Context(), model, &genai.LiveConnectConfig{ResponseModalities: []genai.Modality{genai.ModalityAudio}})
		if err != nil {
			t.Fatal(err)
		}
		s.Receive() // setupComplete, again
		return s
	}
	const turns, warm = 2000, 200
	// Latency: the chunk's stamp to its arrival, a turn of each in turn
	// (after warm ones), so that both see the same machine.
	rawLat := make([]time.Duration, 0, turns)
	routeLat := make([]time.Duration, 0, turns)
	rs := raw()
	b := e.open(t, "ann", "lat")
	for i := range turns + warm {
		rs.SendRealtimeInput(genai.LiveRealtimeInput{Text: "hi"})
		for {
			msg, err := rs.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if sc := msg.ServerContent; sc != nil && sc.ModelTurn != nil && i >= warm {
				rawLat = append(rawLat, time.Since(time.Unix(0, int64(binary.LittleEndian.Uint64(sc.ModelTurn.Parts[0].InlineData.Data)))))
			}
			if msg.ServerContent != nil && msg.ServerContent.TurnComplete {
				break
			}
		}
		b.ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"text","text":"hi"}`))
		for {
			f := b.next()
			if f.err != nil {
				t.Fatal(f.err)
			}
			if f.kind == websocket.BinaryMessage && i >= warm {
				routeLat = append(routeLat, time.Since(time.Unix(0, int64(binary.LittleEndian.Uint64(f.data)))))
			} else if f.kind == websocket.TextMessage && strings.Contains(string(f.data), `"turn_complete"`) {
				break
			}
		}
	}
	p := func(d []time.Duration, q float64) time.Duration {
		slices.Sort(d)
		return d[int(q*float64(len(d)-1))]
	}
	fmt.Printf("latency of a chunk, %d turns: genai alone p50 %v p99 %v; through the route p50 %v p99 %v; added p50 %v p99 %v\n", turns,
		p(rawLat, .5), p(rawLat, .99), p(routeLat, .5), p(routeLat, .99), p(routeLat, .5)-p(rawLat, .5), p(routeLat, .99)-p(rawLat, .99))

	// CPU per minute of two-way audio: 600 chunks of 100 ms each way.
	chunkIn := make([]byte, 3200)
	const minutes = 20
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	for range minutes {
		for range 600 {
			rs.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: chunkIn}})
		}
		rs.SendRealtimeInput(genai.LiveRealtimeInput{Text: "many"})
		for {
			msg, err := rs.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if msg.ServerContent != nil && msg.ServerContent.TurnComplete {
				break
			}
		}
	}
	rawCPU := (cpu() - c0) / minutes
	c0 = cpu()
	for range minutes {
		for range 600 {
			b.ws.WriteMessage(websocket.BinaryMessage, chunkIn)
		}
		b.ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"text","text":"many"}`))
		b.until("turn_complete")
	}
	routeCPU := (cpu() - c0) / minutes
	fmt.Printf("CPU per minute of two-way audio: genai alone %v, through the route %v, added %v (%.2f%% of a core)\n",
		rawCPU, routeCPU, routeCPU-rawCPU, 100*float64(routeCPU-rawCPU)/float64(time.Minute))
	rs.Close()

	// Memory per session, 100 open at once (idle, after the setup).
	const n = 100
	mem := func() (uint64, int) {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc + ms.StackInuse, runtime.NumGoroutine()
	}
	m0, g0 := mem()
	raws := make([]*genai.Session, n)
	for i := range raws {
		raws[i] = raw()
	}
	m1, g1 := mem()
	for _, s := range raws {
		s.Close()
	}
	time.Sleep(time.Second) // the fake's side of the raw sessions ends
	m1b, g1b := mem()
	for i := range n {
		e.open(t, fmt.Sprintf("u%d", i), "mem")
	}
	m2, g2 := mem()
	perRaw, perRoute := (int64(m1)-int64(m0))/n, (int64(m2)-int64(m1b))/n
	g1, g2 = g1-g0, g2-g1b
	fmt.Printf("memory per session, %d open: genai alone %d B (%d goroutines, the fake's included); through the route %d B (%d goroutines, the test browser's included); added %d B\n",
		n, perRaw, g1/n, perRoute, g2/n, perRoute-perRaw)
}
