package agentserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/internal/citest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.uber.org/goleak"
	"google.golang.org/genai"
)

// loadRuns is how many runs the load test serves at once in CI (without
// the race detector), and the benchmark every time: half over AG-UI,
// half over the AI SDK's protocol. README's test command serves a fifth
// of them, as the race detector does.
const loadRuns = 1000

// The load test: loadRuns streams open at once on one server (a fifth of
// them unless TOOLNEXUS_CI=1, and under the race detector), against the
// fake model, each run with two tool calls and an approval across two
// requests. Every run is saved exactly once and whole, no stream carries
// another run's events, and nothing is left running. How long it takes is
// BenchmarkLoad's to say: the test passes however slow the machine is.
func TestLoad(t *testing.T) {
	n := loadRuns / 5
	if citest.Enabled() && !raceEnabled {
		n = loadRuns
	}
	elapsed := serveLoad(t, n)
	t.Logf("%d runs, two requests each, in %v (GOMAXPROCS %d)", n, elapsed.Round(time.Millisecond), runtime.GOMAXPROCS(0))
}

// BenchmarkLoad serves loadRuns runs at once, as TestLoad does, per
// operation: its figures are in BENCHMARKS.md (Load).
//
//	go test ./agentserver -run '^$' -bench '^BenchmarkLoad$' -benchtime 3x
func BenchmarkLoad(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		total += serveLoad(b, loadRuns)
	}
	b.ReportMetric(float64(loadRuns)*float64(b.N)/total.Seconds(), "runs/s")
}

