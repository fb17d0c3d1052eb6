package main

// A2A across the fleet's instances: a task begun on one is read,
// streamed, listed, decided and cancelled on the other, by real a2a-go
// clients of both versions (0.3 at /a2a, 1.0 at /a2a/v1), for its user
// only.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	a2aclient "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	a2aclientv1 "github.com/a2aproject/a2a-go/v2/a2aclient"
	agentcardv1 "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"google.golang.org/genai"
)

// a2aNode is an instance's A2A face: a Server that authenticates its
// users (the bearer token names one), on a Runner of the instance's
// Temporal client, with the A2A handler.
type a2aNode struct {
	runner *temporalagent.Runner
	srv    *agentserver.Server
	http   *httptest.Server
	down   bool
}

// a2a returns in's A2A node; edit, when not nil, edits its Runner's
// config.
func (f *fleet) a2a(in *instance, edit func(*temporalagent.RunnerConfig)) *a2aNode {
	t := f.t
	cfg := temporalagent.RunnerConfig{Client: in.c, TaskQueue: f.queue, Agent: "mail", Store: f.store, PollInterval: 10 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	runner, err := temporalagent.NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: f.store, Runner: runner,
		Authenticate: func(r *http.Request) (string, error) {
			user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || user == "" {
				return "", errors.New("no token")
			}
			return user, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	h := a2aagent.Handler(srv, nil)
	mux := http.NewServeMux()
	mux.Handle(a2aagent.CardPath, h)
	mux.Handle(a2aagent.DefaultPath, h)
	mux.Handle(a2aagent.DefaultPath+"/", h)
	n := &a2aNode{runner: runner, srv: srv, http: httptest.NewServer(mux)}
	// Before the fleet's own cleanup, which closes the Temporal clients.
	t.Cleanup(func() { n.stop(t) })
	return n
}

// stop closes the node's server and its HTTP server; the instance's
// stop does the rest.
func (n *a2aNode) stop(t *testing.T) {
	if n.down {
		return
	}
	n.down = true
	if err := n.srv.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	n.http.Close()
}

// bearer adds the user's token to each request.
type bearer struct {
	user string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.user)
	return b.base.RoundTrip(r)
}

// client03 returns an A2A 0.3 client of user, from n's card.
func (n *a2aNode) client03(t *testing.T, user string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), n.http.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card,
		a2aclient.WithJSONRPCTransport(&http.Client{Transport: bearer{user, n.http.Client().Transport}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

// client10 returns an A2A 1.0 client of user, over JSON-RPC, from n's
// card.
func (n *a2aNode) client10(t *testing.T, user string) *a2aclientv1.Client {
	t.Helper()
	card, err := agentcardv1.DefaultResolver.Resolve(context.Background(), n.http.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclientv1.NewFromCard(context.Background(), card, a2aclientv1.WithDefaultsDisabled(),
		a2aclientv1.WithJSONRPCTransport(&http.Client{Transport: bearer{user, n.http.Client().Transport}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// confirmations returns the ids of the calls a status message asks to
// confirm (ADK's adk_request_confirmation calls).
func confirmations(m *a2a.Message) []string {
	if m == nil {
		return nil
	}
	var ids []string
	for _, p := range m.Parts {
		if dp, ok := p.(a2a.DataPart); ok && dp.Data["name"] == "adk_request_confirmation" {
			ids = append(ids, dp.Data["id"].(string))
		}
	}
	return ids
}

// confirm is the message that decides call of task.
func confirm(task *a2a.Task, call string, confirmed bool) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{
		Data:     map[string]any{"id": call, "name": "adk_request_confirmation", "response": map[string]any{"confirmed": confirmed}},
		Metadata: map[string]any{"adk_type": "function_response"}})
	m.TaskID, m.ContextID = task.ID, task.ContextID
	return m
}

func text03(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: s}) }

// collect03 reads a 0.3 stream to its end.
func collect03(t *testing.T, events func(func(a2a.Event, error) bool)) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream: %v (after %d events)", err, len(out))
		}
		out = append(out, ev)
	}
	return out
}

// last03 returns the status of a 0.3 stream's last event.
func last03(t *testing.T, events []a2a.Event) a2a.TaskStatus {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no event")
	}
	switch ev := events[len(events)-1].(type) {
	case *a2a.TaskStatusUpdateEvent:
		return ev.Status
	case *a2a.Task:
		return ev.Status
	}
	t.Fatalf("the last event is %s", jsonOf(events[len(events)-1]))
	return a2a.TaskStatus{}
}

