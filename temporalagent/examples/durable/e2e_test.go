package main

// End-to-end tests of durable runs on an in-process Temporal server, with
// workers in real separate processes: this test binary, started again in
// the role a variable of its environment names. The model is the project's
// fake Gemini server, in the test process; workers reach it over loopback.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/genai"
)

// The environment of a process started in a role.
const (
	envRole      = "DURABLE_E2E_ROLE" // "worker" or "approver"
	envHostPort  = "DURABLE_E2E_HOSTPORT"
	envNamespace = "DURABLE_E2E_NAMESPACE"
	envQueue     = "DURABLE_E2E_QUEUE"
	envGemini    = "DURABLE_E2E_GEMINI" // the fake Gemini server's URL
	envLog       = "DURABLE_E2E_LOG"    // the file tools append their records to
	envRun       = "DURABLE_E2E_RUN"    // approver: the run to decide about
)

// historyCountToSuggest is the server's continue-as-new suggestion
// threshold in these tests: low, so that a long run crosses it.
const historyCountToSuggest = 120

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "worker":
		os.Exit(workerMain())
	case "approver":
		os.Exit(approverMain())
	}
	code := m.Run()
	stopShared()
	os.Exit(code)
}

// The server and the fake model the tests share, started by the first
// test that needs them.
var (
	sharedOnce sync.Once
	sharedTS   *temporaltest.TestServer
	sharedErr  error
	model      *fake.Server
)

