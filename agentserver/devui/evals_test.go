package devui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A conversation saved as an eval case runs again from the page: passed
// while the agent does what it did, failed with each metric's reason
// when it does not.
func TestEvalCaseAndRun(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.weatherRun("alice", "t1")

	status, body := e.do("GET", "/api/threads/t1/evalcase", "alice", "", "")
	if status != http.StatusOK {
		t.Fatalf("evalcase: %d %s", status, body)
	}
	set, err := eval.Parse([]byte(body), "the answer")
	if err != nil {
		t.Fatalf("the case is not an eval set eval reads: %v\n%s", err, body)
	}
	if len(set.Cases) != 1 || set.Cases[0].ID != "t1" || len(set.Cases[0].Turns) != 1 {
		t.Fatalf("the set: %s", body)
	}
	turn := set.Cases[0].Turns[0]
	var cities []string
	for _, c := range turn.Calls() {
		cities = append(cities, fmt.Sprint(c.Name, " ", c.Args["city"]))
	}
	if turn.UserText() != "What is the weather in Paris and Tokyo?" || turn.ResponseText() != "Sunny in both." ||
		strings.Join(cities, ",") != "get_weather Paris,get_weather Tokyo" || len(turn.Responses()) != 2 {
		t.Errorf("the turn: user %q, answer %q, calls %v, %d responses", turn.UserText(), turn.ResponseText(), cities, len(turn.Responses()))
	}
	// Another user's thread is one that does not exist.
	if status, b := e.do("GET", "/api/threads/t1/evalcase", "bob", "", ""); status != http.StatusNotFound {
		t.Errorf("bob: %d %s", status, b)
	}

	runSet := func(want string) evalReportJSON {
		t.Helper()
		status, b := e.do("POST", "/api/evals/run", "alice", "application/json", body)
		var rep evalReportJSON
		if status != http.StatusOK || json.Unmarshal([]byte(b), &rep) != nil || len(rep.Cases) != 1 || rep.Status != want {
			t.Fatalf("eval run: %d %s, want %s", status, b, want)
		}
		return rep
	}
	// The agent does it again.
	e.model.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"})),
		fake.Text("Sunny in both."))
	rep := runSet("PASSED")
	scores := map[string]evalMetricJSON{}
	for _, m := range rep.Cases[0].Metrics {
		scores[m.Metric] = m
	}
	if rep.Passed != 1 || scores[eval.MetricToolTrajectory].Value != 1 || scores[eval.MetricResponseMatch].Value != 1 ||
		scores[eval.MetricResponseMatch].Threshold != 0.8 {
		t.Errorf("the passed run: %+v", rep)
	}
	// It calls another tool and answers otherwise: each metric says why
	// it failed.
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})), fake.Text("Cloudy in Oslo."))
	rep = runSet("FAILED")
	for _, m := range rep.Cases[0].Metrics {
		if m.Status != "FAILED" || m.Value >= m.Threshold || len(m.Turns) != 1 || m.Turns[0].Reason == "" || m.Turns[0].Detail == "" {
			t.Errorf("metric %s of the failed run: %+v", m.Metric, m)
		}
	}
}

// The eval routes refuse bad input with a clear error.
func TestEvalRoutesBadInput(t *testing.T) {
	e := newEnv(t, envOpts{})
	const js = "application/json"
	cases := func(n int) string {
		var cs []string
		for i := range n {
			cs = append(cs, fmt.Sprintf(`{"eval_id":"c%d","conversation":[{"user_content":{"role":"user","parts":[{"text":"hi"}]}}]}`, i))
		}
		return `{"eval_set_id":"s","eval_cases":[` + strings.Join(cs, ",") + `]}`
	}
	for _, c := range []struct {
		name, method, path, user, ct, body string
		status                             int
		code                               string
	}{
		{"unauthenticated", "POST", "/api/evals/run", "", js, cases(1), 401, "unauthenticated"},
		{"not JSON", "POST", "/api/evals/run", "alice", js, `{"eval_cases":`, 400, "bad_json"},
		{"not a set", "POST", "/api/evals/run", "alice", js, `{"eval_cases":[{"conversation":7}]}`, 400, "bad_eval_set"},
		{"no cases", "POST", "/api/evals/run", "alice", js, `{"eval_set_id":"s","eval_cases":[]}`, 400, "bad_eval_set"},
		{"too many cases", "POST", "/api/evals/run", "alice", js, cases(maxEvalCases + 1), 400, "bad_eval_set"},
		{"a scenario", "POST", "/api/evals/run", "alice", js,
			`{"eval_set_id":"s","eval_cases":[{"eval_id":"x","conversation_scenario":{"starting_prompt":"hi","conversation_plan":"ask"}}]}`, 400, "bad_eval_set"},
		{"a form", "POST", "/api/evals/run", "alice", "application/x-www-form-urlencoded", "a=1", 415, "bad_content_type"},
		{"GET", "GET", "/api/evals/run", "alice", "", "", 405, "method_not_allowed"},
		{"unknown thread", "GET", "/api/threads/nope/evalcase", "alice", "", "", 404, "not_found"},
		{"bad thread id", "GET", "/api/threads/" + strings.Repeat("x", 300) + "/evalcase", "alice", "", "", 400, ""},
	} {
		status, b := e.do(c.method, c.path, c.user, c.ct, c.body)
		if status != c.status || !strings.Contains(b, `"code":"`+c.code) {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, b, c.status, c.code)
		}
	}
}