// A task begun on A, waiting for approval, is the same task on B once A
// is gone: B's tasks/get shows it waiting with its pending call, B's 0.3
// tasks/resubscribe and 1.0 SubscribeToTask stream it, B's ListTasks
// lists it to its user only (another user finds nothing of it), and the
// approval sent to B finishes it, on B's worker: the tool runs once.
func TestA2AAcrossInstances(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	alice, _, mallory, _ := users(t)
	a, b := f.a2a(f.a, nil), f.a2a(f.b, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "bob"})), fake.Text("Sent to Bob."))

	res, err := a.client03(t, alice).SendMessage(ctx, &a2a.MessageSendParams{Message: text03("Email Bob")})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired || len(confirmations(task.Status.Message)) != 1 {
		t.Fatalf("message/send on A: %s", jsonOf(res))
	}
	call := confirmations(task.Status.Message)[0]
	a.stop(t)
	f.a.stop(t) // its server, its worker and its Temporal client

	onB := b.client03(t, alice)
	got, err := onB.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateInputRequired || !slices.Equal(confirmations(got.Status.Message), []string{call}) || got.ContextID != task.ContextID {
		t.Fatalf("tasks/get on B: %v %s", err, jsonOf(got))
	}
	events := collect03(t, onB.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: task.ID}))
	if st := last03(t, events); st.State != a2a.TaskStateInputRequired || !slices.Equal(confirmations(st.Message), []string{call}) {
		t.Fatalf("tasks/resubscribe on B ends with %s", jsonOf(st))
	}

	onB1 := b.client10(t, alice)
	var last a2av1.Event
	for ev, err := range onB1.SubscribeToTask(ctx, &a2av1.SubscribeToTaskRequest{ID: a2av1.TaskID(task.ID)}) {
		if err != nil {
			t.Fatalf("SubscribeToTask on B: %v", err)
		}
		last = ev
	}
	if st, ok := last.(*a2av1.TaskStatusUpdateEvent); !ok || st.Status.State != a2av1.TaskStateInputRequired {
		t.Fatalf("SubscribeToTask on B ends with %s", jsonOf(last))
	}
	list, err := onB1.ListTasks(ctx, &a2av1.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 || string(list.Tasks[0].ID) != string(task.ID) || list.Tasks[0].Status.State != a2av1.TaskStateInputRequired {
		t.Fatalf("ListTasks of alice on B: %v %s", err, jsonOf(list))
	}

	// Another user finds nothing of alice's task.
	mallory1 := b.client10(t, mallory)
	if list, err := mallory1.ListTasks(ctx, &a2av1.ListTasksRequest{}); err != nil || len(list.Tasks) != 0 {
		t.Errorf("ListTasks of mallory on B: %v %s", err, jsonOf(list))
	}
	mallory03 := b.client03(t, mallory)
	if _, err := mallory03.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("mallory's tasks/get: %v", err)
	}
	if _, err := mallory03.SendMessage(ctx, &a2a.MessageSendParams{Message: confirm(task, call, true)}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("mallory's approval: %v", err)
	}
	if _, err := mallory03.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("mallory's tasks/cancel: %v", err)
	}

	res, err = onB.SendMessage(ctx, &a2a.MessageSendParams{Message: confirm(task, call, true)})
	if err != nil {
		t.Fatal(err)
	}
	done, ok := res.(*a2a.Task)
	if !ok || done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || !strings.Contains(jsonOf(done.Artifacts), "Sent to Bob.") {
		t.Fatalf("the approval on B: %s", jsonOf(res))
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
	// The same approval again: the task is over.
	if _, err := onB.SendMessage(ctx, &a2a.MessageSendParams{Message: confirm(task, call, true)}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("the approval again: %v", err)
	}
	list, err = onB1.ListTasks(ctx, &a2av1.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].Status.State != a2av1.TaskStateCompleted {
		t.Errorf("ListTasks of alice once done: %v %s", err, jsonOf(list))
	}
}

