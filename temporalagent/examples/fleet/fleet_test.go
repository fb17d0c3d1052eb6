package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/genai"
)

// The Temporal server and the fake model the tests share.
var (
	sharedOnce sync.Once
	sharedTS   *temporaltest.TestServer
	sharedErr  error
	model      *fake.Server
)

func TestMain(m *testing.M) {
	if code, ok := roleMain(); ok { // a process of procs_test.go
		os.Exit(code)
	}
	code := m.Run()
	if sharedTS != nil {
		sharedTS.Stop()
	}
	if model != nil {
		model.Close()
	}
	os.Exit(code)
}

func shared(t *testing.T) *temporaltest.TestServer {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	sharedOnce.Do(func() {
		sharedTS, sharedErr = devtemporal.Start(nil)
		model = fake.NewServer()
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedTS
}

// openStore opens the threads' store: the PostgreSQL database of
// TOOLNEXUS_PG_URL (see .ci/postgres), or a SQLite file.
func openStore(t *testing.T) session.Journaler {
	t.Helper()
	ctx := context.Background()
	if url := os.Getenv("TOOLNEXUS_PG_URL"); url != "" {
		s, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "threads.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fleet is two server instances on one Temporal server and one store,
// each with a worker of the task queue.
type fleet struct {
	t     *testing.T
	ts    *temporaltest.TestServer
	queue string
	store session.Journaler
	sent  atomic.Int32 // send_email's runs
	agent *agent.Agent
	a, b  *instance
	// runTimeout is the instances' RunTimeout (0: the default).
	runTimeout time.Duration
}

// instance is one server instance: its Temporal client, its worker, its
// agentserver.Server and its HTTP server.
type instance struct {
	c      client.Client
	w      worker.Worker
	runner *temporalagent.Runner
	srv    *agentserver.Server
	http   *httptest.Server
	down   bool
}

var queues atomic.Int64

// run makes the tests' thread ids unique to this process: the PostgreSQL
// database outlives it.
var procID = fmt.Sprintf("%d", time.Now().UnixNano())

// id returns a thread id unique to this process.
func id(name string) string { return name + "-" + procID }

func newFleet(t *testing.T) *fleet { return newFleetTimeout(t, 0) }

// newFleetTimeout returns a fleet whose runs time out after runTimeout.
func newFleetTimeout(t *testing.T, runTimeout time.Duration) *fleet {
	ts := shared(t)
	f := &fleet{t: t, ts: ts, queue: fmt.Sprintf("fleet-%d", queues.Add(1)), store: openStore(t), runTimeout: runTimeout}
	tools, err := toolset.New(toolset.MustFunc("send_email", "Sends an email", func(ctx context.Context, in struct {
		To string `json:"to"`
	}) (map[string]string, error) {
		f.sent.Add(1)
		return map[string]string{"sent": in.To}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	f.agent, err = agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview", Tools: tools,
		NeedsApproval: func(c *genai.FunctionCall) bool { return c.Name == "send_email" }})
	if err != nil {
		t.Fatal(err)
	}
	f.a, f.b = f.instance(), f.instance()
	t.Cleanup(func() {
		f.a.stop(t)
		f.b.stop(t)
	})
	return f
}

func (f *fleet) instance() *instance {
	t := f.t
	c, err := client.Dial(client.Options{HostPort: f.ts.GetFrontendHostPort(), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{c: c, w: worker.New(c, f.queue, worker.Options{})}
	if err := temporalagent.Register(in.w, temporalagent.Agent{Name: "mail", Agent: f.agent}); err != nil {
		t.Fatal(err)
	}
	if err := temporalagent.RegisterStore(in.w, f.store); err != nil {
		t.Fatal(err)
	}
	if err := in.w.Start(); err != nil {
		t.Fatal(err)
	}
	in.runner, err = temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: f.queue, Agent: "mail", Store: f.store,
		PollInterval: 10 * time.Millisecond, RunTimeout: f.runTimeout})
	if err != nil {
		t.Fatal(err)
	}
	in.srv, err = agentserver.New(agentserver.Config{Agent: f.agent, Store: f.store, Runner: in.runner})
	if err != nil {
		t.Fatal(err)
	}
	in.http = httptest.NewServer(routes(in.srv))
	return in
}

func routes(srv *agentserver.Server) http.Handler {
	mux := http.NewServeMux()
	chat, ag := aisdk.Handler(srv), agui.Handler(srv)
	mux.Handle("/api/chat", chat)
	mux.Handle("/api/chat/", chat)
	mux.Handle("/agui", ag)
	mux.Handle("/agui/", ag)
	return mux
}

// stop stops the instance as a deploy does: its server closes (its runs
// go on in Temporal), its worker stops.
func (in *instance) stop(t *testing.T) {
	if in.down {
		return
	}
	in.down = true
	if err := in.srv.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	in.http.Close()
	in.w.Stop()
	in.c.Close()
}

// reply is a response: its status, its body, and the data of its
// server-sent events.
type reply struct {
	status int
	body   string
	events []map[string]any
}

func (r *reply) types() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, e["type"].(string))
	}
	return out
}

func (r *reply) code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(r.body), &e)
	return e.Error.Code
}

