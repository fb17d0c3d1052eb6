package live_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.uber.org/goleak"
	"google.golang.org/genai"
)

const model = "gemini-2.5-flash-native-audio-preview-12-2025"

// hang bounds every wait of a test: reached, the test has hung.
const hang = 30 * time.Second

// env is a live route on the fake model, served over HTTP.
type env struct {
	model   *geminitest.Server
	srv     *agentserver.Server
	handler *live.Handler
	http    *httptest.Server
	// users see get_weather's calls: the user RunUser read in the tool's
	// context, for each call.
	users chan string
	// gate holds calls of get_weather for "Gate" until it is closed.
	gate chan struct{}
}

type setup struct {
	agent  func(*agent.Config)
	server func(*agentserver.Config)
	live   func(*live.Config)
}

// newEnv starts an env, closed when the test ends, which fails the test if
// the fake refused a message.
func newEnv(t *testing.T, s setup) *env {
	t.Helper()
	e := &env{model: geminitest.Start(t), users: make(chan string, 16), gate: make(chan struct{})}
	t.Cleanup(func() {
		for _, m := range e.model.LiveRejections() {
			t.Errorf("the fake refused live message #%d (rule %s): %d %s", m.Seq, m.Rejection.Rule, m.Rejection.Code, m.Rejection.Reason)
		}
	})
	client, err := genai.NewClient(t.Context(), e.model.LiveClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	weather := toolset.MustFunc("get_weather", "The weather in a city", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		e.users <- agentserver.RunUser(ctx)
		if in.City == "Gate" {
			<-e.gate // outlives its cancellation
		}
		return "sunny in " + in.City, nil
	})
	acfg := agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(weather)}
	if s.agent != nil {
		s.agent(&acfg)
	}
	a, err := agent.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler),
		Authenticate: func(r *http.Request) (string, error) {
			if u := r.URL.Query().Get("user"); u != "" {
				return u, nil
			}
			return "", errors.New("no user")
		}}
	if s.server != nil {
		s.server(&scfg)
	}
	e.srv, err = agentserver.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	lcfg := live.Config{Client: client}
	if s.live != nil {
		s.live(&lcfg)
	}
	e.handler, err = live.New(e.srv, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/live", e.handler)
	e.http = httptest.NewServer(mux)
	t.Cleanup(func() {
		select {
		case <-e.gate:
		default:
			close(e.gate)
		}
		if err := e.handler.Close(context.Background()); err != nil {
			t.Error(err)
		}
		e.http.Close()
		e.srv.Close(context.Background())
	})
	return e
}

// noLeaks checks, when the test's cleanups are done, that no goroutine
// is left.
func noLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, leakOptions...) })
}

// browser is a websocket client of the route: what the dev UI does.
type browser struct {
	t  *testing.T
	ws *websocket.Conn
	in chan frame
}

type frame struct {
	kind int
	data []byte
	err  error
}

// dial opens a session of user on thread, with extra headers.
func (e *env) dial(t *testing.T, user, thread string, header http.Header) (*browser, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(e.http.URL, "http") + "/live?thread=" + thread
	if user != "" {
		u += "&user=" + url.QueryEscape(user)
	}
	ws, resp, err := websocket.DefaultDialer.Dial(u, header)
	if err != nil {
		return nil, resp, err
	}
	b := &browser{t: t, ws: ws, in: make(chan frame, 1024)}
	go func() {
		defer close(b.in)
		for {
			kind, data, err := ws.ReadMessage()
			b.in <- frame{kind, data, err}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		ws.Close()
		for range b.in {
		}
	})
	return b, resp, nil
}

// open dials, failing the test on an error, and reads the ready message.
func (e *env) open(t *testing.T, user, thread string) *browser {
	t.Helper()
	b, _, err := e.dial(t, user, thread, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := b.until("ready"); m.Thread != thread || m.AudioIn != "audio/pcm;rate=16000" || m.AudioOut != "audio/pcm;rate=24000" {
		t.Fatalf("ready = %+v", m)
	}
	return b
}

func (b *browser) sendJSON(m map[string]any) {
	b.t.Helper()
	data, _ := json.Marshal(m)
	if err := b.ws.WriteMessage(websocket.TextMessage, data); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) sendAudio(pcm []byte) {
	b.t.Helper()
	if err := b.ws.WriteMessage(websocket.BinaryMessage, pcm); err != nil {
		b.t.Fatal(err)
	}
}

// next returns the next frame, failing the test on a hang.
func (b *browser) next() frame {
	b.t.Helper()
	select {
	case f, ok := <-b.in:
		if !ok {
			b.t.Fatal("the connection's frames ended")
		}
		return f
	case <-time.After(hang):
		b.t.Fatal("hung waiting for a frame")
	}
	panic("unreachable")
}

// until reads up to the JSON message of type typ, returning it; the audio
// on the way is counted in audio.
func (b *browser) until(typ string) live.Message {
	b.t.Helper()
	m, _ := b.untilAudio(typ)
	return m
}

// untilAudio reads up to the JSON message of type typ, and returns it with
// the audio bytes and the messages received before.
func (b *browser) untilAudio(typ string) (live.Message, [][]byte) {
	b.t.Helper()
	var audio [][]byte
	for {
		f := b.next()
		if f.err != nil {
			b.t.Fatalf("waiting for %q: %v", typ, f.err)
		}
		if f.kind == websocket.BinaryMessage {
			audio = append(audio, f.data)
			continue
		}
		var m live.Message
		if err := json.Unmarshal(f.data, &m); err != nil {
			b.t.Fatalf("a text frame that is not a message: %q", f.data)
		}
		if m.Type == typ {
			return m, audio
		}
	}
}

// closed reads up to the close frame, and returns it.
func (b *browser) closed() *websocket.CloseError {
	b.t.Helper()
	for {
		f := b.next()
		if f.err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(f.err, &ce) {
			b.t.Fatalf("the connection ended with %v, not a close frame", f.err)
		}
		return ce
	}
}

// pcm returns n samples of a 16 kHz tone, as 16-bit little-endian PCM.
func pcm(n int) []byte {
	out := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16((i%32)*1000-16000)))
	}
	return out
}
