package main

// The fleet as real processes: instances of the fleet command (this test
// binary, started again with envCommand set, runs main) on the shared
// in-process Temporal server and one store, killed with SIGKILL; and
// worker processes (envWorker) killed while a tool runs. Each process that
// ends cleanly (SIGTERM) exits 0 only if it left no goroutine behind.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/goleak"
	"google.golang.org/genai"
)

// The environment of a process this test binary starts in a role.
const (
	envCommand = "FLEET_TEST_COMMAND" // "1": the fleet command (main), its arguments the command's
	envWorker  = "FLEET_TEST_WORKER"  // "1": a worker of envQueue holding the "lookup" agent
	envBlock   = "FLEET_TEST_BLOCK"   // worker: "1": its tools block until the process is killed
	envHost    = "FLEET_TEST_TEMPORAL"
	envNS      = "FLEET_TEST_NAMESPACE"
	envQueue   = "FLEET_TEST_QUEUE"
	envDB      = "FLEET_TEST_DB"     // the store: a postgres:// URL or a SQLite file
	envGemini  = "FLEET_TEST_GEMINI" // the fake model's URL
	envLog     = "FLEET_TEST_LOG"    // the file the tools append "start TOOL PID" and "done TOOL PID" to
)

// procGuard bounds each wait for a process: it only turns a hang into a
// failure (a -race binary on a loaded machine is slow to start).
const procGuard = 2 * time.Minute

// roleMain runs this process in the role its environment names, and
// reports whether it had one, with its exit code.
func roleMain() (int, bool) {
	switch {
	case os.Getenv(envCommand) == "1":
		main() // it exits 1 itself on an error
		return leaks("fleet"), true
	case os.Getenv(envWorker) == "1":
		code := workerMain()
		if code == 0 {
			code = leaks("worker")
		}
		return code, true
	}
	return 0, false
}

// leaks reports the goroutines left once a process ended cleanly: 0 when
// there are none, else 3, having printed them.
func leaks(name string) int {
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: goroutines left after shutdown: %v\n", name, err)
		return 3
	}
	fmt.Fprintf(os.Stderr, "%s: ended with no goroutine left\n", name)
	return 0
}

// workerMain is a worker process: the "lookup" agent (its tools lookup,
// idempotent, and notify, not), on the fake model, with the store, until
// SIGTERM.
func workerMain() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "worker:", err); return 1 }
	ctx := context.Background()
	store, err := openStoreAt(ctx, os.Getenv(envDB))
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envHost), Namespace: os.Getenv(envNS), Logger: devtemporal.QuietLogger})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	// A transport of its own, whose idle connections to the model close
	// at the end: none is left for the leak check.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	gc, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPClient: &http.Client{Transport: tr}, HTTPOptions: genai.HTTPOptions{BaseURL: os.Getenv(envGemini)}})
	if err != nil {
		return fail(err)
	}
	a, err := agent.New(agent.Config{Models: gc.Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(recordingTool("lookup"), recordingTool("notify"))})
	if err != nil {
		return fail(err)
	}
	// At most a second between heartbeats (the SDK's default throttle is
	// 80% of the timeout): a live worker's call is not taken for lost.
	w := worker.New(c, os.Getenv(envQueue), worker.Options{MaxHeartbeatThrottleInterval: time.Second,
		StickyScheduleToStartTimeout: DefaultStickyTimeout})
	err = errors.Join(temporalagent.Register(w, temporalagent.Agent{Name: "lookup", Agent: a,
		Tools: map[string]temporalagent.ToolOptions{"lookup": {Idempotent: true, HeartbeatTimeout: lookupHeartbeat},
			"notify": {HeartbeatTimeout: lookupHeartbeat}}}),
		temporalagent.RegisterStore(w, store))
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	signal.Stop(stop)
	w.Stop()
	return 0
}

// lookupHeartbeat is the heartbeat timeout of the lookup agent's tools: a
// call whose worker was killed counts as lost that long after its last
// heartbeat.
const lookupHeartbeat = 3 * time.Second

