package temporalagent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/genai"
)

// payTools are a tool that needs approval (pay) and one that does not.
func payTools(paid *atomic.Int32) *toolset.Set {
	type payIn struct {
		Amount float64 `json:"amount"`
	}
	return toolset.MustNew(
		toolset.MustFunc("pay", "Pays", func(ctx context.Context, in payIn) (string, error) {
			paid.Add(1)
			return "paid", nil
		}),
		(&weatherTool{}).tool(),
	)
}

func needsPay(call *genai.FunctionCall) bool { return call.Name == "pay" }

// decision is the outcome of an update: the validator's rejection, or
// the handler's result.
type decision struct {
	done bool
	err  error
}

// decide sends a decision as an update; its outcome arrives later.
func decide(env *testsuite.TestWorkflowEnvironment, d Decision) *decision {
	out := &decision{}
	env.UpdateWorkflow(DecideUpdateName, "", &testsuite.TestUpdateCallback{
		OnReject:   func(e error) { out.done, out.err = true, e },
		OnComplete: func(_ any, e error) { out.done, out.err = true, e },
	}, d)
	return out
}

// TestApprovals: calls that need approval wait for a decision by update,
// while the others run; approved calls run without asking the
// Interceptor, denied ones answer the model with the reason; unknown and
// already-decided ids are rejected; the progress query lists what waits.
func TestApprovals(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(
		fake.Calls(fake.Call("pay", map[string]any{"amount": 5}), fake.Call("get_weather", map[string]any{"city": "Oslo"}),
			fake.Call("pay", map[string]any{"amount": 500})),
		fake.Text("done"),
	)
	var paid, intercepted atomic.Int32
	a := newAgent(t, srv, payTools(&paid), func(c *agent.Config) {
		c.NeedsApproval = needsPay
		c.Intercept = func(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
			intercepted.Add(1)
			return nil
		}
	})
	var log eventLog
	a = a.With(agent.Overrides{Observer: &log})
	env := newEnv(t, Agent{Name: "w", Agent: a})
	var progress *Progress
	var errs []*decision
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ProgressQueryName)
		if err == nil {
			err = v.Get(&progress)
		}
		if err != nil {
			t.Errorf("progress query: %v", err)
		}
		errs = append(errs,
			decide(env, Decision{ID: "0.7", Approve: true}),
			decide(env, Decision{ID: "0.0", Approve: true}),
			decide(env, Decision{ID: "0.0", Approve: false}),
			decide(env, Decision{ID: "0.2", Reason: "over the limit"}),
		)
	}, time.Minute)
	res, err := execute(env, "w", user("Pay"))
	if err != nil {
		t.Fatal(err)
	}
	if progress == nil || len(progress.Pending) != 2 || progress.Pending[0].ID != "0.0" || progress.Pending[1].ID != "0.2" ||
		progress.Pending[1].Call.Args["amount"] != 500.0 || !progress.Pending[0].Deadline.IsZero() || progress.Turn != 0 {
		t.Errorf("progress while waiting = %+v, want the two pay calls pending in turn 0", progress)
	}
	for i, d := range errs {
		if !d.done {
			t.Fatalf("decision %d had no outcome", i)
		}
	}
	if !errors.Is(errorOf(errs[0].err), ErrUnknownApproval) {
		t.Errorf("decision about an unknown id: %v, want ErrUnknownApproval", errs[0].err)
	}
	if errs[1].err != nil || errs[3].err != nil {
		t.Errorf("decisions about waiting calls: %v, %v; want both accepted", errs[1].err, errs[3].err)
	}
	if !errors.Is(errorOf(errs[2].err), ErrDecided) {
		t.Errorf("second decision about a call: %v, want ErrDecided", errs[2].err)
	}
	if paid.Load() != 1 || intercepted.Load() != 1 {
		t.Errorf("pay ran %d times and the interceptor was asked %d times; want 1 and 1 (for get_weather only)", paid.Load(), intercepted.Load())
	}
	answers := res.History[2].Parts
	if answers[0].FunctionResponse.Response["result"] != "paid" || answers[1].FunctionResponse.Response["result"] != "sunny in Oslo" ||
		answers[2].FunctionResponse.Response["error"] != "over the limit" || answers[2].FunctionResponse.Response["denied"] != true ||
		answers[1].FunctionResponse.Response["denied"] != nil {
		t.Errorf("answers = %v %v %v", answers[0].FunctionResponse.Response, answers[1].FunctionResponse.Response, answers[2].FunctionResponse.Response)
	}
	// The run's turns, read back from the history, keep the denial one.
	if len(res.Turns) == 0 || len(res.Turns[0].Results) != 3 || !errors.Is(res.Turns[0].Results[2].Err, agent.ErrDenied) ||
		res.Turns[0].Results[2].Output != "over the limit" || res.Turns[0].Results[1].Err != nil {
		t.Errorf("the first turn's results: %+v", res.Turns)
	}
	if got := log.count(agent.EventApproval); got != 2 {
		t.Errorf("%d EventApproval events, want 2", got)
	}
	if got := log.count(agent.EventToolResult); got != 3 {
		t.Errorf("%d EventToolResult events, want 3", got)
	}
}

