package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/sdk/client"
	"google.golang.org/genai"
)

// closedAddr returns a loopback address that nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// isError reports whether err is agentserver's error of status and code.
func isError(err error, status int, code string) bool {
	var se *agentserver.Error
	return errors.As(err, &se) && se.Status == status && se.Code == code
}

// Temporal does not answer when a run starts: the client gets a 503
// runner_unavailable, and no run is half started: the thread has no
// journal, nothing is saved, and the next request (on an instance that
// reaches Temporal) runs on it.
func TestTemporalUnreachableAtStart(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	c, err := client.NewLazyClient(client.Options{HostPort: closedAddr(t), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runner, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: f.queue, Agent: "mail", Store: f.store})
	if err != nil {
		t.Fatal(err)
	}

	// The Runner itself: it takes the thread, fails to start the
	// workflow, and frees the thread.
	thread := "/" + id("unreachable")
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, cur, err := runner.Start(sctx, &agentserver.Input{Thread: thread, Conversation: id("unreachable"),
		Message: genai.NewContentFromText("Email Hal", genai.RoleUser)})
	cancel()
	if !isError(err, http.StatusServiceUnavailable, "runner_unavailable") || cur != nil {
		t.Fatalf("Start on an unreachable Temporal: %v (cursor %v)", err, cur)
	}
	if _, err := f.store.LoadRun(ctx, thread); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("the thread's journal after the failed start: %v", err)
	}
	if saved, err := f.store.Load(ctx, thread); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the failed start saved %d contents (%v)", len(saved), err)
	}

	// Through HTTP: the AI SDK client gets the 503.
	srv, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: f.store, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	down := &instance{srv: srv, http: httptest.NewServer(routes(srv))}
	defer func() {
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		down.http.Close()
	}()
	body := map[string]any{"id": id("unreachable"), "messages": []any{userMessage("u1", "Email Hal")}}
	r := do(t, down, "POST", "/api/chat", body)
	if r.status != http.StatusServiceUnavailable || r.code() != "runner_unavailable" {
		t.Fatalf("POST on an unreachable Temporal: %d %s", r.status, r.body)
	}
	if _, err := f.store.LoadRun(ctx, thread); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("the thread's journal after the failed request: %v", err)
	}

	// The thread is free: the same request on an instance that reaches
	// Temporal runs.
	model.Enqueue(fake.Text("Hello Hal."))
	r = do(t, f.a, "POST", "/api/chat", body)
	if r.status != http.StatusOK || !slices.Contains(r.types(), "text-delta") || r.types()[len(r.types())-1] != "finish" {
		t.Fatalf("the request again, on A: %d %v %s", r.status, r.types(), r.body)
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
}

// A run that waits for an approval longer than its RunTimeout is
// cancelled and saved as far as it went: its log ends failed with
// "timeout", the tool never ran, the thread is free, and a decision that
// comes late is refused.
func TestRunOutlivesTimeout(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleetTimeout(t, 2*time.Second)
	ctx := context.Background()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "ida"})))
	thread := "/" + id("timeout")
	_, cur, err := f.a.runner.Start(ctx, &agentserver.Input{Thread: thread, Conversation: id("timeout"),
		Message: genai.NewContentFromText("Email Ida", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	recs := readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	// The cancelled turn answers the call with an error, and ends.
	want := []agentserver.Kind{"start", "step", "tool-call", "pause", "tool-result", "step-end", "done"}
	if !slices.Equal(kinds(recs), want) {
		t.Fatalf("records %v, want %v", kinds(recs), want)
	}
	if res := recs[4].Result; res == nil || res.Error == "" || res.Output != nil {
		t.Errorf("the call's result after the timeout: %+v", res)
	}
	done := recs[len(recs)-1].Done
	if done.State != agentserver.StateFailed || done.Error == nil || done.Error.Code != "timeout" {
		t.Fatalf("done %+v", done)
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
	if _, err := f.store.LoadRun(ctx, thread); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("the thread's journal after the timeout: %v", err)
	}
	saved, err := f.store.Load(ctx, thread)
	if err != nil || len(saved) == 0 || saved[0].Role != genai.RoleUser {
		t.Fatalf("saved %d contents (%v)", len(saved), err)
	}
	info, err := f.b.runner.Latest(ctx, thread)
	if err != nil || info.State != agentserver.StateFailed {
		t.Fatalf("Latest on B: %+v, %v", info, err)
	}
	call := recs[3].Pending[0].Call.ID
	_, err = f.b.runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: call, Approved: true}})
	if !errors.Is(err, agentserver.ErrUnknownCall) || !isError(err, http.StatusConflict, "unknown_call") {
		t.Errorf("a decision after the timeout: %v", err)
	}
}

// A decision for a run that ended on the other instance gets the
// protocol's refusal: unknown_call for a run cancelled there, decided
// for a call decided there; the tool runs once at most.
func TestDecisionForRunEndedElsewhere(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()

	// Cancelled on B, approved on A.
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "jo"})))
	msgs := []any{userMessage("u1", "Email Jo")}
	r1 := do(t, f.a, "POST", "/api/chat", map[string]any{"id": id("chat-ended"), "messages": msgs})
	ids := approvalIDs(r1)
	if len(ids) != 1 {
		t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
	}
	cancelled := do(t, f.b, "DELETE", "/api/chat/"+id("chat-ended")+"/stream", nil)
	if cancelled.status != http.StatusOK {
		t.Fatalf("cancel on B: %d %s", cancelled.status, cancelled.body)
	}
	msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{approvalPart(ids[0], true)}})
	r2 := do(t, f.a, "POST", "/api/chat", map[string]any{"id": id("chat-ended"), "messages": msgs})
	if r2.status != http.StatusConflict || r2.code() != "unknown_call" {
		t.Errorf("approved on A after the cancel on B: %d %s", r2.status, r2.body)
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times after the cancel", n)
	}

	// Approved on B, and then on A.
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "kim"})), fake.Text("Sent to Kim."))
	in := &agentserver.Input{Thread: "/" + id("ended"), Conversation: id("ended"), Message: genai.NewContentFromText("Email Kim", genai.RoleUser)}
	info, cur, err := f.a.runner.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	pause := readUntil(t, cur, agentserver.KindPause)
	cur.Close()
	decision := []agentserver.Decision{{CallID: pause[len(pause)-1].Pending[0].Call.ID, Approved: true}}
	cur, err = f.b.runner.Decide(ctx, info.ID, decision)
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	if _, err := f.a.runner.Decide(ctx, info.ID, decision); !errors.Is(err, agentserver.ErrDecided) || !isError(err, http.StatusConflict, "decided") {
		t.Errorf("the decision again, on A, once the run ended on B: %v", err)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
}
