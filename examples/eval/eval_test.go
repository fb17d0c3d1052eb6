package demoeval_test

import (
	"os"
	"testing"

	"github.com/toolnexus/toolnexus-go/eval"
	demoeval "github.com/toolnexus/toolnexus-go/examples/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
)

// TestDemo runs the demo set on the offline model, twice per case, with
// the metrics of test_config.json: trajectory, ROUGE-1, and two judged by
// the offline judge. Each case is a subtest (go test -run
// TestDemo/demo/arithmetic runs one); the report's table is in the log.
func TestDemo(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(demoeval.Model)
	a, err := demoeval.NewAgent(srv.Client().Models, "gemini-3-offline-demo", demoeval.Clock)
	if err != nil {
		t.Fatal(err)
	}
	set, err := eval.LoadFile("demo.evalset.json") // and test_config.json beside it
	if err != nil {
		t.Fatal(err)
	}
	rep := eval.Test(t, set, eval.Options{
		Agent: a,
		Judge: &eval.Judge{Models: srv.Client().Models},
		Runs:  2,
	})
	if rep.JudgeCalls == 0 {
		t.Error("the judge was never asked")
	}
}

// TestScenario plays a conversation with the offline simulated user, and
// the judge grades every answer against the rubrics.
func TestScenario(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(demoeval.Model)
	a, err := demoeval.NewAgent(srv.Client().Models, "gemini-3-offline-demo", demoeval.Clock)
	if err != nil {
		t.Fatal(err)
	}
	set, err := eval.LoadFile("testdata/scenario/chat.evalset.json")
	if err != nil {
		t.Fatal(err)
	}
	rep := eval.Test(t, set, eval.Options{
		Agent:     a,
		Judge:     &eval.Judge{Models: srv.Client().Models},
		Simulator: &eval.UserSimulator{Models: srv.Client().Models},
	})
	if len(rep.Cases) == 1 && len(rep.Cases[0].Runs[0].Turns) != 2 {
		t.Errorf("the simulated conversation has %d turns; want 2", len(rep.Cases[0].Runs[0].Turns))
	}
}

// TestRecorded replays the demo set's traffic from
// testdata/geminitest/TestRecorded.json: no key, no network, the same
// answers every time. The recording in the repository was made against the
// offline model standing in for Gemini, with
//
//	DEMO_RECORD_OFFLINE=1 go test ./examples/eval -run TestRecorded -geminitest.record
//
// Record it against Gemini, once, with
//
//	GEMINI_API_KEY=… go test ./examples/eval -run TestRecorded -geminitest.record
//
// The metrics are those that a real model's wording does not fail: the
// tool calls, in order, with at least the expected arguments, and the
// judge's verdict on the answer against the reference.
func TestRecorded(t *testing.T) {
	opts := &geminitest.ReplayOptions{}
	if os.Getenv("DEMO_RECORD_OFFLINE") != "" && geminitest.Recording(geminitest.DefaultReplayFile(t)) {
		srv := geminitest.Start(t)
		srv.SetReplyFunc(demoeval.Model)
		opts.BaseURL, opts.APIKey = srv.URL, geminitest.APIKey
	}
	client := geminitest.Replay(t, "", opts).Client()
	a, err := demoeval.NewAgent(client.Models, "gemini-2.5-flash", demoeval.Clock)
	if err != nil {
		t.Fatal(err)
	}
	set, err := eval.LoadFile("demo.evalset.json")
	if err != nil {
		t.Fatal(err)
	}
	judge := &eval.Judge{Models: client.Models, Samples: 3}
	eval.Test(t, set, eval.Options{
		Agent: a,
		Metrics: []eval.Metric{
			eval.ToolTrajectory{Threshold: 1, Match: eval.MatchInOrder, Args: eval.ArgsSubset},
			eval.FinalResponseMatch{Judge: judge, Threshold: 1},
		},
	})
}
