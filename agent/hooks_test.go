package agent_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func TestObserverSeesEveryStep(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	log := &eventLog{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Observer = log })
	srv.Enqueue(fake.Error(503, "busy"), fake.Calls(cities(2)...), fake.Text("done"))
	res, err := a.Run(context.Background(), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"RunStart", "ModelRequest", "Retry", "ModelRequest", "ModelResponse", "ToolCall", "ToolCall", "ToolResult", "ToolResult", "TurnEnd",
		"ModelRequest", "ModelResponse", "TurnEnd", "Done",
	}
	if diff := cmp.Diff(want, log.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	resp := log.of(agent.EventModelResponse)[0]
	if resp.Response == nil || resp.Usage.TotalTokens == 0 || resp.Duration <= 0 || resp.Turn != 0 {
		t.Errorf("ModelResponse event = %+v", resp)
	}
	for _, e := range log.of(agent.EventToolResult) {
		if e.ToolResult == nil || e.Call == nil || e.ToolResult.Call != e.Call || e.ToolResult.IsError {
			t.Errorf("ToolResult event = %+v", e)
		}
	}
	done := log.of(agent.EventDone)[0]
	if done.Result != res || done.Err != nil {
		t.Errorf("Done event = %+v", done)
	}
	if end := log.of(agent.EventTurnEnd)[0]; end.TurnInfo == nil || len(end.TurnInfo.Results) != 2 {
		t.Errorf("TurnEnd event = %+v", end)
	}
}

func TestObserverCannotBreakTheRun(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	var logs bytes.Buffer
	seen := &eventLog{}
	panicky := agent.ObserverFunc(func(context.Context, *agent.Event) { panic("observer bug") })
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
		c.Observer = agent.Observers(panicky, nil, seen)
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	srv.Enqueue(fake.Calls(cities(1)...), fake.Text("done"))
	res, err := a.Run(context.Background(), user("go"))
	if err != nil || res.Text != "done" {
		t.Fatalf("Run() = %v, %v", res, err)
	}
	if len(seen.kinds()) == 0 {
		t.Error("a panicking observer kept the next one from seeing events")
	}
	if !strings.Contains(logs.String(), "observer panicked") {
		t.Errorf("the panic was not logged: %s", logs.String())
	}
}

func TestInterceptor(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	var mu sync.Mutex
	var asked []string
	intercept := func(_ context.Context, call *genai.FunctionCall) *toolset.Result {
		mu.Lock()
		defer mu.Unlock()
		city, _ := call.Args["city"].(string)
		asked = append(asked, city)
		switch city {
		case "Mordor":
			return agent.Deny("the user declined: no weather for Mordor")
		case "Cached":
			return agent.Answer("cloudy (cached)")
		case "Bug":
			panic("approval UI crashed")
		}
		return nil
	}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Intercept = intercept })
	srv.Enqueue(fake.Calls(
		fake.Call("get_weather", map[string]any{"city": "Paris"}),
		fake.Call("get_weather", map[string]any{"city": "Mordor"}),
		fake.Call("get_weather", map[string]any{"city": "Cached"}),
		fake.Call("get_weather", map[string]any{"city": "Bug"}),
		fake.Call("unknown_tool", nil),
	), fake.Text("ok"))
	res, err := a.Run(context.Background(), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	got := lastResponses(t, srv)
	want := []map[string]any{
		{"result": "sunny in Paris"},
		{"error": "the user declined: no weather for Mordor", "denied": true},
		{"result": "cloudy (cached)"},
		{"error": "tool get_weather was not run: the approval check failed"},
		{"error": `unknown tool "unknown_tool"; available tools: get_weather`},
	}
	for i := range want {
		if diff := cmp.Diff(want[i], got[i].Response); diff != "" {
			t.Errorf("response %d (-want +got):\n%s", i, diff)
		}
	}
	if w.calls.Load() != 1 {
		t.Errorf("tool ran %d times, want 1 (only Paris was allowed)", w.calls.Load())
	}
	if len(asked) != 4 {
		t.Errorf("interceptor asked about %v; want the 4 known-tool calls", asked)
	}
	if !errors.Is(res.Turns[0].Results[1].Err, agent.ErrDenied) {
		t.Errorf("denied call Err = %v", res.Turns[0].Results[1].Err)
	}
}

