package eval_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
)

// keyPaths returns the paths of every object key in v ("a.b[].c"), but
// inside the values of free keys (the user's data).
func keyPaths(v any, prefix string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			switch k {
			case "args", "response", "state", "state_delta", "artifact_delta", "requested_auth_configs", "custom_metadata":
				continue
			}
			keyPaths(e, p, out)
		}
	case []any:
		for _, e := range v {
			keyPaths(e, prefix+"[]", out)
		}
	}
}

// The results are ADK's EvalSetResult: every key is one a real ADK result
// file has, or one of the fields newer ADK versions add (criterion,
// details, app_details, tool_responses); statuses are ADK's numbers.
func TestResultShape(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(sharedDir(t, "evalresults"), "j-jayes.adk-mcp-rag--agents_unit_conversion_1760012079.397536.evalset_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The real file is double-encoded, as ADK wrote them until 2025.
	var inner string
	if err := json.Unmarshal(raw, &inner); err != nil {
		t.Fatal(err)
	}
	var real map[string]any
	if err := json.Unmarshal([]byte(inner), &real); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	keyPaths(real, "", known)

	srv := geminitest.Start(t)
	srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
		return jsonText(map[string]any{"verdicts": []map[string]any{{"property_id": "city", "rationale": "it names the city", "holds": true}}})
	}))
	set := weatherSet()
	set.Criteria = &eval.Criteria{Metrics: []eval.Criterion{
		{Metric: eval.MetricToolTrajectory, Threshold: 1, Bare: true},
		{Metric: eval.MetricRubricResponseQuality, Threshold: 0.5, Rubrics: []eval.Rubric{{ID: "city", Text: "The answer names the city."}},
			Judge: &eval.JudgeOptions{Samples: 1}},
	}}
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv), Runs: 2, Judge: &eval.Judge{Models: srv.Client().Models}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]any
	if err := json.Unmarshal(out, &ours); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	keyPaths(ours, "", got)
	newer := []string{".criterion", ".details", ".app_details", ".tool_responses"}
	var unknown []string
	for p := range got {
		if known[p] || slices.ContainsFunc(newer, func(n string) bool { return strings.Contains(p, n) }) {
			continue
		}
		unknown = append(unknown, p)
	}
	slices.Sort(unknown)
	if len(unknown) > 0 {
		t.Errorf("keys a real ADK result does not have: %v", unknown)
	}
	for _, p := range []string{"eval_set_result_id", "eval_case_results[].final_eval_status", "eval_case_results[].overall_eval_metric_results[].eval_status",
		"eval_case_results[].eval_metric_result_per_invocation[].actual_invocation.user_content.parts[].text",
		"eval_case_results[].eval_metric_result_per_invocation[].expected_invocation.intermediate_data.tool_uses[].name",
		"eval_case_results[].session_details.events[].content.parts[].function_call.name",
		"eval_case_results[].overall_eval_metric_results[].details.rubric_scores[].rubric_id",
		"eval_case_results[].overall_eval_metric_results[].criterion.threshold"} {
		if !got[p] {
			t.Errorf("the results lack %s", p)
		}
	}
	cases := ours["eval_case_results"].([]any)
	if len(cases) != 4 {
		t.Fatalf("%d eval case results; want one per run, 4", len(cases))
	}
	first := cases[0].(map[string]any)
	if first["final_eval_status"] != 1.0 || first["eval_id"] != "paris" || !strings.HasPrefix(first["session_id"].(string), "___eval___session___") {
		t.Errorf("first case result: status %v, id %v, session %v", first["final_eval_status"], first["eval_id"], first["session_id"])
	}
	oslo := cases[2].(map[string]any)["overall_eval_metric_results"].([]any)[0].(map[string]any)
	if oslo["metric_name"] != eval.MetricToolTrajectory || oslo["eval_status"] != 2.0 || oslo["score"] != 0.0 || oslo["threshold"] != 1.0 {
		t.Errorf("oslo's trajectory result = %v", oslo)
	}
	if !strings.HasPrefix(ours["eval_set_result_id"].(string), "app_weather_") {
		t.Errorf("eval_set_result_id = %v", ours["eval_set_result_id"])
	}
}
