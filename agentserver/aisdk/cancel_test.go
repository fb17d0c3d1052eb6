package aisdk_test

import (
	"encoding/json"
	"errors"
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

func chatBody(id, msgID, text string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "messages": []any{userMessage(msgID, text)}})
	return string(b)
}

// A stop button: DELETE on the stream route cancels the run and answers
// once it is over; the stream still open ends with the stopped call
// answered and an abort; the next message is taken at once. Another
// user's chat is not found.
func TestCancel(t *testing.T) {
	e := newEnv(t, nil, byHeader)
	e.Model.Enqueue(fake.Calls(servertest.Call("Gate")))
	got := make(chan *reply)
	go func() { got <- e.do("POST", "/api/chat", chatBody("c1", "m1", "Weather at the gate?")) }()
	<-e.Started // the call runs, and holds

	if r := e.doAs("bob", "DELETE", "/api/chat/c1/stream", ""); r.status != http.StatusNotFound || r.code() != "not_found" {
		t.Errorf("bob's DELETE = %d %s, want 404", r.status, r.body)
	}
	r := e.do("DELETE", "/api/chat/c1/stream", "")
	var info agentserver.RunInfo
	json.Unmarshal([]byte(r.body), &info)
	if r.status != http.StatusOK || info.State != agentserver.StateCancelled || info.Done == nil || info.Done.Error.Code != "cancelled" {
		t.Fatalf("DELETE = %d %s, want 200 and the run cancelled", r.status, r.body)
	}
	stream := <-got
	types := stream.types()
	callID := ""
	for _, c := range stream.chunks {
		if c["type"] == "tool-input-available" {
			callID, _ = c["toolCallId"].(string)
		}
	}
	i := slices.IndexFunc(stream.chunks, func(c map[string]any) bool {
		return c["type"] == "tool-output-error" && c["toolCallId"] == callID
	})
	if callID == "" || i < 0 || !slices.Contains(types, "abort") || types[len(types)-1] != "finish" {
		t.Errorf("the stream ended %v, want the call's tool-output-error, abort, finish", types)
	}

	// The next message is taken (not 409 busy).
	e.Model.Enqueue(fake.Text("Sunny, probably."))
	next := e.do("POST", "/api/chat", chatBody("c1", "m2", "Never mind: is it sunny?"))
	if next.status != http.StatusOK || !slices.Contains(next.types(), "text-delta") {
		t.Errorf("the next message = %d %v %s", next.status, next.types(), next.body)
	}
	h, err := e.Srv.History(bg, "local", "c1")
	if err != nil || len(h) != 5 || h[2].Parts[0].FunctionResponse == nil || h[2].Parts[0].FunctionResponse.Response["error"] == nil {
		t.Errorf("history: %d contents, %v; want the stopped call answered with an error, then the next turn", len(h), err)
	}
	// Nothing runs now: nothing to cancel.
	if r := e.do("DELETE", "/api/chat/c1/stream", ""); r.status != http.StatusNotFound {
		t.Errorf("DELETE with nothing running = %d %s, want 404", r.status, r.body)
	}
	if r := e.do("DELETE", "/api/chat/%ff/stream", ""); r.status != http.StatusBadRequest {
		t.Errorf("DELETE of a bad id = %d %s, want 400", r.status, r.body)
	}
}

// A run that waits for an approval is cancelled too: its call is denied,
// and the thread is free.
func TestCancelWaiting(t *testing.T) {
	e := newEnv(t, servertest.NeedsOslo)
	e.Model.Enqueue(fake.Calls(servertest.Call("Oslo")))
	if r := e.do("POST", "/api/chat", chatBody("c1", "m1", "Weather in Oslo?")); !slices.Contains(r.types(), "tool-approval-request") {
		t.Fatalf("no approval request: %v", r.types())
	}
	if r := e.do("DELETE", "/api/chat/c1/stream", ""); r.status != http.StatusOK {
		t.Fatalf("DELETE = %d %s", r.status, r.body)
	}
	e.Model.Enqueue(fake.Text("Hello."))
	if r := e.do("POST", "/api/chat", chatBody("c1", "m2", "Hello")); r.status != http.StatusOK {
		t.Errorf("the next message = %d %s", r.status, r.body)
	}
	if _, err := e.Srv.Current(bg, "local", "c1"); !errors.Is(err, agentserver.ErrNotFound) {
		t.Errorf("Current = %v, want nothing running", err)
	}
}

// A page of another site cannot stop a chat's run, nor start one, with
// the user's cookies: DELETE of the stream route (which a browser would
// preflight) and a POST of any type are refused, 403 cross_origin.
func TestCrossSiteRefused(t *testing.T) {
	e := newEnv(t, nil, byHeader)
	e.Model.Enqueue(fake.Calls(servertest.Call("Gate")))
	got := make(chan *reply)
	go func() { got <- e.do("POST", "/api/chat", chatBody("c1", "m1", "Weather at the gate?")) }()
	<-e.Started
	for _, r := range []struct{ method, path, contentType, body string }{
		{"DELETE", "/api/chat/c1/stream", "", ""},
		{"POST", "/api/chat", "text/plain", chatBody("c2", "m2", "hi")},
		{"POST", "/api/chat", "", ""},
	} {
		if status, body := e.CrossSite(t, r.method, r.path, r.contentType, r.body); status != http.StatusForbidden || servertest.ErrorCode(body) != "cross_origin" {
			t.Errorf("%s %s of another site: %d %s, want 403 cross_origin", r.method, r.path, status, body)
		}
	}
	if info, err := e.Srv.Current(bg, "local", "c1"); err != nil || info.State.Over() {
		t.Errorf("the run after another site's requests: %+v, %v", info, err)
	}
	close(e.Gate)
	<-got
}
