package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// A run that is over is read from what its closed workflow left, with no
// worker of its queue at all: runs end on queue Q1 (finished twice,
// cancelled, terminated), every Q1 worker stops, and a
// Runner of queue Q2 that has no worker reads each one (Latest, Lookup,
// Attach); then a worker of Q2 comes, and a new message on each thread
// starts a new run there.
func TestClosedRunsReadWithoutWorkers(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The threads of the server's one user, as its HTTP routes name them.
	prefix, err := agentserver.UserPrefix("local")
	if err != nil {
		t.Fatal(err)
	}
	start := func(conv, text string) (agentserver.RunInfo, []agentserver.Record) {
		t.Helper()
		in := &agentserver.Input{Thread: prefix + conv, Conversation: conv, User: "local",
			Message: genai.NewContentFromText(text, genai.RoleUser)}
		info, cur, err := f.a.runner.Start(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		if strings.HasPrefix(text, "Email") { // an email: the run waits for approval
			return info, readUntil(t, cur, agentserver.KindPause)
		}
		return info, readUntil(t, cur, agentserver.KindDone)
	}
	closed := func(conv string) {
		t.Helper()
		// How it ended is in its result, or its error: the wait is for it to close.
		_ = f.a.c.GetWorkflow(ctx, "agentserver/"+prefix+conv, "").Get(ctx, nil)
	}

	// Named after the queue, so that the test runs again (-count) on new threads.
	name := func(s string) string { return id("closed-" + s + "-" + f.queue) }
	done, keep, cancelled, terminated := name("done"), name("keep"), name("cancel"), name("term")
	model.Enqueue(fake.Text("Hello."))
	doneRun, _ := start(done, "Hi")
	model.Enqueue(fake.Text("Kept."))
	keepRun, keepLog := start(keep, "Keep it")
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "ann"})))
	cancelRun, paused := start(cancelled, "Email Ann")
	if err := f.b.runner.Cancel(ctx, cancelRun.ID); err != nil {
		t.Fatal(err)
	}
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "tom"})))
	termRun, _ := start(terminated, "Email Tom")
	if err := f.a.c.TerminateWorkflow(ctx, "agentserver/"+prefix+terminated, "", "an operator's"); err != nil {
		t.Fatal(err)
	}
	for _, conv := range []string{done, keep, cancelled, terminated} {
		closed(conv)
	}
	f.a.stop(t)
	f.b.stop(t)

	// A Runner of another queue, with no worker anywhere.
	f.queue = fmt.Sprintf("fleet-closed-%d", queues.Add(1))
	r, _ := f.workerless(t)

	check := func(conv string, run agentserver.RunInfo, state agentserver.State, code, text string) {
		t.Helper()
		latest, err := r.Latest(ctx, prefix+conv)
		if err != nil {
			t.Fatalf("Latest of %s: %v", conv, err)
		}
		looked, err := r.Lookup(ctx, run.ID)
		if err != nil {
			t.Fatalf("Lookup of %s: %v", conv, err)
		}
		for _, info := range []agentserver.RunInfo{latest, looked} {
			if info.ID != run.ID || info.State != state || info.Thread != conv || info.Done == nil || info.Ended.IsZero() ||
				!info.Started.Equal(run.Started) || info.Done.Text != text || (code != "") != (info.Done.Error != nil) ||
				(code != "" && info.Done.Error.Code != code) {
				t.Errorf("%s read without workers: %+v (done %+v), want the run %s %s (%q) %q", conv, info, info.Done, run.ID, state, code, text)
			}
		}
		// Attached at 0, the cursor reads the run's end, then EOF;
		// attached past the end, EOF at once, but for a run whose
		// workflow ended without its log: its done record is read at
		// any offset.
		cur, err := r.Attach(ctx, run.ID, 0)
		if err != nil {
			t.Fatalf("Attach of %s: %v", conv, err)
		}
		recs := readUntil(t, cur, agentserver.KindDone)
		if last := recs[len(recs)-1]; last.Done.State != state || last.Offset != latest.Len-1 {
			t.Errorf("Attach of %s: done %+v at %d of %d", conv, last.Done, last.Offset, latest.Len)
		}
		if _, _, err := cur.Next(ctx, time.Second); !errors.Is(err, io.EOF) {
			t.Errorf("after the end of %s: %v", conv, err)
		}
		cur.Close()
		cur, err = r.Attach(ctx, run.ID, latest.Len)
		if err != nil {
			t.Fatalf("Attach of %s at its end: %v", conv, err)
		}
		rec, ok, err := cur.Next(ctx, time.Second)
		if aborted := code == "terminated"; aborted && (!ok || rec.Kind != agentserver.KindDone) || !aborted && !errors.Is(err, io.EOF) {
			t.Errorf("Attach of %s at its end: %+v %v %v", conv, rec, ok, err)
		}
		cur.Close()
	}
	check(done, doneRun, agentserver.StateDone, "", "Hello.")
	check(keep, keepRun, agentserver.StateDone, "", "Kept.")
	check(cancelled, cancelRun, agentserver.StateCancelled, "cancelled", "")
	check(terminated, termRun, agentserver.StateFailed, "terminated", "")

	// A run's log is read whole, record for record.
	cur, err := r.Attach(ctx, keepRun.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := readUntil(t, cur, agentserver.KindDone); !slices.Equal(kinds(got), kinds(keepLog)) || got[2].Text != "Kept." {
		t.Errorf("the log read without workers: %v, want %v", kinds(got), kinds(keepLog))
	}
	cur.Close()
	// A late decision about the cancelled run's call: the run is over.
	late := []agentserver.Decision{{CallID: paused[len(paused)-1].Pending[0].Call.ID, Approved: true}}
	if _, err := r.Decide(ctx, cancelRun.ID, late); !errors.Is(err, agentserver.ErrUnknownCall) {
		t.Errorf("a decision about the cancelled run's call, without workers: %v", err)
	}
	if _, err := r.Attach(ctx, keepRun.ID, 99); !isError(err, http.StatusBadRequest, "bad_offset") {
		t.Errorf("Attach past the kept log: %v", err)
	}
	if _, err := r.Lookup(ctx, "trun_AAAAAAAAAAAAAAAA_"+"L25vbmU"); !errors.Is(err, agentserver.ErrNotFound) {
		t.Errorf("Lookup of a run of a thread that never ran: %v", err)
	}
	runs, err := r.Runs(ctx, "local")
	if err != nil || len(runs) < 4 {
		t.Errorf("Runs without workers: %d runs, %v", len(runs), err)
	}

	// Through a server on that Runner, the AI SDK's resume route finds no
	// run in progress (204), where it answered 503 after the query's wait.
	srv, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: f.store, Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(routes(srv))
	for _, conv := range []string{done, terminated} {
		if rep := doAt(t, hs.Client(), hs.URL, "GET", "/api/chat/"+conv+"/stream", nil); rep.status != http.StatusNoContent {
			t.Errorf("resuming %s without workers: %d %s", conv, rep.status, rep.body)
		}
	}
	hs.Close()
	if err := srv.Close(ctx); err != nil {
		t.Error(err)
	}

	// A worker of Q2 comes: a new message on each thread runs there, the
	// terminated run's thread included (its journal outlived it).
	q2 := f.instance()
	defer q2.stop(t)
	for _, conv := range []string{done, cancelled, terminated} {
		model.Enqueue(fake.Text("Again."))
		rep := do(t, q2, "POST", "/api/chat", map[string]any{"id": conv, "messages": []any{userMessage("u2", "Once more")}})
		if rep.status != http.StatusOK || !slices.Contains(rep.types(), "text-delta") {
			t.Fatalf("a new message on %s, on Q2: %d %v %s", conv, rep.status, rep.types(), rep.body)
		}
		info, err := r.Latest(ctx, prefix+conv)
		if err != nil || info.State != agentserver.StateDone || info.Done.Text != "Again." {
			t.Errorf("the new run of %s: %+v, %v", conv, info, err)
		}
	}
	// The terminated run's question is saved, then the new run's.
	saved, err := f.store.Load(ctx, prefix+terminated)
	if err != nil || len(saved) != 3 || saved[0].Parts[0].Text != "Email Tom" || saved[2].Parts[0].Text != "Again." {
		t.Errorf("the terminated thread saved %d contents, %v", len(saved), err)
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
	// The terminated workflow's coroutines wait in the process's workflow
	// cache, which no worker evicts once every worker is stopped.
	q2.stop(t)
	worker.PurgeStickyWorkflowCache()
}

// workerless returns a Runner of the fleet's queue, and its client, with
// no worker: the client is closed when the test ends.
func (f *fleet) workerless(t *testing.T) (*temporalagent.Runner, client.Client) {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: f.ts.GetFrontendHostPort(), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	r, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: f.queue, Agent: "mail", Store: f.store, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}
