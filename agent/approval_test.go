package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// needsApproval picks the calls of get_weather, and none of time_now.
func needsApproval(call *genai.FunctionCall) bool { return call.Name == "get_weather" }

func timeTool(ran *atomic.Int32) *toolset.Tool {
	return tool("time_now", func(context.Context, map[string]any) (any, error) {
		ran.Add(1)
		return "12:00", nil
	})
}

// The Stream consumer decides each call that needs approval in band, in
// its own loop, while the run waits; calls that need none run meanwhile.
func TestStreamApprovals(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	var timeRan atomic.Int32
	a := newAgent(t, srv, toolset.MustNew(w.tool(), timeTool(&timeRan)), func(c *agent.Config) { c.NeedsApproval = needsApproval })
	srv.Enqueue(fake.Calls(
		fake.Call("get_weather", map[string]any{"city": "Paris"}),
		fake.Call("get_weather", map[string]any{"city": "Mordor"}),
		fake.Call("time_now", nil),
		fake.Call("get_weather", map[string]any{"city": "Cached"}),
		fake.Call("get_weather", map[string]any{"city": "Ignored"}),
	), fake.Text("done"))

	var asked []string
	var late *agent.Approval
	var steps []string
	for e, err := range a.Stream(context.Background(), user("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == agent.EventApproval || e.Kind == agent.EventToolResult || e.Kind == agent.EventToolCall {
			steps = append(steps, e.Kind.String())
		}
		if e.Kind != agent.EventApproval {
			continue
		}
		city := e.Call.Args["city"].(string)
		asked = append(asked, city)
		if e.Approval.Call != e.Call || e.Tool == nil || e.Tool.Name != "get_weather" {
			t.Errorf("approval event %+v: want the call and its tool", e)
		}
		if n := w.calls.Load(); n > int32(len(asked)-1) {
			t.Errorf("%d weather calls ran before %s was decided; only %d were approved", n, city, len(asked)-1)
		}
		switch city {
		case "Paris":
			e.Approval.Approve()
			e.Approval.Deny("second thoughts") // the first decision counts
		case "Mordor":
			e.Approval.Deny("the user said no")
		case "Cached":
			e.Approval.Answer("cloudy (cached)")
		case "Ignored":
			late = e.Approval
		}
	}
	late.Approve() // too late: the loop went on
	if diff := cmp.Diff([]string{"Paris", "Mordor", "Cached", "Ignored"}, asked); diff != "" {
		t.Errorf("approvals asked (-want +got):\n%s", diff)
	}
	if late.Decided() {
		t.Error("a decision after the consumer moved on was taken")
	}
	want := []map[string]any{
		{"result": "sunny in Paris"},
		{"error": "the user said no", "denied": true},
		{"result": "12:00"},
		{"result": "cloudy (cached)"},
		{"error": "tool get_weather was not run: it needed approval and was not approved", "denied": true},
	}
	got := lastResponses(t, srv)
	for i := range want {
		if diff := cmp.Diff(want[i], got[i].Response); diff != "" {
			t.Errorf("response %d (-want +got):\n%s", i, diff)
		}
	}
	if w.calls.Load() != 1 || timeRan.Load() != 1 {
		t.Errorf("weather ran %d times, time %d; want 1 and 1", w.calls.Load(), timeRan.Load())
	}
	// Approvals come after the turn's tool calls are announced.
	if steps[0] != "ToolCall" || steps[5] != "Approval" {
		t.Errorf("events = %v; want the 5 ToolCall events, then the approvals", steps)
	}
}

// A consumer that breaks out of its loop at an approval stops the run: no
// pending call runs, nobody else is asked.
func TestStreamApprovalBreak(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	var intercepted atomic.Int32
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
		c.NeedsApproval = needsApproval
		c.Intercept = func(context.Context, *genai.FunctionCall) *toolset.Result { intercepted.Add(1); return nil }
	})
	srv.Enqueue(fake.Calls(cities(3)...))
	approvals := 0
	for e := range a.Stream(context.Background(), user("go")) {
		if e.Kind == agent.EventApproval {
			approvals++
			break
		}
	}
	if approvals != 1 || w.calls.Load() != 0 || intercepted.Load() != 0 {
		t.Errorf("after a break: %d approvals asked, %d calls ran, %d interceptions; want 1, 0, 0",
			approvals, w.calls.Load(), intercepted.Load())
	}
}

// Run has no consumer to ask: the Interceptor decides the calls that need
// approval, and without one they are denied.
func TestRunApprovals(t *testing.T) {
	for _, withInterceptor := range []bool{false, true} {
		srv := newServer(t)
		w := &weatherTool{}
		var timeRan atomic.Int32
		a := newAgent(t, srv, toolset.MustNew(w.tool(), timeTool(&timeRan)), func(c *agent.Config) {
			c.NeedsApproval = needsApproval
			if withInterceptor {
				c.Intercept = func(_ context.Context, call *genai.FunctionCall) *toolset.Result {
					if call.Args["city"] == "Mordor" {
						return agent.Deny("no")
					}
					return nil
				}
			}
		})
		srv.Enqueue(fake.Calls(
			fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "Mordor"}),
			fake.Call("time_now", nil),
		), fake.Text("done"))
		res, err := a.Run(context.Background(), user("go"))
		if err != nil {
			t.Fatal(err)
		}
		got := lastResponses(t, srv)
		if withInterceptor {
			if got[0].Response["result"] != "sunny in Paris" || got[1].Response["error"] != "no" {
				t.Errorf("with an interceptor: responses %v, %v", got[0].Response, got[1].Response)
			}
		} else {
			msg, _ := got[0].Response["error"].(string)
			if !strings.Contains(msg, "needs approval") || !errors.Is(res.Turns[0].Results[0].Err, agent.ErrDenied) {
				t.Errorf("without an interceptor: response %v, Err %v; want denied", got[0].Response, res.Turns[0].Results[0].Err)
			}
		}
		if got[2].Response["result"] != "12:00" {
			t.Errorf("a call that needs no approval: %v", got[2].Response)
		}
	}
}
