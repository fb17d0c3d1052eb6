package temporalagent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/genai"
)

// TestRegisterRejects: Register says what is wrong with a definition.
func TestRegisterRejects(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()))
	dup := toolset.MustFunc("get_weather", "again", func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	for _, tc := range []struct {
		name   string
		agents []Agent
		want   string
	}{
		{"no name", []Agent{{Agent: a}}, "no Name"},
		{"no agent", []Agent{{Name: "w"}}, "Agent is nil"},
		{"two of a name", []Agent{{Name: "w", Agent: a}, {Name: "w", Agent: a}}, "two agents are named"},
		{"unknown tool", []Agent{{Name: "w", Agent: a, Tools: map[string]ToolOptions{"nope": {}}}}, `"nope", which the agent does not have`},
		{"negative", []Agent{{Name: "w", Agent: a, ApprovalTimeout: -1}}, "negative"},
		{"negative attempts", []Agent{{Name: "w", Agent: a, Tools: map[string]ToolOptions{"get_weather": {MaxAttempts: -1}}}}, "negative MaxAttempts"},
		{"broken agent", []Agent{{Name: "w", Agent: a.With(agent.Overrides{Tools: []*toolset.Tool{dup}})}}, "get_weather"},
	} {
		var s testsuite.WorkflowTestSuite
		err := Register(s.NewTestWorkflowEnvironment(), tc.agents...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Register() = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestOutputCap: tool outputs are cut at Agent.MaxOutputBytes, or the
// agent's own limit when it is smaller.
func TestOutputCap(t *testing.T) {
	big := toolset.MustFunc("big", "A large output", func(ctx context.Context, in struct{}) (string, error) {
		return strings.Repeat("z", 400<<10), nil
	})
	for _, tc := range []struct {
		name    string
		own     int
		durable int
		want    int
	}{
		{"default", 0, 0, DefaultMaxOutputBytes},
		{"agent's smaller", 1000, 0, 1000},
		{"durable's", 0, 5000, 5000},
	} {
		srv := newServer(t)
		srv.Enqueue(fake.Calls(fake.Call("big", map[string]any{})), fake.Text("ok"))
		a := newAgent(t, srv, toolset.MustNew(big), func(c *agent.Config) { c.MaxOutputBytes = tc.own })
		env := newEnv(t, Agent{Name: "w", Agent: a, MaxOutputBytes: tc.durable})
		res, err := execute(env, "w", user("Hi"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out, _ := res.History[2].Parts[0].FunctionResponse.Response["result"].(string)
		if n := jsonSize(out); n > tc.want || n < tc.want-16 || !strings.HasPrefix(out, "[output truncated") {
			t.Errorf("%s: output is %d bytes of JSON, want it cut to %d", tc.name, n, tc.want)
		}
	}
}

// TestPrepareHistory: the agent's PrepareHistory shortens what the model
// calls send, on the worker, as in agent.Run, while the result keeps the
// whole history.
func TestPrepareHistory(t *testing.T) {
	keepLast := func(ctx context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
		if n := len(h.Contents); n > 3 {
			// The question and the last call with its answer.
			return slices.Concat(h.Contents[:1], h.Contents[n-2:]), nil
		}
		return h.Contents, nil
	}
	direct, durable := newServer(t), newServer(t)
	direct.Enqueue(weatherTurns(3)...)
	durable.Enqueue(weatherTurns(3)...)
	edit := func(c *agent.Config) { c.PrepareHistory = keepLast }
	want, err := newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()), edit).Run(context.Background(), user("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	def := Agent{Name: "w", Agent: newAgent(t, durable, toolset.MustNew((&weatherTool{}).tool()), edit), ContinueAsNewEvery: 2}
	got, _, err := executeChain(t, def, user("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.History) != len(want.History) || got.Text != want.Text {
		t.Errorf("result: %d contents, %q; agent.Run's: %d, %q", len(got.History), got.Text, len(want.History), want.Text)
	}
	for i, req := range durable.Requests() {
		if string(req.Body) != string(direct.Requests()[i].Body) {
			t.Errorf("request %d differs from agent.Run's:\n durable: %s\n     Run: %s", i+1, req.Body, direct.Requests()[i].Body)
		}
	}
}