func do(t *testing.T, in *instance, method, path string, body any) *reply {
	t.Helper()
	return doAt(t, in.http.Client(), in.http.URL, method, path, body)
}

// doAt is do, with client, on the server at base.
func doAt(t *testing.T, client *http.Client, base, method, path string, body any) *reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := &reply{status: resp.StatusCode}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		out.body = string(b)
		return out
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out.events = append(out.events, e)
	}
	return out
}

func userMessage(id, text string) map[string]any {
	return map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
}

func approvalPart(id string, approved bool) map[string]any {
	return map[string]any{"type": "tool-send_email", "toolCallId": id, "state": "approval-responded",
		"input": map[string]any{}, "approval": map[string]any{"id": id, "approved": approved}}
}

// approvalIDs returns the approval ids a response asks decisions for.
func approvalIDs(r *reply) []string {
	var ids []string
	for _, e := range r.events {
		if e["type"] == "tool-approval-request" {
			ids = append(ids, e["approvalId"].(string))
		}
	}
	return ids
}

// A run started on A through the AI SDK route waits for approval; A goes
// away; the client resumes the stream on B and approves there: the run
// finishes, the tool ran once, and the thread is saved once.
func TestFailOverAISDK(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "bob"})), fake.Text("Sent to Bob."))
	msgs := []any{userMessage("u1", "Email Bob")}
	r1 := do(t, f.a, "POST", "/api/chat", map[string]any{"id": id("chat-aisdk"), "messages": msgs})
	want := []string{"start", "start-step", "tool-input-available", "tool-approval-request", "finish-step", "finish"}
	if !slices.Equal(r1.types(), want) {
		t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
	}
	ids := approvalIDs(r1)
	f.a.stop(t)

	resumed := do(t, f.b, "GET", "/api/chat/"+id("chat-aisdk")+"/stream", nil)
	if !slices.Equal(resumed.types(), want) || !slices.Equal(approvalIDs(resumed), ids) {
		t.Fatalf("resumed on B: %d %v %s", resumed.status, resumed.types(), resumed.body)
	}
	msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{approvalPart(ids[0], true)}})
	r2 := do(t, f.b, "POST", "/api/chat", map[string]any{"id": id("chat-aisdk"), "messages": msgs})
	want2 := []string{"start", "tool-approval-response", "tool-output-available",
		"start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"}
	if !slices.Equal(r2.types(), want2) {
		t.Fatalf("approved on B: %d %v %s", r2.status, r2.types(), r2.body)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
	again := do(t, f.b, "POST", "/api/chat", map[string]any{"id": id("chat-aisdk"), "messages": msgs})
	if again.status != http.StatusConflict || (again.code() != "decided" && again.code() != "unknown_call") {
		t.Errorf("the approval again: %d %s", again.status, again.body)
	}
	saved, err := f.store.Load(context.Background(), threadOf(t, f.store, id("chat-aisdk")))
	if err != nil || len(saved) != 4 {
		t.Fatalf("saved %d contents, %v", len(saved), err)
	}
}