// recordingTool is a tool that records each call's start and end in the
// file of envLog; with envBlock set, it blocks until the process is
// killed.
func recordingTool(name string) *toolset.Tool {
	record := func(what string) error {
		f, err := os.OpenFile(os.Getenv(envLog), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "%s %s %d\n", what, name, os.Getpid())
		return errors.Join(err, f.Close())
	}
	return toolset.MustFunc(name, "Looks a key up", func(ctx context.Context, in struct {
		Key string `json:"key"`
	}) (map[string]string, error) {
		if err := record("start"); err != nil {
			return nil, err
		}
		if os.Getenv(envBlock) == "1" {
			<-ctx.Done() // the process is killed first
			return nil, ctx.Err()
		}
		if err := record("done"); err != nil {
			return nil, err
		}
		return map[string]string{in.Key: "found"}, nil
	})
}

// storeURL returns the store the processes share: the PostgreSQL database
// of TOOLNEXUS_PG_URL, or a SQLite file.
func storeURL(t *testing.T) string {
	if url := os.Getenv("TOOLNEXUS_PG_URL"); url != "" {
		return url
	}
	return filepath.Join(t.TempDir(), "threads.db")
}

// sharedStore is the store the processes share.
type sharedStore interface {
	session.Journaler
	Close() error
}

// openStoreAt opens the store of storeURL.
func openStoreAt(ctx context.Context, url string) (sharedStore, error) {
	if strings.HasPrefix(url, "postgres://") {
		return pgstore.Open(ctx, url)
	}
	return sqlitestore.Open(ctx, url)
}

// proc is a process this test started: its stderr, its end.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once it exited and its output is read
	err  error         // cmd.Wait's, once done

	mu    sync.Mutex
	lines []string // its stderr's lines so far
}