// shared returns the shared Temporal server, and starts it and the fake
// model on first use.
func shared(t *testing.T) *temporaltest.TestServer {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	sharedOnce.Do(func() {
		sharedTS, sharedErr = startServer(dynamicconfig.StaticClient{
			dynamicconfig.HistoryCountSuggestContinueAsNew.Key(): historyCountToSuggest,
		})
		model = fake.NewServer()
		model.SetReplyFunc(scenarios)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedTS
}

func stopShared() {
	if sharedTS != nil {
		sharedTS.Stop()
	}
	if model != nil {
		model.Close()
	}
}

// env is the setup of one test: a task queue of its own on the shared
// server, a record file, and the processes it started.
type env struct {
	t     *testing.T
	ts    *temporaltest.TestServer
	queue string
	log   string
	c     *temporalagent.Client
}

func newEnv(t *testing.T) *env {
	ts := shared(t)
	e := &env{t: t, ts: ts, queue: "q-" + t.Name(), log: filepath.Join(t.TempDir(), "records")}
	if err := os.WriteFile(e.log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.c = temporalagent.NewClient(ts.GetDefaultClient(), e.queue)
	return e
}

// environ is the environment of a process this test starts in role.
func (e *env) environ(role string, extra ...string) []string {
	return append(os.Environ(), append([]string{
		envRole + "=" + role,
		envHostPort + "=" + e.ts.GetFrontendHostPort(),
		envNamespace + "=" + e.ts.GetDefaultNamespace(),
		envQueue + "=" + e.queue,
		envGemini + "=" + model.URL,
		envLog + "=" + e.log,
	}, extra...)...)
}

// proc is a process this test started.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	out  strings.Builder
}

// startWorker starts a worker process and waits until it polls.
func (e *env) startWorker() *proc {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = e.environ("worker")
	p := &proc{cmd: cmd, done: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{b: &p.out}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		defer close(p.done)
		s := bufio.NewScanner(stdout)
		sent := false
		for s.Scan() {
			if s.Text() == "ready" && !sent {
				ready <- true
				sent = true
			}
		}
		if !sent {
			ready <- false
		}
		_ = cmd.Wait()
	}()
	e.t.Cleanup(func() { p.kill() })
	select {
	case ok := <-ready:
		if !ok {
			e.t.Fatalf("worker process exited before it was ready: %s", p.out.String())
		}
	case <-time.After(60 * time.Second):
		e.t.Fatalf("worker process not ready after 60s: %s", p.out.String())
	}
	return p
}

// kill kills the process with SIGKILL and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// lockedWriter lets a process's output be read while it is written.
type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// records returns the lines of the record file.
func (e *env) records() []string {
	e.t.Helper()
	b, err := os.ReadFile(e.log)
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// count returns how many records are exactly line (words joined by "_").
func count(records []string, line string) int {
	n := 0
	for _, r := range records {
		if r == line || strings.HasPrefix(r, line+"_pid") {
			n++
		}
	}
	return n
}

// waitFor polls until cond holds, or fails the test after d.
func (e *env) waitFor(d time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// start starts a run of the named agent on a one-line conversation.
func (e *env) start(agentName, id, text string) *temporalagent.Run {
	e.t.Helper()
	run, err := e.c.Start(context.Background(), client.StartWorkflowOptions{ID: e.queue + "-" + id}, agentName,
		[]*genai.Content{genai.NewContentFromText(text, genai.RoleUser)})
	if err != nil {
		e.t.Fatal(err)
	}
	return run
}

// result waits for a run's result, at most d.
func result(t *testing.T, run *temporalagent.Run, d time.Duration) (*agent.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return run.Result(ctx)
}

// --- the worker process ---

// workerMain runs a worker holding the test agents until it is killed.
func workerMain() int {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envHostPort), Namespace: os.Getenv(envNamespace), Logger: quietLogger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer c.Close()
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: os.Getenv(envGemini)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	rec := &recorder{path: os.Getenv(envLog)}
	w := worker.New(c, os.Getenv(envQueue), worker.Options{})
	if err := temporalagent.Register(w, testAgents(gc.Models, rec)...); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	registerBare(w)
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	w.Stop()
	return 0
}

// testAgents are the agents the worker processes hold.
func testAgents(models agent.Models, rec *recorder) []temporalagent.Agent {
	type stepIn struct {
		Key string `json:"key"`
		Ms  int    `json:"ms"`
	}
	step := func(name string, idempotent bool) *toolset.Tool {
		return toolset.MustFunc(name, "Records a step", func(ctx context.Context, in stepIn) (string, error) {
			again := count(rec.read(), "start_"+in.Key) > 0
			rec.add("start", in.Key)
			if in.Ms > 0 && !(idempotent && again) {
				select {
				case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			rec.add("done", in.Key)
			return "did " + in.Key, nil
		})
	}
	type cityIn struct {
		City string `json:"city"`
	}
	weather := toolset.MustFunc("get_weather", "Weather in a city", func(ctx context.Context, in cityIn) (string, error) {
		rec.add("weather", in.City)
		return "sunny in " + in.City, nil
	})
	type payIn struct {
		Amount float64 `json:"amount"`
	}
	pay := toolset.MustFunc("pay", "Pays", func(ctx context.Context, in payIn) (string, error) {
		rec.add("paid", strconv.FormatFloat(in.Amount, 'f', -1, 64))
		return "paid", nil
	})
	newAgent := func(tools *toolset.Set, edit func(*agent.Config)) *agent.Agent {
		cfg := agent.Config{Models: models, Model: "gemini-3-flash-preview", Tools: tools, MaxTurns: 100}
		if edit != nil {
			edit(&cfg)
		}
		a, err := agent.New(cfg)
		if err != nil {
			panic(err)
		}
		return a
	}
	quick := temporalagent.ToolOptions{HeartbeatTimeout: 2 * time.Second}
	typed, err := agent.Typed[forecast](newAgent(toolset.MustNew(weather), func(c *agent.Config) { c.Output.Strategy = agent.OutputTool }))
	if err != nil {
		panic(err)
	}
	return []temporalagent.Agent{
		{Name: "crash", Agent: newAgent(toolset.MustNew(step("step", false), step("step_idem", true)), func(c *agent.Config) {
			// Each event this worker reports, so that the test can count
			// them over the workers.
			c.Observer = agent.ObserverFunc(func(_ context.Context, e *agent.Event) { rec.add("event", e.Kind.String()) })
		}),
			Tools: map[string]temporalagent.ToolOptions{"step": quick, "step_idem": {Idempotent: true, HeartbeatTimeout: 2 * time.Second}}},
		{Name: "weather", Agent: newAgent(toolset.MustNew(weather), nil)},
		{Name: "weather-regular", Agent: newAgent(toolset.MustNew(weather), nil), RegularModelCalls: true},
		{Name: "weather-local", Agent: newAgent(toolset.MustNew(weather), nil),
			Tools: map[string]temporalagent.ToolOptions{"get_weather": {Idempotent: true, Local: true}}},
		{Name: "typed", Agent: typed},
		{Name: "approve", Agent: newAgent(toolset.MustNew(pay, weather), func(c *agent.Config) {
			c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Name == "pay" }
		})},
		// Each model call a regular activity that any worker picks up, and
		// a lost one noticed within two seconds (long_test.go).
		{Name: "long", Agent: newAgent(toolset.MustNew(weather), func(c *agent.Config) {
			c.Observer = agent.ObserverFunc(func(_ context.Context, e *agent.Event) { rec.add("event", e.Kind.String()) })
		}), RegularModelCalls: true, HeartbeatTimeout: 2 * time.Second},
	}
}

// recorder appends records to a file shared by the processes of a test:
// "start KEY pidN", "done KEY pidN"…
type recorder struct {
	mu   sync.Mutex
	path string
}

func (r *recorder) add(what, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s_%s_pid%d\n", what, key, os.Getpid())
}

func (r *recorder) read() []string {
	b, _ := os.ReadFile(r.path)
	return strings.Fields(string(b))
}

// --- the approver process ---

// approverMain decides about the run named in its environment from a
// process of its own: it approves call 0.0, denies 0.1, and checks that
// decisions about an unknown id and about a decided call are rejected.
func approverMain() int {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envHostPort), Namespace: os.Getenv(envNamespace), Logger: quietLogger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "approver:", err)
		return 1
	}
	defer c.Close()
	ctx := context.Background()
	run := temporalagent.NewClient(c, os.Getenv(envQueue)).GetRun(os.Getenv(envRun))
	if err := run.Approve(ctx, "9.9"); err == nil || !strings.Contains(err.Error(), temporalagent.ErrUnknownApproval.Error()) {
		fmt.Fprintln(os.Stderr, "approver: a decision about an unknown id was not rejected:", err)
		return 1
	}
	if err := run.Approve(ctx, "0.0"); err != nil {
		fmt.Fprintln(os.Stderr, "approver:", err)
		return 1
	}
	// While 0.1 still waits, the run waits too: a second decision about
	// 0.0 reaches it, and is rejected.
	if err := run.Deny(ctx, "0.0", "changed my mind"); err == nil || !strings.Contains(err.Error(), temporalagent.ErrDecided.Error()) {
		fmt.Fprintln(os.Stderr, "approver: a second decision was not rejected:", err)
		return 1
	}
	if err := run.Deny(ctx, "0.1", "too much"); err != nil {
		fmt.Fprintln(os.Stderr, "approver:", err)
		return 1
	}
	fmt.Println("decided")
	return 0
}

// --- the model ---

// scenarios is the fake model of these tests: the first user message
// names a scenario and its parameters.
func scenarios(req *fake.Request) *fake.Reply {
	words := strings.Fields(textOf(req.Contents[0]))
	if len(words) < 2 {
		return fake.Text("no scenario")
	}
	kind, id := words[0], words[1]
	turn := 0
	for _, c := range req.Contents {
		if c.Role == genai.RoleModel {
			turn++
		}
	}
	answered := turn > 0
	switch kind {
	case "crash":
		if answered {
			return fake.Text("crash " + id + " done")
		}
		return fake.Calls(
			fake.Call("step", map[string]any{"key": id + "/a", "ms": 0}),
			fake.Call("step", map[string]any{"key": id + "/b", "ms": 0}),
			fake.Call("step", map[string]any{"key": id + "/c", "ms": 600000}),
			fake.Call("step_idem", map[string]any{"key": id + "/d", "ms": 600000}),
		)
	case "weather":
		if answered {
			var parts []string
			for _, p := range req.Contents[len(req.Contents)-1].Parts {
				parts = append(parts, fmt.Sprint(p.FunctionResponse.Response["result"]))
			}
			return fake.Text(id + ": " + strings.Join(parts, "; "))
		}
		var calls []*genai.FunctionCall
		for _, city := range words[2:] {
			calls = append(calls, fake.Call("get_weather", map[string]any{"city": city}))
		}
		return fake.Calls(calls...)
	case "long":
		n, _ := strconv.Atoi(words[2])
		if turn < n {
			return fake.Calls(fake.Call("get_weather", map[string]any{"city": fmt.Sprintf("%s-%d", id, turn)}))
		}
		return fake.Text(fmt.Sprintf("%s: %d turns", id, turn))
	case "flaky":
		if _, seen := flaky.LoadOrStore(id, true); !seen {
			return fake.RateLimited(50 * time.Millisecond)
		}
		return fake.Text("fine after a retry")
	case "typed":
		// A typed run with the final-answer tool: a tool call, then prose
		// (refused), then the final answer.
		switch turn {
		case 0:
			return fake.Calls(fake.Call("get_weather", map[string]any{"city": words[2]}))
		case 1:
			return fake.Text("It is sunny in " + words[2] + ".")
		}
		return fake.Calls(fake.Call(agent.DefaultOutputToolName, map[string]any{"city": words[2], "sunny": true}))
	case "longanswer":
		return longAnswer(req, id)
	case "pay":
		if answered {
			return fake.Text("payments handled")
		}
		return fake.Calls(fake.Call("pay", map[string]any{"amount": 5}), fake.Call("pay", map[string]any{"amount": 500}),
			fake.Call("get_weather", map[string]any{"city": "Oslo"}))
	}
	return fake.Text("unknown scenario " + kind)
}

// flaky holds the ids of the flaky scenarios that failed once.
var flaky sync.Map

func textOf(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
