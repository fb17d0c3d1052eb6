package temporalagent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/genai"
)

// executeChain runs the workflow, and each execution it continues as new
// into, until the run ends; it returns the outcome, with the number of
// executions.
func executeChain(t *testing.T, def Agent, contents []*genai.Content) (*agent.Result, int, error) {
	t.Helper()
	return executeInput(t, def, runInput{Agent: def.Name, Contents: contents}, nil)
}

// executeInput is executeChain for a run whose workflow input is in;
// before execution n (from 0) runs, setup, when not nil, gets its
// environment.
func executeInput(t *testing.T, def Agent, in runInput, setup func(n int, env *testsuite.TestWorkflowEnvironment)) (*agent.Result, int, error) {
	t.Helper()
	for n := 0; ; n++ {
		env := newEnv(t, def)
		if setup != nil {
			setup(n, env)
		}
		env.ExecuteWorkflow(WorkflowName, in)
		next, ok := continued(t, env)
		if !ok {
			var out runOutput
			err := env.GetWorkflowError()
			if err == nil {
				if err := env.GetWorkflowResult(&out); err != nil {
					t.Fatal(err)
				}
			}
			res, err := outcome(err, &out)
			return res, n + 1, err
		}
		in = next
	}
}

// continued returns the input the workflow executed in env continued as
// new with, and false when it did not continue as new.
func continued(t *testing.T, env *testsuite.TestWorkflowEnvironment) (runInput, bool) {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if !errors.As(env.GetWorkflowError(), &can) {
		return runInput{}, false
	}
	var in runInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatalf("decoding the continue-as-new input: %v", err)
	}
	return in, true
}

// weatherTurns scripts n turns of one weather call each, then an answer.
func weatherTurns(n int) []*fake.Reply {
	var replies []*fake.Reply
	for i := range n {
		replies = append(replies, fake.Calls(fake.Call("get_weather", map[string]any{"city": fmt.Sprintf("c%d", i)})))
	}
	return append(replies, fake.Text("all sunny"))
}

// TestContinueAsNew: a run that continues as new every two turns gives the
// result a run without continue-as-new gives, turns and usage included,
// and agent.Run's requests; MaxTurns counts over the whole run.
func TestContinueAsNew(t *testing.T) {
	direct, durable := newServer(t), newServer(t)
	direct.Enqueue(weatherTurns(5)...)
	durable.Enqueue(weatherTurns(5)...)
	want, err := newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool())).Run(context.Background(), user("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	def := Agent{Name: "w", Agent: newAgent(t, durable, toolset.MustNew((&weatherTool{}).tool())), ContinueAsNewEvery: 2}
	got, executions, err := executeChain(t, def, user("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	if executions != 3 {
		t.Errorf("%d executions, want 3 (6 turns, continuing as new every 2)", executions)
	}
	if got.Text != want.Text || got.Usage != want.Usage || len(got.Turns) != len(want.Turns) || len(got.History) != len(want.History) {
		t.Fatalf("result = %q, %+v, %d turns, %d contents; agent.Run's = %q, %+v, %d, %d", got.Text, got.Usage, len(got.Turns), len(got.History),
			want.Text, want.Usage, len(want.Turns), len(want.History))
	}
	for i, turn := range got.Turns {
		w := want.Turns[i]
		if turn.Usage != w.Usage || len(turn.Calls) != len(w.Calls) || turn.Response.Candidates[0].Content == nil {
			t.Errorf("turn %d = %+v, want %+v", i, turn, w)
			continue
		}
		for j, r := range turn.Results {
			if r.Output != w.Results[j].Output || r.Call.Args["city"] != w.Results[j].Call.Args["city"] {
				t.Errorf("turn %d, result %d = %v for %v, want %v for %v", i, j, r.Output, r.Call.Args, w.Results[j].Output, w.Results[j].Call.Args)
			}
		}
	}
	for i, req := range durable.Requests() {
		if string(req.Body) != string(direct.Requests()[i].Body) {
			t.Errorf("request %d differs from agent.Run's", i+1)
		}
	}

	durable.Enqueue(weatherTurns(5)...)
	def.Agent = newAgent(t, durable, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.MaxTurns = 3 })
	res, _, err := executeChain(t, def, user("Weather?"))
	if !errors.Is(err, agent.ErrMaxTurns) || len(res.Turns) != 3 {
		t.Errorf("with MaxTurns 3: %v after %d turns, want ErrMaxTurns after 3", err, len(res.Turns))
	}
}

// TestContinueAsNewSuggested: the run continues as new at the end of a
// turn when the server suggests it.
func TestContinueAsNewSuggested(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(weatherTurns(1)...)
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()))})
	env.SetContinueAsNewSuggested(true)
	env.ExecuteWorkflow(WorkflowName, runInput{Agent: "w", Contents: user("Weather?")})
	in, ok := continued(t, env)
	if !ok {
		t.Fatalf("err = %v, want a continue-as-new after the first turn", env.GetWorkflowError())
	}
	if len(in.Contents) != 3 || in.State == nil || len(in.State.Turns) != 1 || in.State.Usage.TotalTokens == 0 ||
		in.State.Turns[0].Response.Candidates[0].Content != nil {
		t.Errorf("carried = %d contents, %+v; want the history and one compacted turn", len(in.Contents), in.State)
	}
}