func TestLoggerWarnsOnRetryAndNeverLogsTheKey(t *testing.T) {
	srv := newServer(t)
	var logs bytes.Buffer
	log := &eventLog{}
	a := newAgent(t, srv, nil, func(c *agent.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.Observer = log
		c.Retry.MaxAttempts = 2
	})
	srv.Enqueue(fake.RateLimited(0), fake.Error(400, "API key not valid. Please pass a valid API key."))
	_, err := a.Run(context.Background(), user("hi"))
	if err == nil {
		t.Fatal("Run() succeeded")
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"agent: retrying model call"`) {
		t.Errorf("no Warn for the retry in:\n%s", logs.String())
	}
	var all strings.Builder
	all.WriteString(logs.String())
	all.WriteString(err.Error())
	for _, e := range log.events {
		if e.Err != nil {
			all.WriteString(e.Err.Error())
		}
	}
	if strings.Contains(all.String(), fake.APIKey) {
		t.Errorf("the API key %q leaked into logs, errors or events", fake.APIKey)
	}
	if req := srv.LastRequest(); req.APIKey != fake.APIKey {
		t.Fatalf("the key was not sent (%q); this test proves nothing", req.APIKey)
	}
}

// An interceptor's answer goes through the checks a tool's output does: an
// answer that cannot be encoded becomes an error the model reads (before,
// the SDK swallowed its own encoding error and the run, and every run that
// continued its history, failed with a misleading 404), and a large one is
// cut.
func TestInterceptorAnswersAreChecked(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	intercept := func(_ context.Context, call *genai.FunctionCall) *toolset.Result {
		switch call.Args["city"] {
		case "NaN":
			return agent.Answer(math.NaN())
		case "Chan":
			return agent.Answer(map[string]any{"c": make(chan int)})
		case "Big":
			return agent.Answer(strings.Repeat("<", 4000))
		}
		return nil
	}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
		c.Intercept = intercept
		c.MaxOutputBytes = 1000
	})
	srv.Enqueue(fake.Calls(
		fake.Call("get_weather", map[string]any{"city": "NaN"}),
		fake.Call("get_weather", map[string]any{"city": "Chan"}),
		fake.Call("get_weather", map[string]any{"city": "Big"}),
		fake.Call("get_weather", map[string]any{"city": "Paris"}),
	), fake.Text("ok"))
	res, err := a.Run(context.Background(), user("go"))
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	got := lastResponses(t, srv)
	for i, city := range []string{"NaN", "Chan"} {
		msg, _ := got[i].Response["error"].(string)
		if !strings.HasPrefix(msg, "tool get_weather was not run, and the answer given in its place was refused: output cannot be encoded as JSON") {
			t.Errorf("response for %s = %v, want an error saying the answer was refused", city, got[i].Response)
		}
		if r := res.Turns[0].Results[i]; !r.IsError || !errors.Is(r.Err, toolset.ErrOutputNotJSON) {
			t.Errorf("result for %s = %+v, want an error wrapping ErrOutputNotJSON", city, r.Result)
		}
	}
	big, _ := got[2].Response["result"].(string)
	if !strings.HasPrefix(big, "[output truncated: it was 24002 bytes of JSON") || jsonLen(t, big) > 1000 {
		t.Errorf("big answer = %.80q… (%d bytes of JSON), want it cut to 1000", big, jsonLen(t, big))
	}
	if got[3].Response["result"] != "sunny in Paris" {
		t.Errorf("Paris = %v", got[3].Response)
	}
	// The history goes on.
	srv.Enqueue(fake.Text("still fine"))
	if _, err := a.Run(context.Background(), append(res.History, user("again")...)); err != nil {
		t.Errorf("continuing the history: %v", err)
	}
}

// Once the run's context is done, the interceptor is not asked: before,
// after a Stream consumer broke, it was still asked, with a dead context.
func TestInterceptorNotAskedAfterTheRunEnds(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	var asked atomic.Int32
	intercept := func(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
		asked.Add(1)
		if ctx.Err() != nil {
			t.Errorf("interceptor asked about %v with a done context", call.Args)
		}
		return nil
	}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Intercept = intercept })
	srv.Enqueue(fake.Calls(cities(3)...))
	for e := range a.Stream(context.Background(), user("go")) {
		if e.Kind == agent.EventToolCall {
			break
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("interceptor asked %d times after the consumer broke", n)
	}
	if n := w.calls.Load(); n != 0 {
		t.Errorf("%d tools ran after the consumer broke", n)
	}
}
