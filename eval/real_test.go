package eval_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
)

// standIn answers every request: the agent's with a sentence, the judges'
// with verdicts that hold, the simulated user's with the end of the
// conversation after one more message.
func standIn(req *geminitest.Request) *geminitest.Reply {
	switch {
	case isJudge(req, matchJudge):
		return jsonText(map[string]any{"reasoning": "fine", "is_the_agent_response_valid": true})
	case isJudge(req, responseJudge), isJudge(req, toolUseJudge):
		var verdicts []map[string]any
		for _, id := range propertyIDs(req.Text()) {
			verdicts = append(verdicts, map[string]any{"property_id": id, "rationale": "fine", "holds": true})
		}
		return jsonText(map[string]any{"verdicts": verdicts})
	case isJudge(req, simulatorRole):
		return jsonText(map[string]any{"finished": strings.Count(req.Text(), "user: ") > 1, "message": "Thanks, and then?"})
	}
	return geminitest.Text("I can help with that.")
}

// Every real eval set runs end to end: each case, scripted or a scenario,
// turn by turn against an agent, scored by every metric this package has,
// and written as ADK's results; and every real criteria file's metrics
// score a run.
func TestRealSetsRun(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(standIn)
	models := srv.Client().Models
	a, err := agent.New(agent.Config{Models: models, Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	judge := &eval.Judge{Models: models, Samples: 1}
	metrics := []eval.Metric{
		eval.ToolTrajectory{Threshold: 1},
		eval.ResponseMatch{Threshold: 0.8},
		eval.FinalResponseMatch{Judge: judge, Threshold: 0.5},
		eval.ResponseQuality{Judge: judge, Threshold: 0.5, Rubrics: []eval.Rubric{{ID: "helpful", Text: "The answer helps."}}},
		eval.ToolUseQuality{Judge: judge, Threshold: 0.5, Rubrics: []eval.Rubric{{ID: "sound", Text: "The calls are sound."}}},
	}
	var criteria []*eval.Criteria
	for _, file := range realFiles(t) {
		set, err := eval.LoadFile(file)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		if len(set.Cases) == 0 {
			criteria = append(criteria, set.Criteria)
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: a, Metrics: metrics, Parallel: 8,
				Simulator: &eval.UserSimulator{Models: models}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Cases) != len(set.Cases) {
				t.Fatalf("%d case results for %d cases", len(rep.Cases), len(set.Cases))
			}
			for i, cr := range rep.Cases {
				c := &set.Cases[i]
				run := cr.Runs[0]
				if run.Err != nil {
					t.Errorf("case %q: %v", c.ID, run.Err)
				}
				want := len(c.Turns)
				if c.Scenario != nil {
					want = 2
				}
				if len(run.Turns) != want {
					t.Errorf("case %q: %d actual turns, want %d", c.ID, len(run.Turns), want)
				}
				for j, s := range run.Scores {
					if len(s.Turns) != len(run.Turns) || s.Status == 0 {
						t.Errorf("case %q, %s: %d turn scores for %d turns, status %v", c.ID, metrics[j].Name(), len(s.Turns), len(run.Turns), s.Status)
					}
				}
				if rq := run.Scores[3]; rq.Status != eval.Passed {
					t.Errorf("case %q: the rubric judge did not grade it: %+v", c.ID, rq)
				}
			}
			out, err := json.Marshal(rep)
			if err != nil || !json.Valid(out) {
				t.Errorf("results: %v", err)
			}
		})
	}
	if len(criteria) == 0 {
		t.Fatal("no real criteria file")
	}
	set := &eval.Set{ID: "one", Cases: []eval.Case{{ID: "c", Turns: []eval.Turn{eval.UserTurn("Hello").WithResponse("I can help with that.")}}}}
	for _, c := range criteria {
		set.Criteria = c
		rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: a, Judge: judge})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rep.Cases[0].Metrics); got != len(c.Metrics) {
			t.Errorf("criteria %v: %d metrics scored, want %d", c.Metrics, got, len(c.Metrics))
		}
	}
}
