package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/toolnexus/toolnexus-go/internal/textdiff"
	"google.golang.org/genai"
)

// Args says how a tool call's arguments are compared with the expected
// call's.
type Args int

const (
	// ArgsExact requires equal arguments, as ADK compares them (the whole
	// dictionary; numbers by value, so 1 equals 1.0). No arguments and {}
	// are equal here; ADK, comparing None with {}, tells them apart.
	ArgsExact Args = iota
	// ArgsSubset requires the expected arguments to be among the actual
	// ones, with equal values; objects are compared the same way, member
	// by member, so that an expected {"filter": {"city": "Paris"}} matches
	// {"filter": {"city": "Paris", "units": "celsius"}, "limit": 3}.
	ArgsSubset
	// ArgsIgnore compares tool names only (ADK's ignore_args).
	ArgsIgnore
)

var argsNames = [...]string{"args exact", "args subset", "args ignored"}

// String returns "args exact", "args subset" or "args ignored".
func (a Args) String() string {
	if a >= 0 && int(a) < len(argsNames) {
		return argsNames[a]
	}
	return fmt.Sprintf("Args(%d)", int(a))
}

// ToolTrajectory is ADK's tool_trajectory_avg_score: each turn scores 1
// when the agent's tool calls match the expected ones, 0 otherwise, and a
// run scores the mean of its turns. The calls match as Match says
// (exactly, in order, in any order) with arguments compared as Args says.
// An expected turn with no calls matches a turn with none under
// MatchExact, and any turn under the other two, as in ADK.
//
// A call that did not run (it was denied, or never answered) does not
// match one that ran, and the other way round: the turns' responses say
// which ran (see [ReplayDecisions] for the form a denial takes). An
// expected turn that records no responses (an ADK eval set that lists
// only tool_uses) says nothing of it, and its calls match either.
//
// It needs expected turns: a scenario case is not evaluated.
type ToolTrajectory struct {
	Threshold float64
	Match     Match
	Args      Args
}

// Name returns "tool_trajectory_avg_score".
func (ToolTrajectory) Name() string { return MetricToolTrajectory }

// Evaluate scores a run.
func (m ToolTrajectory) Evaluate(_ context.Context, in *Input) (*Score, error) {
	if in.Expected == nil {
		return NotEvaluatedScore(m.Threshold, "%s needs expected turns; the case is a scenario", m.Name()), nil
	}
	s := &Score{Threshold: m.Threshold}
	for i := range min(len(in.Actual), len(in.Expected)) {
		actual, expected := callRuns(&in.Actual[i]), callRuns(&in.Expected[i])
		ok, why := m.matches(actual, expected)
		ts := TurnScore{}
		if ok {
			ts.Value = 1
		} else {
			ts.Reason = fmt.Sprintf("%s, %s: %s", m.Match, m.Args, why)
			ts.Detail = callsDiff(expected, actual)
		}
		s.Turns = append(s.Turns, ts)
	}
	s.Value = meanTurns(s.Turns)
	return s, nil
}

// matches compares a turn's calls, as ADK's TrajectoryEvaluator does
// (trajectory_evaluator.py: _are_tool_calls_exact_match,
// _are_tool_calls_in_order_match, _are_tool_calls_any_order_match), and
// says why they do not match.
func (m ToolTrajectory) matches(actual, expected []callRun) (bool, string) {
	switch m.Match {
	case MatchExact:
		if len(actual) != len(expected) {
			return false, fmt.Sprintf("%d calls, want %d", len(actual), len(expected))
		}
		for i := range actual {
			if !m.callMatches(actual[i].call, expected[i].call) {
				return false, fmt.Sprintf("call %d is %s, want %s", i+1, callString(actual[i].call), callString(expected[i].call))
			}
			if !ranAlike(actual[i], expected[i]) {
				return false, fmt.Sprintf("call %d, %s, %s; the expected call %s", i+1, callString(actual[i].call), ranString(actual[i]), ranString(expected[i]))
			}
		}
		return true, ""
	case MatchInOrder:
		// The earliest actual call that matches the next expected one:
		// greedy is optimal for a subsequence, whatever the predicate.
		next := 0
		for _, a := range actual {
			if next < len(expected) && m.runMatches(a, expected[next]) {
				next++
			}
		}
		if next == len(expected) {
			return true, ""
		}
		return false, fmt.Sprintf("expected call %d, %s (it %s), is not among the calls after call %d's match, in order", next+1, callString(expected[next].call), ranString(expected[next]), next)
	case MatchAnyOrder:
		// A matching of expected calls to distinct actual ones. ADK takes
		// the first free match, which is enough when arguments are equal
		// or ignored; a subset can match several calls, so augmenting
		// paths find a full matching whenever one exists.
		owner := make([]int, len(actual)) // actual -> expected+1
		for e := range expected {
			seen := make([]bool, len(actual))
			if !m.augment(e, actual, expected, owner, seen) {
				return false, fmt.Sprintf("no call matches expected call %d, %s (it %s)", e+1, callString(expected[e].call), ranString(expected[e]))
			}
		}
		return true, ""
	}
	return false, fmt.Sprintf("unknown match type %v", m.Match)
}

