package eval

import (
	"fmt"
	"strings"
	"testing"
)

// maxShown bounds the failing turns a failing metric reports in a test.
const maxShown = 5

// Test runs set under go test: one subtest per case, named after the set
// and the case (TestX/<set ID>/<case ID>), that fails, with an
// explanation, when a metric's score of the case is below its threshold
// or not evaluated, or when a run fails. The explanation shows, for each
// failing turn, what the metric compared: the expected tool calls against
// the actual ones, the expected answer and the actual one, the judge's
// reason.
//
//	func TestAgent(t *testing.T) {
//		set, err := eval.LoadFile("testdata/weather.evalset.json")
//		if err != nil {
//			t.Fatal(err)
//		}
//		eval.Test(t, set, eval.Options{Agent: newAgent(t)})
//	}
//
// The cases run in parallel subtests (bounded by Options.Parallel and by go
// test's -parallel), and -run selects them: go test -run
// 'TestAgent/weather/paris'. When they are done, Test logs the report's
// table, writes Options.ResultFile when it is set, and returns the report
// of the cases that ran. Options it cannot use fail t at once.
func Test(t *testing.T, set *Set, opts Options) *Report {
	t.Helper()
	r, err := newRunner(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep := r.newReport()
	name := set.ID
	if name == "" {
		name = "set"
	}
	t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
		for i := range set.Cases {
			c := &set.Cases[i]
			t.Run(caseName(c), func(t *testing.T) {
				t.Parallel()
				cr := r.runCase(t.Context(), c)
				rep.Cases[i] = cr
				cr.report(t)
			})
		}
	})
	rep.finish()
	t.Log("\n" + rep.Table())
	if opts.ResultFile != "" {
		if err := rep.WriteFile(opts.ResultFile); err != nil {
			t.Error(err)
		}
	}
	return rep
}

// report fails t unless the case passed (its Status, the one Evaluate
// reports), and explains each way it did not.
func (cr *CaseResult) report(t *testing.T) {
	t.Helper()
	if cr.Status == Passed {
		return
	}
	for _, run := range cr.Runs {
		if run.Err != nil {
			t.Errorf("run %d failed: %v", run.Index+1, run.Err)
		}
	}
	for i, mr := range cr.Metrics {
		if mr.Status == Passed {
			continue
		}
		t.Error(cr.explain(i, mr))
	}
}

// explain writes why metric i did not pass.
func (cr *CaseResult) explain(i int, mr MetricResult) string {
	var b strings.Builder
	if mr.Status == NotEvaluated {
		fmt.Fprintf(&b, "%s: not evaluated: %s", mr.Metric, mr.Reason)
		return b.String()
	}
	fmt.Fprintf(&b, "%s = %.3f, below the threshold %.2f", mr.Metric, mr.Value, mr.Threshold)
	if mr.Turns > 0 {
		fmt.Fprintf(&b, " (the mean of %d turn %s over %d %s)", mr.Turns, plural(mr.Turns, "score", "scores"), len(cr.Runs), plural(len(cr.Runs), "run", "runs"))
	}
	shown := 0
	for _, run := range cr.Runs {
		s := run.Scores[i]
		if s.Reason != "" && s.Status != Passed {
			fmt.Fprintf(&b, "\n  run %d: %s", run.Index+1, s.Reason)
		}
		for j, ts := range s.Turns {
			if ts.Status != Failed {
				continue
			}
			if shown == maxShown {
				b.WriteString("\n  …")
				return b.String()
			}
			shown++
			user := ""
			if j < len(run.Turns) {
				user = oneLine(run.Turns[j].UserText(), 60)
			}
			fmt.Fprintf(&b, "\n  run %d, turn %d %q: %.2f: %s", run.Index+1, j+1, user, ts.Value, ts.Reason)
			if ts.Detail != "" {
				b.WriteString("\n    " + strings.ReplaceAll(ts.Detail, "\n", "\n    "))
			}
		}
	}
	return b.String()
}
