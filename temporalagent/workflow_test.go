package temporalagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// loopTools are tools that exercise every way agent.Run answers a call.
func loopTools(w *weatherTool) *toolset.Set {
	return toolset.MustNew(
		w.tool(),
		toolset.MustFunc("fail", "Always fails", func(ctx context.Context, in struct{}) (string, error) {
			return "", errors.New("the database is down")
		}),
		toolset.MustFunc("big", "A large output", func(ctx context.Context, in struct{}) (string, error) {
			return strings.Repeat("x", 5000), nil
		}),
		toolset.MustFunc("numbers", "Structured output", func(ctx context.Context, in struct{}) (map[string]any, error) {
			return map[string]any{"id": int64(1) << 40, "ratio": 0.1, "tags": []string{"a", "b"}}, nil
		}),
	)
}

// loopScript is a conversation that hits each of those answers: parallel
// calls, an unknown tool, invalid arguments, a tool error, an output over
// MaxOutputBytes, structured output, calls over MaxCallsPerTurn, then a
// final answer.
func loopScript() []*fake.Reply {
	return []*fake.Reply{
		fake.Calls(
			fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "Tokyo"}),
			fake.Call("no_such_tool", map[string]any{}),
			fake.Call("get_weather", map[string]any{"town": 3}),
			fake.Call("fail", map[string]any{}),
			fake.Call("big", map[string]any{}),
		),
		fake.Calls(
			fake.Call("numbers", map[string]any{}),
			fake.Call("get_weather", map[string]any{"city": "Oslo"}),
			fake.Call("get_weather", map[string]any{"city": "Rome"}),
			fake.Call("get_weather", map[string]any{"city": "Lima"}),
		),
		fake.Text("Sunny in Paris and Tokyo."),
	}
}

func loopConfig(c *agent.Config) {
	c.MaxOutputBytes = 1000
	c.MaxCallsPerTurn = 3
	c.GenerateConfig = &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", ""),
		ToolConfig:        &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}},
	}
}

// TestSameWireAsRun runs one conversation with agent.Run and as a
// workflow, each against its own fake server, and requires the servers to
// have received the very same requests, byte for byte, and the results to
// agree.
func TestSameWireAsRun(t *testing.T) {
	for _, regular := range []bool{false, true} {
		t.Run(fmt.Sprintf("regular=%v", regular), func(t *testing.T) {
			direct, durable := newServer(t), newServer(t)
			direct.Enqueue(loopScript()...)
			durable.Enqueue(loopScript()...)

			want, err := newAgent(t, direct, loopTools(&weatherTool{}), loopConfig).Run(context.Background(), user("Weather?"))
			if err != nil {
				t.Fatalf("agent.Run: %v", err)
			}
			env := newEnv(t, Agent{Name: "loop", Agent: newAgent(t, durable, loopTools(&weatherTool{}), loopConfig), RegularModelCalls: regular})
			got, err := execute(env, "loop", user("Weather?"))
			if err != nil {
				t.Fatalf("durable run: %v", err)
			}

			wantReqs, gotReqs := direct.Requests(), durable.Requests()
			if len(gotReqs) != len(wantReqs) {
				t.Fatalf("durable run made %d requests, agent.Run %d", len(gotReqs), len(wantReqs))
			}
			for i := range wantReqs {
				if !bytes.Equal(gotReqs[i].Body, wantReqs[i].Body) {
					t.Errorf("request %d differs:\n durable: %s\n    Run: %s", i+1, gotReqs[i].Body, wantReqs[i].Body)
				}
			}
			if got.Text != want.Text || got.FinishReason != want.FinishReason || got.Usage != want.Usage {
				t.Errorf("durable result = %q %s %+v, Run's = %q %s %+v", got.Text, got.FinishReason, got.Usage, want.Text, want.FinishReason, want.Usage)
			}
			if len(got.History) != len(want.History) || len(got.Turns) != len(want.Turns) {
				t.Fatalf("durable result has %d contents and %d turns, Run's %d and %d", len(got.History), len(got.Turns), len(want.History), len(want.Turns))
			}
			for i, turn := range got.Turns {
				w := want.Turns[i]
				if turn.Attempts != w.Attempts || turn.FinishReason != w.FinishReason || len(turn.Calls) != len(w.Calls) || len(turn.Results) != len(w.Results) {
					t.Errorf("turn %d = %d attempts, %s, %d calls, %d results; Run's: %d, %s, %d, %d", i,
						turn.Attempts, turn.FinishReason, len(turn.Calls), len(turn.Results), w.Attempts, w.FinishReason, len(w.Calls), len(w.Results))
					continue
				}
				for j := range turn.Results {
					if turn.Results[j].IsError != w.Results[j].IsError || turn.Calls[j].ID != w.Calls[j].ID {
						t.Errorf("turn %d, call %d: durable %v %q, Run %v %q", i, j, turn.Results[j].IsError, turn.Calls[j].ID, w.Results[j].IsError, w.Calls[j].ID)
					}
				}
				if turn.Response.SDKHTTPResponse != nil {
					t.Errorf("turn %d keeps the SDK's HTTP response", i)
				}
			}
		})
	}
}
