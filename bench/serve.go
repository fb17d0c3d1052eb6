package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// This file measures the serving layer, agentserver and its protocols:
// the CPU of a run served over each protocol against Agent.Stream alone
// (the contestants below, opt-in), the memory of an open stream
// (-serve-load), and the latency the layer adds to each chunk of text
// (-serve-latency).

func init() {
	register(contestant{key: "session-stream", name: "toolnexus session.Stream (memory store)", setup: setupSessionStream, optIn: true})
	register(contestant{key: "served-aisdk", name: "toolnexus agentserver: AI SDK stream over HTTP", setup: setupServed("aisdk"), optIn: true})
	register(contestant{key: "served-agui", name: "toolnexus agentserver: AG-UI over HTTP", setup: setupServed("agui"), optIn: true})
	register(contestant{key: "served-direct", name: "toolnexus agentserver: Submit and its log read in process (no HTTP)", setup: setupServedDirect, optIn: true})
}

// setupSessionStream is Agent.Stream through session.Stream: the run
// loads a thread (new each loop) from a memory store and saves it.
func setupSessionStream(url string, sc scenario) (func(context.Context) error, func(), error) {
	client, err := newClient(url, nil)
	if err != nil {
		return nil, nil, err
	}
	a, err := newBenchAgent(client, toolset.MustNew(toolsetTools(sc)...), sc, nil)
	if err != nil {
		return nil, nil, err
	}
	store := session.NewMemory()
	var n atomic.Int64
	input := genai.NewContentFromText(prompt, genai.RoleUser)
	return func(ctx context.Context) error {
		id := "t" + strconv.FormatInt(n.Add(1), 10)
		for ev, err := range session.Stream(ctx, a, store, id, input) {
			if err != nil {
				return err
			}
			if ev.Kind == agent.EventDone {
				return checkAnswer(ev.Result.Text)
			}
		}
		return errors.New("session-stream: no EventDone")
	}, nil, nil
}

// setupServed serves the agent with agentserver, in this process, over
// protocol ("aisdk" or "agui"), and each loop posts a new thread's
// question and reads the whole stream with a Go HTTP client.
func setupServed(protocol string) func(url string, sc scenario) (func(context.Context) error, func(), error) {
	return func(url string, sc scenario) (func(context.Context) error, func(), error) {
		client, err := newClient(url, nil)
		if err != nil {
			return nil, nil, err
		}
		a, err := newBenchAgent(client, toolset.MustNew(toolsetTools(sc)...), sc, nil)
		if err != nil {
			return nil, nil, err
		}
		srv, hs, err := serveAgent(a)
		if err != nil {
			return nil, nil, err
		}
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		var n atomic.Int64
		loop := func(ctx context.Context) error {
			text, err := postQuestion(ctx, hc, hs.URL, protocol, "t"+strconv.FormatInt(n.Add(1), 10))
			if err != nil {
				return err
			}
			return checkAnswer(text)
		}
		cleanup := func() {
			srv.Close(context.Background())
			hs.Close()
			hc.CloseIdleConnections()
		}
		return loop, cleanup, nil
	}
}

