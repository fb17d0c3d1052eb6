package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// A set runs against the agent on the fake, turn by turn, several times,
// and every run keeps its conversation, tool calls, usage and latency.
func TestEvaluate(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(models(nil))
	rep, err := eval.Evaluate(context.Background(), weatherSet(), eval.Options{Agent: weatherAgent(t, srv), Runs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Failed != 1 || rep.Status != eval.Failed || len(rep.Cases) != 2 {
		t.Fatalf("report: %d passed, %d failed, status %v, %d cases; want 1, 1, FAILED, 2\n%s", rep.Passed, rep.Failed, rep.Status, len(rep.Cases), rep.Table())
	}
	if got := rep.Metrics; len(got) != 2 || got[0] != eval.MetricToolTrajectory || got[1] != eval.MetricResponseMatch {
		t.Errorf("metrics = %v; want ADK's defaults", got)
	}
	paris, oslo := rep.Cases[0], rep.Cases[1]
	if paris.Status != eval.Passed || oslo.Status != eval.Failed {
		t.Errorf("paris %v, oslo %v; want PASSED, FAILED", paris.Status, oslo.Status)
	}
	if len(paris.Runs) != 3 {
		t.Fatalf("paris ran %d times; want 3", len(paris.Runs))
	}
	for _, run := range paris.Runs {
		if run.Err != nil || len(run.Turns) != 2 || len(run.Results) != 2 || len(run.Latency) != 2 {
			t.Fatalf("run %d: err %v, %d turns, %d results, %d latencies", run.Index, run.Err, len(run.Turns), len(run.Results), len(run.Latency))
		}
		first := run.Turns[0]
		if calls := first.Calls(); len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Args["city"] != "Paris" {
			t.Errorf("run %d turn 1 calls = %+v", run.Index, calls)
		}
		if rs := first.Responses(); len(rs) != 1 || rs[0].Response["result"] != "sunny in Paris" {
			t.Errorf("run %d turn 1 responses = %+v", run.Index, rs)
		}
		if first.ResponseText() != "It is sunny in Paris." {
			t.Errorf("run %d turn 1 answer = %q", run.Index, first.ResponseText())
		}
		// The second turn continues the first: its history holds both.
		history := run.Results[1].History
		if len(history) != 6 || history[0].Parts[0].Text != "What is the weather in Paris?" || history[4].Parts[0].Text != "Thanks!" {
			t.Errorf("run %d: the second turn's history has %d contents; want the first turn's 4 and its own 2", run.Index, len(history))
		}
		if run.Usage.TotalTokens == 0 || run.ModelCalls != 3 || run.Latency[0] <= 0 {
			t.Errorf("run %d: usage %+v, %d model calls, latency %v", run.Index, run.Usage, run.ModelCalls, run.Latency)
		}
		if !strings.HasPrefix(run.SessionID, "___eval___session___") || run.UserID != eval.DefaultUserID {
			t.Errorf("run %d: session %q, user %q", run.Index, run.SessionID, run.UserID)
		}
	}
	// Trajectory: Oslo calls get_weather(Oslo), Bergen is expected.
	traj := oslo.Metrics[0]
	if traj.Value != 0 || traj.Status != eval.Failed || traj.Turns != 3 {
		t.Errorf("oslo trajectory = %+v; want 0 over 3 turn scores (one turn, three runs)", traj)
	}
	ts := oslo.Runs[0].Scores[0].Turns[0]
	if !strings.Contains(ts.Reason, `call 1 is get_weather({"city":"Oslo"}), want get_weather({"city":"Bergen"})`) {
		t.Errorf("oslo turn reason = %q", ts.Reason)
	}
	if rep.AgentUsage.TotalTokens == 0 || rep.ModelCalls != 3*(3+2) || rep.JudgeCalls != 0 {
		t.Errorf("report usage %+v, %d model calls, %d judge calls", rep.AgentUsage, rep.ModelCalls, rep.JudgeCalls)
	}
	table := rep.Table()
	for _, want := range []string{`eval set "weather": 2 cases, 3 runs each: 1 passed, 1 failed`, "tool_trajectory_avg_score", "paris", "1.00 >= 1.00", "0.00 <  1.00", "FAILED"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// A case starts from a stored conversation, which the runs leave as it
// was; a Start that fails fails the run.
func TestStartFromSession(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(models(nil))
	store := session.NewMemory()
	ctx := context.Background()
	before := []*genai.Content{
		genai.NewContentFromText("Hello", genai.RoleUser),
		genai.NewContentFromText("I only know the weather.", genai.RoleModel),
	}
	if err := store.Append(ctx, "alice", before); err != nil {
		t.Fatal(err)
	}
	set := &eval.Set{ID: "s", Cases: []eval.Case{
		{ID: "alice", Session: &eval.SessionInput{AppName: "weather", UserID: "alice"},
			Turns: []eval.Turn{eval.UserTurn("And the weather in Rome?").WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Rome"}})}},
		{ID: "nobody", Session: &eval.SessionInput{AppName: "weather", UserID: "nobody"},
			Turns: []eval.Turn{eval.UserTurn("What is the weather in Rome?")}},
	}}
	rep, err := eval.Evaluate(ctx, set, eval.Options{Agent: weatherAgent(t, srv), Runs: 2,
		Metrics: []eval.Metric{eval.ToolTrajectory{Threshold: 1}},
		Start:   eval.FromSession(store, func(c *eval.Case) string { return c.Session.UserID })})
	if err != nil {
		t.Fatal(err)
	}
	alice := rep.Cases[0]
	for _, run := range alice.Runs {
		if run.Err != nil || len(run.Start) != 2 || run.UserID != "alice" {
			t.Fatalf("alice run %d: err %v, started from %d contents, user %q", run.Index, run.Err, len(run.Start), run.UserID)
		}
		if h := run.Results[0].History; len(h) != 6 || h[0].Parts[0].Text != "Hello" {
			t.Errorf("alice run %d history has %d contents; want the stored 2, then the turn's 4", run.Index, len(h))
		}
	}
	if alice.Status != eval.Passed {
		t.Errorf("alice: %v", alice.Status)
	}
	stored, err := store.Load(ctx, "alice")
	if err != nil || len(stored) != 2 {
		t.Errorf("the store holds %d contents (%v); want the 2 it had", len(stored), err)
	}
	nobody := rep.Cases[1]
	if nobody.Status != eval.Failed || !errors.Is(nobody.Runs[0].Err, session.ErrNotFound) {
		t.Errorf("nobody: %v, %v; want a failed run wrapping session.ErrNotFound", nobody.Status, nobody.Runs[0].Err)
	}
	// No turn of nobody's ran: nothing is scored (its turn expects no
	// call, which a turn that never ran must not match).
	if m := nobody.Metrics[0]; m.Status != eval.NotEvaluated || !strings.Contains(m.Reason, "no turn ran") {
		t.Errorf("nobody's trajectory: %+v; want not evaluated: no turn ran", m)
	}
	if ts := nobody.Runs[0].Scores[0].Turns; len(ts) != 1 || ts[0].Status != eval.NotEvaluated {
		t.Errorf("nobody's turn scores: %+v; want one, not evaluated", ts)
	}
}

// An agent error fails its run and leaves the later turns empty; the error
// says which turn.
func TestAgentErrorFailsTheRun(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(func(req *geminitest.Request) *geminitest.Reply {
		if strings.Contains(req.Text(), "fail") {
			return geminitest.Error(400, "Request contains an invalid argument.")
		}
		return weatherModel(req)
	})
	set := &eval.Set{ID: "s", Cases: []eval.Case{{ID: "c", Turns: []eval.Turn{
		eval.UserTurn("hi").WithResponse("I only know the weather."),
		eval.UserTurn("now fail").WithResponse("x"),
		eval.UserTurn("never sent").WithResponse("y"),
	}}}}
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	run := rep.Cases[0].Runs[0]
	var apiErr genai.APIError
	if run.Err == nil || !strings.Contains(run.Err.Error(), "turn 2: the agent failed") || !errors.As(run.Err, &apiErr) || apiErr.Code != 400 {
		t.Fatalf("run error = %v; want turn 2's 400", run.Err)
	}
	if len(run.Turns) != 3 || run.Turns[2].Response != nil || run.Turns[2].UserText() != "never sent" || run.Results[2] != nil {
		t.Errorf("turns after the error: %+v", run.Turns[2])
	}
	if got := len(srv.Requests()); got != 2 {
		t.Errorf("%d requests; want 2 (the third turn is not sent)", got)
	}
	if rep.Cases[0].Status != eval.Failed || run.Status != eval.Failed {
		t.Errorf("status %v / %v; want FAILED", rep.Cases[0].Status, run.Status)
	}
}

// Metrics named by a criteria file: ADK's, custom ones from Go, unknown
// ones not evaluated; a Go metric scoring the whole run.
func TestCriteriaMetrics(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(models(nil))
	set := weatherSet()
	set.Criteria = &eval.Criteria{Metrics: []eval.Criterion{
		{Metric: eval.MetricToolTrajectory, Threshold: 0.5, Match: eval.MatchAnyOrder, IgnoreArgs: true},
		{Metric: "short_answers", Threshold: 1},
		{Metric: "agent_coordination_score", Threshold: 0.8},
	}}
	short := eval.TurnFunc("short_answers", 0.5, func(_ context.Context, actual, _ *eval.Turn) (float64, string, error) {
		if len(actual.ResponseText()) <= 30 {
			return 1, "", nil
		}
		return 0, "longer than 30 bytes", nil
	})
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv), Custom: map[string]eval.Metric{"short_answers": short}})
	if err != nil {
		t.Fatal(err)
	}
	oslo := rep.Cases[1]
	if m := oslo.Metrics[0]; m.Status != eval.Passed || m.Value != 1 {
		t.Errorf("trajectory ignoring args = %+v; want passed (the names match)", m)
	}
	if m := oslo.Metrics[1]; m.Status != eval.Passed || m.Threshold != 1 {
		t.Errorf("custom metric = %+v; want passed with the file's threshold 1", m)
	}
	if m := oslo.Metrics[2]; m.Status != eval.NotEvaluated || !strings.Contains(m.Reason, `unknown metric "agent_coordination_score"`) {
		t.Errorf("unknown metric = %+v", m)
	}
	if s := oslo.Runs[0].Scores[0]; s.Criterion == nil || s.Criterion.Match != eval.MatchAnyOrder {
		t.Errorf("the score does not record its criterion: %+v", s.Criterion)
	}
	// The unknown metric has no score: the case does not pass, as ADK's
	// AgentEvaluator decides; under go test it fails (see TestTest).
	if oslo.Status != eval.NotEvaluated || rep.Status != eval.NotEvaluated {
		t.Errorf("oslo: %v, report: %v; want NOT_EVALUATED", oslo.Status, rep.Status)
	}
}

// A case whose judged metric could not be scored does not pass, though its
// other metric passed: no judge, or a judge outage, leaves the case and
// the report not evaluated, so that a gate on Report.Status fails as
// Test's subtest does (TestTest), and as ADK's AgentEvaluator fails it. A
// run's own status keeps adk eval's rule.
func TestUnscoredMetricDoesNotPass(t *testing.T) {
	set := &eval.Set{ID: "s", Cases: []eval.Case{{ID: "paris", Turns: weatherSet().Cases[0].Turns[:1]}}}
	for _, tc := range []struct {
		name   string
		judge  func(srv *geminitest.Server) *eval.Judge
		reason string
	}{
		{"no judge", func(*geminitest.Server) *eval.Judge { return nil }, "needs a judge"},
		{"judge outage", func(srv *geminitest.Server) *eval.Judge {
			return &eval.Judge{Models: srv.Client().Models, Samples: 2, Retry: agent.RetryPolicy{MaxAttempts: 1}}
		}, "the judge model failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := geminitest.Start(t)
			srv.SetReplyFunc(models(func(*geminitest.Request) *geminitest.Reply { return geminitest.Overloaded() }))
			metrics := []eval.Metric{eval.ToolTrajectory{Threshold: 1}, eval.FinalResponseMatch{Judge: tc.judge(srv), Threshold: 0.5}}
			rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv), Metrics: metrics})
			if err != nil {
				t.Fatal(err)
			}
			cr := rep.Cases[0]
			if cr.Metrics[0].Status != eval.Passed || cr.Metrics[1].Status != eval.NotEvaluated || !strings.Contains(cr.Metrics[1].Reason, tc.reason) {
				t.Fatalf("metrics = %+v; want the trajectory passed and the judged metric not evaluated (%q)", cr.Metrics, tc.reason)
			}
			if cr.Status != eval.NotEvaluated {
				t.Errorf("case status = %v, want NOT_EVALUATED", cr.Status)
			}
			if rep.Status != eval.NotEvaluated || rep.Passed != 0 || rep.NotEvaluated != 1 {
				t.Errorf("report status %v, %d passed, %d not evaluated; want NOT_EVALUATED, 0, 1", rep.Status, rep.Passed, rep.NotEvaluated)
			}
			if !strings.Contains(rep.Table(), "0 passed, 0 failed, 1 not evaluated") {
				t.Errorf("the table does not say so:\n%s", rep.Table())
			}
			if run := cr.Runs[0]; run.Status != eval.Passed {
				t.Errorf("run status = %v; want PASSED (adk eval's rule: a metric passed, none failed)", run.Status)
			}
		})
	}
}

