package eval_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/eval"
	"google.golang.org/genai"
)

// sharedDir returns the team's shared directory of real ADK files, name
// (evalsets, evalresults), looked for as ../shared/NAME from the module
// root and its parents, or skips the test saying why.
func sharedDir(t testing.TB, name string) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		candidate := filepath.Join(dir, "shared", name)
		if fi, err := os.Stat(candidate); err == nil && fi.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("no shared/%s directory above %s: the real ADK files are not on this machine", name, must(filepath.Abs(".")))
		}
		dir = parent
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// realFiles returns the JSON files of the shared evalsets directory.
func realFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(sharedDir(t, "evalsets"), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("the shared evalsets directory has no JSON files")
	}
	return files
}

// Every real file loads, and an eval set written back and loaded again is
// the same set.
func TestLoadRealFiles(t *testing.T) {
	for _, file := range realFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			set, err := eval.LoadFile(file)
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			if strings.Contains(filepath.Base(file), "test_config") {
				if set.Criteria == nil || len(set.Cases) != 0 {
					t.Fatalf("a criteria file gave %d cases and criteria %v", len(set.Cases), set.Criteria)
				}
				again := filepath.Join(t.TempDir(), "test_config.json")
				if err := set.Criteria.WriteFile(again); err != nil {
					t.Fatal(err)
				}
				back, err := eval.LoadCriteria(again)
				if err != nil {
					t.Fatalf("LoadCriteria of what WriteFile wrote: %v", err)
				}
				if diff := cmp.Diff(set.Criteria, back); diff != "" {
					t.Errorf("criteria written and read back differ (-read +reread):\n%s", diff)
				}
				return
			}
			if set.ID == "" || len(set.Cases) == 0 {
				t.Fatalf("set %q has %d cases", set.ID, len(set.Cases))
			}
			for _, c := range set.Cases {
				if c.ID == "" || (len(c.Turns) == 0) == (c.Scenario == nil) {
					t.Errorf("case %q: %d turns, scenario %v", c.ID, len(c.Turns), c.Scenario)
				}
				for i, turn := range c.Turns {
					if turn.User == nil {
						t.Errorf("case %q turn %d has no user message", c.ID, i+1)
					}
				}
			}
			again := filepath.Join(t.TempDir(), "again.evalset.json")
			if err := set.WriteFile(again); err != nil {
				t.Fatal(err)
			}
			back, err := eval.LoadFile(again)
			if err != nil {
				t.Fatalf("LoadFile of what WriteFile wrote: %v", err)
			}
			if diff := cmp.Diff(set, back); diff != "" {
				t.Errorf("set written and read back differs (-read +reread):\n%s", diff)
			}
		})
	}
}

