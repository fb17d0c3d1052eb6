package eval_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
)

// A scenario case is played by the simulated user: the starting prompt
// first, then the model's messages until it says the plan is done; the
// simulator's tokens are counted apart, and metrics that need no expected
// turns score it.
func TestScenario(t *testing.T) {
	srv := geminitest.Start(t)
	var mu sync.Mutex
	var prompts []string
	srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
		switch {
		case isJudge(req, simulatorRole):
			prompt := req.Text()
			mu.Lock()
			prompts = append(prompts, prompt)
			mu.Unlock()
			if strings.Contains(prompt, "user: And what is the weather in Rome?") {
				return jsonText(map[string]any{"finished": true, "message": ""})
			}
			return jsonText(map[string]any{"finished": false, "message": "And what is the weather in Rome?"})
		case isJudge(req, responseJudge):
			return jsonText(map[string]any{"verdicts": []map[string]any{{"property_id": "weather", "rationale": "it gives the weather", "holds": true}}})
		}
		return nil
	}))
	set := &eval.Set{ID: "s", Cases: []eval.Case{{ID: "chat", Scenario: &eval.Scenario{
		StartingPrompt: "What is the weather in Paris?",
		Plan:           "Ask about Paris, then about Rome, then stop.",
		Persona:        []byte(`"NOVICE"`),
	}}}}
	judge := &eval.Judge{Models: srv.Client().Models, Samples: 1}
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{
		Agent:     weatherAgent(t, srv),
		Simulator: &eval.UserSimulator{Models: srv.Client().Models},
		Metrics: []eval.Metric{
			eval.ResponseQuality{Judge: judge, Threshold: 1, Rubrics: []eval.Rubric{{ID: "weather", Text: "The answer gives the weather."}}},
			eval.ToolTrajectory{Threshold: 1},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := rep.Cases[0].Runs[0]
	if run.Err != nil || len(run.Turns) != 2 {
		t.Fatalf("run: %v, %d turns; want 2 turns", run.Err, len(run.Turns))
	}
	if run.Turns[0].UserText() != "What is the weather in Paris?" || run.Turns[1].UserText() != "And what is the weather in Rome?" ||
		run.Turns[1].ResponseText() != "It is sunny in Rome." {
		t.Errorf("turns: %q -> %q, %q -> %q", run.Turns[0].UserText(), run.Turns[0].ResponseText(), run.Turns[1].UserText(), run.Turns[1].ResponseText())
	}
	if len(prompts) != 2 || !strings.Contains(prompts[0], "Ask about Paris, then about Rome") || !strings.Contains(prompts[0], "NOVICE") ||
		!strings.Contains(prompts[0], "agent: It is sunny in Paris.") {
		t.Errorf("simulator prompts (%d):\n%s", len(prompts), strings.Join(prompts, "\n---\n"))
	}
	if run.SimulatorUsage.TotalTokens == 0 || rep.SimulatorUsage != run.SimulatorUsage {
		t.Errorf("simulator usage %+v, report %+v", run.SimulatorUsage, rep.SimulatorUsage)
	}
	if s := run.Scores[0]; s.Status != eval.Passed || s.Value != 1 || len(s.Turns) != 2 {
		t.Errorf("response quality on the scenario = %+v", s)
	}
	if s := run.Scores[1]; s.Status != eval.NotEvaluated || !strings.Contains(s.Reason, "scenario") {
		t.Errorf("trajectory on the scenario = %+v; want not evaluated", s)
	}
}

// A simulated user that never finishes stops at MaxTurns.
func TestScenarioTurnLimit(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
		return jsonText(map[string]any{"finished": false, "message": "What is the weather in Oslo?"})
	}))
	set := &eval.Set{ID: "s", Cases: []eval.Case{{ID: "chat", Scenario: &eval.Scenario{StartingPrompt: "Hi", Plan: "Never stop."}}}}
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{
		Agent:     weatherAgent(t, srv),
		Simulator: &eval.UserSimulator{Models: srv.Client().Models, MaxTurns: 3},
		Metrics:   []eval.Metric{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if run := rep.Cases[0].Runs[0]; run.Err != nil || len(run.Turns) != 3 {
		t.Errorf("run: %v, %d turns; want 3", run.Err, len(run.Turns))
	}
	if rep.Warning == "" || rep.Cases[0].Status != eval.Passed {
		t.Errorf("no metrics: warning %q, status %v; want a warning, and the run's success", rep.Warning, rep.Cases[0].Status)
	}
}
