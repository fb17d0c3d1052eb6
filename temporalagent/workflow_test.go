package temporalagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

			sameRequests(t, durable, direct, len(loopScript()))
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

// TestParallelCallsBounded runs a turn of six calls with MaxParallel 2:
// they run as parallel activities, never more than two at once, and are
// answered in call order.
func TestParallelCallsBounded(t *testing.T) {
	srv := newServer(t)
	var calls []*genai.FunctionCall
	for i := range 6 {
		calls = append(calls, fake.Call("get_weather", map[string]any{"city": fmt.Sprintf("city-%d", i)}))
	}
	srv.Enqueue(fake.Calls(calls...), fake.Text("done"))
	w := &weatherTool{delay: 30 * time.Millisecond}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.MaxParallel = 2 })
	env := newEnv(t, Agent{Name: "w", Agent: a})
	res, err := execute(env, "w", user("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	if got := w.peak.Load(); got != 2 {
		t.Errorf("at most %d calls ran at once, want 2", got)
	}
	if got := w.calls.Load(); got != 6 {
		t.Errorf("the tool ran %d times, want 6", got)
	}
	answers := res.History[2].Parts
	for i, p := range answers {
		fr := p.FunctionResponse
		if fr.ID != calls[i].ID && calls[i].ID != "" || fr.Response["result"] != fmt.Sprintf("sunny in city-%d", i) {
			t.Errorf("answer %d = %s %v, want the answer to call %d", i, fr.ID, fr.Response, i)
		}
		if fr.ID == "" {
			t.Errorf("answer %d has no id; the model gave every call one", i)
		}
	}
}

// TestObserverSeesRunEvents checks that the agent's Observer sees the
// events agent.Run gives, as many of each kind.
func TestObserverSeesRunEvents(t *testing.T) {
	script := func() []*fake.Reply {
		return []*fake.Reply{
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"}),
				fake.Call("nope", map[string]any{})),
			fake.Text("Sunny."),
		}
	}
	direct, durable := newServer(t), newServer(t)
	direct.Enqueue(script()...)
	durable.Enqueue(script()...)
	var want, got eventLog
	if _, err := newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Observer = &want }).
		Run(context.Background(), user("Weather?")); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, durable, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Observer = &got })
	for _, regular := range []bool{false, true} {
		if regular {
			durable.Enqueue(script()...)
			got = eventLog{}
		}
		env := newEnv(t, Agent{Name: "w", Agent: a, RegularModelCalls: regular})
		if _, err := execute(env, "w", user("Weather?")); err != nil {
			t.Fatal(err)
		}
		for kind := agent.EventRunStart; kind <= agent.EventDone; kind++ {
			if g, w := got.count(kind), want.count(kind); g != w {
				t.Errorf("regular=%v: the observer saw %d %s events, agent.Run gives %d\n durable: %v\n     Run: %v",
					regular, g, kind, w, got.kinds(), want.kinds())
			}
		}
		kinds := got.kinds()
		if kinds[0] != "RunStart" || kinds[len(kinds)-1] != "Done" {
			t.Errorf("events = %v, want RunStart first and Done last", kinds)
		}
	}
}

// TestUnknownAgent: a run of an agent no worker holds fails at once.
func TestUnknownAgent(t *testing.T) {
	srv := newServer(t)
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, nil)})
	res, err := execute(env, "other", user("Hi"))
	if !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("err = %v, want ErrUnknownAgent", err)
	}
	if res == nil || len(srv.Requests()) != 0 {
		t.Errorf("result %v, %d requests; want a result and no request", res, len(srv.Requests()))
	}
}

// TestPayloadTooLarge: a conversation that outgrows MaxPayloadBytes ends
// the run with ErrPayloadTooLarge before the server would refuse it.
func TestPayloadTooLarge(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Calls(fake.Call("big", map[string]any{})), fake.Text("never sent"))
	big := toolset.MustFunc("big", "A large output", func(ctx context.Context, in struct{}) (string, error) {
		return strings.Repeat("y", 3000), nil
	})
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, toolset.MustNew(big)), MaxPayloadBytes: 2500})
	res, err := execute(env, "w", user("Hi"))
	if !errors.Is(err, ErrPayloadTooLarge) {
		t.Fatalf("err = %v, want ErrPayloadTooLarge", err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests, want 1: the second would be too large", len(srv.Requests()))
	}
	// The conversation is too large to carry in the failure too: the
	// partial result keeps the usage.
	if res.Usage.TotalTokens == 0 {
		t.Errorf("partial result has usage %+v, want the first turn's", res.Usage)
	}
}

// TestMaxTurnsAndMaxTokens: the run's limits end it with agent.Run's
// errors and its partial result.
func TestMaxTurnsAndMaxTokens(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "A"})), fake.Calls(fake.Call("get_weather", map[string]any{"city": "B"})))
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.MaxTurns = 2 })})
	res, err := execute(env, "w", user("Hi"))
	if !errors.Is(err, agent.ErrMaxTurns) || !strings.Contains(err.Error(), "(2)") {
		t.Fatalf("err = %v, want ErrMaxTurns (2)", err)
	}
	if len(res.Turns) != 2 || len(res.History) != 5 || res.History[4].Parts[0].FunctionResponse == nil {
		t.Errorf("partial result: %d turns, %d contents; want 2 turns and the last calls answered", len(res.Turns), len(res.History))
	}

	cut := fake.Text("cut sho")
	cut.Response.Candidates[0].FinishReason = genai.FinishReasonMaxTokens
	srv.Enqueue(cut)
	env = newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, nil)})
	res, err = execute(env, "w", user("Hi"))
	var stop *agent.StopError
	if !errors.Is(err, agent.ErrMaxTokens) || !errors.As(err, &stop) || stop.Turn != 0 {
		t.Fatalf("err = %v, want a StopError of kind ErrMaxTokens", err)
	}
	if res.Text != "cut sho" || res.FinishReason != genai.FinishReasonMaxTokens {
		t.Errorf("result = %q %s, want the cut answer", res.Text, res.FinishReason)
	}
}