// One eval run at a time per user: another user's goes on beside it.
func TestEvalRunOneAtATime(t *testing.T) {
	e := newEnv(t, envOpts{})
	// Paris alone waits at the barrier for a second call that never
	// comes: the run goes on until its request is cancelled.
	set := `{"eval_set_id":"s","eval_cases":[{"eval_id":"paris","conversation":[{"user_content":{"role":"user","parts":[{"text":"Paris?"}]}}]}]}`
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", e.http.URL+"/api/evals/run", strings.NewReader(set))
		req.Header.Set("X-User", "alice")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		e.barrier.mu.Lock()
		n := e.barrier.n
		e.barrier.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first eval run never called get_weather")
		}
	}
	if status, b := e.do("POST", "/api/evals/run", "alice", "application/json", set); status != http.StatusTooManyRequests || !strings.Contains(b, `"code":"eval_busy"`) {
		t.Errorf("a second run of alice's: %d %s", status, b)
	}
	e.model.Enqueue(fake.Text("I do not know."))
	bobs := `{"eval_set_id":"s","eval_cases":[{"eval_id":"hi","conversation":[{"user_content":{"role":"user","parts":[{"text":"hi"}]}}]}]}`
	if status, b := e.do("POST", "/api/evals/run", "bob", "application/json", bobs); status != http.StatusOK {
		t.Errorf("bob's run beside it: %d %s", status, b)
	}
	cancel()
	if err := <-first; err == nil {
		t.Error("the cancelled run's request did not fail")
	}
}

// An eval of a conversation that had an approval replays the decision:
// the call approved in the conversation runs in the eval (the tool is
// called again), as it ran then, and the case passes; without the
// replay, nobody would be asked, the call would be denied, and its
// trajectory would not match the conversation's.
func TestEvalOfApprovedConversation(t *testing.T) {
	var mu sync.Mutex
	ran := map[string]int{}
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		c.Tools = toolset.MustNew(toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (string, error) {
			mu.Lock()
			ran[in.City]++
			mu.Unlock()
			return "sunny in " + in.City, nil
		}))
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] == "Oslo" }
	}})
	conversation := func() {
		e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"}), fake.Call("get_weather", map[string]any{"city": "Rome"})),
			fake.Text("Sunny in Oslo and Rome."))
	}
	conversation()
	id := runOf(t, e.chat("alice", "t1", "Weather in Oslo and Rome?"))
	e.decide("alice", "t1", "get_weather", e.waitingCall("alice", id), true)
	e.settled(id)
	mu.Lock()
	if ran["Oslo"] != 1 || ran["Rome"] != 1 {
		t.Fatalf("the conversation ran the tool for %v", ran)
	}
	mu.Unlock()

	status, set := e.do("GET", "/api/threads/t1/evalcase", "alice", "", "")
	if status != http.StatusOK {
		t.Fatalf("evalcase: %d %s", status, set)
	}
	conversation()
	status, b := e.do("POST", "/api/evals/run", "alice", "application/json", set)
	var rep evalReportJSON
	if status != http.StatusOK || json.Unmarshal([]byte(b), &rep) != nil || len(rep.Cases) != 1 {
		t.Fatalf("eval run: %d %s", status, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran["Oslo"] != 2 || ran["Rome"] != 2 {
		t.Errorf("the eval ran the tool for %v; want Oslo and Rome again, as the conversation did (Oslo approved)", ran)
	}
	if rep.Status != "PASSED" {
		t.Errorf("the eval of the conversation: %s", b)
	}
}
