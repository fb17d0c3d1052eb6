package main

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/citest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// storeOutage is how long PostgreSQL stays out of the workers' reach in
// TestStoreUnreachableWhileSaving: longer than the 151 s after which the
// save activity used to give up (10 attempts), after which the thread's
// next message saved the run's user message alone.
const storeOutage = 160 * time.Second

// PostgreSQL goes out of the workers' reach (a proxy between them and the
// server closes every connection, and refuses new ones) while a run that
// ran a tool is about to be saved, for storeOutage: the save waits and is
// tried again, the run shows no done record (it is not saved), and a new
// message on the thread is refused as busy meanwhile; once the database
// is back, the run is saved whole (the call and its result with it) and
// ends done, the tool having run once.
func TestStoreUnreachableWhileSaving(t *testing.T) {
	citest.Heavy(t, "cuts PostgreSQL off for 160 s")
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	srv, proxy := behindStoreProxy(t, f, 0)
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "oz"})), fake.Text("Sent to Oz."))
	thread := id("store-outage")
	cut, att := approveCut(t, srv, proxy, thread)
	defer att.Cursor.Close()
	readUntil(t, att.Cursor, agentserver.KindText) // the answer: what is left is the save
	if _, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Hello?", genai.RoleUser)}); !errors.Is(err, agentserver.ErrBusy) {
		t.Errorf("a new message while the run waits to be saved = %v; want ErrBusy", err)
	}
	for left := storeOutage - time.Since(cut); left > 0; left = storeOutage - time.Since(cut) {
		rec, ok, err := att.Cursor.Next(ctx, left)
		if err != nil {
			t.Fatalf("the cursor during the outage: %v", err)
		}
		if ok && rec.Kind == agentserver.KindDone {
			t.Fatalf("the run ended while it could not be saved: %+v", rec.Done)
		}
	}
	if info, err := srv.Current(ctx, "alice", thread); err != nil || info.State.Over() {
		t.Errorf("after %v of outage the run is %+v, %v; want it in progress, saving", storeOutage, info, err)
	}
	if _, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Hello?", genai.RoleUser)}); !errors.Is(err, agentserver.ErrBusy) {
		t.Errorf("a new message after %v of outage = %v; want ErrBusy", storeOutage, err)
	}

	proxy.setCut(false)
	recs := readUntil(t, att.Cursor, agentserver.KindDone)
	if d := recs[len(recs)-1].Done; d.State != agentserver.StateDone || d.Text != "Sent to Oz." {
		t.Errorf("done %+v; want the run done", d)
	}
	checkSaved(t, f, srv, thread)
}

// A save that fails for good (the store out of reach for longer than the
// run's timeout, here 10 s) ends the run failed with store_error, its
// contents left in its workflow's result: the thread's next message,
// once the store is back, saves them whole before its own run begins.
func TestSaveFailedForGoodIsSavedNext(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	srv, proxy := behindStoreProxy(t, f, 10*time.Second)
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "oz"})), fake.Text("Sent to Oz."))
	thread := id("save-failed")
	_, att := approveCut(t, srv, proxy, thread)
	defer att.Cursor.Close()
	recs := readUntil(t, att.Cursor, agentserver.KindDone)
	if d := recs[len(recs)-1].Done; d.State != agentserver.StateFailed || d.Error == nil || d.Error.Code != "store_error" {
		t.Fatalf("done %+v; want failed with store_error", d)
	}
	proxy.setCut(false)
	checkSaved(t, f, srv, thread)
}

// checkSaved checks that the thread holds the run of approveCut whole,
// its tool run once, and that the thread takes its next message.
func checkSaved(t *testing.T, f *fleet, srv *agentserver.Server, thread string) {
	t.Helper()
	ctx := context.Background()
	model.Enqueue(fake.Text("Anything else?"))
	att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Thanks", genai.RoleUser)})
	if err != nil {
		t.Fatalf("the next message once the store is back: %v", err)
	}
	readUntil(t, att.Cursor, agentserver.KindDone)
	att.Cursor.Close()
	h, err := srv.History(ctx, "alice", thread)
	if err != nil || len(h) != 6 || h[1].Parts[0].FunctionCall == nil || h[2].Parts[0].FunctionResponse == nil ||
		h[3].Parts[0].Text != "Sent to Oz." || h[4].Parts[0].Text != "Thanks" {
		t.Fatalf("the thread holds %d contents (%v); want the message, the call, its result, the answer, then the next exchange", len(h), err)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times; want once", n)
	}
}

// approveCut starts a run on thread whose call waits for approval, cuts
// proxy (the workers' way to the store), and approves the call: the run
// goes on to its save. It returns when the cut was made, and the
// approval's attachment.
func approveCut(t *testing.T, srv *agentserver.Server, proxy *outageProxy, thread string) (time.Time, agentserver.Attachment) {
	t.Helper()
	ctx := context.Background()
	att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Email Oz", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	recs := readUntil(t, att.Cursor, agentserver.KindPause)
	att.Cursor.Close()
	call := recs[len(recs)-1].Pending[0].Call.ID
	proxy.setCut(true)
	cut := time.Now()
	att, err = srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Decisions: []agentserver.Decision{{CallID: call, Approved: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return cut, att
}

// behindStoreProxy returns a server instance of f's whose Runner starts
// runs on a task queue of its own, whose worker reaches the PostgreSQL
// database (one of the test's own) through the proxy it returns; the
// instance reaches it directly. Runs time out after runTimeout (0: the
// default).
func behindStoreProxy(t *testing.T, f *fleet, runTimeout time.Duration) (*agentserver.Server, *outageProxy) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.Database(t)
	direct, err := pgstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newOutageProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	reached, err := pgstore.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reached.Close() })

	// The workers save through the proxy; the instance reaches the
	// database directly, and sees the thread busy.
	queue := f.queue + "-store-outage"
	w := worker.New(f.a.c, queue, worker.Options{})
	if err := errors.Join(temporalagent.Register(w, temporalagent.Agent{Name: "mail", Agent: f.agent}),
		temporalagent.RegisterStore(w, reached), w.Start()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	runner, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: f.a.c, TaskQueue: queue, Agent: "mail", Store: direct,
		PollInterval: 10 * time.Millisecond, RunTimeout: runTimeout})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: direct, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(ctx) })
	return srv, proxy
}
