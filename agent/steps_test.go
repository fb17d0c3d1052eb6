package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// stepsRun drives one run with the agent's Steps, one step at a time and
// sequentially, as a runtime that does not call Run would.
func stepsRun(ctx context.Context, t *testing.T, a *agent.Agent, contents []*genai.Content) *agent.Result {
	t.Helper()
	s := a.Steps()
	history := append([]*genai.Content(nil), contents...)
	var turns []agent.Turn
	var usage agent.Usage
	agents := map[string]agent.Usage{}
	var typed agent.TypedState
	var output any
	for turn := 0; turn-typed.Reasks < s.Limits().MaxTurns; turn++ {
		send, err := s.PrepareHistory(ctx, history, turn, 0)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := s.Models().GenerateContent(ctx, s.Model(), send, s.TypedConfig(turn, typed))
		if err != nil {
			t.Fatal(err)
		}
		if stop, _ := agent.CheckResponse(resp); stop != nil {
			t.Fatalf("CheckResponse: %v", stop)
		}
		tu := agent.Turn{Response: resp, Usage: agent.UsageOf(resp.UsageMetadata), FinishReason: resp.Candidates[0].FinishReason, Attempts: 1}
		content := resp.Candidates[0].Content
		history = append(history, content)
		tu.Calls = agent.FunctionCalls(content)
		for i, call := range tu.Calls {
			answer, approval := s.PlanCall(ctx, i, len(tu.Calls), call)
			switch {
			case answer != nil:
				tu.Results = append(tu.Results, agent.ToolResult{Call: call, Result: *answer})
			case approval && call.Args["amount"].(float64) > 100:
				tu.Results = append(tu.Results, agent.ToolResult{Call: call, Result: *agent.NotApproved(call, "too much")})
			default:
				e := &agent.Event{Kind: agent.EventToolCall, Turn: turn, Index: i, Call: call}
				callCtx := s.StartContext(ctx, e)
				s.Observe(callCtx, e)
				res, by := s.RunCall(callCtx, call, approval)
				tu.Results = append(tu.Results, res)
				for name, u := range by {
					agents[name] = agents[name].Plus(u)
				}
			}
		}
		if len(tu.Calls) > 0 {
			history = append(history, agent.ResponseContent(s.Model(), tu.Calls, tu.Results))
		}
		turns = append(turns, tu)
		usage = usage.Plus(tu.Usage)
		if s.Typed() {
			tt := s.TypedTurn(&tu, typed)
			typed = tt.Next
			if tt.Err != nil {
				t.Fatalf("TypedTurn: %v", tt.Err)
			}
			if tt.Done {
				output = tt.Output
				break
			}
			if tt.Ask != nil {
				history = append(history, tt.Ask)
			}
			continue
		}
		if len(tu.Calls) == 0 {
			break
		}
	}
	res := s.NewResult(history, turns, usage, agents)
	res.Output = output
	return res
}

// TestStepsMakeRunsDecisions drives a run with Steps and requires the
// server to receive the very requests Run sends, and the same result.
func TestStepsMakeRunsDecisions(t *testing.T) {
	script := func() []*fake.Reply {
		return []*fake.Reply{
			fake.Calls(
				fake.Call("get_weather", map[string]any{"city": "Paris"}),
				fake.Call("nope", map[string]any{}),
				fake.Call("pay", map[string]any{"amount": 5}),
				fake.Call("pay", map[string]any{"amount": 500}),
				fake.Call("get_weather", map[string]any{"town": 1}),
				fake.Call("get_weather", map[string]any{"city": "over the cap"}),
			),
			fake.Text("Done."),
		}
	}
	tools := func() *toolset.Set {
		return toolset.MustNew((&weatherTool{}).tool(), tool("pay", func(ctx context.Context, args map[string]any) (any, error) {
			return strings.Repeat("receipt ", 200), nil
		}))
	}
	var intercepted atomic.Int32
	edit := func(c *agent.Config) {
		c.MaxCallsPerTurn = 5
		c.MaxOutputBytes = 300
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Name == "pay" }
		// Run asks the Interceptor about the calls that need approval.
		c.Intercept = func(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
			intercepted.Add(1)
			if amount, _ := call.Args["amount"].(float64); amount > 100 {
				return agent.NotApproved(call, "too much")
			}
			return nil
		}
	}
	direct, stepped := newServer(t), newServer(t)
	direct.Enqueue(script()...)
	stepped.Enqueue(script()...)
	want, err := newAgent(t, direct, tools(), edit).Run(context.Background(), user("Go"))
	if err != nil {
		t.Fatal(err)
	}
	before := intercepted.Load()
	got := stepsRun(context.Background(), t, newAgent(t, stepped, tools(), edit), user("Go"))
	if n := intercepted.Load() - before; n != 2 {
		t.Errorf("the Interceptor was asked %d times, want twice (for the get_weather calls, which need no approval)", n)
	}
	for i, req := range stepped.Requests() {
		if w := direct.Requests()[i]; !bytes.Equal(req.Body, w.Body) {
			t.Errorf("request %d differs:\n steps: %s\n   Run: %s", i+1, req.Body, w.Body)
		}
	}
	if got.Text != want.Text || got.FinishReason != want.FinishReason || got.Usage != want.Usage || len(got.History) != len(want.History) {
		t.Errorf("result = %q %s %+v %d contents; Run's = %q %s %+v %d", got.Text, got.FinishReason, got.Usage, len(got.History),
			want.Text, want.FinishReason, want.Usage, len(want.History))
	}
	res := got.Turns[0].Results
	if !errors.Is(res[1].Err, agent.ErrUnknownTool) || !errors.Is(res[5].Err, agent.ErrTooManyCalls) || !errors.Is(res[3].Err, agent.ErrDenied) {
		t.Errorf("errors = %v, %v, %v; want unknown tool, too many calls, denied", res[1].Err, res[5].Err, res[3].Err)
	}
}