// serveLoad serves n runs at once (see TestLoad), checks what became of
// them, and returns how long the n runs took, from the first request to
// the last answer.
//
// The server's timeouts count wall time: a stream's write must end within
// WriteTimeout of the moment it is started. On a machine so busy that
// the process's goroutines wait that long for a CPU (seen at a load of 30
// on 2 cores: a stream's first write began 19 s after its deadline was
// set), a stream whose client reads is cut, and its client sees EOF. The
// test checks what n runs at once do, not how fast they go, so its
// server's timeouts are far longer than any run.
func serveLoad(tb testing.TB, n int) time.Duration {
	leaks := goleak.IgnoreCurrent()
	fakeModel := fake.NewServer()
	fakeModel.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		last := req.Contents[len(req.Contents)-1]
		if r := last.Parts[0].FunctionResponse; r != nil {
			return fake.Text(fmt.Sprintf("%v is sunny.", r.Response["result"])).WithTextChunk(5)
		}
		city := strings.TrimSuffix(strings.TrimPrefix(last.Parts[0].Text, "Weather in "), "?")
		return fake.Calls(fake.Call("get_weather", map[string]any{"city": city}), fake.Call("hold", map[string]any{"city": city}))
	})
	// hold returns once every run has its stream open: n streams at once.
	var holding sync.WaitGroup
	holding.Add(n)
	allIn := make(chan struct{})
	go func() { holding.Wait(); close(allIn) }()
	hold := toolset.MustFunc("hold", "Waits for the others", func(ctx context.Context, in cityIn) (string, error) {
		holding.Done()
		select {
		case <-allIn:
			return "held " + in.City, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	weather := toolset.MustFunc("get_weather", "Weather", func(ctx context.Context, in cityIn) (string, error) {
		return in.City, nil
	})
	// The model's transport must hold n requests at once.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = n
	cc := fakeModel.ClientConfig()
	cc.HTTPClient = &http.Client{Transport: tr}
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		tb.Fatal(err)
	}
	a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(weather, hold),
		NeedsApproval: func(c *genai.FunctionCall) bool { return c.Name == "get_weather" }})
	if err != nil {
		tb.Fatal(err)
	}
	store := &countingStore{Store: session.NewMemory()}
	// Every run is the anonymous user's: the bounds of runs in flight are
	// off, since this test measures the server at n runs at once.
	srv, err := agentserver.New(agentserver.Config{Agent: a, Store: store, Logger: slog.New(slog.DiscardHandler),
		MaxRuns: -1, MaxRunsPerUser: -1, WriteTimeout: time.Hour, BodyTimeout: time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/agui", agui.Handler(srv))
	mux.Handle("/api/chat", aisdk.Handler(srv))
	hs := httptest.NewUnstartedServer(mux)
	var serverLog syncBuffer
	hs.Config.ErrorLog = log.New(&serverLog, "", 0)
	hs.Start()
	ctr := http.DefaultTransport.(*http.Transport).Clone()
	ctr.MaxIdleConnsPerHost = n
	hc := &http.Client{Transport: ctr}

	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int32
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				err = loadAGUI(hc, hs.URL, i)
			} else {
				err = loadAISDK(hc, hs.URL, i)
			}
			if err != nil && failed.Add(1) <= 5 {
				errs <- fmt.Errorf("run %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	elapsed := time.Since(start)
	for err := range errs {
		tb.Error(err)
	}
	if failed.Load() > 0 {
		tb.Logf("%d runs failed; the HTTP server's log:\n%s", failed.Load(), serverLog.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		tb.Errorf("Close: %v", err)
	}
	hs.Close()
	hc.CloseIdleConnections()
	tr.CloseIdleConnections()
	fakeModel.Close()
	for _, rj := range fakeModel.Rejections() {
		tb.Errorf("the fake rejected request #%d: %s", rj.Seq, rj.Err.Message)
	}
	store.mu.Lock()
	if len(store.appends) != n {
		tb.Errorf("%d threads saved, want %d", len(store.appends), n)
	}
	for id, k := range store.appends {
		if k != 1 {
			tb.Errorf("%s saved %d times, want once", id, k)
		}
	}
	store.mu.Unlock()
	for i := range n {
		h, err := srv.History(context.Background(), "local", loadThread(i))
		if err != nil || len(h) != 4 || !strings.Contains(h[3].Parts[0].Text, loadCity(i)) {
			tb.Errorf("thread %d stored %d contents (%v)", i, len(h), err)
			break
		}
	}
	goleak.VerifyNone(tb, leaks)
	return elapsed
}

func loadCity(i int) string   { return fmt.Sprintf("C%04d", i) }
func loadThread(i int) string { return fmt.Sprintf("load-%d", i) }

// sse posts body and returns the stream's events, each decoded.
func sse(hc *http.Client, url string, body any) ([]map[string]any, []string, error) {
	b, _ := json.Marshal(body)
	resp, err := hc.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var events []map[string]any
	var raw []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		raw = append(raw, data)
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, nil, err
		}
		events = append(events, ev)
	}
	return events, raw, sc.Err()
}

// unmixed checks that a stream carries only its own run's calls, and no
// other run's city.
func unmixed(raw []string, runPrefix, city string) error {
	for _, r := range raw {
		if strings.Contains(r, "run_") && !strings.Contains(r, runPrefix) {
			return fmt.Errorf("an event of another run: %s", r)
		}
		for _, word := range strings.FieldsFunc(r, func(c rune) bool { return c == '"' || c == ' ' || c == '.' || c == ':' }) {
			if len(word) == 5 && word[0] == 'C' && strings.Trim(word[1:], "0123456789") == "" && word != city {
				return fmt.Errorf("another run's city %s in %s", word, r)
			}
		}
	}
	return nil
}

func loadAGUI(hc *http.Client, base string, i int) error {
	city, thread := loadCity(i), loadThread(i)
	msgs := []any{map[string]any{"id": "u", "role": "user", "content": "Weather in " + city + "?"}}
	events, raw, err := sse(hc, base+"/agui", map[string]any{"threadId": thread, "runId": "r1", "messages": msgs})
	if err != nil {
		return err
	}
	last := events[len(events)-1]
	outcome, _ := last["outcome"].(map[string]any)
	if last["type"] != "RUN_FINISHED" || outcome["type"] != "interrupt" {
		return fmt.Errorf("the first stream ended with %v", last)
	}
	interrupt := outcome["interrupts"].([]any)[0].(map[string]any)
	id := interrupt["id"].(string)
	run := id[:strings.Index(id, "-c")]
	if err := unmixed(raw, run, city); err != nil {
		return err
	}
	// The client's messages now end with the assistant's calls.
	msgs = append(msgs, map[string]any{"id": "a", "role": "assistant", "toolCalls": []any{map[string]any{"id": id, "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"city":"` + city + `"}`}}}})
	events, raw, err = sse(hc, base+"/agui", map[string]any{"threadId": thread, "runId": "r2", "messages": msgs,
		"resume": []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"approved": true}}}})
	if err != nil {
		return err
	}
	if err := unmixed(raw, run, city); err != nil {
		return err
	}
	return answered(events, "TEXT_MESSAGE_CONTENT", city, func(last map[string]any) bool { return last["type"] == "RUN_FINISHED" })
}

func loadAISDK(hc *http.Client, base string, i int) error {
	city, thread := loadCity(i), loadThread(i)
	msgs := []any{map[string]any{"id": "u", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "Weather in " + city + "?"}}}}
	events, raw, err := sse(hc, base+"/api/chat", map[string]any{"id": thread, "messages": msgs})
	if err != nil {
		return err
	}
	var id string
	for _, ev := range events {
		if ev["type"] == "tool-approval-request" {
			id = ev["approvalId"].(string)
		}
	}
	if id == "" || events[len(events)-1]["finishReason"] != "tool-calls" {
		return fmt.Errorf("the first stream asked for no approval: %v", raw)
	}
	run := id[:strings.Index(id, "-c")]
	if err := unmixed(raw, run, city); err != nil {
		return err
	}
	msgs = append(msgs, map[string]any{"id": "a", "role": "assistant", "parts": []any{map[string]any{"type": "tool-get_weather", "toolCallId": id,
		"state": "approval-responded", "input": map[string]any{"city": city}, "approval": map[string]any{"id": id, "approved": true}}}})
	events, raw, err = sse(hc, base+"/api/chat", map[string]any{"id": thread, "messages": msgs})
	if err != nil {
		return err
	}
	if err := unmixed(raw, run, city); err != nil {
		return err
	}
	return answered(events, "text-delta", city, func(last map[string]any) bool { return last["finishReason"] == "stop" })
}

// answered checks that a stream's text (its events of type delta) names
// city, and that its last event ends the run.
func answered(events []map[string]any, delta, city string, ends func(map[string]any) bool) error {
	var text strings.Builder
	for _, ev := range events {
		if ev["type"] == delta {
			text.WriteString(ev["delta"].(string))
		}
	}
	if last := events[len(events)-1]; !strings.Contains(text.String(), city) || !ends(last) {
		return fmt.Errorf("the second stream: %q, ended with %v", text.String(), last)
	}
	return nil
}
