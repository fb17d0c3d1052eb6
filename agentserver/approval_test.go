package agentserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// approveAll makes every call of get_weather need approval, but for the
// city "Free".
func approveAll(c *agent.Config) {
	c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] != "Free" }
}

// A turn's calls that need approval end the response with one pause
// listing them all; decisions come in later requests, in parts, and the
// run goes on where it stopped; the model reads a denial's reason.
func TestApprovalsAcrossRequests(t *testing.T) {
	h := newHarness(t, harnessOpts{agent: approveAll})
	h.model.Enqueue(fake.Calls(call("Paris"), call("Free"), call("Tokyo")), fake.Text("Paris is sunny; no Tokyo."))

	first := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris and Tokyo?"})
	// The call that needs no approval runs meanwhile: its result comes
	// before the pause, so that a client has it when it decides.
	want := []string{"open", "start", "step", "tool-call", "tool-call", "tool-call", "tool-result", "pause"}
	if diff := cmp.Diff(want, first.kinds()); diff != "" {
		t.Fatalf("first response (-want +got):\n%s", diff)
	}
	pause := first.last()
	if pause.Resolved || len(pause.Pending) != 2 || pause.Pending[0].Call.Name != "get_weather" ||
		string(pause.Pending[0].Call.Args) != `{"city":"Paris"}` || string(pause.Pending[1].Call.Args) != `{"city":"Tokyo"}` ||
		pause.Pending[0].Kind != agentserver.WaitApproval || pause.Pending[0].Deadline.IsZero() {
		t.Fatalf("pause %+v", pause.Pending)
	}
	paris, tokyo := pause.Pending[0].Call.ID, pause.Pending[1].Call.ID
	info := h.await("alice", "t1", waiting)
	if len(info.Pending) != 2 || info.Pending[0].Call.ID != paris {
		t.Errorf("run info pending %+v", info.Pending)
	}
	if city := <-h.started; city != "Free" {
		t.Errorf("%q started before any approval; want Free", city)
	}
	if r := first.of(agentserver.KindToolResult); len(r) != 1 || string(r[0].Result.Output) != `"sunny in Free"` {
		t.Errorf("the result before the pause: %+v", r)
	}

	// A request that decides one call continues the run up to the calls
	// that still wait.
	second := h.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: paris, Approved: true}}})
	if diff := cmp.Diff([]string{"open", "decision", "pause"}, second.kinds()); diff != "" {
		t.Fatalf("second response (-want +got):\n%s", diff)
	}
	if p := second.last().Pending; len(p) != 1 || p[0].Call.ID != tokyo {
		t.Errorf("second pause %+v, want Tokyo only", p)
	}

	// Forged and repeated decisions fail the whole request, which changes
	// nothing: Tokyo still waits.
	for _, tc := range []struct {
		name string
		ds   []agentserver.Decision
		code string
	}{
		{"decided already", []agentserver.Decision{{CallID: paris, Approved: true}}, "decided"},
		{"unknown call", []agentserver.Decision{{CallID: "run_x-c0-0", Approved: true}}, "unknown_call"},
		{"one good, one forged", []agentserver.Decision{{CallID: tokyo, Approved: true}, {CallID: "forged"}}, "unknown_call"},
		{"twice in one request", []agentserver.Decision{{CallID: tokyo, Approved: true}, {CallID: tokyo}}, "duplicate_decision"},
		{"a result for an approval", []agentserver.Decision{{CallID: tokyo, Output: json.RawMessage(`"sunny"`)}}, "bad_decision"},
	} {
		resp := h.post(bg, "alice", testRequest{Thread: "t1", Decisions: tc.ds})
		if resp.status/100 != 4 || resp.errorCode() != tc.code {
			t.Errorf("%s: %d %s, want a 4xx %s", tc.name, resp.status, resp.body, tc.code)
		}
	}
	// So do a new message, and a request that decides nothing.
	for _, req := range []testRequest{{Thread: "t1", Text: "never mind"}, {Thread: "t1"}} {
		if resp := h.post(bg, "alice", req); resp.status != 409 || resp.errorCode() != "busy" {
			t.Errorf("%+v: %d %s, want 409 busy", req, resp.status, resp.body)
		}
	}
	// Another user cannot decide alice's calls: his thread t1 is his own.
	if resp := h.post(bg, "bob", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: tokyo, Approved: true}}}); resp.status != 409 || resp.errorCode() != "unknown_call" {
		t.Errorf("bob deciding alice's call: %d %s", resp.status, resp.body)
	}
	if info := h.await("alice", "t1", waiting); len(info.Pending) != 1 || info.Pending[0].Call.ID != tokyo {
		t.Fatalf("after refused decisions the run waits for %+v", info.Pending)
	}

	// The last decision finishes the run.
	third := h.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: tokyo, Reason: "no flights to Tokyo"}}})
	want = []string{"open", "decision", "tool-result", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if diff := cmp.Diff(want, third.kinds()); diff != "" {
		t.Fatalf("third response (-want +got):\n%s", diff)
	}
	results := map[string]*agentserver.CallResult{}
	for _, e := range third.of(agentserver.KindToolResult) {
		results[e.Call.ID] = e.Result
	}
	if r := results[paris]; r == nil || string(r.Output) != `"sunny in Paris"` || r.Denied {
		t.Errorf("Paris %+v", r)
	}
	if r := results[tokyo]; r == nil || !r.Denied || r.Error != "no flights to Tokyo" {
		t.Errorf("Tokyo %+v", r)
	}
	sent := requestText(h.model.Requests()[1])
	if last := sent[len(sent)-1]; !strings.Contains(last, `"error":"no flights to Tokyo"`) || !strings.Contains(last, `"result":"sunny in Paris"`) {
		t.Errorf("the model read %q", last)
	}

	// Replaying the run from its start shows both pauses resolved.
	replay := h.srv // the run is over: nothing to replay
	if _, err := replay.Current(bg, "alice", "t1"); !errorsIsNotFound(err) {
		t.Errorf("Current after the end: %v", err)
	}
	info, err := h.srv.Run(bg, "alice", first.run())
	if err != nil || info.State != agentserver.StateDone || info.Done.Text != "Paris is sunny; no Tokyo." {
		t.Errorf("run %+v %v", info, err)
	}
}