// Facts about particular real files, checked field by field.
func TestRealFileDetails(t *testing.T) {
	dir := sharedDir(t, "evalsets")
	load := func(name string) *eval.Set {
		t.Helper()
		s, err := eval.LoadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// The older list format is one case, a turn per entry.
	trip := load("google.adk-python--trip_inquiry.test.json")
	if len(trip.Cases) != 1 || len(trip.Cases[0].Turns) != 2 || trip.Cases[0].ID != "google.adk-python--trip_inquiry" {
		t.Errorf("trip_inquiry: %d cases, first %q with %d turns; want one case of 2 turns named after the file",
			len(trip.Cases), trip.Cases[0].ID, len(trip.Cases[0].Turns))
	}

	// The named-list format is one case per name.
	bso := load("google.adk-samples--eval_data1.evalset.json")
	if len(bso.Cases) != 1 || bso.Cases[0].ID != "eval_data_set_google_shopping" || len(bso.Cases[0].Turns) != 6 {
		t.Errorf("eval_data1: cases %+v", bso.Cases)
	}
	second := bso.Cases[0].Turns[1]
	if calls := second.Calls(); len(calls) != 2 || calls[0].Name != "transfer_to_agent" || calls[0].Args["agent_name"] != "keyword_finding_agent" {
		t.Errorf("eval_data1 turn 2 calls = %+v", calls)
	}
	if len(second.Intermediate) != 1 || second.Intermediate[0].Author != "brand_search_optimization" {
		t.Errorf("eval_data1 turn 2 intermediate = %+v", second.Intermediate)
	}

	// invocation_events: calls and responses are parts of the events.
	vid := load("graceliu.vid2trip--trip_planner.evalset.json")
	var calls, withEvents int
	for _, tt := range vid.Cases[0].Turns {
		if tt.Events != nil {
			withEvents++
		}
		calls += len(tt.Calls())
	}
	if withEvents != 3 || calls == 0 {
		t.Errorf("vid2trip: %d turns with invocation_events, %d calls read from them; want 3 turns and some calls", withEvents, calls)
	}

	// Thought signatures arrive as URL-safe base64 and decode to bytes.
	simple := load("google.adk-python--simple.test.json")
	var signed bool
	for _, tt := range simple.Cases[0].Turns {
		if tt.Response != nil {
			for _, p := range tt.Response.Parts {
				signed = signed || len(p.ThoughtSignature) > 0
			}
		}
	}
	if !signed {
		t.Error("simple.test.json: no thought signature decoded")
	}

	// Keys ADK does not define are kept.
	smoke := load("Krrish777.Order-Intake-Agent--smoke.evalset.json")
	if _, ok := smoke.Extra["metadata"]; !ok {
		t.Errorf("smoke: Extra = %v; want the metadata key kept", smoke.Extra)
	}
	scc := load("zaidyes.scc_remediation_agent--basic.evalset.json")
	if _, ok := scc.Cases[0].Extra["expected_tool_use"]; !ok {
		t.Errorf("scc: case Extra = %v; want expected_tool_use kept", scc.Cases[0].Extra)
	}

	// A scenario case, with a persona given by id.
	live := load("google.adk-python--live_non_blocking_tool_agent.evalset.json")
	if sc := live.Cases[0].Scenario; sc == nil || string(sc.Persona) != `"NOVICE"` || len(live.Cases[1].Turns) != 2 {
		t.Errorf("live: scenario %+v, second case %d turns", live.Cases[0].Scenario, len(live.Cases[1].Turns))
	}

	// Per-turn rubrics.
	halt := load("google.adk-samples--guardrail_halt.evalset.json")
	var rubrics int
	for _, c := range halt.Cases {
		for _, tt := range c.Turns {
			rubrics += len(tt.Rubrics)
		}
	}
	if rubrics == 0 {
		t.Error("guardrail_halt: no turn rubrics read")
	}

	// Criteria: bare thresholds, objects, camelCase, match types as strings.
	cfg := load("Krrish777.Order-Intake-Agent--eval_config--test_config.json").Criteria
	if len(cfg.Metrics) != 2 || cfg.Metrics[0].Metric != eval.MetricToolTrajectory || cfg.Metrics[0].Match != eval.MatchAnyOrder || cfg.Metrics[0].Threshold != 0.3 {
		t.Errorf("Order-Intake criteria = %+v", cfg.Metrics)
	}
	starter := load("GoogleCloudPlatform.agent-starter-pack--eval_config--test_config.json").Criteria
	m := starter.Metrics[0]
	if m.Metric != eval.MetricRubricResponseQuality || m.Judge == nil || m.Judge.Model != "gemini-3-flash-preview" || m.Judge.Samples != 1 || len(m.Rubrics) != 2 || m.Rubrics[0].ID != "relevance" {
		t.Errorf("agent-starter-pack criterion = %+v (judge %+v)", m, m.Judge)
	}
	video := load("lordpython.multi-agent-video-system--test_config.json").Criteria
	if len(video.Metrics) != 5 || video.Extra["test_categories"] == nil {
		t.Errorf("video criteria: %d metrics, extra %v", len(video.Metrics), video.Extra)
	}
}

// Hand-made broken files fail with a message that names the field.
func TestLoadBrokenFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"no cases", "no_cases.evalset.json", "eval_cases: required"},
		{"no user content", "no_user_content.evalset.json", "eval_cases[0].conversation[1].user_content: required"},
		{"wrong type", "wrong_type.evalset.json", "eval_cases[1].eval_id: want a string, got a number"},
		{"both conversation and scenario", "both.evalset.json", "eval_cases[0]: has both conversation and conversation_scenario"},
		{"neither", "neither.evalset.json", "eval_cases[0]: has neither conversation nor conversation_scenario"},
		{"unknown part field", "unknown_part.evalset.json", "eval_cases[0].conversation[0].user_content.parts[0].txt: not a field of genai.Part"},
		{"bad args", "bad_args.evalset.json", "eval_cases[0].conversation[0].intermediate_data.tool_uses[0]"},
		{"duplicate case ids", "duplicate_ids.evalset.json", `eval_cases[1].eval_id: "a" is also the id of eval_cases[0]`},
		{"both cases of one key", "both_cases.evalset.json", `both "eval_id" and "evalId" are given`},
		{"not JSON", "not_json.evalset.json", "not valid JSON at line 3, column"},
		{"bad match type", "bad_match.test_config.json", "criteria.tool_trajectory_avg_score.match_type: want EXACT, IN_ORDER or ANY_ORDER"},
		{"no threshold", "no_threshold.test_config.json", "criteria.response_match_score.threshold: required"},
		{"old format without query", "old_no_query.test.json", "[1].query: required"},
		{"neither set nor criteria", "neither_kind.json", "neither an eval set"},
		{"both forms of intermediate data", "both_forms.evalset.json", "intermediate_data has invocation_events: it cannot also have tool_uses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "broken", tc.file)
			_, err := eval.LoadFile(path)
			if err == nil {
				t.Fatalf("LoadFile(%s) succeeded", tc.file)
			}
			var fe *eval.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("LoadFile(%s) = %v, not a *FormatError", tc.file, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("LoadFile(%s) = %q; want it to name the file and contain %q", tc.file, err, tc.want)
			}
		})
	}
}

