package eval

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// MarshalJSON writes the report as ADK's EvalSetResult, the file adk eval
// writes to .adk/eval_history/<app>_<set>_<time>.evalset_result.json and
// adk web reads: snake_case keys, statuses as numbers (1 PASSED, 2 FAILED,
// 3 NOT_EVALUATED), one eval case result per run of a case (ADK's
// AgentEvaluator makes one per run too), each with its metrics' scores
// overall and per turn, the actual turns next to the expected ones, and
// the run's conversation as an ADK session.
func (rep *Report) MarshalJSON() ([]byte, error) { return marshalObject(rep.object()) }

// WriteFile writes the report to path as ADK's EvalSetResult JSON (see
// [Report.MarshalJSON]), indented.
func (rep *Report) WriteFile(path string) error {
	o, err := rep.object()
	return writeObject(path, o, err)
}

// ResultID returns the report's eval_set_result_id as ADK makes it:
// <app>_<set>_<unix time with microseconds>, the app being the agent's
// name or "app", slashes replaced.
func (rep *Report) ResultID() string {
	app := "app"
	for _, c := range rep.Cases {
		if c.Case.Session != nil && c.Case.Session.AppName != "" {
			app = c.Case.Session.AppName
			break
		}
	}
	ts := float64(rep.Started.UnixMicro()) / 1e6
	return strings.ReplaceAll(fmt.Sprintf("%s_%s_%s", app, rep.Set.ID, formatFloat(ts)), "/", "_")
}

func (rep *Report) object() (*object, error) {
	id := rep.ResultID()
	o := (&object{}).add("eval_set_result_id", id).add("eval_set_result_name", id).add("eval_set_id", rep.Set.ID)
	var cases []any
	for _, c := range rep.Cases {
		for _, run := range c.Runs {
			co, err := rep.caseObject(c, run)
			if err != nil {
				return nil, fmt.Errorf("eval: case %q, run %d: %w", c.Case.ID, run.Index+1, err)
			}
			cases = append(cases, co)
		}
	}
	if cases == nil {
		cases = []any{}
	}
	o.add("eval_case_results", cases)
	o.add("creation_timestamp", json.Number(formatFloat(float64(rep.Started.UnixMicro())/1e6)))
	return o, nil
}

func (rep *Report) caseObject(c *CaseResult, run *Run) (*object, error) {
	o := (&object{}).add("eval_set_file", rep.Set.ID).add("eval_set_id", rep.Set.ID).add("eval_id", c.Case.ID).
		add("final_eval_status", int(run.Status))
	var overall []any
	for _, s := range run.Scores {
		mo, err := metricObject(s, s.Value, s.Status, s.Rubrics)
		if err != nil {
			return nil, err
		}
		overall = append(overall, mo)
	}
	if overall == nil {
		overall = []any{}
	}
	o.add("overall_eval_metric_results", overall)
	perTurn := []any{}
	for i := range run.Turns {
		to, err := run.Turns[i].object()
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", i+1, err)
		}
		po := (&object{}).add("actual_invocation", to)
		if c.Case.Scenario == nil && i < len(c.Case.Turns) {
			eo, err := c.Case.Turns[i].object()
			if err != nil {
				return nil, fmt.Errorf("expected turn %d: %w", i+1, err)
			}
			po.add("expected_invocation", eo)
		}
		results := []any{}
		for _, s := range run.Scores {
			ts := s.Turns[i]
			mo, err := metricObject(s, ts.Value, ts.Status, ts.Rubrics)
			if err != nil {
				return nil, err
			}
			results = append(results, mo)
		}
		po.add("eval_metric_results", results)
		perTurn = append(perTurn, po)
	}
	o.add("eval_metric_result_per_invocation", perTurn)
	o.add("session_id", run.SessionID)
	o.add("session_details", rep.session(c.Case, run))
	o.add("user_id", run.UserID)
	return o, nil
}

// metricObject writes an EvalMetricResult.
func metricObject(s *Score, value float64, status Status, rubrics []RubricScore) (*object, error) {
	o := (&object{}).add("metric_name", s.Metric).add("threshold", json.Number(formatFloat(s.Threshold)))
	if s.Criterion != nil {
		cv, err := s.Criterion.value()
		if err != nil {
			return nil, err
		}
		if n, bare := cv.(json.Number); bare {
			cv = (&object{}).add("threshold", n)
		}
		o.add("criterion", cv)
	}
	if status == NotEvaluated {
		o.add("score", nil)
	} else {
		o.add("score", json.Number(formatFloat(value)))
	}
	o.add("eval_status", int(status))
	details := &object{}
	if len(rubrics) > 0 {
		var rs []any
		for _, r := range rubrics {
			ro := (&object{}).add("rubric_id", r.ID)
			if r.Rationale != "" {
				ro.add("rationale", r.Rationale)
			}
			if r.Scored {
				ro.add("score", json.Number(formatFloat(r.Value)))
			} else {
				ro.add("score", nil)
			}
			rs = append(rs, ro)
		}
		details.add("rubric_scores", rs)
	}
	o.add("details", details)
	return o, nil
}

// session writes the run's conversation as the ADK session the eval ran in:
// an event per content, authored by the user or the agent, each tagged
// with its turn's invocation id.
func (rep *Report) session(c *Case, run *Run) *object {
	app := "app"
	if c.Session != nil && c.Session.AppName != "" {
		app = c.Session.AppName
	}
	o := (&object{}).add("id", run.SessionID).add("app_name", app).add("user_id", run.UserID)
	state := map[string]any{}
	if c.Session != nil && c.Session.State != nil {
		state = c.Session.State
	}
	o.add("state", state)
	events := []any{}
	author := rep.agentName
	if author == "" {
		author = "agent"
	}
	seen := len(run.Start)
	for i, res := range run.Results {
		if res == nil {
			continue
		}
		for _, content := range res.History[min(seen, len(res.History)):] {
			if content == nil {
				continue
			}
			who := "user"
			if content.Role == genai.RoleModel {
				who = author
			}
			cv, err := genaiObject(content)
			if err != nil {
				continue
			}
			events = append(events, (&object{}).add("content", cv).add("invocation_id", run.Turns[i].ID).add("author", who))
		}
		seen = len(res.History)
	}
	o.add("events", events)
	return o
}