// threadOf returns the store's id of thread id (of the one user of a
// server without Authenticate).
func threadOf(t *testing.T, store session.Store, id string) string {
	t.Helper()
	infos, err := store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if strings.HasSuffix(info.ID, "/"+id) {
			return info.ID
		}
	}
	t.Fatalf("no thread %q in the store", id)
	return ""
}

// The same through AG-UI: the run interrupts on A, reconnects on B
// (/agui/connect), and is resumed there.
func TestFailOverAGUI(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "ann"})), fake.Text("Sent to Ann."))
	msgs := []any{map[string]any{"id": "u1", "role": "user", "content": "Email Ann"}}
	input := func(run string) map[string]any {
		return map[string]any{"threadId": id("t-agui"), "runId": run, "messages": msgs, "tools": []any{}, "context": []any{}}
	}
	r1 := do(t, f.a, "POST", "/agui", input("r1"))
	want := []string{"RUN_STARTED", "STEP_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_FINISHED", "RUN_FINISHED"}
	if !slices.Equal(r1.types(), want) {
		t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
	}
	interrupts := r1.events[len(r1.events)-1]["outcome"].(map[string]any)["interrupts"].([]any)
	id := interrupts[0].(map[string]any)["id"].(string)
	f.a.stop(t)

	connected := do(t, f.b, "POST", "/agui/connect", input("r1"))
	if !slices.Equal(connected.types(), want) {
		t.Fatalf("connected on B: %d %v %s", connected.status, connected.types(), connected.body)
	}
	// The client's messages now hold the assistant's tool call.
	msgs = append(msgs, map[string]any{"id": r1.events[2]["parentMessageId"], "role": "assistant", "toolCalls": []any{
		map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "send_email", "arguments": `{"to":"ann"}`}},
	}})
	resume := input("r2")
	resume["resume"] = []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"approved": true}}}
	r2 := do(t, f.b, "POST", "/agui", resume)
	if r2.status != 200 || r2.types()[len(r2.types())-1] != "RUN_FINISHED" || !slices.Contains(r2.types(), "TOOL_CALL_RESULT") || !slices.Contains(r2.types(), "TEXT_MESSAGE_CONTENT") {
		t.Fatalf("resumed on B: %d %v %s", r2.status, r2.types(), r2.body)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
}