// camelCase keys read as snake_case ones do, and a set built in Go saves
// and reloads as the same set.
func TestCamelCaseAndGoSets(t *testing.T) {
	camel := []byte(`{"evalSetId": "s", "evalCases": [{"evalId": "c", "conversation": [
		{"invocationId": "i1", "userContent": {"parts": [{"text": "Weather in Paris?"}], "role": "user"},
		 "finalResponse": {"parts": [{"text": "Sunny."}], "role": "model"},
		 "intermediateData": {"toolUses": [{"name": "get_weather", "args": {"cityName": "Paris"}}]}}],
		"sessionInput": {"appName": "app", "userId": "u", "state": {"someKey": 1}}}]}`)
	snake := []byte(`{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
		{"invocation_id": "i1", "user_content": {"parts": [{"text": "Weather in Paris?"}], "role": "user"},
		 "final_response": {"parts": [{"text": "Sunny."}], "role": "model"},
		 "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"cityName": "Paris"}}]}}],
		"session_input": {"app_name": "app", "user_id": "u", "state": {"someKey": 1}}}]}`)
	a, err := eval.Parse(camel, "camel.evalset.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := eval.Parse(snake, "snake.evalset.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("camelCase and snake_case read differently (-camel +snake):\n%s", diff)
	}
	// Argument keys are the user's: never converted.
	if got := a.Cases[0].Turns[0].ToolCalls[0].Args["cityName"]; got != "Paris" {
		t.Errorf("args = %v; want the key cityName kept", a.Cases[0].Turns[0].ToolCalls[0].Args)
	}

	set := &eval.Set{ID: "go", Description: "built in Go", Cases: []eval.Case{{
		ID: "paris",
		Turns: []eval.Turn{
			eval.UserTurn("Weather in Paris?").
				WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}).
				WithResponse("Sunny in Paris."),
		},
		Rubrics: []eval.Rubric{{ID: "short", Text: "The answer is one sentence.", Type: eval.RubricFinalResponse}},
	}}}
	path := filepath.Join(t.TempDir(), "go.evalset.json")
	if err := set.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := eval.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(set, back); diff != "" {
		t.Errorf("a Go set saved and reloaded differs (-saved +reloaded):\n%s", diff)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"eval_set_id": "go"`, `"user_content"`, `"tool_uses"`, `"rubric_content"`, `"text_property"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the file lacks %s; it is:\n%s", want, raw)
		}
	}
}

// The user's names are never converted between snake_case and camelCase:
// arguments, responses, schema property names, JSON Schemas given as
// they are.
func TestUserNamesKept(t *testing.T) {
	cfg := []byte(`{"criteria": {"final_response_match_v2": {"threshold": 1, "judge_model_options": {"judge_model_config": {
		"response_schema": {"type": "OBJECT", "properties": {"city_name": {"type": "STRING"}, "maxDays": {"type": "INTEGER"}}},
		"response_json_schema": {"type": "object", "additionalProperties": false}}}}}}`)
	set, err := eval.Parse(cfg, "test_config.json")
	if err != nil {
		t.Fatal(err)
	}
	c := set.Criteria.Metrics[0].Judge.Config
	if c.ResponseSchema == nil || c.ResponseSchema.Properties["city_name"] == nil || c.ResponseSchema.Properties["maxDays"] == nil {
		t.Errorf("response schema properties = %v; want city_name and maxDays as written", c.ResponseSchema)
	}
	if m, ok := c.ResponseJsonSchema.(map[string]any); !ok || m["additionalProperties"] != false {
		t.Errorf("response JSON schema = %v; want it as written", c.ResponseJsonSchema)
	}
	out, err := set.Criteria.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"city_name"`, `"maxDays"`, `"additionalProperties":false`, `"response_schema"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("written criteria lack %s: %s", want, out)
		}
	}
}
