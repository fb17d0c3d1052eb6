package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// With changes a run's system instruction, tools, observer and limits; the
// agent it came from stays as it was.
func TestWith(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	base := &eventLog{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
		c.Observer = base
		c.GenerateConfig = &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
			Temperature:       genai.Ptr[float32](0.5),
		}
	})
	clock := tool("time_now", func(context.Context, map[string]any) (any, error) { return "12:00", nil })
	perRun := &eventLog{}
	b := a.With(agent.Overrides{
		SystemInstruction: genai.NewContentFromText("Answer in French.", genai.RoleUser),
		Tools:             []*toolset.Tool{clock},
		Observer:          perRun,
		MaxTurns:          2,
	})
	srv.Enqueue(fake.Calls(fake.Call("time_now", nil), fake.Call("get_weather", map[string]any{"city": "Paris"})),
		fake.Calls(fake.Call("time_now", nil)))
	res, err := b.Run(context.Background(), user("heure et météo ?"))
	if !errors.Is(err, agent.ErrMaxTurns) || len(res.Turns) != 2 {
		t.Fatalf("Run() = %d turns, %v; want MaxTurns 2 reached", len(res.Turns), err)
	}
	req := srv.Requests()[0]
	if got := req.SystemInstruction.Parts[0].Text; got != "Answer in French." {
		t.Errorf("system instruction sent = %q", got)
	}
	if req.GenerationConfig.Temperature == nil || *req.GenerationConfig.Temperature != 0.5 {
		t.Errorf("the agent's other settings were lost: %+v", req.GenerationConfig)
	}
	var names []string
	for _, d := range req.Tools[0].FunctionDeclarations {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"get_weather", "time_now"}, names); diff != "" || len(req.Tools) != 1 {
		t.Errorf("declarations (-want +got):\n%s (%d tool groups)", diff, len(req.Tools))
	}
	if got := lastResponses(t, srv); got[0].Response["result"] != "12:00" {
		t.Errorf("the extra tool's answer = %v", got[0].Response)
	}
	if len(base.of(agent.EventDone)) != 1 || len(perRun.of(agent.EventDone)) != 1 {
		t.Errorf("EventDone seen %d times by the agent's observer, %d by the run's; want 1 and 1",
			len(base.of(agent.EventDone)), len(perRun.of(agent.EventDone)))
	}

	// The agent itself is unchanged.
	srv.Enqueue(fake.Text("Brief."))
	if _, err := a.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	req = srv.LastRequest()
	if req.SystemInstruction.Parts[0].Text != "Be brief." || len(req.Tools[0].FunctionDeclarations) != 1 {
		t.Errorf("With changed the agent: %q, %d declarations", req.SystemInstruction.Parts[0].Text, len(req.Tools[0].FunctionDeclarations))
	}
}

// What With cannot apply fails every run of the agent it returns, clearly.
func TestWithErrors(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	for _, tc := range []struct {
		name string
		o    agent.Overrides
		want string
	}{
		{"duplicate tool", agent.Overrides{Tools: []*toolset.Tool{w.tool()}}, `duplicate tool name: "get_weather" is given twice`},
		{"invalid tool", agent.Overrides{Tools: []*toolset.Tool{{Name: "no run"}}}, "invalid tool"},
		{"negative limit", agent.Overrides{MaxTurns: -1}, "negative limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := a.With(tc.o).With(agent.Overrides{MaxTurns: 3})
			res, err := b.Run(context.Background(), user("hi"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "agent: With: ") {
				t.Errorf("Run() error = %v, want one naming %q", err, tc.want)
			}
			if res == nil || len(res.History) != 1 {
				t.Errorf("Run() result = %+v, want the input", res)
			}
			for e, err := range b.Stream(context.Background(), user("hi")) {
				if e.Kind != agent.EventDone || err == nil {
					t.Errorf("Stream yielded %v, %v; want only EventDone with the error", e.Kind, err)
				}
			}
		})
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("%d requests sent by agents that cannot run", len(srv.Requests()))
	}
}
