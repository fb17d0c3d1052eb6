package eval_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// ran and denied are the responses a stored conversation keeps for a
// call that ran and for one a person denied.
func ran(name string, result any) *genai.FunctionResponse {
	return &genai.FunctionResponse{Name: name, Response: map[string]any{"result": result}}
}

func denied(name, reason string) *genai.FunctionResponse {
	return &genai.FunctionResponse{Name: name, Response: map[string]any{"error": reason, geminiadapter.DeniedKey: true}}
}

// A call that did not run (denied, or never answered) does not match one
// that ran, whatever the match type; a turn that records no responses
// says nothing, and matches either.
func TestToolTrajectoryCallsThatDidNotRun(t *testing.T) {
	paris, oslo := call("get_weather", map[string]any{"city": "Paris"}), call("get_weather", map[string]any{"city": "Oslo"})
	turn := func(responses ...*genai.FunctionResponse) eval.Turn {
		tr := turnWith(paris, oslo)
		tr.ToolResponses = responses
		return tr
	}
	bothRan := turn(ran("get_weather", "sunny in Paris"), ran("get_weather", "rain in Oslo"))
	osloDenied := turn(ran("get_weather", "sunny in Paris"), denied("get_weather", "tool get_weather was not run: it needs approval, and nobody was asked (Run has no Interceptor)"))
	osloUnanswered := turn(ran("get_weather", "sunny in Paris"))
	osloDeniedByAPerson := turn(ran("get_weather", "sunny in Paris"), denied("get_weather", "the user denied this call"))
	unrecorded := turn()
	for _, tc := range []struct {
		name             string
		actual, expected eval.Turn
		want             float64
		reason           string
	}{
		{"denied, where it ran", osloDenied, bothRan, 0, "was not run (tool get_weather was not run: it needs approval"},
		{"unanswered, where it ran", osloUnanswered, bothRan, 0, "was not run (never answered)"},
		{"ran, where it was denied", bothRan, osloDeniedByAPerson, 0, "ran; the expected call was not run (the user denied this call)"},
		{"denied both times", osloDenied, osloDeniedByAPerson, 1, ""},
		{"both ran", bothRan, bothRan, 1, ""},
		{"the expected turn records no responses", osloDenied, unrecorded, 1, ""},
	} {
		for _, m := range []eval.ToolTrajectory{{Threshold: 1}, {Threshold: 1, Match: eval.MatchInOrder}, {Threshold: 1, Match: eval.MatchAnyOrder}} {
			t.Run(tc.name+"/"+m.Match.String(), func(t *testing.T) {
				s := score(t, m, []eval.Turn{tc.actual}, []eval.Turn{tc.expected})
				if s.Value != tc.want {
					t.Fatalf("score %v, want %v (%s)", s.Value, tc.want, s.Turns[0].Reason)
				}
				if tc.want == 1 {
					return
				}
				if m.Match == eval.MatchExact && !strings.Contains(s.Turns[0].Reason, tc.reason) {
					t.Errorf("reason %q, want it to say %q", s.Turns[0].Reason, tc.reason)
				}
				if !strings.Contains(s.Turns[0].Detail, "[not run: ") {
					t.Errorf("detail %q marks no call as not run", s.Turns[0].Detail)
				}
			})
		}
	}
}

// approvalAgent is a weather agent whose every call needs approval, on a
// model that calls get_weather for each city of the user's message and
// then says what each call answered; it counts the cities its tool ran
// for.
func approvalAgent(t *testing.T, intercept agent.Interceptor) (*agent.Agent, map[string]int) {
	t.Helper()
	srv := geminitest.Start(t)
	srv.SetReplyFunc(func(req *geminitest.Request) *geminitest.Reply {
		if rs := req.LastFunctionResponses(""); len(rs) > 0 {
			var parts []string
			for _, r := range rs {
				if why, ok := geminiadapter.Denied(&genai.FunctionResponse{Response: r.Response}); ok {
					parts = append(parts, "denied: "+why)
				} else {
					parts = append(parts, r.Response["result"].(string))
				}
			}
			return geminitest.Text(strings.Join(parts, "; ") + ".")
		}
		return weatherModel(req)
	})
	var mu sync.Mutex
	runs := map[string]int{}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (string, error) {
		mu.Lock()
		runs[in.City]++
		mu.Unlock()
		return "sunny in " + in.City, nil
	})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: testModel, Tools: toolset.MustNew(weather),
		NeedsApproval: func(*genai.FunctionCall) bool { return true }, Intercept: intercept,
		Retry: agent.RetryPolicy{InitialDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return a, runs
}

