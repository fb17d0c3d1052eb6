package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// journaled returns what a run's saved history holds when its process died
// while the calls of its first turn ran: the user's message and the model
// content with the calls, as the fake answered them on model m (ids and
// thought signatures included), to a request declaring tools.
func journaled(t *testing.T, srv *fake.Server, m string, tools *toolset.Set, calls ...*genai.FunctionCall) []*genai.Content {
	t.Helper()
	history := user("What's the weather in Paris and Tokyo?")
	decls, err := geminiadapter.Tools(tools.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(calls...))
	resp, err := srv.Client().Models.GenerateContent(t.Context(), m, history, &genai.GenerateContentConfig{Tools: decls})
	if err != nil {
		t.Fatalf("GenerateContent() = %v", err)
	}
	return append(history, resp.Candidates[0].Content)
}

// twoCities are the calls of the journaled turn of most tests.
func twoCities() []*genai.FunctionCall {
	return []*genai.FunctionCall{
		fake.Call("get_weather", map[string]any{"city": "Paris"}),
		fake.Call("get_weather", map[string]any{"city": "Tokyo"}),
	}
}

// A run given a history that ends with a model turn whose calls have no
// answer runs those calls first, concurrently, then calls the model with
// the calls answered: the fake, which checks that every call of a turn is
// answered, accepts the conversation.
func TestResumeRunsPendingCalls(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{started: make(chan string, 2), release: make(chan struct{})}
	tools := toolset.MustNew(w.tool())
	history := journaled(t, srv, model3, tools, twoCities()...)
	if got := agent.PendingCalls(history); len(got) != 2 {
		t.Fatalf("PendingCalls() = %d calls; want 2", len(got))
	}
	srv.Enqueue(fake.Text("Sunny in both."))
	obs := &eventLog{}
	a := newAgent(t, srv, tools, func(c *agent.Config) { c.Model, c.Observer = model3, obs })

	type ran struct {
		res *agent.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := a.Run(context.Background(), history)
		done <- ran{res, err}
	}()
	for range 2 { // both calls start before either is let go: they run at once
		select {
		case <-w.started:
		case <-time.After(hangGuard):
			t.Fatal("the pending calls did not both start")
		}
	}
	close(w.release)
	r := <-done
	if r.err != nil {
		t.Fatalf("Run() = %v", r.err)
	}
	res := r.res
	if res.Text != "Sunny in both." || w.calls.Load() != 2 {
		t.Errorf("Text %q after %d weather calls; want the answer after 2", res.Text, w.calls.Load())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want the journaled turn's and one more", len(reqs))
	}
	sent := reqs[1].Contents
	if len(sent) != 3 {
		t.Fatalf("the run sent %d contents; want the history and the answers", len(sent))
	}
	rs := responses(sent[2])
	calls := agent.PendingCalls(history)
	if len(rs) != 2 || rs[0].ID != calls[0].ID || rs[1].ID != calls[1].ID ||
		rs[0].Response["result"] != "sunny in Paris" || rs[1].Response["result"] != "sunny in Tokyo" {
		t.Errorf("responses sent = %+v; want both calls answered, in order, with their ids", rs)
	}

	// The history is the one given, then the answers and the next turn.
	if len(res.History) != 4 || res.History[0] != history[0] || res.History[1] != history[1] {
		t.Fatalf("History = %d contents; want the 2 given, as given, then 2", len(res.History))
	}
	if rs := responses(res.History[2]); len(rs) != 2 {
		t.Errorf("History[2] = %+v; want the answers", res.History[2])
	}
	// Turn 0 is the resumed one: no model call, its calls and results.
	if len(res.Turns) != 2 {
		t.Fatalf("%d turns; want the resumed one and the answer", len(res.Turns))
	}
	t0 := res.Turns[0]
	if t0.Response != nil || t0.Attempts != 0 || len(t0.Calls) != 2 || len(t0.Results) != 2 || t0.Calls[0] != calls[0] {
		t.Errorf("Turns[0] = %+v; want the pending calls and their results, no response, 0 attempts", t0)
	}
	if res.Turns[1].Attempts != 1 {
		t.Errorf("Turns[1].Attempts = %d; want 1", res.Turns[1].Attempts)
	}
	// The observer saw the calls as any turn's, then the model call of turn 1.
	want := []string{"RunStart", "ToolCall", "ToolCall", "ToolResult", "ToolResult", "TurnEnd",
		"ModelRequest", "ModelResponse", "TurnEnd", "Done"}
	if diff := cmp.Diff(want, obs.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, e := range obs.of(agent.EventToolResult) {
		if e.Turn != 0 {
			t.Errorf("tool result of turn %d; want 0", e.Turn)
		}
	}
	if e := obs.of(agent.EventModelRequest); len(e) != 1 || e[0].Turn != 1 {
		t.Errorf("model requests %+v; want one, of turn 1", e)
	}
}

// An Interceptor answers a call that was running when the process died,
// of a tool that is not safe to repeat, with Interrupted, and lets a
// read-only one run again: the model is told, and the run goes on.
func TestResumeInterrupted(t *testing.T) {
	srv := newServer(t)
	var sent, looked atomic.Int32
	send := tool("send_email", func(context.Context, map[string]any) (any, error) {
		sent.Add(1)
		return "sent", nil
	})
	lookup := tool("get_weather", func(context.Context, map[string]any) (any, error) {
		looked.Add(1)
		return "sunny", nil
	})
	lookup.ReadOnly = true
	tools := toolset.MustNew(send, lookup)
	history := journaled(t, srv, model3, tools,
		fake.Call("send_email", map[string]any{"to": "bob"}), fake.Call("get_weather", map[string]any{"city": "Paris"}))
	srv.Enqueue(fake.Text("The email may not have gone; shall I check?"))
	running := agent.PendingCalls(history) // all were running when the process died
	a := newAgent(t, srv, tools, func(c *agent.Config) {
		c.Model = model3
		c.Intercept = func(_ context.Context, call *genai.FunctionCall) *toolset.Result {
			if tl, ok := tools.Lookup(call.Name); ok && !tl.SafeToRepeat() {
				for _, r := range running {
					if r == call {
						return agent.Interrupted(call)
					}
				}
			}
			return nil
		}
	})
	res, err := a.Run(context.Background(), history)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if sent.Load() != 0 || looked.Load() != 1 {
		t.Errorf("send_email ran %d times, get_weather %d; want 0 and 1", sent.Load(), looked.Load())
	}
	rs := lastResponses(t, srv)
	if len(rs) != 2 || rs[1].Response["result"] != "sunny" {
		t.Fatalf("responses = %+v; want both calls answered", rs)
	}
	msg, _ := rs[0].Response["error"].(string)
	if !strings.Contains(msg, "send_email was interrupted") || !strings.Contains(msg, "may or may not have run") {
		t.Errorf("send_email's answer = %+v; want the interrupted error", rs[0].Response)
	}
	if r := res.Turns[0].Results[0]; !r.IsError || !errors.Is(r.Err, agent.ErrInterrupted) {
		t.Errorf("Turns[0].Results[0] = %+v; want an error result wrapping ErrInterrupted", r)
	}
}

// Interrupted's answer, as the model reads it.
func TestInterrupted(t *testing.T) {
	call := &genai.FunctionCall{ID: "c1", Name: "transfer", Args: map[string]any{"amount": 10.0}}
	res := agent.Interrupted(call)
	if !res.IsError || !errors.Is(res.Err, agent.ErrInterrupted) {
		t.Fatalf("Interrupted() = %+v; want an error result with ErrInterrupted", res)
	}
	part := geminiadapter.Response(call, *res)
	want := "tool transfer was interrupted: the process running it stopped before it returned, " +
		"so it may or may not have run; check whether it took effect before calling it again, or ask the user"
	if got := part.FunctionResponse.Response["error"]; got != want || part.FunctionResponse.ID != "c1" {
		t.Errorf("response = %+v; want {error: %q} for c1", part.FunctionResponse, want)
	}
}

// A resumed turn's calls that need approval go through the approval flow
// of any turn: Stream hands them to its consumer, the others run, and the
// run goes on with the model call of turn 1.
func TestResumeStreamApproval(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	var timeRan atomic.Int32
	tools := toolset.MustNew(w.tool(), timeTool(&timeRan))
	history := journaled(t, srv, model3, tools,
		fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("time_now", nil),
		fake.Call("get_weather", map[string]any{"city": "Mordor"}))
	srv.Enqueue(fake.Text("done"))
	a := newAgent(t, srv, tools, func(c *agent.Config) { c.Model, c.NeedsApproval = model3, needsApproval })

	type step struct {
		Kind string
		Turn int
	}
	var steps []step
	var text strings.Builder
	var res *agent.Result
	results := 0
	for e, err := range a.Stream(context.Background(), history) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case agent.EventToolResult:
			if e.Turn == 0 {
				results++
			}
		case agent.EventTurnEnd:
			if ti := e.TurnInfo; e.Turn == 0 && (ti.Response != nil || ti.Attempts != 0 || len(ti.Results) != 3) {
				t.Errorf("turn 0 ends with %+v; want its 3 results, no response, 0 attempts", ti)
			}
		case agent.EventApproval:
			if e.Call.Args["city"] == "Paris" {
				e.Approval.Approve()
			} else {
				e.Approval.Deny("not there")
			}
		case agent.EventText:
			text.WriteString(e.Text)
		case agent.EventDone:
			res = e.Result
		}
		if e.Kind != agent.EventText && e.Kind != agent.EventToolResult && e.Kind != agent.EventRunStart {
			steps = append(steps, step{e.Kind.String(), e.Turn})
		}
	}
	want := []step{{"ToolCall", 0}, {"ToolCall", 0}, {"ToolCall", 0}, {"Approval", 0}, {"Approval", 0}, {"TurnEnd", 0},
		{"ModelRequest", 1}, {"ModelResponse", 1}, {"TurnEnd", 1}, {"Done", 1}}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("events but text and results (-want +got):\n%s", diff)
	}
	if results != 3 {
		t.Errorf("%d tool results of turn 0; want 3", results)
	}
	if text.String() != "done" || res == nil || res.Text != "done" {
		t.Errorf("streamed %q, Result %+v; want the answer", text.String(), res)
	}
	if w.calls.Load() != 1 || timeRan.Load() != 1 {
		t.Errorf("get_weather ran %d times, time_now %d; want 1 and 1", w.calls.Load(), timeRan.Load())
	}
	rs := lastResponses(t, srv)
	if len(rs) != 3 || rs[0].Response["result"] != "sunny in Paris" || rs[1].Response["result"] != "12:00" ||
		rs[2].Response["error"] != "not there" {
		t.Errorf("responses = %+v; want Paris's weather, the time, and the denial", rs)
	}
}