func (m ToolTrajectory) augment(e int, actual, expected []callRun, owner []int, seen []bool) bool {
	for a := range actual {
		if seen[a] || !m.runMatches(actual[a], expected[e]) {
			continue
		}
		seen[a] = true
		if owner[a] == 0 || m.augment(owner[a]-1, actual, expected, owner, seen) {
			owner[a] = e + 1
			return true
		}
	}
	return false
}

// runMatches reports whether a call matches an expected one: its name
// and arguments, and whether it ran.
func (m ToolTrajectory) runMatches(actual, expected callRun) bool {
	return m.callMatches(actual.call, expected.call) && ranAlike(actual, expected)
}

func (m ToolTrajectory) callMatches(actual, expected *genai.FunctionCall) bool {
	if actual.Name != expected.Name {
		return false
	}
	switch m.Args {
	case ArgsIgnore:
		return true
	case ArgsSubset:
		return subset(jsonValue(expected.Args), jsonValue(actual.Args))
	}
	return argsEqual(actual.Args, expected.Args)
}

// argsEqual reports whether two calls' arguments are equal as JSON
// values.
func argsEqual(a, b map[string]any) bool {
	return reflect.DeepEqual(jsonValue(a), jsonValue(b))
}

// ranAlike reports whether two calls both ran or both did not, or one's
// turn does not say.
func ranAlike(a, b callRun) bool {
	return a.state == callRanUnknown || b.state == callRanUnknown || a.state == b.state
}

// ranString says whether a call ran: "ran", "was not run (reason)", or
// "may have run" when its turn records no responses.
func ranString(c callRun) string {
	switch c.state {
	case callRan:
		return "ran"
	case callNotRun:
		return "was not run (" + c.reason + ")"
	}
	return "may have run"
}

// jsonValue returns v as encoding/json decodes its JSON, so that values
// compare as JSON values (int 1 equals float 1.0); no arguments are {}.
func jsonValue(args map[string]any) any {
	if len(args) == 0 {
		return map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return args
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return args
	}
	return v
}

// subset reports whether want is in got: objects member by member,
// anything else equal.
func subset(want, got any) bool {
	w, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(want, got)
	}
	g, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, wv := range w {
		gv, ok := g[k]
		if !ok || !subset(wv, gv) {
			return false
		}
	}
	return true
}

// callString writes a call as name(args JSON), keys sorted.
func callString(fc *genai.FunctionCall) string {
	b, err := json.Marshal(jsonValue(fc.Args))
	if err != nil {
		return fc.Name + "(?)"
	}
	return fc.Name + "(" + string(b) + ")"
}

// callsDiff shows expected calls against actual ones; a call that was
// not run is marked so.
func callsDiff(expected, actual []callRun) string {
	d := textdiff.Lines(callStrings(expected), callStrings(actual))
	if d == "" {
		d = "  (the same calls)\n"
	}
	return "tool calls (-expected +actual):\n" + strings.TrimRight(d, "\n")
}

func callStrings(calls []callRun) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = callString(c.call)
		if c.state == callNotRun {
			out[i] += " [not run: " + c.reason + "]"
		}
	}
	return out
}

// ResponseMatch is ADK's response_match_score: each turn scores the
// ROUGE-1 F-measure of the agent's final answer against the expected one
// (see [Rouge1]), and a run scores the mean of its turns. An expected turn
// without an answer scores 0, as in ADK.
//
// It needs expected turns: a scenario case is not evaluated. ROUGE-1
// counts only the letters a-z and digits, as ADK's does: texts in other
// scripts score 0 (google/adk-python#3111); judge them with a judged
// metric.
type ResponseMatch struct {
	Threshold float64
}

// Name returns "response_match_score".
func (ResponseMatch) Name() string { return MetricResponseMatch }

// Evaluate scores a run.
func (m ResponseMatch) Evaluate(_ context.Context, in *Input) (*Score, error) {
	if in.Expected == nil {
		return NotEvaluatedScore(m.Threshold, "%s needs expected turns; the case is a scenario", m.Name()), nil
	}
	s := &Score{Threshold: m.Threshold}
	for i := range min(len(in.Actual), len(in.Expected)) {
		want, got := in.Expected[i].ResponseText(), in.Actual[i].ResponseText()
		r := Rouge1(got, want)
		ts := TurnScore{Value: r.F, Reason: fmt.Sprintf("ROUGE-1 F %.2f (precision %.2f, recall %.2f)", r.F, r.Precision, r.Recall)}
		if r.F < m.Threshold {
			ts.Detail = fmt.Sprintf("expected answer: %s\nactual answer:   %s", quote(want), quote(got))
		}
		s.Turns = append(s.Turns, ts)
	}
	s.Value = meanTurns(s.Turns)
	return s, nil
}

// quote quotes a text for a report, cut to a readable length.
func quote(s string) string {
	const max = 600
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
	}
	return fmt.Sprintf("%q", s)
}