// TestStepsRetryDelay: RetryDelay retries what Run retries, waits at least
// the API's RetryInfo delay, and stops at MaxAttempts and MaxElapsed.
func TestStepsRetryDelay(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, func(c *agent.Config) {
		c.Retry = agent.RetryPolicy{InitialDelay: 10 * time.Millisecond, MaxDelay: 40 * time.Millisecond, Jitter: -1, MaxAttempts: 4, MaxElapsed: time.Minute}
	})
	s := a.Steps()
	now := time.Now()
	unavailable := genai.APIError{Code: 503}
	limited := genai.APIError{Code: 429, Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}}}
	for _, tc := range []struct {
		name    string
		err     error
		attempt int
		start   time.Time
		want    time.Duration
		ok      bool
	}{
		{"first retry", unavailable, 1, now, 10 * time.Millisecond, true},
		{"grows", unavailable, 2, now, 20 * time.Millisecond, true},
		{"capped", unavailable, 3, now, 40 * time.Millisecond, true},
		{"attempts used up", unavailable, 4, now, 0, false},
		{"RetryInfo", limited, 1, now, 2 * time.Second, true},
		{"permanent", genai.APIError{Code: 400}, 1, now, 0, false},
		{"elapsed", unavailable, 1, now.Add(-time.Minute), 0, false},
		{"no attempt", unavailable, 0, now, 0, false},
	} {
		d, ok := s.RetryDelay(tc.err, tc.attempt, tc.start)
		if d != tc.want || ok != tc.ok {
			t.Errorf("%s: RetryDelay = %v, %v; want %v, %v", tc.name, d, ok, tc.want, tc.ok)
		}
	}
}

