package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// More of the loop's scenarios on every backend and API of backends: its
// caps, approvals, typed answers, thoughts, cut answers and agents run as
// tools.

func TestBackendsCaps(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		a := mk(toolset.MustNew(w.tool()), gemini3, func(c *agent.Config) { c.MaxTurns, c.MaxCallsPerTurn = 2, 2 })
		srv.Enqueue(fake.Calls(cities(3)...), fake.Calls(cities(1)...))
		res, err := a.Run(context.Background(), user("go"))
		if !errors.Is(err, agent.ErrMaxTurns) || len(res.Turns) != 2 {
			t.Fatalf("Run() = %d turns, %v; want ErrMaxTurns after 2", len(res.Turns), err)
		}
		if n := w.calls.Load(); n != 3 {
			t.Errorf("%d calls ran; want 2 of the first turn's 3, and the second turn's", n)
		}
		// The third call of the first turn was answered without running.
		first := srv.Requests()[1]
		answers := first.LastFunctionResponses("")
		if len(answers) != 3 || !strings.Contains(answers[2].Response["error"].(string), "not run") {
			t.Errorf("answers to the first turn = %+v", answers)
		}
		// The last turn's calls were answered, so the history goes on.
		more := append(res.History, genai.NewContentFromText("and?", genai.RoleUser))
		srv.Enqueue(fake.Text("done"))
		if res, err := a.Run(context.Background(), more); err != nil || res.Text != "done" {
			t.Errorf("continuing: Run() = %+v, %v", res, err)
		}
	})
}

func TestBackendsApprovals(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		a := mk(toolset.MustNew(w.tool()), gemini3, func(c *agent.Config) {
			c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] != "Paris" }
		})
		srv.Enqueue(fake.Calls(
			fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "Mordor"}),
			fake.Call("get_weather", map[string]any{"city": "Cached"}),
		), fake.Text("done"))
		for e, err := range a.Stream(context.Background(), user("go")) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind != agent.EventApproval {
				continue
			}
			if e.Call.Args["city"] == "Mordor" {
				e.Approval.Deny("the user said no")
			} else {
				e.Approval.Answer("cloudy (cached)")
			}
		}
		answers := lastResponses(t, srv)
		if len(answers) != 3 || answers[0].Response["result"] != "sunny in Paris" ||
			!strings.Contains(answers[1].Response["error"].(string), "the user said no") || answers[2].Response["result"] != "cloudy (cached)" {
			t.Errorf("answers = %+v", answers)
		}
		if n := w.calls.Load(); n != 1 {
			t.Errorf("%d calls ran; want Paris only", n)
		}
	})
}

type cityForecast struct {
	City string  `json:"city"`
	High float64 `json:"high"`
}

func TestBackendsTypedOutput(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		a := mk(toolset.MustNew(w.tool()), gemini3, func(c *agent.Config) { c.Backend = b.id })
		srv.Enqueue(
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})),
			fake.Text(`{"city": "Paris", "high": "warm"}`), // refused: asked again
			fake.Text(`{"city": "Paris", "high": 21.5}`),
		)
		got, res, err := agent.RunTyped[cityForecast](context.Background(), a, user("Forecast for Paris?"))
		if err != nil || got != (cityForecast{"Paris", 21.5}) {
			t.Fatalf("RunTyped() = %+v, %v", got, err)
		}
		if len(res.Turns) != 3 {
			t.Errorf("%d turns; want a tool turn, a refused answer and the answer", len(res.Turns))
		}
		// The response schema went with the tools on every call.
		for _, r := range srv.Requests() {
			if gc := r.GenerationConfig; gc == nil || gc.ResponseMIMEType != "application/json" || gc.ResponseJsonSchema == nil && gc.ResponseSchema == nil {
				t.Errorf("request #%d asked for no JSON answer: %+v", r.Seq, gc)
			}
		}
	})
}

func TestBackendsThoughtsStream(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		a := mk(nil, gemini3)
		srv.Enqueue(fake.Parts(&genai.Part{Text: "Let me think it over.", Thought: true}, &genai.Part{Text: "Forty-two."}).WithTextChunk(4))
		var thought, text strings.Builder
		var res *agent.Result
		for e, err := range a.Stream(context.Background(), user("The answer?")) {
			if err != nil {
				t.Fatal(err)
			}
			switch e.Kind {
			case agent.EventThought:
				thought.WriteString(e.Text)
			case agent.EventText:
				text.WriteString(e.Text)
			case agent.EventDone:
				res = e.Result
			}
		}
		if thought.String() != "Let me think it over." || text.String() != "Forty-two." || res.Text != "Forty-two." {
			t.Errorf("thought %q, text %q, result %q", thought.String(), text.String(), res.Text)
		}
		// The thought stays in the history, signed, for the next turn.
		model := res.History[1]
		if !model.Parts[0].Thought || model.Parts[0].Text != "Let me think it over." {
			t.Errorf("history's model turn = %+v", model.Parts)
		}
	})
}

func TestBackendsCutAnswer(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		a := mk(nil, gemini3)
		cut := fake.Text("The first half of")
		cut.Response.Candidates[0].FinishReason = genai.FinishReasonMaxTokens
		srv.Enqueue(cut)
		res, err := a.Run(context.Background(), user("A long answer?"))
		if !errors.Is(err, agent.ErrMaxTokens) || res.Text != "The first half of" {
			t.Errorf("Run() = %q, %v; want the cut text and ErrMaxTokens", res.Text, err)
		}
	})
}

func TestBackendsAgentAsTool(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		sub := mk(toolset.MustNew(w.tool()), gemini3, func(c *agent.Config) { c.Name = "weather_agent" })
		tool, err := agent.AsTool(sub, "ask_weather", "Asks the weather agent.")
		if err != nil {
			t.Fatal(err)
		}
		parent := mk(toolset.MustNew(tool), gemini3)
		srv.Enqueue(
			fake.Calls(fake.Call("ask_weather", map[string]any{"request": "Paris?"})),
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})),
			fake.Text("Sunny in Paris."),
			fake.Text("The weather agent says: sunny."),
		)
		res, err := parent.Run(context.Background(), user("Weather?"))
		if err != nil || res.Text != "The weather agent says: sunny." || w.calls.Load() != 1 {
			t.Fatalf("Run() = %+v, %v", res, err)
		}
		if u := res.Agents["ask_weather"]; u.TotalTokens == 0 {
			t.Errorf("the sub-agent's usage was not counted: %+v", res.Agents)
		}
	})
}
