package eval

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
)

// Evaluate runs every case of set against Options.Agent, as many times as
// Options.Runs says and as many at once as Options.Parallel allows, scores
// every run, and returns the report. Its error is only for options it
// cannot use: a case that fails is in the report. When ctx is done, the
// runs in flight stop and the report says so.
//
// Under go test, [Test] runs each case as a subtest.
func Evaluate(ctx context.Context, set *Set, opts Options) (*Report, error) {
	r, err := newRunner(set, opts)
	if err != nil {
		return nil, err
	}
	rep := r.newReport()
	var wg sync.WaitGroup
	for i := range set.Cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.Cases[i] = r.runCase(ctx, &set.Cases[i])
		}()
	}
	wg.Wait()
	rep.finish()
	return rep, nil
}

// A Report is the outcome of an eval set: every case's runs and scores,
// and the totals.
type Report struct {
	// Set is the set that was run.
	Set *Set
	// Metrics are the names of the metrics, in order.
	Metrics []string
	// Cases are the cases' results, in the set's order; under [Test], the
	// cases go test's -run selected.
	Cases []*CaseResult
	// Status is Failed when a case failed, else NotEvaluated when a case
	// was not evaluated (a metric that has no score: no judge, a judge
	// outage, an unknown metric), else Passed: every case passed. A gate
	// on Status == Passed fails when a metric could not be scored.
	Status Status
	// Passed, Failed and NotEvaluated count the cases.
	Passed, Failed, NotEvaluated int

	// AgentUsage sums the agent's tokens over every run; ModelCalls counts
	// its model calls. JudgeUsage and JudgeCalls count the judges',
	// SimulatorUsage the simulated users': each kept apart.
	AgentUsage     agent.Usage
	ModelCalls     int
	JudgeUsage     agent.Usage
	JudgeCalls     int
	SimulatorUsage agent.Usage

	// Started is when the set started; Duration how long it took.
	Started  time.Time
	Duration time.Duration
	// Warning says what makes the report less than it seems, such as a
	// set scored by no metric.
	Warning string

	agentName string // the author of the agent's events in results
}

// CaseResult is the outcome of one case over its runs.
type CaseResult struct {
	Case *Case
	// Runs are the case's runs, in order.
	Runs []*Run
	// Metrics are the case's scores, one per metric, over every run, as
	// ADK's AgentEvaluator scores them: the mean of the metric's turn
	// scores over all runs, against its threshold.
	Metrics []MetricResult
	// Status is Failed when a metric failed or a run failed, else
	// NotEvaluated when a metric was not evaluated, else Passed: every
	// metric passed, as ADK's AgentEvaluator decides. [Test] fails the
	// case unless it is Passed.
	Status Status
}

// MetricResult is a metric's score of a case, over its runs.
type MetricResult struct {
	Metric    string
	Threshold float64
	// Value is the mean of the metric's turn scores over every run (of
	// its run scores, when it has no turn scores); meaningless when Status
	// is NotEvaluated.
	Value float64
	// Turns counts the turn scores the mean is of.
	Turns  int
	Status Status
	// Reason says why the metric was not evaluated.
	Reason string
}

func (r *runner) newReport() *Report {
	rep := &Report{Set: r.set, Cases: make([]*CaseResult, len(r.set.Cases)), Started: time.Now(), Warning: r.warning,
		agentName: r.opts.Agent.Steps().Name()}
	for _, m := range r.metrics {
		rep.Metrics = append(rep.Metrics, m.Name())
	}
	return rep
}

// finish drops the cases that did not run and adds the totals up.
func (rep *Report) finish() {
	rep.Duration = time.Since(rep.Started)
	cases := rep.Cases[:0]
	for _, c := range rep.Cases {
		if c != nil {
			cases = append(cases, c)
		}
	}
	rep.Cases = cases
	statuses := make([]Status, len(rep.Cases))
	for i, c := range rep.Cases {
		statuses[i] = c.Status
		switch c.Status {
		case Passed:
			rep.Passed++
		case Failed:
			rep.Failed++
		default:
			rep.NotEvaluated++
		}
		for _, run := range c.Runs {
			rep.AgentUsage = rep.AgentUsage.Plus(run.Usage)
			rep.ModelCalls += run.ModelCalls
			rep.SimulatorUsage = rep.SimulatorUsage.Plus(run.SimulatorUsage)
			for _, s := range run.Scores {
				rep.JudgeUsage = rep.JudgeUsage.Plus(s.Usage)
				rep.JudgeCalls += s.JudgeCalls
			}
		}
	}
	rep.Status = allPassed(statuses)
}

