package eval_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// benchCases is how many cases the benchmarks' set has.
const benchCases = 10

// benchSet is a set of benchCases cases of two turns each: a tool call and
// an answer, then an answer.
func benchSet() *eval.Set {
	set := &eval.Set{ID: "bench"}
	for i := range benchCases {
		set.Cases = append(set.Cases, eval.Case{ID: fmt.Sprint("paris", i), Turns: []eval.Turn{
			eval.UserTurn("What is the weather in Paris?").
				WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}).
				WithResponse("It is sunny in Paris."),
			eval.UserTurn("Thanks!").WithResponse("I only know the weather."),
		}})
	}
	return set
}

// BenchmarkEvalCaseBaseline is what the set's cases cost without the
// runner: the agent runs each case's turns on the conversation so far, as
// the runner does. Divide by benchCases for a case.
func BenchmarkEvalCaseBaseline(b *testing.B) {
	srv := geminitest.NewServer() // no per-request log, unlike Start
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(weatherModel)
	a := weatherAgent(b, srv)
	set := benchSet()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range set.Cases {
			var history []*genai.Content
			for _, t := range c.Turns {
				res, err := a.Run(ctx, append(history, t.User))
				if err != nil {
					b.Fatal(err)
				}
				history = res.History
			}
		}
	}
}

// BenchmarkEvalCase runs the same set through Evaluate, scored with the
// trajectory and ROUGE-1 metrics.
func BenchmarkEvalCase(b *testing.B) {
	benchEvaluate(b, []eval.Metric{eval.ToolTrajectory{Threshold: 1}, eval.ResponseMatch{Threshold: 0.8}})
}

// BenchmarkEvalCaseNoMetrics is BenchmarkEvalCase without metrics: the
// runner alone.
func BenchmarkEvalCaseNoMetrics(b *testing.B) {
	benchEvaluate(b, []eval.Metric{})
}

func benchEvaluate(b *testing.B, metrics []eval.Metric) {
	srv := geminitest.NewServer() // no per-request log, unlike Start
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(weatherModel)
	opts := eval.Options{Agent: weatherAgent(b, srv), Metrics: metrics}
	set := benchSet()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rep, err := eval.Evaluate(ctx, set, opts)
		if err != nil || rep.Cases[0].Runs[0].Err != nil {
			b.Fatal(err, rep.Cases[0].Runs[0].Err)
		}
	}
}