// setupServedDirect runs each loop's question on a new thread with
// Server.Submit and reads the run's log to its end: the serving layer
// without HTTP and without a protocol.
func setupServedDirect(url string, sc scenario) (func(context.Context) error, func(), error) {
	client, err := newClient(url, nil)
	if err != nil {
		return nil, nil, err
	}
	a, err := newBenchAgent(client, toolset.MustNew(toolsetTools(sc)...), sc, nil)
	if err != nil {
		return nil, nil, err
	}
	srv, err := agentserver.New(unbounded(agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		return nil, nil, err
	}
	var n atomic.Int64
	return func(ctx context.Context) error {
		att, err := srv.Submit(ctx, "bench", agentserver.Request{Thread: "t" + strconv.FormatInt(n.Add(1), 10),
			Message: genai.NewContentFromText(prompt, genai.RoleUser)})
		if err != nil {
			return err
		}
		cur := att.Cursor
		defer cur.Close()
		for {
			rec, ok, err := cur.Next(ctx, time.Minute)
			if err != nil {
				return err
			}
			if ok && rec.Kind == agentserver.KindDone {
				return checkAnswer(rec.Done.Text)
			}
		}
	}, func() { srv.Close(context.Background()) }, nil
}

// unbounded turns off cfg's bounds of runs in flight and its per-user
// quotas: the benchmarks' runs are all one user's, as many at once and on
// as many threads as a benchmark asks for.
func unbounded(cfg agentserver.Config) agentserver.Config {
	cfg.MaxRuns, cfg.MaxRunsPerUser, cfg.MaxThreadsPerUser, cfg.MaxBytesPerUser = -1, -1, -1, -1
	return cfg
}

// serveAgent serves a on both protocols, on a loopback port.
func serveAgent(a *agent.Agent) (*agentserver.Server, *httptest.Server, error) {
	srv, err := agentserver.New(unbounded(agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/agui", agui.Handler(srv))
	mux.Handle("/api/chat", aisdk.Handler(srv))
	return srv, httptest.NewServer(mux), nil
}

// postQuestion posts the prompt on a new thread over protocol, reads the
// whole stream, and returns the answer's text.
func postQuestion(ctx context.Context, hc *http.Client, base, protocol, thread string) (string, error) {
	path, body := question(protocol, thread, prompt)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("%s: %s: %s", path, resp.Status, b)
	}
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		delta, ok := textDelta(sc.Bytes())
		if ok {
			text.WriteString(delta)
		}
	}
	return text.String(), sc.Err()
}

// question returns the path and the body of a request that asks text on
// a new thread over protocol ("aisdk" or "agui"). text must need no JSON
// escaping.
func question(protocol, thread, text string) (path, body string) {
	if protocol == "agui" {
		return "/agui", `{"threadId":"` + thread + `","runId":"r","messages":[{"id":"u","role":"user","content":"` + text + `"}]}`
	}
	return "/api/chat", `{"id":"` + thread + `","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
}

// textDelta returns the text of an SSE line that carries a piece of the
// answer: an AI SDK text-delta or an AG-UI TEXT_MESSAGE_CONTENT.
func textDelta(line []byte) (string, bool) {
	data, ok := bytes.CutPrefix(line, []byte("data: "))
	if !ok || !(bytes.Contains(data, []byte(`"type":"text-delta"`)) || bytes.Contains(data, []byte(`"type":"TEXT_MESSAGE_CONTENT"`))) {
		return "", false
	}
	var ev struct {
		Delta string `json:"delta"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return "", false
	}
	return ev.Delta, true
}

// runServeLoad measures the memory of served runs: n runs held in flight
// at their tool call, first without streams (started with Server.Submit),
// then with a stream open each (a client in another process, so that its
// memory is not counted), and prints what each run and each stream holds:
// live heap after a GC, plus goroutine stacks.
func runServeLoad(w io.Writer, n int) error {
	sc := scenarios[0] // two-call
	fake := newServer(sc)
	defer fake.Close()
	client, tr, err := newAgentClient(fake.URL())
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	held := &gate{} // holds the runs in their tool calls while memory is read
	a, err := newBenchAgent(client, held.toolset(sc), sc, nil)
	if err != nil {
		return err
	}
	srv, hs, err := serveAgent(a)
	if err != nil {
		return err
	}
	defer hs.Close()
	defer srv.Close(context.Background())

	// Warm up: one run of each kind, so that pools and caches are made.
	if _, err := postQuestion(context.Background(), http.DefaultClient, hs.URL, "aisdk", "warm"); err != nil {
		return err
	}
	http.DefaultClient.CloseIdleConnections()

	base := liveMemory()
	// n runs, no streams.
	held.arm(n * sc.calls)
	for i := range n {
		att, err := srv.Submit(context.Background(), "bench", agentserver.Request{Thread: "r" + strconv.Itoa(i), Message: genai.NewContentFromText(prompt, genai.RoleUser)})
		if err != nil {
			return err
		}
		att.Cursor.Close() // the runs are held in flight, unread
	}
	<-held.all
	runs := liveMemory()
	held.open()
	if err := waitIdle(srv, "bench", n, "r"); err != nil {
		return err
	}

	// n runs, each with its stream open to a client of another process.
	base2 := liveMemory()
	held.arm(n * sc.calls)
	child := exec.Command(os.Args[0], "-serve-client", hs.URL, "-serve-client-n", strconv.Itoa(n))
	child.Stderr = os.Stderr
	var out bytes.Buffer
	child.Stdout = &out
	if err := child.Start(); err != nil {
		return err
	}
	<-held.all
	streams := liveMemory()
	held.open()
	if err := child.Wait(); err != nil {
		return fmt.Errorf("the client process: %v: %s", err, out.String())
	}
	if strings.TrimSpace(out.String()) != strconv.Itoa(n) {
		return fmt.Errorf("the client process read %s answers, want %d", strings.TrimSpace(out.String()), n)
	}

	perRun := (runs.total() - base.total()) / float64(n)
	perStream := (streams.total() - base2.total()) / float64(n)
	fmt.Fprintf(w, "\n### Memory of served runs and streams\n\n%d runs held in flight at their tool calls (two-call scenario); live heap after a GC, plus goroutine stacks.\n\n", n)
	fmt.Fprintf(w, "| measure | heap | stacks | total | goroutines |\n|---|--:|--:|--:|--:|\n")
	fmt.Fprintf(w, "| per run in flight, no stream | %.1f KiB | %.1f KiB | %.1f KiB | %.1f |\n",
		(runs.heap-base.heap)/float64(n)/1024, (runs.stacks-base.stacks)/float64(n)/1024, perRun/1024, (runs.goroutines-base.goroutines)/float64(n))
	fmt.Fprintf(w, "| per run in flight with its stream open | %.1f KiB | %.1f KiB | %.1f KiB | %.1f |\n",
		(streams.heap-base2.heap)/float64(n)/1024, (streams.stacks-base2.stacks)/float64(n)/1024, perStream/1024, (streams.goroutines-base2.goroutines)/float64(n))
	fmt.Fprintf(w, "| **the stream's own** (the difference) | %.1f KiB | %.1f KiB | **%.1f KiB** | %.1f |\n",
		((streams.heap-base2.heap)-(runs.heap-base.heap))/float64(n)/1024,
		((streams.stacks-base2.stacks)-(runs.stacks-base.stacks))/float64(n)/1024, (perStream-perRun)/1024,
		((streams.goroutines-base2.goroutines)-(runs.goroutines-base.goroutines))/float64(n))
	return nil
}