// start starts this test binary in a role (env), and waits until ready
// returns true for a line of its stdout or stderr.
func start(t *testing.T, name string, env []string, args []string, ready func(line string) bool) *proc {
	t.Helper()
	p, err := startProc(t, name, env, args, ready)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startProc is start, for any goroutine: it returns its failure.
func startProc(t *testing.T, name string, env []string, args []string, ready func(line string) bool) (*proc, error) {
	return startCmd(t, name, exec.Command(os.Args[0], args...), env, ready)
}

// startCmd starts cmd, offline (without the API key of this process's
// environment) and with env added to it, and waits until ready returns
// true for a line of its stdout or stderr.
func startCmd(t *testing.T, name string, cmd *exec.Cmd, env []string, ready func(line string) bool) (*proc, error) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GEMINI_API_KEY" && k != "GOOGLE_API_KEY" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &proc{t: t, name: name, cmd: cmd, done: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	readyc := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				p.mu.Lock()
				p.lines = append(p.lines, sc.Text())
				p.mu.Unlock()
				if ready(sc.Text()) {
					once.Do(func() { close(readyc) })
				}
			}
		})
	}
	go func() {
		wg.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	select {
	case <-readyc:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before it was ready (%v):\n%s", name, p.err, p.output())
	case <-time.After(procGuard):
		return nil, fmt.Errorf("%s not ready after %v:\n%s", name, procGuard, p.output())
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// kill kills the process with SIGKILL (its process group, when it leads
// one), and waits until it is gone.
func (p *proc) kill() {
	if a := p.cmd.SysProcAttr; a != nil && a.Setpgid {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop stops the process with SIGTERM: it must exit 0, with no goroutine
// left.
func (p *proc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("SIGTERM to %s: %v", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(procGuard):
		p.t.Fatalf("%s did not end %v after SIGTERM:\n%s", p.name, procGuard, p.output())
	}
	if p.err != nil || !strings.Contains(p.output(), "with no goroutine left") {
		p.t.Errorf("%s after SIGTERM: %v\n%s", p.name, p.err, p.output())
	}
}

// matching returns the lines of its output that hold every one of words.
func (p *proc) matching(words ...string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(l, w) }) {
			out = append(out, l)
		}
	}
	return out
}

// procFleet is a fleet of instance processes on the shared Temporal
// server, a task queue of its own and one store, and a Runner of this
// process on that queue, to read run logs with.
type procFleet struct {
	t      *testing.T
	db     string
	queue  string
	store  session.Journaler
	c      client.Client
	runner *temporalagent.Runner
	sticky time.Duration // the instances' -sticky-timeout; 0: the command's default
}

func newProcFleet(t *testing.T) *procFleet {
	ts := shared(t)
	ctx := context.Background()
	f := &procFleet{t: t, db: storeURL(t), queue: fmt.Sprintf("procs-%s-%d", procID, queues.Add(1))}
	s, err := openStoreAt(ctx, f.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.store = s
	c, err := client.Dial(client.Options{HostPort: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f.c = c
	f.runner, err = temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: f.queue, Agent: "demo", Store: f.store, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// server is an instance process of the fleet command, and its address.
type server struct {
	*proc
	url string
}

// instances starts instances of the fleet command at once, each on a
// port of its own choosing (the "serving" line of its log says which).
func (f *procFleet) instances(names ...string) []*server {
	ts := shared(f.t)
	out := make([]*server, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			s := &server{}
			args := []string{"-temporal", ts.GetFrontendHostPort(), "-namespace", ts.GetDefaultNamespace(), "-db", f.db,
				"-queue", f.queue, "-addr", "127.0.0.1:0", "-approve"}
			if f.sticky > 0 {
				args = append(args, "-sticky-timeout", f.sticky.String())
			}
			var url string
			s.proc, errs[i] = startProc(f.t, name, []string{envCommand + "=1"}, args, func(line string) bool {
				u, ok := field(line, "msg=serving", "url")
				if ok {
					url = u // before the ready channel closes
				}
				return ok
			})
			s.url = url
			out[i] = s
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// field returns the value of key in a log line of the fleet command
// (slog's text format) that holds marker.
func field(line, marker, key string) (string, bool) {
	if !strings.Contains(line, marker) {
		return "", false
	}
	for f := range strings.FieldsSeq(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// toolCalls returns how many tool calls of name the instance ran.
func (s *server) toolCalls(name string) int {
	return len(s.matching(`msg="tool call"`, "tool="+name+" "))
}

// functionResponses counts the function responses of the saved thread.
func functionResponses(t *testing.T, store session.Store, thread string) int {
	t.Helper()
	saved, err := store.Load(context.Background(), thread)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range saved {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				n++
			}
		}
	}
	return n
}

// wholeLog reads the log of the latest run of thread, from its start.
func (f *procFleet) wholeLog(thread string) []agentserver.Kind {
	f.t.Helper()
	ctx := context.Background()
	info, err := f.runner.Latest(ctx, thread)
	if err != nil {
		f.t.Fatal(err)
	}
	cur, err := f.runner.Attach(ctx, info.ID, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	defer cur.Close()
	return kinds(readUntil(f.t, cur, agentserver.KindDone))
}

// The run's whole log, as every protocol's client reads it in two
// parts: before the kill, on A, up to the pause; after the approval, on
// B, from the decision on.
var (
	killedRunLog = []agentserver.Kind{"start", "step", "tool-call", "pause", "decision", "tool-result", "step-end", "step", "text", "step-end", "done"}
)

// storeThread returns the store's id of the thread name of the instances'
// one user (they have no Authenticate: agentserver's user "local").
func storeThread(name string) string { return "agentserver/local/" + name }

// holder returns the identity of the worker that ran the last workflow
// task of thread name's run.
func (f *procFleet) holder(name string) string {
	f.t.Helper()
	var held string
	it := f.c.GetWorkflowHistory(context.Background(), "agentserver/"+storeThread(name), "", false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			f.t.Fatal(err)
		}
		if attrs := e.GetWorkflowTaskStartedEventAttributes(); attrs != nil {
			held = attrs.GetIdentity()
		}
	}
	return held
}

// holds reports whether the worker of identity is the instance's (the
// SDK's identities start with the process id).
func (s *server) holds(identity string) bool {
	return strings.HasPrefix(identity, strconv.Itoa(s.cmd.Process.Pid)+"@")
}

// killHolder checks that instance a, the only one so far, ran the workflow
// of thread name's run (so that the run sits in its worker's cache, and on
// its sticky queue), starts instance B, and kills A with SIGKILL.
func (f *procFleet) killHolder(a *server, name string) *server {
	f.t.Helper()
	if held := f.holder(name); !a.holds(held) {
		f.t.Fatalf("the run's last workflow task ran on %q, not on A (pid %d)", held, a.cmd.Process.Pid)
	}
	b := f.instances("B")[0]
	a.kill()
	return b
}

// checkEnd checks what every kill test ends with: the tool ran once, on
// B; the thread saved once, with one function response; B ends cleanly.
// name is the thread's name in the protocol.
func (f *procFleet) checkEnd(a, b *server, name string) {
	t := f.t
	thread := storeThread(name)
	if listed := threadOf(t, f.store, name); listed != thread {
		t.Fatalf("the store lists the thread as %q, not %q", listed, thread)
	}
	if got := f.wholeLog(thread); !slices.Equal(got, killedRunLog) {
		t.Errorf("the run's log %v, want %v", got, killedRunLog)
	}
	if n, m := a.toolCalls("get_weather"), b.toolCalls("get_weather"); n != 0 || m != 1 {
		t.Errorf("get_weather ran %d times on A and %d on B, want once, on B", n, m)
	}
	if n := functionResponses(t, f.store, thread); n != 1 {
		t.Errorf("the saved thread holds %d function responses", n)
	}
	f.waitClosed("agentserver/" + thread)
	b.stop()
}

// waitClosed waits until the workflow wid is closed: its last workflow
// task done, so that no worker of the test's queue is needed any more
// (a thread's next run waits for its previous workflow to close).
func (f *procFleet) waitClosed(wid string) {
	f.t.Helper()
	for deadline := time.Now().Add(procGuard); ; time.Sleep(20 * time.Millisecond) {
		d, err := f.c.DescribeWorkflowExecution(context.Background(), wid, "")
		if err != nil {
			f.t.Fatal(err)
		}
		if d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the workflow %s is still open after %v", wid, procGuard)
		}
	}
}

// TestKilledAISDK: a run started on instance A through the AI SDK route
// waits for approval; instance B starts (A alone ran the run so far: it
// holds it); A is killed (SIGKILL); the client resumes the
// stream on B, which replays it, and approves there: the run finishes, the
// records read from A and then from B are the run's log once, in order,
// and get_weather ran once.
func TestKilledAISDK(t *testing.T) {
	f := newProcFleet(t)
	a := f.instances("A")[0]
	chat := f.queue + "-aisdk" // a thread of its own, with -count too
	msgs := []any{userMessage("u1", "What is the weather in Paris?")}
	r1 := doAt(t, http.DefaultClient, a.url, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs})
	want := []string{"start", "start-step", "tool-input-available", "tool-approval-request", "finish-step", "finish"}
	if !slices.Equal(r1.types(), want) {
		t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
	}
	ids := approvalIDs(r1)
	b := f.killHolder(a, chat)

	resumed := doAt(t, http.DefaultClient, b.url, "GET", "/api/chat/"+chat+"/stream", nil)
	if !slices.Equal(resumed.types(), want) || !slices.Equal(approvalIDs(resumed), ids) {
		t.Fatalf("resumed on B: %d %v %s", resumed.status, resumed.types(), resumed.body)
	}
	part := approvalPart(ids[0], true)
	part["type"] = "tool-get_weather"
	msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{part}})
	r2 := doAt(t, http.DefaultClient, b.url, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs})
	want2 := []string{"start", "tool-approval-response", "tool-output-available",
		"start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"}
	if !slices.Equal(r2.types(), want2) {
		t.Fatalf("approved on B: %d %v %s", r2.status, r2.types(), r2.body)
	}
	if r2.events[2]["toolCallId"] != r1.events[2]["toolCallId"] {
		t.Errorf("the output on B is of call %v, the call on A was %v", r2.events[2]["toolCallId"], r1.events[2]["toolCallId"])
	}
	f.checkEnd(a, b, chat)
}

// TestKilledAGUI is TestKilledAISDK through AG-UI: the run interrupts on
// A, A is killed, the client reconnects on B (/agui/connect) and resumes
// the run there.
func TestKilledAGUI(t *testing.T) {
	f := newProcFleet(t)
	a := f.instances("A")[0]
	thread := f.queue + "-agui"
	msgs := []any{map[string]any{"id": "u1", "role": "user", "content": "What is the weather in Paris?"}}
	input := func(run string) map[string]any {
		return map[string]any{"threadId": thread, "runId": run, "messages": msgs, "tools": []any{}, "context": []any{}}
	}
	r1 := doAt(t, http.DefaultClient, a.url, "POST", "/agui", input("r1"))
	want := []string{"RUN_STARTED", "STEP_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_FINISHED", "RUN_FINISHED"}
	if !slices.Equal(r1.types(), want) {
		t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
	}
	interrupts := r1.events[len(r1.events)-1]["outcome"].(map[string]any)["interrupts"].([]any)
	call := interrupts[0].(map[string]any)["id"].(string)
	b := f.killHolder(a, thread)

	connected := doAt(t, http.DefaultClient, b.url, "POST", "/agui/connect", input("r1"))
	if !slices.Equal(connected.types(), want) {
		t.Fatalf("connected on B: %d %v %s", connected.status, connected.types(), connected.body)
	}
	msgs = append(msgs, map[string]any{"id": r1.events[2]["parentMessageId"], "role": "assistant", "toolCalls": []any{
		map[string]any{"id": call, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": r1.events[3]["delta"]}},
	}})
	resume := input("r2")
	resume["resume"] = []any{map[string]any{"interruptId": call, "status": "resolved", "payload": map[string]any{"approved": true}}}
	r2 := doAt(t, http.DefaultClient, b.url, "POST", "/agui", resume)
	want2 := []string{"RUN_STARTED", "STEP_STARTED", "TOOL_CALL_RESULT", "STEP_FINISHED",
		"STEP_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_FINISHED"}
	if !slices.Equal(r2.types(), want2) {
		t.Fatalf("resumed on B: %d %v %s", r2.status, r2.types(), r2.body)
	}
	if r2.events[2]["toolCallId"] != call {
		t.Errorf("the result on B is of call %v, the call on A was %v", r2.events[2]["toolCallId"], call)
	}
	f.checkEnd(a, b, thread)
}

// a2aEvent is what a test reads of an A2A 0.3 stream's event: its kind,
// and a status update's state.
func a2aEvent(t *testing.T, e map[string]any) (kind, state string) {
	t.Helper()
	res, ok := e["result"].(map[string]any)
	if !ok {
		t.Fatalf("an A2A event with no result: %v", e)
	}
	kind, _ = res["kind"].(string)
	if st, ok := res["status"].(map[string]any); ok {
		state, _ = st["state"].(string)
	}
	return kind, state
}

// a2aStates returns the kinds of a stream's events, a status update's
// with its state (status-update:input-required).
func a2aStates(t *testing.T, r *reply) []string {
	var out []string
	for _, e := range r.events {
		kind, state := a2aEvent(t, e)
		if kind == "status-update" {
			kind += ":" + state
		}
		out = append(out, kind)
	}
	return out
}

// artifactParts counts the data parts of a stream's artifact updates by
// their adk_type (function_call, function_response), and its text parts
// under "text".
func artifactParts(r *reply) map[string]int {
	out := map[string]int{}
	for _, e := range r.events {
		res, _ := e["result"].(map[string]any)
		if res["kind"] != "artifact-update" {
			continue
		}
		art, _ := res["artifact"].(map[string]any)
		parts, _ := art["parts"].([]any)
		for _, p := range parts {
			part, _ := p.(map[string]any)
			if part["kind"] == "text" {
				out["text"]++
				continue
			}
			if md, ok := part["metadata"].(map[string]any); ok {
				if typ, ok := md["adk_type"].(string); ok {
					out[typ]++
				}
			}
		}
	}
	return out
}

// TestKilledA2A is TestKilledAISDK through A2A 0.3: message/stream on A
// ends input-required; A is killed; tasks/resubscribe on B streams the
// task as it stands, and so does A2A 1.0's SubscribeToTask (a2a-go's
// client); the confirmation, sent to B, finishes it.
func TestKilledA2A(t *testing.T) {
	f := newProcFleet(t)
	a := f.instances("A")[0]
	rpc := func(s *server, method string, params map[string]any) *reply {
		return doAt(t, http.DefaultClient, s.url, "POST", "/a2a", map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	}
	r1 := rpc(a, "message/stream", map[string]any{"message": map[string]any{"kind": "message", "messageId": "m1", "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": "What is the weather in Paris?"}}}})
	if len(r1.events) > 0 && r1.events[0]["error"] != nil {
		// Seen once in CI ("internal error"): A's log says why.
		t.Fatalf("on A: %s\nA's log:\n%s", r1.body, a.output())
	}
	states := a2aStates(t, r1)
	if r1.status != 200 || len(states) < 2 || states[0] != "task" || states[len(states)-1] != "status-update:input-required" {
		t.Fatalf("on A: %d %v %s", r1.status, states, r1.body)
	}
	task := r1.events[0]["result"].(map[string]any)
	taskID, contextID := task["id"].(string), task["contextId"].(string)
	var call string
	last := r1.events[len(r1.events)-1]["result"].(map[string]any)
	for _, p := range last["status"].(map[string]any)["message"].(map[string]any)["parts"].([]any) {
		if d, ok := p.(map[string]any)["data"].(map[string]any); ok && d["name"] == "adk_request_confirmation" {
			call, _ = d["id"].(string)
		}
	}
	if call == "" {
		t.Fatalf("no confirmation asked on A: %s", r1.body)
	}
	b := f.killHolder(a, contextID)

	re := rpc(b, "tasks/resubscribe", map[string]any{"id": taskID})
	reStates := a2aStates(t, re)
	if re.status != 200 || len(reStates) == 0 || reStates[0] != "task" || reStates[len(reStates)-1] != "status-update:input-required" {
		t.Fatalf("resubscribed on B: %d %v %s", re.status, reStates, re.body)
	}
	// The same through A2A 1.0's SubscribeToTask, with a2a-go's client.
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, b.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	var v1 []a2a.Event
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(taskID)}) {
		if err != nil {
			t.Fatalf("SubscribeToTask on B, after %d events: %v", len(v1), err)
		}
		v1 = append(v1, ev)
	}
	if len(v1) < 2 {
		t.Fatalf("SubscribeToTask on B: %d events", len(v1))
	}
	if tk, ok := v1[0].(*a2a.Task); !ok || string(tk.ID) != taskID {
		t.Errorf("SubscribeToTask on B opens with %T %+v", v1[0], v1[0])
	}
	if st, ok := v1[len(v1)-1].(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("SubscribeToTask on B ends with %T %+v", v1[len(v1)-1], v1[len(v1)-1])
	}
	if err := c.Destroy(); err != nil {
		t.Error(err)
	}

	r2 := rpc(b, "message/stream", map[string]any{"message": map[string]any{"kind": "message", "messageId": "m2", "role": "user",
		"taskId": taskID, "contextId": contextID, "parts": []any{map[string]any{"kind": "data",
			"data":     map[string]any{"id": call, "name": "adk_request_confirmation", "response": map[string]any{"confirmed": true}},
			"metadata": map[string]any{"adk_type": "function_response"}}}}})
	states2 := a2aStates(t, r2)
	if r2.status != 200 || len(states2) == 0 || states2[len(states2)-1] != "status-update:completed" {
		t.Fatalf("confirmed on B: %d %v %s", r2.status, states2, r2.body)
	}
	// The call streamed on A, its result and the answer on B: each once.
	if got := artifactParts(r1); got["function_call"] != 1 || got["function_response"] != 0 {
		t.Errorf("on A: %v", got)
	}
	if got := artifactParts(r2); got["function_call"] != 0 || got["function_response"] != 1 || got["text"] == 0 {
		t.Errorf("confirmed on B: %v\n%s", got, r2.body)
	}
	f.checkEnd(a, b, contextID)
}