// A replay of a run that waits reads the whole log: resolved pauses are
// marked as such, and the stream ends at the pause that waits.
func TestReplayFromStart(t *testing.T) {
	h := newHarness(t, harnessOpts{agent: approveAll})
	h.model.Enqueue(fake.Calls(call("Paris"), call("Tokyo")), fake.Text("Done."))
	first := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather?"})
	paris := first.last().Pending[0].Call.ID
	h.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: paris, Approved: true}}})

	replay := h.do(bg, "alice", "GET", "/replay?thread=t1", "", nil)
	want := []string{"open", "start", "step", "tool-call", "tool-call", "pause", "decision", "pause"}
	if diff := cmp.Diff(want, replay.kinds()); diff != "" {
		t.Fatalf("replay (-want +got):\n%s", diff)
	}
	if !replay.events[5].Resolved || replay.last().Resolved {
		t.Errorf("the first pause must be resolved, the last not")
	}
	if r := h.do(bg, "bob", "GET", "/replay?thread=t1", "", nil); r.status != 204 {
		t.Errorf("bob replaying alice's thread: %d", r.status)
	}
	if r := h.do(bg, "alice", "GET", "/replay?thread=t2", "", nil); r.status != 204 {
		t.Errorf("replaying a thread with no run: %d", r.status)
	}
}

// A call nobody decides in time is denied, the model is told why, and a
// decision that comes after is refused as expired.
func TestApprovalDeadline(t *testing.T) {
	h := newHarness(t, harnessOpts{agent: approveAll, config: func(c *agentserver.Config) { c.ApprovalTimeout = 20 * time.Millisecond }})
	h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Done."))
	first := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather?"})
	paris := first.last().Pending[0].Call.ID
	// A reader of the whole log, attached while the run goes on.
	cur, err := h.srv.Attach(bg, "alice", first.run(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	done := h.awaitRun("alice", first.run(), over) // nobody decides
	if done.State != agentserver.StateDone || done.Done.Text != "Done." {
		t.Errorf("the run ended %+v", done.Done)
	}
	sent := requestText(h.model.Requests()[1])
	if last := sent[len(sent)-1]; !strings.Contains(last, "nobody decided about this call within 20ms; it was not run") {
		t.Errorf("the model read %q", last)
	}
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: paris, Approved: true}}})
	if resp.status != 409 || resp.errorCode() != "expired" {
		t.Errorf("a late decision: %d %s, want 409 expired", resp.status, resp.body)
	}
	if len(h.model.Requests()) != 2 {
		t.Errorf("%d model requests, want 2: the late decision must run nothing", len(h.model.Requests()))
	}
	// The log says what happened: the pause, then the deadline's denial.
	var kinds []string
	var decision *agentserver.Decision
	for {
		rec, ok, err := cur.Next(bg, 0)
		if err != nil || !ok {
			break
		}
		kinds = append(kinds, string(rec.Kind))
		if rec.Kind == agentserver.KindDecision {
			decision = rec.Decision
		}
	}
	want := []string{"start", "step", "tool-call", "pause", "decision", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if decision == nil || !decision.Expired || decision.CallID != paris || decision.Approved {
		t.Errorf("decision %+v", decision)
	}
}