// tasks/cancel on B cancels a task streamed on A that waits for
// approval: the tool never runs, and A sees it canceled.
func TestA2ACancelAcrossInstances(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	alice, _, _, _ := users(t)
	a, b := f.a2a(f.a, nil), f.a2a(f.b, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "cy"})))

	events := collect03(t, a.client03(t, alice).SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: text03("Email Cy")}))
	if st := last03(t, events); st.State != a2a.TaskStateInputRequired {
		t.Fatalf("message/stream on A ends with %s", jsonOf(st))
	}
	id := events[0].TaskInfo().TaskID
	canceled, err := b.client03(t, alice).CancelTask(ctx, &a2a.TaskIDParams{ID: id})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel on B: %v %s", err, jsonOf(canceled))
	}
	got, err := a.client03(t, alice).GetTask(ctx, &a2a.TaskQueryParams{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("tasks/get on A: %v %s", err, jsonOf(got))
	}
	if _, err := b.client03(t, alice).CancelTask(ctx, &a2a.TaskIDParams{ID: id}); err != nil {
		t.Errorf("tasks/cancel again: %v", err)
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
}

// Server.Runs on a fleet: each user's runs, begun on either instance, are
// listed on both, and never to another user.
func TestRunsPerUserAcrossInstances(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	alice, bob, _, carol := users(t)
	a, b := f.a2a(f.a, nil), f.a2a(f.b, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "x"})), fake.Calls(fake.Call("send_email", map[string]any{"to": "y"})),
		fake.Calls(fake.Call("send_email", map[string]any{"to": "z"})))
	start := func(n *a2aNode, user, thread string) string {
		t.Helper()
		att, err := n.srv.Submit(ctx, user, agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Email someone", genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		readUntil(t, att.Cursor, agentserver.KindPause)
		att.Cursor.Close()
		return att.Run.ID
	}
	alice1, alice2 := start(a, alice, "a1"), start(b, alice, "a2")
	bob1 := start(a, bob, "b1")
	for _, n := range []*a2aNode{a, b} {
		for user, want := range map[string][]string{alice: {alice1, alice2}, bob: {bob1}, carol: nil} {
			began := time.Now()
			runs, err := n.srv.Runs(ctx, user)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Runs of %d waiting runs: %v", len(runs), time.Since(began))
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
				if r.User != user || r.State != agentserver.StateWaiting || len(r.Pending) != 1 {
					t.Errorf("%s's run %s", user, jsonOf(r))
				}
			}
			slices.Sort(ids)
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				t.Errorf("%s's runs: %v, want %v", user, ids, want)
			}
		}
	}
	// Once cancelled, a run is listed for KeepFinished.
	if err := b.srv.Cancel(ctx, bob, bob1); err != nil {
		t.Fatal(err)
	}
	waitState(t, a.srv, bob, bob1, agentserver.StateCancelled)
	runs, err := a.srv.Runs(ctx, bob)
	if err != nil || len(runs) != 1 || runs[0].State != agentserver.StateCancelled {
		t.Errorf("bob's runs once cancelled: %v %s", err, jsonOf(runs))
	}
	for _, id := range []string{alice1, alice2} {
		if err := a.srv.Cancel(ctx, alice, id); err != nil {
			t.Fatal(err)
		}
		waitState(t, a.srv, alice, id, agentserver.StateCancelled)
	}
}

// waitState waits until user's run id is in state.
func waitState(t *testing.T, srv *agentserver.Server, user, id string, state agentserver.State) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		info, err := srv.Run(context.Background(), user, id)
		if err == nil && info.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: %v %s, want %s", id, err, jsonOf(info), state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The limits of a fleet: a user's runs in flight are counted across the