// Records read from A until the pause, then from B after the decision,
// are every record of the run exactly once, in order.
func TestRecordsOnceAcrossInstances(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "cy"})), fake.Text("Sent to Cy."))
	in := &agentserver.Input{Thread: "/" + id("records"), Conversation: id("records"), Message: genai.NewContentFromText("Email Cy", genai.RoleUser)}
	_, cur, err := f.a.runner.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	read := readUntil(t, cur, agentserver.KindPause)
	cur.Close()
	pause := read[len(read)-1]
	if _, _, err := f.a.runner.Start(ctx, in); !errors.Is(err, agentserver.ErrBusy) {
		t.Errorf("a second run on the thread: %v", err)
	}
	f.a.stop(t)
	cur, err = f.b.runner.Decide(ctx, runIDOf(t, f, "/"+id("records")), []agentserver.Decision{{CallID: pause.Pending[0].Call.ID, Approved: true}})
	if err != nil {
		t.Fatal(err)
	}
	read = append(read, readUntil(t, cur, agentserver.KindDone)...)
	cur.Close()
	for i, rec := range read {
		if rec.Offset != int64(i) {
			t.Fatalf("record %d has offset %d: %v", i, rec.Offset, kinds(read))
		}
	}
	all, err := f.b.runner.Attach(ctx, runIDOf(t, f, "/"+id("records")), 0)
	if err != nil {
		t.Fatal(err)
	}
	whole := readUntil(t, all, agentserver.KindDone)
	all.Close()
	if !slices.Equal(kinds(read), kinds(whole)) {
		t.Errorf("read %v, the log holds %v", kinds(read), kinds(whole))
	}
	want := []agentserver.Kind{"start", "step", "tool-call", "pause", "decision", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if !slices.Equal(kinds(read), want) {
		t.Errorf("records %v, want %v", kinds(read), want)
	}
	if d := read[len(read)-1].Done; d.State != agentserver.StateDone || d.Text != "Sent to Cy." {
		t.Errorf("done %+v", d)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
}

func runIDOf(t *testing.T, f *fleet, thread string) string {
	t.Helper()
	in := f.b
	if !f.a.down {
		in = f.a
	}
	info, err := in.runner.Latest(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
}

func kinds(recs []agentserver.Record) []agentserver.Kind {
	out := make([]agentserver.Kind, len(recs))
	for i, r := range recs {
		out[i] = r.Kind
	}
	return out
}

func readUntil(t *testing.T, cur agentserver.Cursor, kind agentserver.Kind) []agentserver.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out []agentserver.Record
	for {
		rec, ok, err := cur.Next(ctx, time.Second)
		if err != nil {
			t.Fatalf("after %v: %v", kinds(out), err)
		}
		if !ok {
			continue
		}
		out = append(out, rec)
		if rec.Kind == kind {
			return out
		}
	}
}

// Two instances decide the same call at once: one wins, the other is
// refused with the protocol's 409.
func TestConcurrentDecisions(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "dee"})), fake.Text("Sent to Dee."))
	msgs := []any{userMessage("u1", "Email Dee")}
	r1 := do(t, f.a, "POST", "/api/chat", map[string]any{"id": id("chat-race"), "messages": msgs})
	ids := approvalIDs(r1)
	if len(ids) != 1 {
		t.Fatalf("%v %s", r1.types(), r1.body)
	}
	msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{approvalPart(ids[0], true)}})
	var wg sync.WaitGroup
	replies := make([]*reply, 2)
	for i, in := range []*instance{f.a, f.b} {
		wg.Go(func() {
			replies[i] = do(t, in, "POST", "/api/chat", map[string]any{"id": id("chat-race"), "messages": msgs})
		})
	}
	wg.Wait()
	won, refused := 0, 0
	for _, r := range replies {
		switch {
		case r.status == 200 && slices.Contains(r.types(), "tool-output-available"):
			won++
		case r.status == http.StatusConflict && (r.code() == "decided" || r.code() == "unknown_call" || r.code() == "busy"):
			refused++
		default:
			t.Errorf("reply %d %v %s", r.status, r.types(), r.body)
		}
	}
	if won != 1 || refused != 1 {
		t.Errorf("%d won, %d refused", won, refused)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
}