// TestStepsRunCall: RunCall runs a call as Run does: the Interceptor
// unless approved, ToolTimeout, the output cap, the unknown-tool answer.
func TestStepsRunCall(t *testing.T) {
	srv := newServer(t)
	slow := tool("slow", func(ctx context.Context, args map[string]any) (any, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	big := tool("big", func(ctx context.Context, args map[string]any) (any, error) { return strings.Repeat("b", 1000), nil })
	asked := 0
	a := newAgent(t, srv, toolset.MustNew(slow, big), func(c *agent.Config) {
		c.MaxOutputBytes = 100
		c.Intercept = func(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
			asked++
			return agent.Deny("no")
		}
	})
	s := a.Steps()
	ctx := context.Background()
	if r, _ := s.RunCall(ctx, fake.Call("big", nil), false); r.Output != "no" || !r.IsError || asked != 1 {
		t.Errorf("unapproved call = %v, asked %d; want the Interceptor's denial", r.Result, asked)
	}
	r, _ := s.RunCall(ctx, fake.Call("big", nil), true)
	if out, _ := r.Output.(string); r.IsError || !strings.HasPrefix(out, "[output truncated") || len(out) > 100 || asked != 1 {
		t.Errorf("approved call = %v, asked %d; want the output cut to 100 bytes without asking", r.Result, asked)
	}
	// Only the slow call runs with a ToolTimeout: the others would time
	// out too on a machine slow enough.
	timed := a.With(agent.Overrides{ToolTimeout: 20 * time.Millisecond}).Steps()
	if r, _ := timed.RunCall(ctx, fake.Call("slow", nil), true); !r.IsError || !errors.Is(r.Err, agent.ErrToolTimeout) {
		t.Errorf("slow call = %v (%v), want a timeout", r.Result, r.Err)
	}
	if r, _ := s.RunCall(ctx, fake.Call("nope", nil), true); !errors.Is(r.Err, agent.ErrUnknownTool) {
		t.Errorf("unknown tool = %v, want ErrUnknownTool", r.Err)
	}
}

// TestStepsConfigAndObserver: RequestConfig forces calls on the first turn
// only; Observe and StartContext reach the agent's Observer; Limits and
// NewResult say what Run would.
func TestStepsConfigAndObserver(t *testing.T) {
	srv := newServer(t)
	obs := &scopeObserver{}
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{ToolConfig: &genai.ToolConfig{
			FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}}
		c.Observer = obs
		c.MaxTurns = 7
	})
	s := a.Steps()
	if m := s.RequestConfig(0).ToolConfig.FunctionCallingConfig.Mode; m != genai.FunctionCallingConfigModeAny {
		t.Errorf("first turn's mode = %s, want ANY", m)
	}
	if m := s.RequestConfig(1).ToolConfig.FunctionCallingConfig.Mode; m != genai.FunctionCallingConfigModeAuto {
		t.Errorf("later turns' mode = %s, want AUTO", m)
	}
	if l := s.Limits(); l.MaxTurns != 7 || l.MaxParallel != agent.DefaultMaxParallel || l.Retry.MaxAttempts != 4 {
		t.Errorf("Limits() = %+v", l)
	}
	e := &agent.Event{Kind: agent.EventToolCall}
	ctx := s.StartContext(context.Background(), e)
	s.Observe(ctx, e)
	if ctx.Value(stepScope{}) != "ToolCall" || len(obs.seen) != 1 || obs.seen[0] != "ToolCall" || !s.Observing() {
		t.Errorf("observer saw %v with context value %v", obs.seen, ctx.Value(stepScope{}))
	}
	content := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "a", Thought: true}, {Text: "b"}}}
	res := s.NewResult(nil, []agent.Turn{{Response: &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: content, FinishReason: genai.FinishReasonStop}}},
		FinishReason: genai.FinishReasonStop}}, agent.Usage{TotalTokens: 3}.Plus(agent.UsageOf(&genai.GenerateContentResponseUsageMetadata{TotalTokenCount: 2})), nil)
	if res.Text != "b" || res.FinishReason != genai.FinishReasonStop || res.Usage.TotalTokens != 5 {
		t.Errorf("NewResult = %q %s %+v", res.Text, res.FinishReason, res.Usage)
	}
}

type stepScope struct{}

// scopeObserver is a ContextObserver that records the kinds it observes.
type scopeObserver struct{ seen []string }

func (o *scopeObserver) Observe(_ context.Context, e *agent.Event) {
	o.seen = append(o.seen, e.Kind.String())
}

func (o *scopeObserver) StartContext(ctx context.Context, e *agent.Event) context.Context {
	return context.WithValue(ctx, stepScope{}, e.Kind.String())
}

// TestStepsAgentsAsTools: a run driven by Steps whose tool is an agent
// (AsTool) reports what Run reports: the same requests, the usage summed
// and broken down by agent, and the sub-agent's events linked to the call
// that ran it.
func TestStepsAgentsAsTools(t *testing.T) {
	build := func(srv *fake.Server, log *eventLog) *agent.Agent {
		tm := newTeam(srv)
		tm.add("researcher", 10, func(req *fake.Request) *fake.Reply { return fake.Text("2.1 million") })
		tm.add("coordinator", 100, func(req *fake.Request) *fake.Reply {
			if rs := answers(req); len(rs) > 0 {
				return fake.Text(fmt.Sprint("Answer: ", rs[0].Response["result"]))
			}
			return fake.Calls(fake.Call("researcher", map[string]any{"request": "Population of Paris?"}))
		})
		researcher := member(t, srv, "researcher", nil)
		return member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, researcher, "researcher")),
			func(c *agent.Config) { c.Observer = log })
	}
	direct, stepped := newServer(t), newServer(t)
	steppedLog := &eventLog{}
	want, err := build(direct, &eventLog{}).Run(context.Background(), user("How many people live in Paris?"))
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	got := stepsRun(context.Background(), t, build(stepped, steppedLog), user("How many people live in Paris?"))
	if len(stepped.Requests()) != 3 || len(direct.Requests()) != 3 {
		t.Fatalf("steps made %d requests, Run %d; want 3", len(stepped.Requests()), len(direct.Requests()))
	}
	for i, req := range stepped.Requests() {
		if w := direct.Requests()[i]; !bytes.Equal(req.Body, w.Body) {
			t.Errorf("request %d differs:\n steps: %s\n   Run: %s", i+1, req.Body, w.Body)
		}
	}
	if got.Text != want.Text || got.Usage != want.Usage || !cmp.Equal(got.Agents, want.Agents) {
		t.Errorf("steps: %q, usage %+v, agents %+v\n  Run: %q, usage %+v, agents %+v", got.Text, got.Usage, got.Agents, want.Text, want.Usage, want.Agents)
	}
	if got.Agents["researcher"].TotalTokens != 10 || got.Agents["coordinator"].TotalTokens != 200 {
		t.Errorf("Agents = %+v; want the researcher's 10 tokens and the coordinator's 200", got.Agents)
	}
	var linked bool
	for _, e := range steppedLog.of(agent.EventModelRequest) {
		if e.Agent == "researcher" {
			linked = e.Parent != nil && e.Parent.Call != nil && e.Parent.Call.Name == "researcher" && e.Parent.Agent == "coordinator"
		}
	}
	if !linked {
		t.Errorf("the researcher's model request is not linked to the coordinator's call that ran it")
	}
}