// TestApprovalDeadline: calls still undecided when Agent.ApprovalTimeout
// passes are denied.
func TestApprovalDeadline(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Calls(fake.Call("pay", map[string]any{"amount": 5})), fake.Text("done"))
	var paid atomic.Int32
	env := newEnv(t, Agent{Name: "w", ApprovalTimeout: 48 * time.Hour,
		Agent: newAgent(t, srv, payTools(&paid), func(c *agent.Config) { c.NeedsApproval = needsPay })})
	var progress Progress
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(ProgressQueryName)
		_ = v.Get(&progress)
	}, time.Hour)
	res, err := execute(env, "w", user("Pay"))
	if err != nil {
		t.Fatal(err)
	}
	if len(progress.Pending) != 1 || progress.Pending[0].Deadline.Sub(progress.Pending[0].Since) != 48*time.Hour {
		t.Errorf("pending = %+v, want one call with a deadline 48h after it began waiting", progress.Pending)
	}
	msg, _ := res.History[2].Parts[0].FunctionResponse.Response["error"].(string)
	if paid.Load() != 0 || !containsAll(msg, "pay", "deadline") {
		t.Errorf("pay ran %d times, answer %q; want a denial for the deadline", paid.Load(), msg)
	}
}

// errorOf returns err's application error turned into this package's
// error, as Run.Decide does.
func errorOf(err error) error {
	if err == nil {
		return nil
	}
	return decisionError(err, Decision{})
}

// TestDecidedAcrossContinueAsNew: a call decided before the run continued
// as new stays decided: a second decision about it is rejected with
// ErrDecided, as within one execution, not with ErrUnknownApproval.
func TestDecidedAcrossContinueAsNew(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(
		fake.Calls(fake.Call("pay", map[string]any{"amount": 5})),
		fake.Calls(fake.Call("pay", map[string]any{"amount": 7})),
		fake.Text("done"),
	)
	var paid atomic.Int32
	def := Agent{Name: "w", ContinueAsNewEvery: 1,
		Agent: newAgent(t, srv, payTools(&paid), func(c *agent.Config) { c.NeedsApproval = needsPay })}
	decisions := map[int][]*decision{}
	_, executions, err := executeInput(t, def, runInput{Agent: "w", Contents: user("Pay")}, func(n int, env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			if n == 1 {
				decisions[n] = append(decisions[n], decide(env, Decision{ID: "0.0", Reason: "changed my mind"}))
			}
			decisions[n] = append(decisions[n], decide(env, Decision{ID: fmt.Sprintf("%d.0", n), Approve: true}))
		}, time.Minute)
	})
	if err != nil {
		t.Fatal(err)
	}
	if executions != 3 || len(decisions[1]) != 2 {
		t.Fatalf("%d executions, with %v decisions; want 3, the second with 2", executions, decisions)
	}
	if d := decisions[1][0]; !d.done || !errors.Is(errorOf(d.err), ErrDecided) {
		t.Errorf("a second decision about 0.0 after continuing as new: %v, want ErrDecided", d.err)
	}
	if d := decisions[1][1]; !d.done || d.err != nil {
		t.Errorf("the decision about 1.0: %v, want it accepted", d.err)
	}
	if paid.Load() != 2 {
		t.Errorf("pay ran %d times, want 2", paid.Load())
	}
}