// Run has no consumer: a resumed call that needs approval is left to the
// Interceptor, and without one is denied, as in any turn.
func TestResumeRunApprovalDenied(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	tools := toolset.MustNew(w.tool())
	history := journaled(t, srv, model, tools, fake.Call("get_weather", map[string]any{"city": "Paris"}))
	srv.Enqueue(fake.Text("I may not look."))
	a := newAgent(t, srv, tools, func(c *agent.Config) { c.NeedsApproval = needsApproval })
	if _, err := a.Run(context.Background(), history); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	rs := lastResponses(t, srv)
	if w.calls.Load() != 0 || len(rs) != 1 || !strings.Contains(fmt.Sprint(rs[0].Response["error"]), "was not run: it needs approval") {
		t.Errorf("%d weather calls, responses %+v; want none run and the call denied", w.calls.Load(), rs)
	}
}

// The resumed turn runs its calls under the agent's limits, and does not
// count against MaxTurns: with MaxTurns 1, a resumed run still makes one
// model call.
func TestResumeLimits(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	slow := tool("slow", func(ctx context.Context, _ map[string]any) (any, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	tools := toolset.MustNew(w.tool(), slow)
	history := journaled(t, srv, model, tools, append(cities(4), fake.Call("slow", nil))...)
	srv.Enqueue(fake.Text("done"))
	a := newAgent(t, srv, tools, func(c *agent.Config) {
		c.MaxTurns, c.MaxParallel, c.ToolTimeout = 1, 1, 10*time.Millisecond
	})
	res, err := a.Run(context.Background(), history)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if w.peak.Load() != 1 || w.calls.Load() != 4 {
		t.Errorf("%d weather calls, %d at once; want 4, one at a time (MaxParallel 1)", w.calls.Load(), w.peak.Load())
	}
	if len(res.Turns) == 0 || len(res.Turns[0].Results) != 5 {
		t.Fatalf("%d turns; want the resumed one first, with its 5 results", len(res.Turns))
	}
	if r := res.Turns[0].Results[4]; !r.IsError || !errors.Is(r.Err, agent.ErrToolTimeout) {
		t.Errorf("slow's result = %+v; want a timeout (ToolTimeout)", r)
	}
	if len(res.Turns) != 2 || res.Text != "done" || len(srv.Requests()) != 2 {
		t.Errorf("%d turns, %d requests, Text %q; want the resumed turn and one model call", len(res.Turns), len(srv.Requests()), res.Text)
	}

	// The model calls again: the resumed run reaches MaxTurns after its
	// one model call, whose calls are answered.
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Lima"})))
	res, err = a.Run(context.Background(), journaled(t, srv, model, tools, fake.Call("get_weather", map[string]any{"city": "Oslo"})))
	if !errors.Is(err, agent.ErrMaxTurns) || len(res.Turns) != 2 || len(agent.PendingCalls(res.History)) != 0 {
		t.Errorf("Run() = %v with %d turns; want ErrMaxTurns after the resumed turn and one model turn, every call answered", err, len(res.Turns))
	}
}

// A history whose last calls are answered, or that ends with a model's
// text, runs as it always did: no tool runs before the model call.
func TestResumeNothingPending(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	tools := toolset.MustNew(w.tool())
	history := journaled(t, srv, model, tools, fake.Call("get_weather", map[string]any{"city": "Paris"}))
	call := agent.PendingCalls(history)[0]
	answered := append(history, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		geminiadapter.Response(call, toolset.Result{Output: "sunny in Paris"})}})
	if agent.PendingCalls(answered) != nil {
		t.Fatal("PendingCalls() of an answered turn is not nil")
	}
	srv.Enqueue(fake.Text("Sunny."))
	obs := &eventLog{}
	a := newAgent(t, srv, tools, func(c *agent.Config) { c.Observer = obs })
	res, err := a.Run(context.Background(), answered)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if w.calls.Load() != 0 || len(res.Turns) != 1 || res.Turns[0].Attempts != 1 || len(res.History) != 4 {
		t.Errorf("%d weather calls, %d turns, %d contents; want none, 1 and 4", w.calls.Load(), len(res.Turns), len(res.History))
	}
	if diff := cmp.Diff([]string{"RunStart", "ModelRequest", "ModelResponse", "TurnEnd", "Done"}, obs.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if e := obs.of(agent.EventModelRequest); e[0].Turn != 0 {
		t.Errorf("the model call is turn %d; want 0", e[0].Turn)
	}
}

func TestPendingCalls(t *testing.T) {
	call := &genai.FunctionCall{Name: "get_weather"}
	callPart := &genai.Part{FunctionCall: call}
	for _, tc := range []struct {
		name     string
		contents []*genai.Content
		want     int
	}{
		{"nil", nil, 0},
		{"user message", user("hi"), 0},
		{"model text", []*genai.Content{genai.NewContentFromText("hello", genai.RoleModel)}, 0},
		{"model calls", []*genai.Content{{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "let me look"}, callPart, callPart}}}, 2},
		{"calls answered", []*genai.Content{{Role: genai.RoleModel, Parts: []*genai.Part{callPart}},
			{Role: genai.RoleUser, Parts: []*genai.Part{geminiadapter.Response(call, toolset.Result{Output: "ok"})}}}, 0},
		{"calls of no role", []*genai.Content{{Parts: []*genai.Part{callPart}}}, 0},
		{"nil content", []*genai.Content{nil}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := agent.PendingCalls(tc.contents); len(got) != tc.want {
				t.Errorf("PendingCalls() = %d calls; want %d", len(got), tc.want)
			}
		})
	}
}

