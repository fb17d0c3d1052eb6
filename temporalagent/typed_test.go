package temporalagent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

type forecast struct {
	City  string `json:"city"`
	Sunny bool   `json:"sunny"`
}

// typedScript: the model calls get_weather, then gives a refused answer,
// then a valid one.
func typedScript(invalid, valid *fake.Reply) []*fake.Reply {
	return []*fake.Reply{fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), invalid, valid}
}

func finalAnswer(args map[string]any) *fake.Reply {
	return fake.Calls(fake.Call(agent.DefaultOutputToolName, args))
}

// typedAgent returns the typed agent for forecast of an agent on srv.
func typedAgent(t *testing.T, srv *fake.Server, strategy agent.OutputStrategy, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	a, err := agent.Typed[forecast](newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), append([]func(*agent.Config){func(c *agent.Config) {
		c.Output.Strategy = strategy
		c.MaxTurns = 2
	}}, edit...)...))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestTypedSameAsRunTyped runs typed conversations, each with a refused
// answer before the valid one, with agent.RunTyped and as a workflow, and
// requires the very same requests and the same answer.
func TestTypedSameAsRunTyped(t *testing.T) {
	valid := map[string]any{"city": "Paris", "sunny": true}
	for _, tc := range []struct {
		name           string
		strategy       agent.OutputStrategy
		invalid, valid *fake.Reply
	}{
		{"tool", agent.OutputTool, finalAnswer(map[string]any{"city": "Paris", "sunny": "yes"}), finalAnswer(valid)},
		{"tool, prose", agent.OutputTool, fake.Text("Sunny in Paris."), finalAnswer(valid)},
		{"native", agent.OutputNative, fake.Text(`{"city":"Paris"}`), fake.Text(`{"city":"Paris","sunny":true}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct, durable := newServer(t), newServer(t)
			direct.Enqueue(typedScript(tc.invalid, tc.valid)...)
			durable.Enqueue(typedScript(tc.invalid, tc.valid)...)
			base := newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
				c.Output.Strategy = tc.strategy
				c.MaxTurns = 2
			})
			want, wantRes, err := agent.RunTyped[forecast](context.Background(), base, user("Weather in Paris?"))
			if err != nil {
				t.Fatalf("RunTyped: %v", err)
			}
			log := &eventLog{}
			env := newEnv(t, Agent{Name: "forecast", Agent: typedAgent(t, durable, tc.strategy, func(c *agent.Config) { c.Observer = log })})
			env.ExecuteWorkflow(WorkflowName, runInput{Agent: "forecast", Contents: user("Weather in Paris?")})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("durable run: %v", err)
			}
			var out runOutput
			if err := env.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			var got forecast
			if err := json.Unmarshal(out.Output, &got); err != nil || got != want {
				t.Errorf("durable answer = %s (%v); RunTyped's %+v", out.Output, err, want)
			}
			res := out.result()
			if m, ok := res.Output.(map[string]any); !ok || m["city"] != "Paris" || len(res.History) != len(wantRes.History) {
				t.Errorf("durable Result.Output = %#v with %d contents; want the answer decoded, %d contents", res.Output, len(res.History), len(wantRes.History))
			}
			sameRequests(t, durable, direct, 3)
			if n := log.count(agent.EventRetry); n != 1 {
				t.Errorf("the Observer saw %d EventRetry; want 1, for the refused answer", n)
			}
		})
	}
}

// TestTypedReasksRunOut: when no valid answer comes, the run fails with
// the *agent.OutputError agent.RunTyped returns, raw answer and partial
// Result included.
func TestTypedReasksRunOut(t *testing.T) {
	srv := newServer(t)
	for range 3 {
		srv.Enqueue(fake.Text("no JSON"))
	}
	env := newEnv(t, Agent{Name: "forecast", Agent: typedAgent(t, srv, agent.OutputNative)})
	res, err := execute(env, "forecast", user("Weather in Paris?"))
	var oe *agent.OutputError
	if !errors.As(err, &oe) || !errors.Is(err, agent.ErrInvalidOutput) {
		t.Fatalf("durable run = %v; want an *agent.OutputError", err)
	}
	if oe.Raw != "no JSON" || oe.Reasks != agent.DefaultMaxOutputReasks || oe.Strategy != agent.OutputNative || oe.Result != res || len(res.Turns) != 3 {
		t.Errorf("OutputError = %+v, %d turns; want the raw answer, %d re-asks, the partial result of 3 turns", oe, len(res.Turns), agent.DefaultMaxOutputReasks)
	}
	if diff := cmp.Diff("the answer is not valid JSON", oe.Err.Error()[:len("the answer is not valid JSON")]); diff != "" {
		t.Errorf("OutputError.Err: %s", diff)
	}
}

// TestTypedContinueAsNew: a typed run that continues as new after every
// turn carries its re-asks across executions: the answer, the requests and
// the MaxTurns count are those of agent.RunTyped.
func TestTypedContinueAsNew(t *testing.T) {
	invalid, valid := fake.Text("Sunny in Paris."), finalAnswer(map[string]any{"city": "Paris", "sunny": true})
	direct, durable := newServer(t), newServer(t)
	direct.Enqueue(typedScript(invalid, valid)...)
	durable.Enqueue(typedScript(invalid, valid)...)
	want, _, err := agent.RunTyped[forecast](context.Background(), newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()),
		func(c *agent.Config) { c.Output.Strategy, c.MaxTurns = agent.OutputTool, 2 }), user("Weather in Paris?"))
	if err != nil {
		t.Fatalf("RunTyped: %v", err)
	}
	res, executions, err := executeChain(t, Agent{Name: "forecast", Agent: typedAgent(t, durable, agent.OutputTool), ContinueAsNewEvery: 1},
		user("Weather in Paris?"))
	if err != nil {
		t.Fatalf("durable run: %v", err)
	}
	if m, ok := res.Output.(map[string]any); !ok || m["city"] != want.City || m["sunny"] != want.Sunny || executions != 3 {
		t.Errorf("durable answer = %#v after %d executions; want %+v after 3", res.Output, executions, want)
	}
	sameRequests(t, durable, direct, 3)
}