// newCaseResult aggregates a case's runs as ADK's AgentEvaluator does
// (agent_evaluator.py, _process_metrics_and_get_failures): per metric, the
// mean of every turn score of every run that has one.
func newCaseResult(c *Case, runs []*Run, metrics []Metric) *CaseResult {
	cr := &CaseResult{Case: c, Runs: runs}
	for i, m := range metrics {
		mr := MetricResult{Metric: m.Name(), Status: NotEvaluated}
		var sum, runSum float64
		var n, runN int
		for _, run := range runs {
			s := run.Scores[i]
			mr.Threshold = s.Threshold
			for _, t := range s.Turns {
				if t.Status != NotEvaluated {
					sum += t.Value
					n++
				}
			}
			if s.Status != NotEvaluated {
				runSum += s.Value
				runN++
			} else if mr.Reason == "" {
				mr.Reason = s.Reason
			}
		}
		switch {
		case n > 0:
			mr.Value, mr.Turns = sum/float64(n), n
		case runN > 0:
			mr.Value = runSum / float64(runN)
		}
		if n > 0 || runN > 0 {
			mr.Status, mr.Reason = statusOf(mr.Value, mr.Threshold), ""
		}
		cr.Metrics = append(cr.Metrics, mr)
	}
	cr.Status = caseStatus(cr.Metrics, runs)
	return cr
}

// caseStatus decides a case's status from its metrics' scores over all
// runs, as ADK's AgentEvaluator fails a case (agent_evaluator.py,
// _process_metrics_and_get_failures: every metric that did not pass,
// scored below its threshold or not scored at all, is a failure of the
// test; _get_failures_from_final_eval_status: so is a run that failed):
// Failed if a run or a metric failed, else NotEvaluated if a metric was
// not evaluated, else Passed. Evaluate's reports and Test's subtests both
// read it.
func caseStatus(metrics []MetricResult, runs []*Run) Status {
	statuses := make([]Status, 0, len(metrics)+len(runs))
	for _, mr := range metrics {
		statuses = append(statuses, mr.Status)
	}
	for _, run := range runs {
		if run.Err != nil {
			statuses = append(statuses, Failed)
		}
	}
	return allPassed(statuses)
}

// allPassed is the status of a whole whose parts must all pass: Failed if
// one failed, else NotEvaluated if one was not evaluated, else Passed
// (with no parts too).
func allPassed(statuses []Status) Status {
	out := Passed
	for _, s := range statuses {
		switch s {
		case Failed:
			return Failed
		case NotEvaluated:
			out = NotEvaluated
		}
	}
	return out
}

// Table returns the report as a table, a row per case and a column per
// metric, each score next to its threshold, then the totals:
//
//	eval set "demo": 2 cases, 1 run each: 1 passed, 1 failed
//	case     tool_trajectory_avg_score  response_match_score  result
//	paris    1.00 >= 1.00               0.86 >= 0.80          PASSED
//	oslo     0.00 <  1.00               0.31 <  0.80          FAILED
//	agent: 6 model calls, 1,234 tokens; judges: 0 calls; 0.21s
func (rep *Report) Table() string {
	var b strings.Builder
	runs := 0
	if len(rep.Cases) > 0 {
		runs = len(rep.Cases[0].Runs)
	}
	fmt.Fprintf(&b, "eval set %q: %d %s, %d %s each: %d passed, %d failed", rep.Set.ID, len(rep.Cases), plural(len(rep.Cases), "case", "cases"),
		runs, plural(runs, "run", "runs"), rep.Passed, rep.Failed)
	if rep.NotEvaluated > 0 {
		fmt.Fprintf(&b, ", %d not evaluated", rep.NotEvaluated)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "case")
	for _, m := range rep.Metrics {
		fmt.Fprintf(tw, "\t%s", m)
	}
	fmt.Fprint(tw, "\tresult\n")
	for _, c := range rep.Cases {
		fmt.Fprint(tw, c.Case.ID)
		for _, m := range c.Metrics {
			fmt.Fprintf(tw, "\t%s", m.cell())
		}
		result := c.Status.String()
		for _, run := range c.Runs {
			if run.Err != nil {
				result += fmt.Sprintf(" (run %d: %v)", run.Index+1, oneLine(run.Err.Error(), 80))
				break
			}
		}
		fmt.Fprintf(tw, "\t%s\n", result)
	}
	tw.Flush()
	fmt.Fprintf(&b, "agent: %d model calls, %s tokens; judges: %d calls, %s tokens", rep.ModelCalls, thousands(rep.AgentUsage.TotalTokens),
		rep.JudgeCalls, thousands(rep.JudgeUsage.TotalTokens))
	if rep.SimulatorUsage.TotalTokens > 0 {
		fmt.Fprintf(&b, "; simulated users: %s tokens", thousands(rep.SimulatorUsage.TotalTokens))
	}
	fmt.Fprintf(&b, "; %.2fs\n", rep.Duration.Seconds())
	if rep.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", rep.Warning)
	}
	return b.String()
}

// cell writes a metric's score for the table.
func (m MetricResult) cell() string {
	switch m.Status {
	case Passed:
		return fmt.Sprintf("%.2f >= %.2f", m.Value, m.Threshold)
	case Failed:
		return fmt.Sprintf("%.2f <  %.2f", m.Value, m.Threshold)
	}
	return "not evaluated"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// oneLine returns s on one line, cut to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
