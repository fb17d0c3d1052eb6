package eval

import (
	"context"
	"fmt"
	"strconv"

	"github.com/toolnexus/toolnexus-go/agent"
)

// Status is the outcome of a metric, a run or a case, numbered as ADK
// numbers it in result files.
type Status int

const (
	// Passed: the score reached the threshold.
	Passed Status = 1
	// Failed: the score is below the threshold, or the agent failed.
	Failed Status = 2
	// NotEvaluated: there is no score, and Reason says why (a judge that
	// timed out or answered no verdict, a metric that needs expected turns
	// the case does not have, an unknown metric…).
	NotEvaluated Status = 3
)

// String returns ADK's name of the status: PASSED, FAILED, NOT_EVALUATED.
func (s Status) String() string {
	switch s {
	case Passed:
		return "PASSED"
	case Failed:
		return "FAILED"
	case NotEvaluated:
		return "NOT_EVALUATED"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// combine decides a run's outcome from its metrics' as ADK's adk eval
// decides an eval case result's (local_eval_service.py,
// _generate_final_eval_status): Failed if one failed, else Passed if one
// passed, else NotEvaluated. A case's status is stricter: see caseStatus.
func combine(statuses []Status) Status {
	out := NotEvaluated
	for _, s := range statuses {
		switch s {
		case Failed:
			return Failed
		case Passed:
			out = Passed
		}
	}
	return out
}

// statusOf is ADK's get_eval_status: passed iff score >= threshold.
func statusOf(score, threshold float64) Status {
	if score >= threshold {
		return Passed
	}
	return Failed
}

// A Metric scores one run of a case. The package's metrics are
// [ToolTrajectory], [ResponseMatch], [FinalResponseMatch],
// [ResponseQuality] and [ToolUseQuality]; [Func] and [TurnFunc] make one
// of a Go function.
//
// Evaluate is called once per run, possibly concurrently for different
// runs: it must be safe for concurrent use. It returns the run's score: a
// value (usually in [0, 1]), the threshold it is compared with, and one
// [TurnScore] per actual turn. Statuses left zero are computed from the
// threshold. A metric that cannot score the run returns a Score with
// Status NotEvaluated and a Reason, or an error, which the runner records
// as the reason; a panic is recovered and recorded the same way.
type Metric interface {
	// Name names the metric in results and reports.
	Name() string
	Evaluate(ctx context.Context, in *Input) (*Score, error)
}

// Input is what a metric scores: a run's actual turns, the case's
// expected ones, and the run itself.
type Input struct {
	// Case is the case that was run.
	Case *Case
	// Expected are the case's turns; nil for a scenario case, which has
	// none.
	Expected []Turn
	// Actual are the turns of the run that ran: one per expected turn for
	// a scripted case, but for the turns after an error that stopped the
	// run, which no metric scores (their turn scores are NotEvaluated).
	Actual []Turn
	// Run is the run: the agent's results, usage, latency, error.
	Run *Run
}

// Score is a metric's score of one run.
type Score struct {
	// Metric is the metric's name; the runner sets it.
	Metric string
	// Threshold is what Value is compared with: Passed iff Value >=
	// Threshold.
	Threshold float64
	// Value is the score; meaningless when Status is NotEvaluated.
	Value float64
	// Status is the outcome.
	Status Status
	// Reason explains the score: why it was not evaluated, or what failed.
	Reason string
	// Turns score each actual turn, in order; a metric that scores the
	// run as a whole leaves it nil, and the runner fills it with
	// NotEvaluated turns.
	Turns []TurnScore
	// Rubrics are the run's rubric scores, for rubric-based metrics: each
	// rubric's mean over the turns.
	Rubrics []RubricScore
	// Usage counts the tokens the metric's judge spent, kept apart from
	// the agent's.
	Usage agent.Usage
	// JudgeCalls counts the judge's model calls.
	JudgeCalls int
	// Criterion is the criterion the metric was built from, when it was
	// built from a criteria file; results record it.
	Criterion *Criterion
}

// TurnScore is a metric's score of one turn.
type TurnScore struct {
	Value  float64
	Status Status
	// Reason explains the score in a line: why the turn failed, what the
	// judge said, why it was not evaluated.
	Reason string
	// Detail shows what was compared, for failures: expected tool calls
	// against actual ones, the expected answer against the actual one.
	Detail string
	// Rubrics are the turn's rubric verdicts, for rubric-based metrics.
	Rubrics []RubricScore
}

// RubricScore is a judge's verdict on one rubric.
type RubricScore struct {
	// ID is the rubric's ID.
	ID string
	// Value is 1 when the property holds, 0 when it does not, or the mean
	// of such values; meaningless when Scored is false.
	Value float64
	// Scored is false when the judge gave no verdict on the rubric.
	Scored bool
	// Rationale is the judge's reason.
	Rationale string
}

// NotEvaluatedScore returns a score that says why there is none.
func NotEvaluatedScore(threshold float64, format string, args ...any) *Score {
	return &Score{Threshold: threshold, Status: NotEvaluated, Reason: fmt.Sprintf(format, args...)}
}

// Func returns a metric whose score of a run is f's: f returns the score
// (Value, and optionally Turns, Reason…); the threshold is set from
// threshold, and statuses from it. This is how a metric is written in Go,
// and how a criteria file's custom_metrics entry is provided (see
// Options.Custom).
//
//	concise := eval.Func("concise", 1, func(ctx context.Context, in *eval.Input) (*eval.Score, error) {
//		for _, t := range in.Actual {
//			if len(t.ResponseText()) > 500 {
//				return &eval.Score{Value: 0, Reason: "an answer is longer than 500 bytes"}, nil
//			}
//		}
//		return &eval.Score{Value: 1}, nil
//	})
func Func(name string, threshold float64, f func(ctx context.Context, in *Input) (*Score, error)) Metric {
	return funcMetric{name: name, threshold: threshold, f: f}
}

type funcMetric struct {
	name      string
	threshold float64
	f         func(context.Context, *Input) (*Score, error)
}

func (m funcMetric) Name() string { return m.name }

func (m funcMetric) Evaluate(ctx context.Context, in *Input) (*Score, error) {
	s, err := m.f(ctx, in)
	switch {
	case err != nil:
		return NotEvaluatedScore(m.threshold, "%v", err), nil
	case s == nil:
		return NotEvaluatedScore(m.threshold, "the metric returned no score"), nil
	}
	s.Threshold = m.threshold
	return s, nil
}

// TurnFunc returns a metric that scores each turn with f, given the actual
// turn and the expected one (nil for a scenario case), and scores the run
// with the mean of the turns' scores, as ADK's per-turn metrics do. f
// returns the turn's score and a reason, shown when the turn fails.
func TurnFunc(name string, threshold float64, f func(ctx context.Context, actual, expected *Turn) (score float64, reason string, err error)) Metric {
	return Func(name, threshold, func(ctx context.Context, in *Input) (*Score, error) {
		s := &Score{}
		for i := range in.Actual {
			var expected *Turn
			if i < len(in.Expected) {
				expected = &in.Expected[i]
			}
			v, reason, err := f(ctx, &in.Actual[i], expected)
			if err != nil {
				return nil, fmt.Errorf("turn %d: %w", i+1, err)
			}
			s.Turns = append(s.Turns, TurnScore{Value: v, Reason: reason})
		}
		s.Value = meanTurns(s.Turns)
		return s, nil
	})
}

// meanTurns returns the mean of the turns' values.
func meanTurns(turns []TurnScore) float64 {
	if len(turns) == 0 {
		return 0
	}
	var sum float64
	for _, t := range turns {
		sum += t.Value
	}
	return sum / float64(len(turns))
}

// finish completes a metric's score of a run: the name, the statuses
// computed from the threshold, one turn score per actual turn.
func finish(s *Score, m Metric, turns int) {
	s.Metric = m.Name()
	if s.Status == 0 {
		s.Status = statusOf(s.Value, s.Threshold)
	}
	for i := range s.Turns {
		if s.Turns[i].Status == 0 {
			s.Turns[i].Status = statusOf(s.Turns[i].Value, s.Threshold)
		}
	}
	for len(s.Turns) < turns {
		s.Turns = append(s.Turns, TurnScore{Status: NotEvaluated, Reason: "the metric scores the run as a whole"})
	}
	if len(s.Turns) > turns {
		s.Turns = s.Turns[:turns]
	}
}

// evaluate runs a metric on a run, turning errors and panics into a
// NotEvaluated score.
func evaluate(ctx context.Context, m Metric, in *Input) (s *Score) {
	defer func() {
		if r := recover(); r != nil {
			s = &Score{Status: NotEvaluated, Reason: fmt.Sprintf("the metric panicked: %v", r)}
			finish(s, m, len(in.Actual))
		}
	}()
	s, err := m.Evaluate(ctx, in)
	switch {
	case err != nil:
		s = &Score{Status: NotEvaluated, Reason: err.Error()}
	case s == nil:
		s = &Score{Status: NotEvaluated, Reason: "the metric returned no score"}
	}
	finish(s, m, len(in.Actual))
	return s
}