// TestStepsTypedRun drives typed runs with Steps, for both strategies, each
// with a refused answer first, and requires the requests and the answer
// RunTyped gives.
func TestStepsTypedRun(t *testing.T) {
	for _, tc := range []struct {
		name           string
		model          string
		invalid, valid *fake.Reply
	}{
		{"tool", model, finalAnswer(map[string]any{"customer": "ACME", "total": "a lot"}), finalAnswer(invoiceArgs())},
		{"tool, prose", model, fake.Text("It is 42.50 euros."), finalAnswer(invoiceArgs())},
		{"native", model3, fake.Text(`{"customer":"ACME","total":"a lot"}`), fake.Text(invoiceJSON)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := func() []*fake.Reply {
				return []*fake.Reply{fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), tc.invalid, tc.valid}
			}
			direct, stepped := newServer(t), newServer(t)
			direct.Enqueue(script()...)
			stepped.Enqueue(script()...)
			edit := func(c *agent.Config) { c.Model, c.MaxTurns = tc.model, 2 }
			want, wantRes, err := agent.RunTyped[invoice](context.Background(), newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()), edit), user("Bill ACME."))
			if err != nil {
				t.Fatalf("RunTyped() = %v", err)
			}
			typed, err := agent.Typed[invoice](newAgent(t, stepped, toolset.MustNew((&weatherTool{}).tool()), edit))
			if err != nil {
				t.Fatal(err)
			}
			if !typed.Steps().Typed() {
				t.Fatal("Steps().Typed() = false for an agent Typed returned")
			}
			res := stepsRun(context.Background(), t, typed, user("Bill ACME."))
			if len(stepped.Requests()) != 3 || len(direct.Requests()) != 3 {
				t.Fatalf("steps made %d requests, RunTyped %d; want 3", len(stepped.Requests()), len(direct.Requests()))
			}
			for i, req := range stepped.Requests() {
				if w := direct.Requests()[i]; !bytes.Equal(req.Body, w.Body) {
					t.Errorf("request %d differs:\n steps: %s\n   Run: %s", i+1, req.Body, w.Body)
				}
			}
			if got, ok := res.Output.(invoice); !ok || !cmp.Equal(got, want) || len(res.History) != len(wantRes.History) {
				t.Errorf("steps: %#v, %d contents; RunTyped: %#v, %d contents", res.Output, len(res.History), want, len(wantRes.History))
			}
		})
	}
}

// TestStepsTypedTurnRunsOut: the decision after the last re-ask is an
// OutputError carrying the refused answer.
func TestStepsTypedTurnRunsOut(t *testing.T) {
	srv := newServer(t)
	typed, err := agent.Typed[invoice](newAgent(t, srv, nil, func(c *agent.Config) { c.Model = model3 }))
	if err != nil {
		t.Fatal(err)
	}
	content := genai.NewContentFromText("no JSON here", genai.RoleModel)
	turn := &agent.Turn{Response: &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: content}}}}
	tt := typed.Steps().TypedTurn(turn, agent.TypedState{Reasks: agent.DefaultMaxOutputReasks})
	if !tt.Done || tt.Err == nil || !errors.Is(tt.Err, agent.ErrInvalidOutput) || tt.Err.Raw != "no JSON here" || tt.Ask != nil {
		t.Errorf("TypedTurn after the last re-ask = %+v; want an OutputError with the raw answer", tt)
	}
	tt = typed.Steps().TypedTurn(turn, agent.TypedState{})
	if tt.Done || tt.Ask == nil || tt.Next.Reasks != 1 || !errors.Is(tt.Retry, agent.ErrInvalidOutput) {
		t.Errorf("TypedTurn with re-asks left = %+v; want a re-ask", tt)
	}
	if plain := newAgent(t, srv, nil).Steps(); plain.Typed() || plain.TypedTurn(turn, agent.TypedState{}).Done {
		t.Errorf("an agent that makes no typed runs decides about typed turns")
	}
}