// The turns an agent error kept from running are not scored: every
// metric's score of them is not evaluated (an empty expected trajectory
// does not match a turn that never ran), no metric is asked about them,
// and the case's mean is of the turns that ran.
func TestTurnsNotRunAreNotScored(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(func(req *geminitest.Request) *geminitest.Reply {
		if strings.Contains(req.Text(), "fail") {
			return geminitest.Error(400, "Request contains an invalid argument.")
		}
		return weatherModel(req)
	})
	set := &eval.Set{ID: "s", Cases: []eval.Case{{ID: "c", Turns: []eval.Turn{
		eval.UserTurn("hi").WithResponse("I only know the weather."),
		eval.UserTurn("now fail").WithResponse("I only know the weather."),
		eval.UserTurn("never sent").WithResponse("I only know the weather."),
		eval.UserTurn("never sent either").WithResponse("I only know the weather."),
	}}}}
	var mu sync.Mutex
	var asked []string
	seen := eval.TurnFunc("seen", 1, func(_ context.Context, actual, _ *eval.Turn) (float64, string, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, actual.UserText())
		return 1, "", nil
	})
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv), Runs: 2,
		Metrics: []eval.Metric{eval.ToolTrajectory{Threshold: 1}, seen}})
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.Cases[0]
	for _, run := range cr.Runs {
		if run.Err == nil || len(run.Turns) != 4 {
			t.Fatalf("run %d: error %v, %d turns; want turn 2's error and 4 turns", run.Index+1, run.Err, len(run.Turns))
		}
		for _, s := range run.Scores {
			if len(s.Turns) != 4 {
				t.Fatalf("%s: %d turn scores; want 4", s.Metric, len(s.Turns))
			}
			for i, ts := range s.Turns[2:] {
				if ts.Status != eval.NotEvaluated || !strings.Contains(ts.Reason, "never ran") {
					t.Errorf("run %d, %s, turn %d, which never ran: %v %q; want NOT_EVALUATED", run.Index+1, s.Metric, i+3, ts.Status, ts.Reason)
				}
			}
		}
	}
	for _, u := range asked {
		if strings.HasPrefix(u, "never sent") {
			t.Errorf("the metric was asked about %q, a turn that never ran", u)
		}
	}
	if m := cr.Metrics[0]; m.Turns != 4 {
		t.Errorf("the case's trajectory is the mean of %d turn scores; want 4 (2 turns that ran, 2 runs)", m.Turns)
	}
	if cr.Status != eval.Failed || rep.Status != eval.Failed {
		t.Errorf("case %v, report %v; want FAILED", cr.Status, rep.Status)
	}
}