// A conversation whose requests alternate between the two instances
// behaves as it does on one in-process server: the same events.
func TestRoundRobinAsOneInstance(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	script := func() {
		model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "eve"})), fake.Text("Sent to Eve."),
			fake.Calls(fake.Call("send_email", map[string]any{"to": "fay"})), fake.Text("Not sent."))
	}
	conversation := func(next func() *instance) [][]string {
		var seqs [][]string
		msgs := []any{userMessage("u1", "Email Eve")}
		for i, approve := range []bool{true, false} {
			r := do(t, next(), "POST", "/api/chat", map[string]any{"id": id("chat-rr"), "messages": msgs})
			seqs = append(seqs, r.types())
			ids := approvalIDs(r)
			if len(ids) != 1 {
				t.Fatalf("request %d: %v %s", i, r.types(), r.body)
			}
			msgs = append(msgs, map[string]any{"id": r.events[0]["messageId"], "role": "assistant", "parts": []any{approvalPart(ids[0], approve)}})
			r = do(t, next(), "POST", "/api/chat", map[string]any{"id": id("chat-rr"), "messages": msgs})
			seqs = append(seqs, r.types())
			msgs = append(msgs, userMessage(fmt.Sprintf("u%d", i+2), "Email Fay"))
		}
		return seqs
	}
	script()
	turn := 0
	fleetSeqs := conversation(func() *instance {
		turn++
		if turn%2 == 1 {
			return f.a
		}
		return f.b
	})

	script()
	local, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: session.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	one := &instance{srv: local, http: httptest.NewServer(routes(local))}
	defer func() {
		local.Close(context.Background())
		one.http.Close()
	}()
	localSeqs := conversation(func() *instance { return one })
	for i := range localSeqs {
		if !slices.Equal(fleetSeqs[i], localSeqs[i]) {
			t.Errorf("request %d: the fleet answered %v, one process %v", i, fleetSeqs[i], localSeqs[i])
		}
	}
	if n := f.sent.Load(); n != 2 {
		t.Errorf("send_email ran %d times", n)
	}
}

// ours counts the goroutines of this repository's serving code (servers,
// runners, cursors, workflows and activities), the tests' own left out:
// the shared Temporal server's goroutines come and go, and a stopped
// worker's pollers end with their long poll, so goleak, which sees them
// all, cannot tell a leak of ours from them.
func ours() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 || strings.Contains(g, "testing.tRunner") {
			continue // this goroutine, and the tests'
		}
		if strings.Contains(g, "toolnexus-go/agentserver") || strings.Contains(g, "toolnexus-go/temporalagent") {
			n++
		}
	}
	return n
}

// noLeaks fails the test unless the goroutines it counts (see ours) are
// back to before once the test's servers, workers and clients stopped.
func noLeaks(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := ours()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 8<<20)
			t.Errorf("%d goroutines of the fleet's code are left, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A long answer, streamed in thousands of chunks: the in-process runner's
// log has a record per chunk; a served run on Temporal has one text
// record, and its workflow history a few events, whatever the answer's
// length (see the package doc of temporalagent, "Serving").
func TestLongAnswerRecords(t *testing.T) {
	shared(t)
	f := newFleet(t)
	ctx := context.Background()
	long := strings.Repeat("All work and no play. ", 2000) // 44,000 bytes
	count := func(r agentserver.Runner, thread string) (texts, all int) {
		in := &agentserver.Input{Thread: "/" + thread, Conversation: thread, Message: genai.NewContentFromText("Write", genai.RoleUser)}
		_, cur, err := r.Start(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		for _, rec := range readUntil(t, cur, agentserver.KindDone) {
			all++
			if rec.Kind == agentserver.KindText {
				texts++
			}
		}
		return texts, all
	}
	model.Enqueue(fake.Text(long).WithTextChunk(16))
	local, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: session.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close(ctx)
	localTexts, localAll := count(local.Runner(), id("long-local"))
	model.Enqueue(fake.Text(long).WithTextChunk(16))
	texts, all := count(f.a.runner, id("long-fleet"))
	d, err := f.a.c.DescribeWorkflowExecution(ctx, "agentserver//"+id("long-fleet"), "")
	if err != nil {
		t.Fatal(err)
	}
	events := d.GetWorkflowExecutionInfo().GetHistoryLength()
	t.Logf("a %d-byte answer in 16-byte chunks: in process %d text records (%d in all); on Temporal %d text record (%d in all), %d history events",
		len(long), localTexts, localAll, texts, all, events)
	if texts != 1 || localTexts < 1000 || events > 40 {
		t.Errorf("in process %d text records; on Temporal %d, and %d history events", localTexts, texts, events)
	}
}
