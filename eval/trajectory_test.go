package eval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/eval"
	"google.golang.org/genai"
)

func call(name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{Name: name, Args: args}
}

func calls(names ...string) []*genai.FunctionCall {
	out := make([]*genai.FunctionCall, len(names))
	for i, n := range names {
		out[i] = call(n, map[string]any{})
	}
	return out
}

func turnWith(cs ...*genai.FunctionCall) eval.Turn {
	return eval.UserTurn("User input here.").WithCalls(cs...)
}

// score runs a metric on actual turns against expected ones.
func score(t *testing.T, m eval.Metric, actual, expected []eval.Turn) *eval.Score {
	t.Helper()
	s, err := m.Evaluate(context.Background(), &eval.Input{Case: &eval.Case{ID: "c", Turns: expected}, Expected: expected, Actual: actual})
	if err != nil {
		t.Fatalf("%s: %v", m.Name(), err)
	}
	return s
}

// TestToolTrajectoryADK checks the metric against the cases and scores of
// ADK's own tests (google/adk-python
// tests/unittests/evaluation/test_trajectory_evaluator.py), threshold 0.5
// as there.
func TestToolTrajectoryADK(t *testing.T) {
	exact := eval.ToolTrajectory{Threshold: 0.5}
	inOrder := eval.ToolTrajectory{Threshold: 0.5, Match: eval.MatchInOrder}
	anyOrder := eval.ToolTrajectory{Threshold: 0.5, Match: eval.MatchAnyOrder}
	v1 := map[string]any{"arg1": "val1"}
	for _, tc := range []struct {
		name             string
		metric           eval.ToolTrajectory
		actual, expected [][]*genai.FunctionCall
		want             float64
		turns            []float64
	}{
		{"equal_tool_calls", exact, [][]*genai.FunctionCall{{call("test_func", v1)}}, [][]*genai.FunctionCall{{call("test_func", v1)}}, 1, []float64{1}},
		{"different_tool_call_names", exact, [][]*genai.FunctionCall{{call("test_func1", v1)}}, [][]*genai.FunctionCall{{call("test_func2", v1)}}, 0, []float64{0}},
		{"different_tool_call_args", exact, [][]*genai.FunctionCall{{call("test_func", v1)}}, [][]*genai.FunctionCall{{call("test_func", map[string]any{"arg1": "val2"})}}, 0, []float64{0}},
		{"different_number_of_tool_calls", exact, [][]*genai.FunctionCall{{call("test_func", v1)}}, [][]*genai.FunctionCall{{call("test_func", v1), call("test_func", v1)}}, 0, []float64{0}},
		{"no_tool_calls", exact, [][]*genai.FunctionCall{nil}, [][]*genai.FunctionCall{nil}, 1, []float64{1}},
		{"multiple_invocations", exact,
			[][]*genai.FunctionCall{{call("test_func1", v1)}, {call("test_func1", v1)}},
			[][]*genai.FunctionCall{{call("test_func1", v1)}, {call("test_func2", v1)}}, 0.5, []float64{1, 0}},
		{"in_order_match_with_extra_tool_calls", inOrder, [][]*genai.FunctionCall{calls("t1", "t1_1", "t2", "t2_1", "t3", "t3_1")}, [][]*genai.FunctionCall{calls("t1", "t2", "t3")}, 1, []float64{1}},
		{"in_order_match_fails_with_missing_tool_call", inOrder, [][]*genai.FunctionCall{calls("t1", "t1_1", "t2", "t2_1", "t3_1")}, [][]*genai.FunctionCall{calls("t1", "t2", "t4")}, 0, []float64{0}},
		{"in_order_match_fails_with_wrong_order", inOrder, [][]*genai.FunctionCall{calls("t1", "t3", "t2")}, [][]*genai.FunctionCall{calls("t1", "t2", "t3")}, 0, []float64{0}},
		{"any_order_match_with_extra_tool_calls_different_order", anyOrder, [][]*genai.FunctionCall{calls("t2", "t2_1", "t1", "t1_1", "t3", "t3_1")}, [][]*genai.FunctionCall{calls("t1", "t2", "t3")}, 1, []float64{1}},
		{"any_order_match_fails_with_missing_tool_call", anyOrder, [][]*genai.FunctionCall{calls("t1", "t1_1", "t2", "t2_1", "t3_1")}, [][]*genai.FunctionCall{calls("t1", "t2", "t4")}, 0, []float64{0}},
		{"any_order_match_with_duplicates", anyOrder, [][]*genai.FunctionCall{calls("t1", "t2", "t3", "t1")}, [][]*genai.FunctionCall{calls("t1", "t2", "t1")}, 1, []float64{1}},
		{"any_order_match_fails_with_duplicates_missing", anyOrder, [][]*genai.FunctionCall{calls("t1", "t2", "t3")}, [][]*genai.FunctionCall{calls("t1", "t2", "t1")}, 0, []float64{0}},
		{"accepts_string_match_type_from_eval_metric_dict", anyOrder, [][]*genai.FunctionCall{calls("test_func1", "test_func2")}, [][]*genai.FunctionCall{calls("test_func2", "test_func1")}, 1, []float64{1}},
		// Empty expected calls: EXACT needs none, the others pass.
		{"in order, none expected", inOrder, [][]*genai.FunctionCall{calls("t1")}, [][]*genai.FunctionCall{nil}, 1, []float64{1}},
		{"exact, none expected", exact, [][]*genai.FunctionCall{calls("t1")}, [][]*genai.FunctionCall{nil}, 0, []float64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var actual, expected []eval.Turn
			for i := range tc.actual {
				actual = append(actual, turnWith(tc.actual[i]...))
				expected = append(expected, turnWith(tc.expected[i]...))
			}
			s := score(t, tc.metric, actual, expected)
			if s.Value != tc.want || len(s.Turns) != len(tc.turns) {
				t.Fatalf("score = %v with %d turns; want %v with %d", s.Value, len(s.Turns), tc.want, len(tc.turns))
			}
			for i, w := range tc.turns {
				if s.Turns[i].Value != w {
					t.Errorf("turn %d = %v, want %v (%s)", i+1, s.Turns[i].Value, w, s.Turns[i].Reason)
				}
			}
		})
	}
}