// TestTestHelper is run by TestTest, in a child process, as a test that
// fails: it is not a test of its own.
func TestTestHelper(t *testing.T) {
	if os.Getenv("EVAL_TEST_HELPER") == "" {
		t.Skip("run by TestTest")
	}
	srv := geminitest.Start(t)
	srv.SetReplyFunc(models(nil))
	set := weatherSet()
	set.Cases = append(set.Cases, eval.Case{ID: "a/b", Turns: []eval.Turn{eval.UserTurn("What is the weather in Rome?").
		WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Rome"}}).WithResponse("It is sunny in Rome.")}})
	set.Cases = append(set.Cases, eval.Case{ID: "chat", Scenario: &eval.Scenario{StartingPrompt: "Hi", Plan: "Chat about the weather."}})
	set.Cases = append(set.Cases, eval.Case{ID: "unscored", Turns: []eval.Turn{eval.UserTurn("What is the weather in Rome?").
		WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Rome"}}).WithResponse("It is sunny in Rome.")}})
	judged := eval.Func("judged", 0.5, func(_ context.Context, in *eval.Input) (*eval.Score, error) {
		if in.Case.ID == "unscored" {
			return nil, errors.New("the judge is out")
		}
		return &eval.Score{Value: 1}, nil
	})
	metrics := []eval.Metric{eval.ToolTrajectory{Threshold: 1}, eval.ResponseMatch{Threshold: 0.8}, judged}
	rep := eval.Test(t, set, eval.Options{Agent: weatherAgent(t, srv), Metrics: metrics, ResultFile: os.Getenv("EVAL_TEST_RESULT")})
	for _, c := range rep.Cases {
		t.Logf("report: case %s %v", c.Case.ID, c.Status)
	}
	t.Logf("report: %v", rep.Status)
}

// Under go test, each case is a subtest that fails, with a readable
// diff, when a metric is below its threshold or not evaluated; the table
// is logged and the results are written as ADK's JSON.
func TestTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	result := filepath.Join(t.TempDir(), "results.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestTestHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "EVAL_TEST_HELPER=1", "EVAL_TEST_RESULT="+result)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the failing eval passed:\n%s", out)
	}
	got := string(out)
	for _, want := range []string{
		"--- PASS: TestTestHelper/weather/paris",
		"--- FAIL: TestTestHelper/weather/oslo",
		"--- PASS: TestTestHelper/weather/a_b",
		"tool_trajectory_avg_score = 0.000, below the threshold 1.00 (the mean of 1 turn score over 1 run)",
		`run 1, turn 1 "What is the weather in Oslo?": 0.00: EXACT, args exact: call 1 is get_weather({"city":"Oslo"}), want get_weather({"city":"Bergen"})`,
		"tool calls (-expected +actual):",
		`- get_weather({"city":"Bergen"})`,
		`+ get_weather({"city":"Oslo"})`,
		"response_match_score = 0.600, below the threshold 0.80",
		`expected answer: "It is rainy in Bergen."`,
		`actual answer:   "It is sunny in Oslo."`,
		"--- FAIL: TestTestHelper/weather/chat",
		"tool_trajectory_avg_score: not evaluated: the case is a scenario, and Options.Simulator is nil",
		// Two metrics passed, one has no score: the subtest fails, and
		// the report Evaluate would return says the same.
		"--- FAIL: TestTestHelper/weather/unscored",
		"judged: not evaluated: the judge is out",
		"report: case paris PASSED", "report: case oslo FAILED", "report: case a/b PASSED",
		"report: case chat NOT_EVALUATED", "report: case unscored NOT_EVALUATED", "report: FAILED",
		`eval set "weather": 5 cases, 1 run each: 2 passed, 1 failed, 2 not evaluated`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}
	raw, err := os.ReadFile(result)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res["eval_set_id"] != "weather" || len(res["eval_case_results"].([]any)) != 5 {
		t.Errorf("results: %s", raw)
	}
}
