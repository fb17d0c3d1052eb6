package agui_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// byHeader names the user by the X-User header: "local" without one.
func byHeader(c *agentserver.Config) {
	c.Authenticate = func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "local", nil
	}
}

func runInput(thread, runID, msgID, text string) map[string]any {
	return map[string]any{"threadId": thread, "runId": runID,
		"messages": []any{map[string]any{"id": msgID, "role": "user", "content": text}}}
}

// A stop button: POST …/cancel stops the thread's run and answers once it
// is over; the stream still open ends with the stopped call's result and
// RUN_FINISHED, outcome cancelled; the next message is taken at once.
// Another user's thread is not found.
func TestCancel(t *testing.T) {
	e := newEnv(t, nil, byHeader)
	e.Model.Enqueue(fake.Calls(servertest.Call("Gate")))
	got := make(chan *reply)
	go func() { got <- e.post("/agui", runInput("t1", "r1", "m1", "Weather at the gate?")) }()
	<-e.Started

	bob := *e
	bob.user = "bob"
	if r := bob.post("/agui/cancel", map[string]any{"threadId": "t1"}); r.status != http.StatusNotFound {
		t.Errorf("bob's cancel = %d %s, want 404", r.status, r.body)
	}
	if r := e.post("/agui/cancel", `{"threadId":"t1"}`[:5]); r.status != http.StatusBadRequest {
		t.Errorf("a cancel with a broken body = %d %s, want 400", r.status, r.body)
	}
	r := e.post("/agui/cancel", runInput("t1", "r9", "m9", "ignored"))
	var info agentserver.RunInfo
	json.Unmarshal([]byte(r.body), &info)
	if r.status != http.StatusOK || info.State != agentserver.StateCancelled {
		t.Fatalf("cancel = %d %s, want 200 and the run cancelled", r.status, r.body)
	}
	stream := <-got
	result := slices.IndexFunc(stream.events, func(ev map[string]any) bool { return ev["type"] == "TOOL_CALL_RESULT" })
	last := stream.last()
	outcome, _ := last["outcome"].(map[string]any)
	if result < 0 || last["type"] != "RUN_FINISHED" || outcome["type"] != "cancelled" {
		t.Errorf("the stream ended %v, want the call's result and RUN_FINISHED cancelled", stream.types())
	}
	e.Model.Enqueue(fake.Text("Sunny, probably."))
	next := e.post("/agui", runInput("t1", "r2", "m2", "Never mind: is it sunny?"))
	if next.status != http.StatusOK || !slices.Contains(next.types(), "TEXT_MESSAGE_CONTENT") {
		t.Errorf("the next message = %d %v %s", next.status, next.types(), next.body)
	}
	if r := e.post("/agui/cancel", map[string]any{"threadId": "t1"}); r.status != http.StatusNotFound {
		t.Errorf("cancel with nothing running = %d %s, want 404", r.status, r.body)
	}
}

// A page of another site cannot stop a thread's run, nor start one, with
// the user's cookies: POST …/cancel and POST of any type are refused,
// 403 cross_origin.
func TestCrossSiteRefused(t *testing.T) {
	e := newEnv(t, nil, byHeader)
	e.Model.Enqueue(fake.Calls(servertest.Call("Gate")))
	got := make(chan *reply)
	go func() { got <- e.post("/agui", runInput("t1", "r1", "m1", "Weather at the gate?")) }()
	<-e.Started
	cancel, _ := json.Marshal(map[string]any{"threadId": "t1"})
	run, _ := json.Marshal(runInput("t2", "r2", "m2", "hi"))
	for _, r := range []struct{ path, contentType, body string }{
		{"/agui/cancel", "text/plain", string(cancel)},
		{"/agui/cancel", "application/json", string(cancel)},
		{"/agui/cancel", "", ""},
		{"/agui", "text/plain", string(run)},
		{"/agui/connect", "", ""},
	} {
		if status, body := e.CrossSite(t, "POST", r.path, r.contentType, r.body); status != http.StatusForbidden || servertest.ErrorCode(body) != "cross_origin" {
			t.Errorf("POST %s (%q) of another site: %d %s, want 403 cross_origin", r.path, r.contentType, status, body)
		}
	}
	if info, err := e.Srv.Current(bg, "local", "t1"); err != nil || info.State.Over() {
		t.Errorf("the run after another site's requests: %+v, %v", info, err)
	}
	close(e.Gate)
	<-got
}