// instances (MaxRunsPerUser, from the store's journals), a refused run
// leaves its thread free, another user is not refused; the readers of a
// run are bounded per instance (agentserver.MaxReaders); a run over for
// longer than KeepFinished is not listed; a Runner lists no runs of a
// user it cannot name.
func TestFleetLimits(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	alice, bob, _, _ := users(t)
	one := func(c *temporalagent.RunnerConfig) { c.MaxRunsPerUser = 1 }
	a, b := f.a2a(f.a, one), f.a2a(f.b, one)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	email := fake.Calls(fake.Call("send_email", map[string]any{"to": "x"}))
	model.Enqueue(email, email)
	submit := func(n *a2aNode, user, thread string) (agentserver.Attachment, error) {
		return n.srv.Submit(ctx, user, agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Email someone", genai.RoleUser)})
	}
	att, err := submit(a, alice, "t1")
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, att.Cursor, agentserver.KindPause)
	att.Cursor.Close()
	first := att.Run.ID

	var ae *agentserver.Error
	if _, err := submit(b, alice, "t2"); !errors.Is(err, agentserver.ErrTooManyRuns) || !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests {
		t.Fatalf("alice's second run, on B: %v", err)
	}
	att, err = submit(b, bob, "t1")
	if err != nil {
		t.Fatalf("bob's run on B: %v", err)
	}
	readUntil(t, att.Cursor, agentserver.KindPause)
	att.Cursor.Close()
	bobs := att.Run.ID

	// The readers of one run, per instance.
	var curs []agentserver.Cursor
	for range agentserver.MaxReaders {
		c, err := b.srv.Attach(ctx, alice, first, 0)
		if err != nil {
			t.Fatal(err)
		}
		curs = append(curs, c)
	}
	if _, err := b.srv.Attach(ctx, alice, first, 0); !errors.Is(err, agentserver.ErrTooManyReaders) {
		t.Errorf("one reader too many on B: %v", err)
	}
	c, err := a.srv.Attach(ctx, alice, first, 0)
	if err != nil {
		t.Errorf("a reader on A: %v", err)
	} else {
		c.Close()
	}
	curs[0].Close()
	curs[0].Close() // twice: counted once
	if c, err := b.srv.Attach(ctx, alice, first, 0); err != nil {
		t.Errorf("a reader on B once one left: %v", err)
	} else {
		curs[0] = c
	}
	if _, err := b.srv.Attach(ctx, alice, first, 0); !errors.Is(err, agentserver.ErrTooManyReaders) {
		t.Errorf("one reader too many on B again: %v", err)
	}
	for _, c := range curs {
		c.Close()
	}

	// Once alice's run is over, her next one starts, on the thread the
	// refused one left free.
	if err := b.srv.Cancel(ctx, alice, first); err != nil {
		t.Fatal(err)
	}
	waitState(t, b.srv, alice, first, agentserver.StateCancelled)
	model.Enqueue(fake.Text("Nothing to send."))
	att, err = submit(b, alice, "t2")
	if err != nil {
		t.Fatalf("alice's run once the first is over: %v", err)
	}
	if recs := readUntil(t, att.Cursor, agentserver.KindDone); recs[len(recs)-1].Done.State != agentserver.StateDone {
		t.Errorf("alice's second run: %s", jsonOf(recs[len(recs)-1]))
	}
	att.Cursor.Close()

	// KeepFinished: a run over for longer is not listed.
	brief := f.a2a(f.a, func(c *temporalagent.RunnerConfig) { c.KeepFinished = time.Nanosecond })
	if runs, err := brief.srv.Runs(ctx, alice); err != nil || len(runs) != 0 {
		t.Errorf("alice's runs, over for longer than KeepFinished: %v %s", err, jsonOf(runs))
	}
	if runs, err := brief.srv.Runs(ctx, bob); err != nil || len(runs) != 1 || runs[0].ID != bobs {
		t.Errorf("bob's runs, in progress: %v %s", err, jsonOf(runs))
	}
	if _, err := brief.runner.Runs(ctx, ""); err == nil {
		t.Error("the runs of no user: no error")
	}
	if err := a.srv.Cancel(ctx, bob, bobs); err != nil {
		t.Fatal(err)
	}
	waitState(t, a.srv, bob, bobs, agentserver.StateCancelled)
}

// userSets numbers the calls of users.
var userSets atomic.Int64

// users returns the names of the test's users, unique to this call and
// this process: the PostgreSQL database outlives both, and a user's
// threads of another test (or of this one run again, -count) are runs of
// a task queue no worker serves any more.
func users(t *testing.T) (alice, bob, mallory, carol string) {
	n := userSets.Add(1)
	u := func(name string) string { return id(fmt.Sprintf("%s-%d-%s", t.Name(), n, name)) }
	return u("alice"), u("bob"), u("mallory"), u("carol")
}