// Arguments: exact as JSON values, by subset, or ignored; a failing turn
// says why and shows the calls.
func TestToolTrajectoryArgs(t *testing.T) {
	paris := call("get_weather", map[string]any{"city": "Paris"})
	parisInt := call("get_weather", map[string]any{"city": "Paris", "days": 3})
	parisFloat := call("get_weather", map[string]any{"city": "Paris", "days": 3.0})
	parisNested := call("search", map[string]any{"filter": map[string]any{"city": "Paris", "units": "celsius"}, "limit": 3})
	wantNested := call("search", map[string]any{"filter": map[string]any{"city": "Paris"}})
	for _, tc := range []struct {
		name     string
		m        eval.ToolTrajectory
		actual   []*genai.FunctionCall
		expected []*genai.FunctionCall
		want     float64
	}{
		{"numbers compare as JSON values", eval.ToolTrajectory{}, []*genai.FunctionCall{parisFloat}, []*genai.FunctionCall{parisInt}, 1},
		{"no args equals {}", eval.ToolTrajectory{}, []*genai.FunctionCall{call("now", nil)}, []*genai.FunctionCall{call("now", map[string]any{})}, 1},
		{"exact refuses extra args", eval.ToolTrajectory{}, []*genai.FunctionCall{parisInt}, []*genai.FunctionCall{paris}, 0},
		{"subset accepts extra args", eval.ToolTrajectory{Args: eval.ArgsSubset}, []*genai.FunctionCall{parisInt}, []*genai.FunctionCall{paris}, 1},
		{"subset is recursive", eval.ToolTrajectory{Args: eval.ArgsSubset}, []*genai.FunctionCall{parisNested}, []*genai.FunctionCall{wantNested}, 1},
		{"subset refuses a missing arg", eval.ToolTrajectory{Args: eval.ArgsSubset}, []*genai.FunctionCall{paris}, []*genai.FunctionCall{parisInt}, 0},
		{"ignore compares names", eval.ToolTrajectory{Args: eval.ArgsIgnore}, []*genai.FunctionCall{call("get_weather", map[string]any{"city": "Oslo"})}, []*genai.FunctionCall{paris}, 1},
		// With subsets, the first free match can be the wrong one: the
		// Paris-only expectation must leave the Paris+days call to the
		// expectation that needs it.
		{"any order finds the matching a greedy pass misses", eval.ToolTrajectory{Match: eval.MatchAnyOrder, Args: eval.ArgsSubset},
			[]*genai.FunctionCall{parisInt, paris}, []*genai.FunctionCall{paris, parisInt}, 1},
	} {
		s := score(t, tc.m, []eval.Turn{turnWith(tc.actual...)}, []eval.Turn{turnWith(tc.expected...)})
		if s.Value != tc.want {
			t.Errorf("%s: score = %v, want %v (%s)", tc.name, s.Value, tc.want, s.Turns[0].Reason)
		}
	}

	s := score(t, eval.ToolTrajectory{Threshold: 1}, []eval.Turn{turnWith(call("get_weather", map[string]any{"city": "paris"}))}, []eval.Turn{turnWith(paris)})
	ts := s.Turns[0]
	for _, want := range []string{"EXACT, args exact", `call 1 is get_weather({"city":"paris"}), want get_weather({"city":"Paris"})`} {
		if !strings.Contains(ts.Reason, want) {
			t.Errorf("reason %q lacks %q", ts.Reason, want)
		}
	}
	for _, want := range []string{"-expected +actual", `- get_weather({"city":"Paris"})`, `+ get_weather({"city":"paris"})`} {
		if !strings.Contains(ts.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, ts.Detail)
		}
	}

	// A scenario has no expected turns.
	sc := score(t, eval.ToolTrajectory{Threshold: 1}, []eval.Turn{turnWith()}, nil)
	if sc.Status != eval.NotEvaluated || !strings.Contains(sc.Reason, "scenario") {
		t.Errorf("scenario: %+v; want NotEvaluated saying why", sc)
	}
}