// TestWorkerKilledMidTool: a served run's two tool calls are running on
// worker process W1 when W1 is killed (SIGKILL); once their heartbeat
// timeout passes, the idempotent one (lookup) runs again on worker W2,
// the other (notify) is answered to the model as interrupted, and the run
// finishes there: the first attempts are lost activities, not a lost run.
// lookup completed once, on W2; notify never ran again; the thread is
// saved once.
func TestWorkerKilledMidTool(t *testing.T) {
	f := newProcFleet(t)
	ts := shared(t)
	log := filepath.Join(t.TempDir(), "tools.log")
	env := []string{envWorker + "=1", envHost + "=" + ts.GetFrontendHostPort(), envNS + "=" + ts.GetDefaultNamespace(),
		envQueue + "=" + f.queue, envDB + "=" + f.db, envGemini + "=" + model.URL, envLog + "=" + log}
	ready := func(line string) bool { return line == "ready" }
	w1 := start(t, "W1", append(env, envBlock+"=1"), nil, ready)
	runner, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: f.c, TaskQueue: f.queue, Agent: "lookup",
		Store: f.store, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	model.Enqueue(fake.Calls(fake.Call("lookup", map[string]any{"key": "k"}), fake.Call("notify", map[string]any{"key": "k"})), fake.Text("Found k."))
	thread := f.queue + "-worker-killed"
	ctx := context.Background()
	_, cur, err := runner.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread, Message: genai.NewContentFromText("Look k up", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	// attempts maps "start lookup", "done notify"… to the pids that did it.
	attempts := func() map[string][]string {
		b, _ := os.ReadFile(log)
		out := map[string][]string{}
		for l := range strings.Lines(string(b)) {
			if f := strings.Fields(l); len(f) == 3 {
				out[f[0]+" "+f[1]] = append(out[f[0]+" "+f[1]], f[2])
			}
		}
		return out
	}
	for deadline := time.Now().Add(procGuard); len(attempts()["start lookup"]) == 0 || len(attempts()["start notify"]) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tools did not start on W1 within %v: %v\n%s", procGuard, attempts(), w1.output())
		}
	}
	w1.kill()
	w2 := start(t, "W2", env, nil, ready)
	recs := readUntil(t, cur, agentserver.KindDone)
	want := []agentserver.Kind{"start", "step", "tool-call", "tool-call", "tool-result", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if !slices.Equal(kinds(recs), want) {
		t.Fatalf("records %v, want %v", kinds(recs), want)
	}
	for _, rec := range recs[4:6] {
		switch res := rec.Result; {
		case rec.Call == nil || res == nil:
			t.Errorf("a tool-result record without its call or result: %+v", rec)
		case rec.Call.Name == "lookup" && (res.Error != "" || !strings.Contains(string(res.Output), "found")):
			t.Errorf("lookup's result: %+v", res)
		case rec.Call.Name == "notify" && !strings.Contains(res.Error, "interrupted"):
			t.Errorf("notify's result: %+v, want an interrupted error", res)
		}
	}
	if d := recs[len(recs)-1].Done; d.State != agentserver.StateDone || d.Text != "Found k." {
		t.Errorf("done %+v", d)
	}
	got := attempts()
	p1, p2 := strconv.Itoa(w1.cmd.Process.Pid), strconv.Itoa(w2.cmd.Process.Pid)
	if !slices.Contains(got["start lookup"], p1) || !slices.Equal(got["done lookup"], []string{p2}) ||
		slices.ContainsFunc(got["start lookup"], func(p string) bool { return p != p1 && p != p2 }) {
		t.Errorf("lookup's attempts %v: want started on W1 (%s), and done once, on W2 (%s)", got, p1, p2)
	}
	if !slices.Equal(got["start notify"], []string{p1}) || len(got["done notify"]) != 0 {
		t.Errorf("notify's attempts %v: want started once, on W1 (%s), and never done", got, p1)
	}
	if n := functionResponses(t, f.store, "/"+thread); n != 2 {
		t.Errorf("the saved thread holds %d function responses, want 2", n)
	}
	f.waitClosed("agentserver//" + thread)
	w2.stop()
}

// The command refuses what it cannot run, saying why, and exits 1.
func TestCommandRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-temporal", "127.0.0.1:1", "-sticky-timeout", "0s", "-db", "x.db"}, "-sticky-timeout 0s: it must be positive"},
		{[]string{"-temporal", "127.0.0.1:1", "-sticky-timeout", "-1s", "-db", "x.db"}, "-sticky-timeout -1s: it must be positive"},
		{[]string{"-temporal", "127.0.0.1:1"}, "-temporal needs -db"},
	} {
		cmd := exec.Command(os.Args[0], append(c.args, "-addr", "127.0.0.1:0")...)
		cmd.Env = append(os.Environ(), envCommand+"=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), c.want) {
			t.Errorf("fleet %v: %v\n%s", c.args, err, out)
		}
	}
}