// RunTyped resumes as Run does: the pending calls are answered, then the
// model gives the typed answer.
func TestResumeRunTyped(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	tools := toolset.MustNew(w.tool())
	history := journaled(t, srv, model3, tools, fake.Call("get_weather", map[string]any{"city": "Paris"}))
	srv.Enqueue(fake.Text(invoiceJSON))
	a := newAgent(t, srv, tools, func(c *agent.Config) { c.Model = model3 })
	got, res, err := agent.RunTyped[invoice](context.Background(), a, history)
	if err != nil {
		t.Fatalf("RunTyped() = %v", err)
	}
	if diff := cmp.Diff(wantInvoice, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if w.calls.Load() != 1 || len(res.Turns) != 2 {
		t.Errorf("%d weather calls, %d turns; want 1 and 2", w.calls.Load(), len(res.Turns))
	}
}

// A resumed call of an agent run as a tool runs the agent, whose usage
// the run's Result counts, as in any turn.
func TestResumeAsTool(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	tm.add("researcher", 7, func(*fake.Request) *fake.Reply { return fake.Text("2.1 million") })
	tm.add("coordinator", 3, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint("Answer: ", rs[0].Response["result"]))
		}
		return fake.Calls(fake.Call("researcher", map[string]any{"request": "Population of Paris?"}))
	})
	researcher := member(t, srv, "researcher", nil)
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, researcher, "researcher")))

	// The coordinator's first turn, made by the process that died.
	history := user("How many people live in Paris?")
	resp, err := srv.Client().Models.GenerateContent(t.Context(), model3, history, coordinator.Steps().RequestConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	history = append(history, resp.Candidates[0].Content)

	res, err := coordinator.Run(context.Background(), history)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if res.Text != "Answer: 2.1 million" {
		t.Errorf("Text = %q; want the researcher's answer", res.Text)
	}
	if got := res.Agents["researcher"].TotalTokens; got != 7 || res.Usage.TotalTokens != 10 {
		t.Errorf("usage: researcher %d, total %d; want 7 and 10 (the resumed turn's model call is not the run's)", got, res.Usage.TotalTokens)
	}
}