// TestResponseMatchADK checks the mean over turns against ADK's
// test_rouge_evaluator_multiple_invocations (threshold 0.8 there).
func TestResponseMatchADK(t *testing.T) {
	for _, tc := range []struct {
		candidates, references []string
		want                   float64
	}{
		{[]string{"The quick brown fox jumps.", "hello world"}, []string{"The quick brown fox jumps over the lazy dog.", "hello"}, 0.69048},
		{[]string{"This is a test.", "Another test case."}, []string{"This is a test.", "This is a different test."}, 0.625},
		{[]string{"No matching words here.", "Second candidate."}, []string{"Completely different text.", "Another reference."}, 0.0},
		{[]string{"Same words", "Same words"}, []string{"Same words", "Same words"}, 1.0},
	} {
		var actual, expected []eval.Turn
		for i := range tc.candidates {
			actual = append(actual, eval.UserTurn("This is a test query.").WithResponse(tc.candidates[i]))
			expected = append(expected, eval.UserTurn("This is a test query.").WithResponse(tc.references[i]))
		}
		s := score(t, eval.ResponseMatch{Threshold: 0.8}, actual, expected)
		// ADK checks with pytest.approx(rel=1e-3).
		if diff := s.Value - tc.want; diff > 1e-3*tc.want+1e-12 || diff < -1e-3*tc.want-1e-12 {
			t.Errorf("%q: score %v, want %v", tc.candidates, s.Value, tc.want)
		}
	}
}