// runServeCPU serves the agent over protocol in this process, and has a
// client in another process hold loops conversations, one after the
// other, on new threads. Under callgrind, which follows this process
// only, the instructions counted are the server's: the fake model's, the
// loop's and the serving layer's, as for the in-process contestants,
// without a client's.
func runServeCPU(w io.Writer, protocol string, loops int) error {
	sc := scenarios[0] // two-call
	fake := newServer(sc)
	defer fake.Close()
	client, err := newClient(fake.URL(), nil)
	if err != nil {
		return err
	}
	a, err := newBenchAgent(client, toolset.MustNew(toolsetTools(sc)...), sc, nil)
	if err != nil {
		return err
	}
	srv, hs, err := serveAgent(a)
	if err != nil {
		return err
	}
	defer hs.Close()
	defer srv.Close(context.Background())
	child := exec.Command(os.Args[0], "-serve-client", hs.URL, "-serve-client-n", strconv.Itoa(loops), "-serve-client-seq", protocol)
	child.Stderr = os.Stderr
	out, err := child.Output()
	if err != nil {
		return fmt.Errorf("the client process: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(loops) {
		return fmt.Errorf("the client process read %s answers, want %d", got, loops)
	}
	if got := fake.answers.Load(); got != int64(loops) {
		return fmt.Errorf("%d answers served, want %d", got, loops)
	}
	fmt.Fprintf(w, "served %d conversations over %s\n", loops, protocol)
	return fake.Err()
}

// runServeClient is the client process of runServeLoad and runServeCPU:
// it holds n conversations, at once or, when seq names a protocol, one
// after the other over it, reads each stream to its end, and prints how
// many answers it read.
func runServeClient(url string, n int, seq string) error {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = n
	hc := &http.Client{Transport: tr}
	if seq != "" {
		for i := range n {
			text, err := postQuestion(context.Background(), hc, url, seq, "q"+strconv.Itoa(i))
			if err == nil {
				err = checkAnswer(text)
			}
			if err != nil {
				return err
			}
		}
		fmt.Println(n)
		return nil
	}
	var wg sync.WaitGroup
	var ok atomic.Int64
	var firstErr atomic.Value
	for i := range n {
		wg.Go(func() {
			text, err := postQuestion(context.Background(), hc, url, "aisdk", "s"+strconv.Itoa(i))
			if err == nil {
				err = checkAnswer(text)
			}
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			ok.Add(1)
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	fmt.Println(ok.Load())
	return nil
}

// waitIdle waits until the runs of threads prefix0… are over.
func waitIdle(srv *agentserver.Server, user string, n int, prefix string) error {
	for i := range n {
		for {
			_, err := srv.Current(context.Background(), user, prefix+strconv.Itoa(i))
			if errors.Is(err, agentserver.ErrNotFound) {
				break
			}
			if err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// gcs is how many collections liveMemory runs first: each may halve the
// stacks that use less than a quarter of their size.
var gcs = 2

// memory is what the process holds live.
type memory struct{ heap, stacks, goroutines float64 }

func (m memory) total() float64 { return m.heap + m.stacks }

func liveMemory() memory {
	for range gcs {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{heap: float64(ms.HeapAlloc), stacks: float64(ms.StackInuse), goroutines: float64(runtime.NumGoroutine())}
}

// stampModels is a model whose answer streams chunks pieces of text, one
// every interval, each stamped with the time the loop receives it: the
// moment a chunk reaches the server.
type stampModels struct {
	chunks   int
	interval time.Duration
}

func (m stampModels) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("stampModels: streams only")
}

func (m stampModels) GenerateContentStream(ctx context.Context, _ string, _ []*genai.Content, _ *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		t := time.NewTicker(m.interval)
		defer t.Stop()
		for i := range m.chunks {
			select {
			case <-t.C:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
			c := &genai.Candidate{Content: &genai.Content{Role: genai.RoleModel,
				Parts: []*genai.Part{{Text: strconv.FormatInt(time.Now().UnixNano(), 10) + ";"}}}}
			if i == m.chunks-1 {
				c.FinishReason = genai.FinishReasonStop
			}
			if !yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}}, nil) {
				return
			}
		}
	}
}

// latencies appends, for each stamp in text, the time since it.
func latencies(out []time.Duration, text string, now time.Time) []time.Duration {
	for _, s := range strings.Split(strings.TrimSuffix(text, ";"), ";") {
		if ns, err := strconv.ParseInt(s, 10, 64); err == nil {
			out = append(out, now.Sub(time.Unix(0, ns)))
		}
	}
	return out
}

// runServeLatency measures the latency from a chunk reaching the server
// (the loop receives it from the model) to its text reaching the
// consumer: Agent.Stream's own consumer, and a client reading each
// protocol's stream over loopback HTTP. The difference is what the
// serving layer adds.
func runServeLatency(w io.Writer, chunks int, interval time.Duration) error {
	a, err := agent.New(agent.Config{Models: stampModels{chunks, interval}, Model: benchModel})
	if err != nil {
		return err
	}
	srv, hs, err := serveAgent(a)
	if err != nil {
		return err
	}
	defer hs.Close()
	defer srv.Close(context.Background())
	contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}

	measure := map[string][]time.Duration{}
	for ev, err := range a.Stream(context.Background(), contents) {
		if err != nil {
			return err
		}
		if ev.Kind == agent.EventText {
			measure["stream"] = latencies(measure["stream"], ev.Text, time.Now())
		}
	}
	for _, protocol := range []string{"aisdk", "agui"} {
		path, body := question(protocol, "lat-"+protocol, "go")
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if delta, ok := textDelta(sc.Bytes()); ok {
				measure[protocol] = latencies(measure[protocol], delta, time.Now())
			}
		}
		resp.Body.Close()
	}
	fmt.Fprintf(w, "\n### Latency a chunk of text takes to reach the consumer\n\n%d chunks, one every %v; from the loop receiving the chunk to the consumer having its text.\n\n", chunks, interval)
	fmt.Fprintf(w, "| consumer | p50 | p99 | added p50 | added p99 |\n|---|--:|--:|--:|--:|\n")
	pct := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	base50, base99 := pct(measure["stream"], 0.5), pct(measure["stream"], 0.99)
	for _, k := range []string{"stream", "aisdk", "agui"} {
		ds := measure[k]
		if len(ds) != chunks {
			return fmt.Errorf("%s: %d chunks measured, want %d", k, len(ds), chunks)
		}
		p50, p99 := pct(ds, 0.5), pct(ds, 0.99)
		name := map[string]string{"stream": "Agent.Stream's consumer", "aisdk": "AI SDK client over HTTP", "agui": "AG-UI client over HTTP"}[k]
		fmt.Fprintf(w, "| %s | %v | %v | %v | %v |\n", name, p50.Round(time.Microsecond/10), p99.Round(time.Microsecond/10),
			(p50 - base50).Round(time.Microsecond/10), (p99 - base99).Round(time.Microsecond/10))
	}
	return nil
}