// approvedCase is a conversation in which a person approved Paris and
// denied Oslo, as the dev UI saves one.
func approvedCase() *eval.Set {
	paris, oslo := call("get_weather", map[string]any{"city": "Paris"}), call("get_weather", map[string]any{"city": "Oslo"})
	turn := eval.UserTurn("What is the weather in Paris and the weather in Oslo?").WithCalls(paris, oslo).
		WithResponse("sunny in Paris; denied: not Oslo.")
	turn.ToolResponses = []*genai.FunctionResponse{ran("get_weather", "sunny in Paris"), denied("get_weather", "not Oslo")}
	return &eval.Set{ID: "approvals", Cases: []eval.Case{{ID: "paris-oslo", Turns: []eval.Turn{turn}}}}
}

// An eval of a conversation that had approvals decides them as the
// conversation did (ReplayDecisions, the default): the approved call
// runs, the denied one is denied with its reason, and the case passes.
// Without the replay (a policy that denies everything), the calls that
// ran in the conversation are not run, and the trajectory fails.
func TestApprovalsReplayed(t *testing.T) {
	a, runs := approvalAgent(t, nil)
	rep, err := eval.Evaluate(context.Background(), approvedCase(), eval.Options{Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != eval.Passed {
		t.Fatalf("the replayed case: %v\n%s", c.Status, rep.Table())
	}
	if runs["Paris"] != 1 || runs["Oslo"] != 0 {
		t.Errorf("the tool ran for %v; want Paris once, Oslo never", runs)
	}
	if got := c.Runs[0].Turns[0].Responses(); len(got) != 2 || got[1].Response["error"] != "not Oslo" {
		t.Errorf("the run's responses: %+v; want Oslo denied with the recorded reason", got)
	}

	// A policy of the test's own: everything denied.
	a, runs = approvalAgent(t, nil)
	var asked []string
	var mu sync.Mutex
	rep, err = eval.Evaluate(context.Background(), approvedCase(), eval.Options{Agent: a,
		Approve: func(_ context.Context, c *eval.Case, turn int, call *genai.FunctionCall) *toolset.Result {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, c.ID+"/"+call.Args["city"].(string))
			if turn != 0 {
				t.Errorf("asked about turn %d", turn)
			}
			return agent.Deny("no")
		}})
	if err != nil {
		t.Fatal(err)
	}
	traj := rep.Cases[0].Runs[0].Scores[0]
	if len(asked) != 2 || len(runs) != 0 || traj.Value != 0 || !strings.Contains(traj.Turns[0].Reason, "was not run (no); the expected call ran") {
		t.Errorf("asked %v, ran %v, trajectory %v: %q", asked, runs, traj.Value, traj.Turns[0].Reason)
	}

	// An agent with its own Interceptor decides its approvals itself.
	a, runs = approvalAgent(t, func(_ context.Context, call *genai.FunctionCall) *toolset.Result { return nil })
	if _, err := eval.Evaluate(context.Background(), approvedCase(), eval.Options{Agent: a,
		Approve: func(context.Context, *eval.Case, int, *genai.FunctionCall) *toolset.Result {
			t.Error("Approve asked, though the agent has an Interceptor")
			return nil
		}}); err != nil {
		t.Fatal(err)
	}
	if runs["Paris"] != 1 || runs["Oslo"] != 1 {
		t.Errorf("with the agent's Interceptor, the tool ran for %v; want both", runs)
	}
}

// ReplayDecisions denies what the case does not record: a call its turn
// does not have, a call of a scenario; a turn that records calls but no
// responses approves them.
func TestReplayDecisions(t *testing.T) {
	ctx := context.Background()
	set := approvedCase()
	c := &set.Cases[0]
	rome := call("get_weather", map[string]any{"city": "Rome"})
	if r := eval.ReplayDecisions(ctx, c, 0, rome); r == nil || !strings.Contains(r.Output.(string), "no such call") {
		t.Errorf("a call the turn does not have: %+v", r)
	}
	if r := eval.ReplayDecisions(ctx, c, 0, call("get_weather", map[string]any{"city": "Paris"})); r != nil {
		t.Errorf("Paris, which ran: %+v", r)
	}
	if r := eval.ReplayDecisions(ctx, c, 0, call("get_weather", map[string]any{"city": "Oslo"})); r == nil || r.Output != "not Oslo" {
		t.Errorf("Oslo, which was denied: %+v", r)
	}
	if r := eval.ReplayDecisions(ctx, c, 3, rome); r == nil {
		t.Error("a turn the case does not have: approved")
	}
	c.Turns[0].ToolResponses = nil
	if r := eval.ReplayDecisions(ctx, c, 0, call("get_weather", map[string]any{"city": "Oslo"})); r != nil {
		t.Errorf("a turn with calls and no responses: %+v", r)
	}
	scenario := &eval.Case{ID: "s", Scenario: &eval.Scenario{StartingPrompt: "hi"}}
	if r := eval.ReplayDecisions(ctx, scenario, 0, rome); r == nil {
		t.Error("a scenario's call: approved")
	}
}
