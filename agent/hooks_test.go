package agent_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
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
		"ModelRequest", "Retry", "ModelRequest", "ModelResponse", "ToolCall", "ToolCall", "ToolResult", "ToolResult", "TurnEnd",
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
		{"error": "the user declined: no weather for Mordor"},
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
