package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.uber.org/goleak"
	"google.golang.org/genai"
)

const (
	soakRuns        = 1000
	soakShortRuns   = 200
	soakParallel    = 32
	soakMaxTurns    = 4
	soakMaxCalls    = 5
	soakMaxAttempts = 4
	soakMaxReasks   = 2
	soakToolTimeout = 30 * time.Millisecond
	soakDeadline    = 30 * time.Second
)

var (
	errSoakCancel = errors.New("soak: the run was cancelled during a model call")
	errSoakHangup = errors.New("soak: a tool cancelled the run")
)

// outcome is what the loop must do with a scripted reply.
type outcome int

const (
	outRetry        outcome = iota // transient failure: retried while attempts last
	outStreamedFail                // failure after text reached the consumer: ModelError, not replayed
	outPermanent                   // 400: ModelError at once
	outReask                       // empty reply or malformed call: asked again while re-asks last
	outStop                        // blocked prompt or unsafe answer: StopError
	outCancel                      // the run's context is cancelled while the call waits
	outText                        // the answer
	outCalls                       // function calls
)

var outcomeNames = [...]string{"retry", "streamed-fail", "permanent", "reask", "stop", "cancel", "text", "calls"}

func (o outcome) String() string { return outcomeNames[o] }

// callKind is what a scripted function call does, which decides its answer.
type callKind int

const (
	callOK       callKind = iota // lookup with good arguments: {"result": "sunny in <city>"}
	callBadArgs                  // lookup with arguments of the wrong type or shape
	callFails                    // the tool returns an error
	callPanics                   // the tool panics
	callSlow                     // sleeps past ToolTimeout, honours its context
	callStubborn                 // sleeps past ToolTimeout, ignores its context
	callUnknown                  // a tool the agent does not have
	callHangup                   // the tool cancels the run's context
)

var (
	callKindNames = [...]string{"ok", "bad-args", "fails", "panics", "slow", "stubborn", "unknown", "hangup"}
	callWeights   = [...]int{34, 10, 12, 8, 8, 7, 12, 1}
)

// scriptPart is one part of a scripted model turn: text, or a call.
type scriptPart struct {
	thought bool
	text    string
	call    *genai.FunctionCall // ID set only when the script chose it
	kind    callKind
}

// weighted is a fault kind and its weight in a draw.
type weighted struct {
	kind   string
	weight int
}

var (
	unaryFaults = []weighted{
		{"429", 12}, {"500", 8}, {"503", 10}, {"400", 2}, {"drop", 8}, {"malformed-body", 6},
		{"cut-body", 6}, {"error-status", 3}, {"malformed-call", 8}, {"empty", 6},
		{"no-candidate", 3}, {"blocked", 1}, {"unsafe", 1}, {"cancel", 1},
	}
	streamFaults = []weighted{
		{"429", 12}, {"500", 8}, {"503", 10}, {"400", 2}, {"drop", 8}, {"malformed-body", 4},
		{"cut-before-first-event", 6}, {"cut-after-events", 10}, {"cut-mid-event", 5},
		{"malformed-event", 4}, {"error-event-first", 3}, {"error-event-after", 6},
		{"no-finish-reason", 4}, {"malformed-call", 8}, {"empty", 6}, {"no-candidate", 3},
		{"blocked", 1}, {"unsafe", 1}, {"cancel", 1},
	}
	soakCities = []string{"Paris", "Tokyo", "Oslo", "Lima", "Cairo", "Quito", "Perth"}
	soakWords  = []string{"the", "sky", "is", "clear", "over", "rain", "later", "wind", "from", "north", "warm", "cold", "today"}
)

// exchange is one request of a run and the reply the script gave it.
type exchange struct {
	seq      int
	stream   bool
	contents []*genai.Content
	kind     string // the fault, or "text" or "calls"
	out      outcome
	stopKind error         // outReask, outStop: the StopError kind
	apiCode  int           // the API error code the client sees, if any
	parts    []scriptPart  // outText, outCalls: the model turn
	hangup   bool          // outCalls: a hangup call within the cap
	text     bool          // Stream: text or thought reached the consumer
	answer   bool          // Stream: answer text (EventText) reached the consumer
	stamp    time.Duration // since the soak began, for traces
}

// runs reports whether the call, within the cap, runs its tool's function.
func (p scriptPart) runs() bool {
	return p.call != nil && p.kind != callUnknown && p.kind != callBadArgs
}

func (e *exchange) calls() []scriptPart {
	var out []scriptPart
	for _, p := range e.parts {
		if p.call != nil {
			out = append(out, p)
		}
	}
	return out
}

// soakRun is one run: its plan, its script generator and what happened.
type soakRun struct {
	id        int
	stream    bool
	pkgRun    bool // Run through the package's agent.Run, not Agent.Run
	model     string
	faultRate float64
	breakOn   agent.EventKind // Stream: the consumer breaks at the first event of this kind
	rng       *rand.Rand      // the script; used by the reply function only
	toolRuns  atomic.Int32    // tool functions entered

	mu        sync.Mutex
	cancel    context.CancelCauseFunc
	exchanges []*exchange
	events    []*agent.Event // seen by the observer
	captured  strings.Builder

	// Set by the run's worker.
	input     []*genai.Content
	input0    *genai.Content
	out       runOutcome
	hung      bool
	replayErr error
}

// runOutcome is what a run returned.
type runOutcome struct {
	res          *agent.Result
	err          error
	streamEvents []*agent.Event // Stream: what the consumer received
	sawDone      bool
	afterDone    int   // events received after EventDone
	strayErr     error // an error yielded with an event other than EventDone
	broke        bool
	panicked     string
	elapsed      time.Duration
}

type soakRunKey struct{}

func runOf(ctx context.Context) *soakRun {
	r, _ := ctx.Value(soakRunKey{}).(*soakRun)
	return r
}

// soak is the state shared by the runs.
type soak struct {
	seed     uint64
	key      string
	start    time.Time
	runs     []*soakRun // by id; nil for ids not run
	srv      *fake.Server
	client   *genai.Client
	agents   map[string]*agent.Agent
	configs  map[string]agent.Config // the agents' configs, for agent.Run
	tools    []*toolset.Tool
	logs     *syncBuffer // the agents' slog output
	stdlog   *syncBuffer // the standard logger's output (genai logs stream errors there)
	stubborn atomic.Int32
	wrongKey atomic.Int32
	stray    atomic.Int32 // events or tool calls outside any run
	replays  atomic.Int32

	replyPanics atomic.Int32
	replyPanic  atomic.Value // the first one, with its stack
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestChaosSoak drives 1,000 runs (200 with -short), Run and Stream, on
// gemini-2.5 and gemini-3 model names, 32 at a time, through one fake
// server whose reply function injects every failure the fake can produce,
// and checks each run against the loop's contract (doc.go) from the fake's
// recorded requests and the run's Result, error and events.
//
// Each run is identified by its first user message ("soak run 417: …").
// Its plan (Run or Stream, model, fault rate, an early break of the Stream
// consumer) and the script of its replies come from generators seeded with
// (seed, run id), so a run behaves the same whatever the interleaving: the
// requests of one run are sequential. The seed is printed first; replay a
// failure with SOAK_SEED=<seed>, a single run with SOAK_ONLY=<id>[,<id>…],
// and set the number of runs with SOAK_RUNS. The last line sums up the
// soak: runs, faults injected by kind, retries, results and typed errors
// by kind, violations, rejections, key leaks and leaked goroutines.
//
// The checks, per run: the run returns before its deadline, without
// panicking, with a Result and nil or a typed error, the one the script
// calls for (an oracle replays the script through the contract: retries,
// re-asks, the turn cap, stops, cancellations); each request resends the
// previous history unchanged after a failure or a re-ask, and after a
// delivered model turn with calls it appends exactly that turn and one user
// content answering every call in call order, with its id and name, the
// answer being the one the call's tool and the caps call for; the history
// of the Result ends the same way; usage adds up over turns; the observer
// and the Stream consumer see what the run did; the history, replayed into
// the fake with one more message, is accepted. Globally: the fake rejected
// no request, every request was scripted and carried the API key, which
// appears in no error, log line, event or result; every goroutine returns.
// soakSeed is the fixed seed of the soak; SOAK_SEED=<n> replays or explores
// another one.
const soakSeed = 20261129

func TestChaosSoak(t *testing.T) {
	seed := envUint(t, "SOAK_SEED", soakSeed)
	n := soakRuns
	if testing.Short() {
		n = soakShortRuns
	}
	n = int(envUint(t, "SOAK_RUNS", uint64(n)))
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	if only := os.Getenv("SOAK_ONLY"); only != "" {
		ids = nil
		for _, f := range strings.Split(only, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || id < 0 {
				t.Fatalf("SOAK_ONLY=%q: want run ids separated by commas", only)
			}
			ids = append(ids, id)
			n = max(n, id+1)
		}
	}
	say(t, "chaos soak: seed %d, %d runs (replay: SOAK_SEED=%d go test -race -run TestChaosSoak ./agent/)", seed, len(ids), seed)

	goroutinesBefore := runtime.NumGoroutine()
	ignore := goleak.IgnoreCurrent()
	s := newSoak(t, seed, n, ids)
	prevOut := log.Writer()
	log.SetOutput(s.stdlog)
	defer log.SetOutput(prevOut)
	defer s.srv.Close() // in case of a Fatal; Close may be called twice

	work := make(chan *soakRun)
	var wg sync.WaitGroup
	for range soakParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				s.runOne(r)
			}
		}()
	}
	for _, id := range ids {
		work <- s.runs[id]
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(s.start)

	// Every run has returned. Let stubborn tools finish, close the server,
	// and let the connections' goroutines end.
	waitFor(5*time.Second, func() bool { return s.stubborn.Load() == 0 })
	rejections, unscripted := s.srv.Rejections(), s.srv.Unscripted()
	var rejected []*fake.Request
	if len(rejections) > 0 {
		for _, req := range s.srv.Requests() {
			if req.Rejection != nil {
				rejected = append(rejected, req)
			}
		}
	}
	s.srv.Close()
	goroutinesAfter := runtime.NumGoroutine()
	waitFor(5*time.Second, func() bool {
		goroutinesAfter = runtime.NumGoroutine()
		return goroutinesAfter <= goroutinesBefore
	})
	leaked := max(0, goroutinesAfter-goroutinesBefore)

	// Check every run, then what the soak as a whole produced.
	sum := newSoakSummary()
	var violations []string
	var traced int
	for _, id := range ids {
		r := s.runs[id]
		v := s.check(r, sum)
		for _, msg := range v {
			violations = append(violations, fmt.Sprintf("run %d (%s): %s", r.id, r.describe(), msg))
		}
		if len(v) > 0 && traced < 5 {
			traced++
			t.Logf("trace of run %d (%s):\n%s", r.id, r.describe(), s.trace(r))
		}
	}
	for _, req := range rejected {
		id := -1
		if len(req.Contents) > 0 {
			id, _ = marker(req.Contents[0], "soak run %d:")
		}
		violations = append(violations, fmt.Sprintf("run %d: the fake rejected request #%d (rule %s): %s",
			id, req.Seq, req.Rejection.Rule, req.Rejection.Err.Message))
	}
	if len(rejections) != len(rejected) {
		violations = append(violations, fmt.Sprintf("the fake rejected %d requests", len(rejections)))
	}
	if unscripted > 0 {
		violations = append(violations, fmt.Sprintf("%d requests were not recognized as part of a run (unscripted)", unscripted))
	}
	if k := s.wrongKey.Load(); k > 0 {
		violations = append(violations, fmt.Sprintf("%d requests did not carry the API key: the key check below proves nothing", k))
	}
	if k := s.replyPanics.Load(); k > 0 {
		violations = append(violations, fmt.Sprintf("the soak's reply function panicked %d times (a bug of the test): %v", k, s.replyPanic.Load()))
	}
	if k := s.stray.Load(); k > 0 {
		violations = append(violations, fmt.Sprintf("%d events or tool calls came with a context that is not a run's", k))
	}
	logs := s.logs.String()
	if warns := strings.Count(logs, `"msg":"agent: retrying model call"`); warns != sum.retries {
		violations = append(violations, fmt.Sprintf("the logger has %d retry warnings, the observers saw %d retries", warns, sum.retries))
	}
	keyLeaks := 0
	for name, text := range map[string]string{"the agents' log": logs, "the standard log": s.stdlog.String()} {
		if i := strings.Index(text, s.key); i >= 0 {
			keyLeaks++
			violations = append(violations, fmt.Sprintf("the API key appears in %s: …%s…", name, excerpt(text, i)))
		}
	}
	for _, id := range ids {
		r := s.runs[id]
		if r.hung {
			continue
		}
		text := r.captured.String()
		if i := strings.Index(text, s.key); i >= 0 {
			keyLeaks++
			violations = append(violations, fmt.Sprintf("run %d: the API key appears in its errors, events or result: …%s…", r.id, excerpt(text, i)))
		}
	}
	if leaked > 0 {
		violations = append(violations, fmt.Sprintf("%d goroutines more than before the soak", leaked))
	}
	if err := goleak.Find(ignore, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); err != nil {
		violations = append(violations, fmt.Sprintf("goroutines left behind: %v", err))
	}

	line := fmt.Sprintf("chaos soak: seed=%d runs=%d (Agent.Run %d, agent.Run %d, Stream %d; gemini-3 %d, gemini-2.5 %d) requests=%d replays=%d "+
		"faults={%s} retries=%d reasks=%d calls={%s} late-tool-answers=%d results={%s} "+
		"violations=%d rejections=%d unscripted=%d key-leaks=%d leaked-goroutines=%d elapsed=%v",
		seed, len(ids), sum.runs["run"], sum.runs["pkg-run"], sum.runs["stream"], sum.runs[model3], sum.runs[model], sum.requests, s.replays.Load(),
		counts(sum.faults), sum.retries, sum.reasks, counts(sum.calls), sum.late, counts(sum.results),
		len(violations), len(rejections), unscripted, keyLeaks, leaked, elapsed.Round(time.Millisecond))
	say(t, "%s", line)
	if len(violations) > 0 {
		const show = 40
		for i, v := range violations {
			if i == show {
				t.Errorf("… and %d more violations", len(violations)-show)
				break
			}
			t.Errorf("%s", v)
		}
		t.Errorf("chaos soak seed %d: %d violations; replay with SOAK_SEED=%d (one run: SOAK_ONLY=<id>)", seed, len(violations), seed)
	}
}

// say logs a line for -v and prints it otherwise, so that a plain go test
// run shows it too.
func say(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf(format, args...)
	if !testing.Verbose() {
		fmt.Printf(format+"\n", args...)
	}
}

func envUint(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func waitFor(limit time.Duration, done func() bool) {
	for deadline := time.Now().Add(limit); !done() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

func newSoak(t *testing.T, seed uint64, n int, ids []int) *soak {
	t.Helper()
	s := &soak{
		seed:    seed,
		key:     "soak-secret-" + strconv.FormatUint(rand.Uint64(), 36),
		start:   time.Now(),
		runs:    make([]*soakRun, n),
		logs:    &syncBuffer{},
		stdlog:  &syncBuffer{},
		agents:  map[string]*agent.Agent{},
		configs: map[string]agent.Config{},
	}
	for _, id := range ids {
		plan := rand.New(rand.NewPCG(seed, uint64(id)*2))
		r := &soakRun{id: id, rng: rand.New(rand.NewPCG(seed, uint64(id)*2+1))}
		r.stream = plan.IntN(2) == 0
		r.model = model
		if plan.IntN(2) == 0 {
			r.model = model3
		}
		r.faultRate = []float64{0.1, 0.3, 0.5, 0.7}[plan.IntN(4)]
		r.pkgRun = !r.stream && plan.IntN(3) == 0
		if r.stream && plan.IntN(100) < 5 {
			r.breakOn = agent.EventText
			if plan.IntN(2) == 0 {
				r.breakOn = agent.EventToolResult
			}
		}
		s.runs[id] = r
	}

	s.srv = fake.NewServer()
	s.srv.SetReplyFunc(s.reply)
	cfg := s.srv.ClientConfig()
	cfg.APIKey = s.key
	client, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatalf("genai.NewClient: %v", err)
	}
	s.client = client
	s.tools = s.newTools()
	logger := slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, m := range []string{model, model3} {
		cfg := agent.Config{
			Models: client.Models,
			Model:  m,
			Tools:  toolset.MustNew(s.tools...),
			GenerateConfig: &genai.GenerateContentConfig{
				SystemInstruction: genai.NewContentFromText("You are the chaos soak's model.", ""),
			},
			MaxTurns:        soakMaxTurns,
			MaxCallsPerTurn: soakMaxCalls,
			ToolTimeout:     soakToolTimeout,
			Retry: agent.RetryPolicy{MaxAttempts: soakMaxAttempts, InitialDelay: time.Millisecond,
				MaxDelay: 4 * time.Millisecond, Jitter: 0.5, MaxReasks: soakMaxReasks},
			Observer: agent.ObserverFunc(s.observe),
			Logger:   logger,
		}
		a, err := agent.New(cfg)
		if err != nil {
			t.Fatalf("agent.New: %v", err)
		}
		s.agents[m], s.configs[m] = a, cfg
	}
	return s
}

// newTools returns the soak's tools. Each counts its calls on its run.
func (s *soak) newTools() []*toolset.Tool {
	enter := func(ctx context.Context) *soakRun {
		r := runOf(ctx)
		if r == nil {
			s.stray.Add(1)
			return &soakRun{}
		}
		r.toolRuns.Add(1)
		return r
	}
	type cityIn struct {
		City string `json:"city" jsonschema:"the city"`
	}
	lookup := toolset.MustFunc("lookup", "Current weather for a city", func(ctx context.Context, in cityIn) (string, error) {
		enter(ctx)
		return "sunny in " + in.City, nil
	})
	fails := tool("fails", func(ctx context.Context, _ map[string]any) (any, error) {
		enter(ctx)
		return nil, errors.New("backend unavailable")
	})
	panics := tool("panics", func(ctx context.Context, _ map[string]any) (any, error) {
		enter(ctx)
		panic("boom")
	})
	slow := tool("slow", func(ctx context.Context, _ map[string]any) (any, error) {
		enter(ctx)
		timer := time.NewTimer(4 * soakToolTimeout)
		defer timer.Stop()
		select {
		case <-timer.C:
			return "too late", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	stubborn := tool("stubborn", func(ctx context.Context, _ map[string]any) (any, error) {
		enter(ctx)
		s.stubborn.Add(1)
		defer s.stubborn.Add(-1)
		time.Sleep(3 * soakToolTimeout) // ignores ctx
		return "ignored", nil
	})
	hangup := tool("hangup", func(ctx context.Context, _ map[string]any) (any, error) {
		r := enter(ctx)
		r.mu.Lock()
		cancel := r.cancel
		r.mu.Unlock()
		if cancel != nil {
			cancel(errSoakHangup)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return []*toolset.Tool{lookup, fails, panics, slow, stubborn, hangup}
}

func (s *soak) observe(ctx context.Context, e *agent.Event) {
	r := runOf(ctx)
	if r == nil {
		s.stray.Add(1)
		return
	}
	text := eventText(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.captured.WriteString(text)
}

// eventText is everything an event shows, for the API key check.
func eventText(e *agent.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s turn=%d attempt=%d delay=%v text=%q index=%d finish=%s usage=%+v\n",
		e.Kind, e.Turn, e.Attempt, e.Delay, e.Text, e.Index, e.FinishReason, e.Usage)
	if e.Err != nil {
		fmt.Fprintf(&b, "err=%v %+v\n", e.Err, e.Err)
	}
	if e.Call != nil {
		j, _ := json.Marshal(e.Call)
		fmt.Fprintf(&b, "call=%s\n", j)
	}
	if e.ToolResult != nil {
		fmt.Fprintf(&b, "result=%v iserror=%v err=%v\n", e.ToolResult.Output, e.ToolResult.IsError, e.ToolResult.Err)
	}
	if e.Response != nil {
		j, _ := json.Marshal(e.Response)
		fmt.Fprintf(&b, "response=%s\n", j)
	}
	return b.String()
}

// reply is the fake's reply function: it finds the run of the request and
// draws the next reply of its script.
func (s *soak) reply(req *fake.Request) (reply *fake.Reply) {
	defer func() {
		// A bug of the soak's own: the fake would drop the connection, and
		// the run would see a fault the script never drew.
		if v := recover(); v != nil {
			s.replyPanics.Add(1)
			s.replyPanic.CompareAndSwap(nil, fmt.Sprintf("request #%d: %v\n%s", req.Seq, v, debug.Stack()))
			reply = nil
		}
	}()
	if req.APIKey != s.key {
		s.wrongKey.Add(1)
	}
	if n := len(req.Contents); n > 0 {
		if _, ok := marker(req.Contents[n-1], "soak replay %d"); ok {
			s.replays.Add(1)
			return fake.Text("replayed")
		}
	}
	if len(req.Contents) == 0 {
		return nil
	}
	id, ok := marker(req.Contents[0], "soak run %d:")
	if !ok || id < 0 || id >= len(s.runs) || s.runs[id] == nil {
		return nil // unscripted: counted by the fake
	}
	r := s.runs[id]
	r.mu.Lock()
	defer r.mu.Unlock()
	ex, reply := r.next(req)
	ex.stamp = time.Since(s.start)
	r.exchanges = append(r.exchanges, ex)
	return reply
}

// marker reads the run id from the first text of c.
func marker(c *genai.Content, format string) (int, bool) {
	if c == nil || len(c.Parts) == 0 || c.Parts[0] == nil {
		return 0, false
	}
	var id int
	if _, err := fmt.Sscanf(c.Parts[0].Text, format, &id); err != nil {
		return 0, false
	}
	return id, true
}

// next draws the reply to req. r.mu is held.
func (r *soakRun) next(req *fake.Request) (*exchange, *fake.Reply) {
	rng := r.rng
	ex := &exchange{seq: req.Seq, stream: req.Method == fake.MethodStreamGenerateContent, contents: req.Contents}
	if rng.Float64() >= r.faultRate {
		reply, _, textAt := r.body(ex)
		ex.kind, ex.out = "text", outText
		for _, p := range ex.parts {
			if p.call != nil {
				ex.kind, ex.out = "calls", outCalls
			}
		}
		for i, p := range ex.calls() {
			ex.hangup = ex.hangup || p.kind == callHangup && i < soakMaxCalls
		}
		ex.text = ex.stream && ex.parts[0].call == nil
		ex.answer = ex.stream && textAt > 0
		return ex, reply
	}
	table := unaryFaults
	if ex.stream {
		table = streamFaults
	}
	ex.kind = pick(rng, table)
	ex.out = outRetry
	// A fault that sends part of a body: sent is the number of stream
	// events sent before it, -1 when nothing of the body is sent.
	withBody := func(f func(reply *fake.Reply, events int) (sent int)) *fake.Reply {
		reply, events, textAt := r.body(ex)
		sent := f(reply, events)
		ex.text = ex.stream && sent >= 1 && ex.parts[0].call == nil
		ex.answer = ex.stream && textAt > 0 && sent >= textAt
		if ex.text {
			ex.out = outStreamedFail
		}
		ex.parts = nil // never delivered
		return reply
	}
	switch ex.kind {
	case "429":
		ex.apiCode = 429
		return ex, fake.RateLimited(time.Duration(1+rng.IntN(4)) * time.Millisecond)
	case "500":
		ex.apiCode = 500
		return ex, fake.Error(500, "Internal error encountered.")
	case "503":
		ex.apiCode = 503
		return ex, fake.Error(503, "The model is overloaded. Please try again later.")
	case "400":
		ex.out, ex.apiCode = outPermanent, 400
		return ex, fake.Error(400, "Request contains an invalid argument.")
	case "drop":
		return ex, fake.Drop()
	case "malformed-body":
		return ex, fake.Malformed()
	case "cut-body", "cut-before-first-event":
		return ex, withBody(func(reply *fake.Reply, _ int) int { reply.WithFault(fake.FaultCutStream, 0); return 0 })
	case "cut-after-events":
		return ex, withBody(func(reply *fake.Reply, events int) int {
			k := 1 + rng.IntN(events)
			reply.WithFault(fake.FaultCutStream, k)
			return k
		})
	case "cut-mid-event":
		return ex, withBody(func(reply *fake.Reply, events int) int {
			k := rng.IntN(events)
			reply.WithFault(fake.FaultCutMidEvent, k)
			return k
		})
	case "malformed-event":
		return ex, withBody(func(reply *fake.Reply, events int) int {
			k := 1 + rng.IntN(events)
			reply.WithFault(fake.FaultMalformedBody, k)
			return k
		})
	case "error-status", "error-event-first":
		ex.apiCode = 503
		return ex, withBody(func(reply *fake.Reply, _ int) int {
			reply.WithStreamError(0, 503, "The model is overloaded.")
			return 0
		})
	case "error-event-after":
		ex.apiCode = []int{500, 503}[rng.IntN(2)]
		return ex, withBody(func(reply *fake.Reply, events int) int {
			k := 1 + rng.IntN(events)
			reply.WithStreamError(k, ex.apiCode, "The service is currently unavailable.")
			return k
		})
	case "no-finish-reason":
		// Every part arrives, but no chunk carries a finish reason.
		var raw *fake.Reply
		withBody(func(reply *fake.Reply, _ int) int {
			raw = &fake.Reply{Raw: true}
			for _, p := range reply.Response.Candidates[0].Content.Parts {
				raw.Chunks = append(raw.Chunks, &genai.GenerateContentResponse{Candidates: []*genai.Candidate{
					{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}}}})
			}
			return len(raw.Chunks)
		})
		return ex, raw
	case "malformed-call":
		ex.out, ex.stopKind = outReask, agent.ErrMalformedCall
		return ex, fake.Finish(genai.FinishReasonMalformedFunctionCall)
	case "empty":
		ex.out, ex.stopKind = outReask, agent.ErrEmptyReply
		return ex, fake.Empty()
	case "no-candidate":
		ex.out, ex.stopKind = outReask, agent.ErrEmptyReply
		return ex, &fake.Reply{}
	case "blocked":
		ex.out, ex.stopKind = outStop, agent.ErrPromptBlocked
		return ex, fake.Blocked(genai.BlockedReasonSafety)
	case "unsafe":
		ex.out, ex.stopKind = outStop, agent.ErrUnsafe
		return ex, fake.Finish(genai.FinishReasonSafety)
	case "cancel":
		ex.out = outCancel
		if r.cancel != nil {
			r.cancel(errSoakCancel)
		}
		// The delay ends when the client goes away.
		return ex, fake.Text("never delivered").WithDelay(10 * time.Second)
	}
	panic("soak: unknown fault " + ex.kind)
}

// body draws a model turn, text or calls, into ex.parts and returns its
// reply, the number of stream events it makes, and the number of events up
// to the first that carries answer text (0: none does).
func (r *soakRun) body(ex *exchange) (reply *fake.Reply, events, textAt int) {
	rng := r.rng
	var parts []scriptPart
	if rng.IntN(10) < 3 {
		if rng.IntN(5) == 0 {
			parts = append(parts, scriptPart{thought: true, text: "Thinking: " + words(rng)})
		}
		parts = append(parts, scriptPart{text: fmt.Sprintf("Run %d answers: %s.", r.id, words(rng))})
	} else {
		if rng.IntN(4) == 0 {
			parts = append(parts, scriptPart{thought: rng.IntN(2) == 0, text: "Let me look that up."})
		}
		n := 1 + rng.IntN(soakMaxCalls-1)
		if rng.IntN(100) < 15 {
			n = soakMaxCalls + 1 + rng.IntN(3) // over the cap
		}
		scriptedIDs := rng.IntN(2) == 0
		for i := range n {
			kind := callKind(pickIndex(rng, callWeights[:]))
			call := soakCall(rng, kind)
			if scriptedIDs {
				call.ID = fmt.Sprintf("call-%d-%d-%d", r.id, ex.seq, i)
			}
			parts = append(parts, scriptPart{call: call, kind: kind})
		}
	}
	ex.parts = parts
	gparts := make([]*genai.Part, len(parts))
	for i, p := range parts {
		if p.call != nil {
			gparts[i] = &genai.Part{FunctionCall: p.call}
		} else {
			gparts[i] = &genai.Part{Text: p.text, Thought: p.thought}
		}
	}
	reply = fake.Parts(gparts...)
	if ex.stream {
		reply.TextChunk = 3 + rng.IntN(10)
		if parts[len(parts)-1].call == nil && rng.IntN(5) == 0 {
			reply.TrailingSignature = true
		}
	}
	if !ex.stream {
		return reply, 1, 0
	}
	// The fake streams one event per call and per piece of text, and one
	// more for a trailing signature.
	for _, p := range parts {
		if p.call != nil {
			events++
			continue
		}
		events += (len(p.text) + reply.TextChunk - 1) / reply.TextChunk
		if !p.thought && textAt == 0 {
			textAt = events - (len(p.text)+reply.TextChunk-1)/reply.TextChunk + 1
		}
	}
	if reply.TrailingSignature {
		events++
	}
	return reply, events, textAt
}

func soakCall(rng *rand.Rand, kind callKind) *genai.FunctionCall {
	city := soakCities[rng.IntN(len(soakCities))]
	switch kind {
	case callOK:
		return fake.Call("lookup", map[string]any{"city": city})
	case callBadArgs:
		return fake.Call("lookup", []map[string]any{
			{"city": 42}, {}, {"city": city, "units": "metric"}, {"city": []any{city}}, {"town": city},
		}[rng.IntN(5)])
	case callUnknown:
		return fake.Call([]string{"no_such_tool", "rm_rf", "lookup_v2"}[rng.IntN(3)], map[string]any{"city": city})
	}
	if rng.IntN(2) == 0 {
		return fake.Call(callToolName(kind), nil)
	}
	return fake.Call(callToolName(kind), map[string]any{"note": words(rng)})
}

func callToolName(kind callKind) string {
	switch kind {
	case callOK, callBadArgs:
		return "lookup"
	case callFails:
		return "fails"
	case callPanics:
		return "panics"
	case callSlow:
		return "slow"
	case callStubborn:
		return "stubborn"
	case callHangup:
		return "hangup"
	}
	return ""
}

func words(rng *rand.Rand) string {
	n := 3 + rng.IntN(10)
	w := make([]string, n)
	for i := range w {
		w[i] = soakWords[rng.IntN(len(soakWords))]
	}
	return strings.Join(w, " ")
}

func pick(rng *rand.Rand, table []weighted) string {
	w := make([]int, len(table))
	for i, e := range table {
		w[i] = e.weight
	}
	return table[pickIndex(rng, w)].kind
}

func pickIndex(rng *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := rng.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// runOne runs r under its deadline, then replays its history.
func (s *soak) runOne(r *soakRun) {
	ctx, stop := context.WithTimeout(context.WithValue(context.Background(), soakRunKey{}, r), soakDeadline)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	r.input = user(fmt.Sprintf("soak run %d: what is the weather like?", r.id))
	r.input0 = r.input[0]
	a := s.agents[r.model]

	done := make(chan runOutcome, 1)
	go func() {
		var o runOutcome
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				o.panicked = fmt.Sprintf("%v\n%s", v, debug.Stack())
			}
			o.elapsed = time.Since(start)
			done <- o
		}()
		switch {
		case r.pkgRun:
			o.res, o.err = agent.Run(ctx, s.configs[r.model], r.input)
			return
		case !r.stream:
			o.res, o.err = a.Run(ctx, r.input)
			return
		}
		for ev, err := range a.Stream(ctx, r.input) {
			o.streamEvents = append(o.streamEvents, ev)
			switch {
			case o.sawDone:
				o.afterDone++
			case ev != nil && ev.Kind == agent.EventDone:
				o.sawDone, o.res, o.err = true, ev.Result, err
			case err != nil:
				o.strayErr = err
			}
			if r.breakOn != 0 && ev != nil && ev.Kind == r.breakOn {
				o.broke = true
				break
			}
		}
	}()
	watchdog := time.NewTimer(soakDeadline + 10*time.Second)
	defer watchdog.Stop()
	select {
	case r.out = <-done:
	case <-watchdog.C:
		r.hung = true
		return
	}
	if r.out.res != nil {
		j, _ := json.Marshal(r.out.res)
		r.mu.Lock()
		fmt.Fprintf(&r.captured, "error=%v %+v\nresult=%s\n", r.out.err, r.out.err, j)
		r.mu.Unlock()
	}
	if r.out.broke || r.out.res == nil || r.out.panicked != "" {
		return
	}
	r.replayErr = s.replay(r)
	if r.replayErr != nil {
		r.mu.Lock()
		fmt.Fprintf(&r.captured, "replay error=%v %+v\n", r.replayErr, r.replayErr)
		r.mu.Unlock()
	}
}

// replay sends the run's history, through a JSON round trip, with one more
// user message, and reports whether the fake accepted it.
func (s *soak) replay(r *soakRun) error {
	j, err := json.Marshal(r.out.res.History)
	if err != nil {
		return fmt.Errorf("history does not encode: %w", err)
	}
	var history []*genai.Content
	if err := json.Unmarshal(j, &history); err != nil {
		return fmt.Errorf("history does not decode: %w", err)
	}
	history = append(history, genai.NewContentFromText(fmt.Sprintf("soak replay %d", r.id), genai.RoleUser))
	decls, err := geminiadapter.Tools(s.tools...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), soakDeadline)
	defer cancel()
	resp, err := s.client.Models.GenerateContent(ctx, r.model, history, &genai.GenerateContentConfig{Tools: decls})
	if err != nil {
		return err
	}
	if got := resp.Text(); got != "replayed" {
		return fmt.Errorf("the replay was answered %q", got)
	}
	return nil
}

func (r *soakRun) describe() string {
	mode := "Agent.Run"
	switch {
	case r.pkgRun:
		mode = "agent.Run"
	case r.stream:
		mode = "Stream"
	}
	if r.breakOn != 0 {
		mode += ", breaking at " + r.breakOn.String()
	}
	return fmt.Sprintf("%s, %s, fault rate %.1f", mode, r.model, r.faultRate)
}

// trace describes what a run was sent and what it returned, for failures.
func (s *soak) trace(r *soakRun) string {
	var b strings.Builder
	for _, ex := range r.exchanges {
		method := "unary"
		if ex.stream {
			method = "stream"
		}
		fmt.Fprintf(&b, "  #%d at %v: %s, %d contents -> %s (%s)", ex.seq, ex.stamp.Round(time.Millisecond), method, len(ex.contents), ex.kind, ex.out)
		for _, p := range ex.calls() {
			fmt.Fprintf(&b, " %s[%s]", p.call.Name, callKindNames[p.kind])
		}
		b.WriteString("\n")
	}
	if r.hung {
		b.WriteString("  the run did not return\n")
		return b.String()
	}
	if r.out.broke {
		fmt.Fprintf(&b, "  the consumer stopped the stream at %s; it returned after %v\n", r.breakOn, r.out.elapsed.Round(time.Millisecond))
		return b.String()
	}
	fmt.Fprintf(&b, "  returned after %v: err = %v\n", r.out.elapsed.Round(time.Millisecond), r.out.err)
	if r.out.res != nil {
		fmt.Fprintf(&b, "  %d turns, %d history contents, text %q\n", len(r.out.res.Turns), len(r.out.res.History), r.out.res.Text)
	}
	return b.String()
}

// soakSummary counts what the soak did.
type soakSummary struct {
	runs, faults, calls, results map[string]int
	requests, retries, reasks    int
	late                         int
}

func newSoakSummary() *soakSummary {
	return &soakSummary{runs: map[string]int{}, faults: map[string]int{}, calls: map[string]int{}, results: map[string]int{}}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return strings.Join(out, " ")
}

// How a run must end, by the oracle.
type soakEnd int

const (
	endNone soakEnd = iota
	endSuccess
	endMaxTurns
	endModelError
	endStop
	endCancel
	endHangup
	endBreak
)

var endNames = [...]string{"none", "success", "ErrMaxTurns", "*ModelError", "*StopError", "cancellation", "cancellation by a tool", "consumer break"}

// errorClass names the kind of a run's error, for the summary.
func errorClass(err error) string {
	var (
		se *agent.StopError
		me *agent.ModelError
	)
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline(hang)"
	case errors.Is(err, agent.ErrMaxTurns):
		return "max-turns"
	case errors.As(err, &se):
		return "stop:" + strings.TrimPrefix(se.Kind.Error(), "agent: ")
	case errors.As(err, &me):
		return "model-error"
	case errors.Is(err, errSoakHangup):
		return "cancelled-by-tool"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return fmt.Sprintf("untyped(%T)", err)
}

// nextRequest is what an exchange asks of the run's next request.
type nextRequest int

const (
	nextNone    nextRequest = iota // there is none: the run ends
	nextSame                       // the same history again: a retry or a re-ask
	nextAnswers                    // the history, the delivered model turn and the answers to its calls
)

// verdict is what the oracle makes of a run's exchanges.
type verdict struct {
	end             soakEnd
	last            *exchange // the exchange that ends the run
	turn, attempt   int       // the turn the run ends in, and the model calls made for it
	wholePerTurn    []int     // per turn Result.Turns must hold: the whole responses received
	attemptsPerTurn []int     // and the model calls made
	finalMissing    bool      // the last turn got no whole response, so it is not in Result.Turns
	retries         int       // the EventRetry events the run must emit
	toolRuns        int       // the tool runs the delivered calls ask for
	notRun          int       // calls whose timeout ran out before they began (they do not run)
	toolsExact      bool      // toolRuns is exact, not an upper bound
}

// check checks one run against the contract and counts it in sum. It
// returns the violations.
func (s *soak) check(r *soakRun, sum *soakSummary) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var v []string
	bad := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	mode := "run"
	switch {
	case r.pkgRun:
		mode = "pkg-run"
	case r.stream:
		mode = "stream"
	}
	sum.runs[mode]++
	sum.runs[r.model]++
	if r.hung {
		sum.results["hung"]++
		bad("hang: the run had not returned %v after its %v deadline", 10*time.Second, soakDeadline)
		return v
	}
	if r.out.panicked != "" {
		sum.results["panic"]++
		bad("panic: %s", r.out.panicked)
		return v
	}
	exs := r.exchanges
	sum.requests += len(exs)
	for _, ex := range exs {
		if ex.out == outReask {
			sum.reasks++
		}
		if ex.out != outText && ex.out != outCalls {
			sum.faults[ex.kind]++
		}
	}
	sum.retries += countKind(r.events, agent.EventRetry)
	if len(exs) == 0 {
		bad("no request of the run reached the fake")
		return v
	}
	for i := 1; i < len(exs); i++ {
		if exs[i].seq <= exs[i-1].seq {
			bad("requests #%d and #%d overlapped: a run's requests must be sequential", exs[i-1].seq, exs[i].seq)
		}
	}
	vd := s.walk(r, bad, sum)
	if vd == nil {
		return v
	}

	// The observer saw every model call, every retry and the end.
	if got := countKind(r.events, agent.EventModelRequest); got != len(exs) {
		bad("the observer saw %d model requests, the fake %d", got, len(exs))
	}
	if got := countKind(r.events, agent.EventRetry); got != vd.retries {
		bad("the observer saw %d retries; the script called for %d", got, vd.retries)
	}
	if n := len(r.events); n == 0 || r.events[n-1].Kind != agent.EventDone {
		last := "none"
		if n > 0 {
			last = r.events[n-1].Kind.String()
		}
		// event.go: EventDone is "Always the last event", and an Observer
		// "sees every step of every run".
		bad("the observer never saw EventDone (its last event is %s)", last)
	}

	if vd.end == endBreak {
		sum.results["consumer-break"]++
		s.checkBreak(r, vd, bad)
	} else {
		s.checkResult(r, vd, bad, sum)
	}

	// Tools ran for the calls within the cap, and only for them.
	if got := int(r.toolRuns.Load()); got > vd.toolRuns || vd.toolsExact && got != vd.toolRuns-vd.notRun {
		bad("tools ran %d times; the delivered calls within the cap ask for %d (%d timed out before they began)",
			got, vd.toolRuns, vd.notRun)
	}
	return v
}

// walk is the oracle: it follows the run's exchanges through the contract
// (retries, re-asks, stops, the turn cap, cancellations, the consumer's
// break), checks each request against the one before it, and returns how
// the run must end; nil when the requests did not end where the script
// says.
func (s *soak) walk(r *soakRun, bad func(string, ...any), sum *soakSummary) *verdict {
	vd := &verdict{toolsExact: true}
	var reasks, whole int // of the current turn
	next := nextNone
	exs := r.exchanges
	for i, ex := range exs {
		if vd.end != endNone {
			bad("request #%d (%s) came after the run should have ended (%s) at request #%d (%s)",
				ex.seq, ex.kind, endNames[vd.end], vd.last.seq, vd.last.kind)
			break
		}
		if i > 0 {
			prev := exs[i-1]
			switch next {
			case nextSame:
				if !sameJSON(prev.contents, ex.contents) {
					bad("request #%d, after %s (%s) of #%d, does not resend the same history: %s",
						ex.seq, prev.kind, prev.out, prev.seq, diffContents(prev.contents, ex.contents))
				}
			case nextAnswers:
				vd.notRun += s.checkAnswered(bad, r, prev, ex.contents, fmt.Sprintf("request #%d", ex.seq), sum)
			}
		}
		next = nextNone
		vd.attempt++
		end := endNone
		switch {
		case r.breakOn == agent.EventText && ex.answer:
			end = endBreak
		case ex.out == outRetry && vd.attempt < soakMaxAttempts:
			vd.retries++
			next = nextSame
		case ex.out == outRetry, ex.out == outStreamedFail, ex.out == outPermanent:
			end = endModelError
		case ex.out == outReask && reasks < soakMaxReasks:
			whole++
			reasks++
			vd.retries++
			next = nextSame
		case ex.out == outReask, ex.out == outStop:
			whole++
			end = endStop
		case ex.out == outCancel:
			end = endCancel
		case ex.out == outText:
			whole++
			end = endSuccess
		case ex.out == outCalls:
			whole++
			for j, p := range ex.calls() {
				if j < soakMaxCalls && p.runs() {
					vd.toolRuns++
				}
			}
			switch {
			case r.breakOn == agent.EventToolResult:
				end, vd.toolsExact = endBreak, false // the break cancels the turn's other calls
			case ex.hangup:
				end, vd.toolsExact = endHangup, false // so does the hangup
			default:
				vd.wholePerTurn = append(vd.wholePerTurn, whole)
				vd.attemptsPerTurn = append(vd.attemptsPerTurn, vd.attempt)
				vd.turn++
				vd.attempt, reasks, whole = 0, 0, 0
				if vd.turn == soakMaxTurns {
					end = endMaxTurns
				} else {
					next = nextAnswers
				}
			}
		}
		if end != endNone {
			vd.end, vd.last = end, ex
		}
	}
	if vd.end == endNone {
		last := exs[len(exs)-1]
		bad("the run made no request after #%d (%s, %s), where it should have %s", last.seq, last.kind, last.out,
			map[nextRequest]string{nextSame: "asked again", nextAnswers: "sent the answers"}[next])
		return nil
	}
	if vd.end != endMaxTurns {
		if whole > 0 {
			vd.wholePerTurn = append(vd.wholePerTurn, whole)
			vd.attemptsPerTurn = append(vd.attemptsPerTurn, vd.attempt)
		} else {
			vd.finalMissing = true
		}
	}
	return vd
}

// checkBreak checks a Stream whose consumer stopped: it stopped where the
// script says, and saw no more.
func (s *soak) checkBreak(r *soakRun, vd *verdict, bad func(string, ...any)) {
	o := &r.out
	if !o.broke {
		bad("the consumer should have stopped the stream at %s in request #%d", r.breakOn, vd.last.seq)
	}
	if o.sawDone {
		bad("the consumer stopped the stream, yet it received EventDone")
	}
	for i, e := range o.streamEvents {
		if i >= len(r.events) || r.events[i] != e {
			bad("the observer's events differ from the stream's at event %d", i)
			break
		}
	}
}

// checkResult checks what a run returned against the oracle's verdict.
func (s *soak) checkResult(r *soakRun, vd *verdict, bad func(string, ...any), sum *soakSummary) {
	o := &r.out
	if o.broke {
		bad("the consumer stopped the stream at %s, which the script never produced", r.breakOn)
		return
	}
	err, res, last := o.err, o.res, vd.last
	sum.results[errorClass(err)]++
	if r.stream {
		if !o.sawDone {
			bad("the stream did not end with EventDone")
			return
		}
		if o.afterDone > 0 || o.strayErr != nil {
			bad("the stream yielded %d events after EventDone, and error %v with another event", o.afterDone, o.strayErr)
		}
	}
	if res == nil {
		bad("the Result is nil (error %v)", err)
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		bad("hang: the run hit its %v deadline: %v", soakDeadline, err)
	}

	// The error is the one the script calls for, and the history ends
	// where the script says.
	var (
		me     *agent.ModelError
		se     *agent.StopError
		apiErr genai.APIError
	)
	n := len(last.contents)
	switch vd.end {
	case endSuccess:
		if err != nil {
			bad("the model answered in text in request #%d, yet the run failed: %v", last.seq, err)
			break
		}
		var want, thought string
		for _, p := range last.parts {
			if p.thought {
				thought += p.text
			} else {
				want += p.text
			}
		}
		if res.Text != want || res.FinishReason != genai.FinishReasonStop {
			bad("Result.Text = %q, FinishReason %q; want %q, STOP", res.Text, res.FinishReason, want)
		}
		if len(res.History) != n+1 || !sameJSON(last.contents, res.History[:n]) {
			bad("Result.History (%d contents) is not request #%d's history (%d) and the answer", len(res.History), last.seq, n)
		} else {
			s.checkModelTurn(bad, r, last, res.History[n], "the last content of Result.History")
		}
		if r.stream {
			var text, thoughts string
			for _, e := range o.streamEvents {
				switch {
				case e.Turn == len(res.Turns)-1 && e.Kind == agent.EventText:
					text += e.Text
				case e.Turn == len(res.Turns)-1 && e.Kind == agent.EventThought:
					thoughts += e.Text
				}
			}
			if text != want || thoughts != thought {
				bad("the last turn streamed text %q and thoughts %q; want %q and %q", text, thoughts, want, thought)
			}
		}
	case endMaxTurns, endHangup:
		if vd.end == endMaxTurns && !errors.Is(err, agent.ErrMaxTurns) {
			bad("%d turns of calls, yet the error is %v; want ErrMaxTurns", soakMaxTurns, err)
		}
		if vd.end == endHangup && !(errors.Is(err, context.Canceled) && errors.Is(err, errSoakHangup)) {
			bad("a tool cancelled the run in request #%d's turn, yet the error is %v; want one wrapping context.Canceled and the cause",
				last.seq, err)
		}
		// The last turn's calls were answered, so the history can go on.
		vd.notRun += s.checkAnswered(bad, r, last, res.History, "Result.History", sum)
	case endModelError:
		if !errors.As(err, &me) {
			bad("request #%d (%s, attempt %d) should end the run with a *ModelError; got %v", last.seq, last.kind, vd.attempt, err)
			break
		}
		if me.Turn != vd.turn || me.Attempts != vd.attempt {
			bad("ModelError turn %d after %d attempts; want turn %d after %d", me.Turn, me.Attempts, vd.turn, vd.attempt)
		}
		if last.apiCode != 0 && (!errors.As(err, &apiErr) || apiErr.Code != last.apiCode) {
			bad("the ModelError %v does not give errors.As the genai.APIError %d", err, last.apiCode)
		}
	case endStop:
		if !errors.As(err, &se) || !errors.Is(err, last.stopKind) {
			bad("request #%d (%s) should end the run with a *StopError (%v); got %v", last.seq, last.kind, last.stopKind, err)
			break
		}
		if se.Turn != vd.turn || se.Attempts != vd.attempt {
			bad("StopError turn %d after %d attempts; want turn %d after %d", se.Turn, se.Attempts, vd.turn, vd.attempt)
		}
	case endCancel:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errSoakCancel) {
			bad("the run was cancelled during request #%d; the error %v does not wrap context.Canceled and the cause", last.seq, err)
		}
	}
	if vd.end != endSuccess && vd.end != endMaxTurns && vd.end != endHangup && !sameJSON(last.contents, res.History) {
		bad("Result.History is not the history of the last request #%d: %s", last.seq, diffContents(last.contents, res.History))
	}

	// The turns, the usage, who owns what.
	if len(res.History) == 0 || res.History[0] != r.input0 || len(r.input) != 1 || r.input[0] != r.input0 {
		bad("Result.History does not start with the input's content, or the input was modified")
	}
	if len(res.Turns) != len(vd.wholePerTurn) {
		bad("Result has %d turns; the script made %d", len(res.Turns), len(vd.wholePerTurn))
	}
	var total agent.Usage
	attempts := 0
	for i, tn := range res.Turns {
		total = addUsage(total, tn.Usage)
		attempts += tn.Attempts
		if tn.Response == nil || len(tn.Calls) != len(tn.Results) {
			bad("turn %d: response %v, %d calls, %d results", i, tn.Response != nil, len(tn.Calls), len(tn.Results))
			continue
		}
		for j := range tn.Calls {
			if tn.Results[j].Call != tn.Calls[j] {
				bad("turn %d: result %d is not for call %d", i, j, j)
			}
		}
		if i >= len(vd.wholePerTurn) {
			continue
		}
		if tn.Attempts != vd.attemptsPerTurn[i] {
			bad("turn %d made %d attempts; the script made %d", i, tn.Attempts, vd.attemptsPerTurn[i])
		}
		// The attempts of a turn send the same history, so each of its
		// responses counts the same prompt.
		if um := tn.Response.UsageMetadata; um == nil || tn.Usage.PromptTokens != vd.wholePerTurn[i]*int(um.PromptTokenCount) ||
			tn.Usage.TotalTokens < int(um.TotalTokenCount) {
			bad("turn %d: usage %+v does not add up the %d responses of the turn (last: %+v)", i, tn.Usage, vd.wholePerTurn[i], um)
		}
	}
	if total != res.Usage {
		bad("Result.Usage %+v is not the sum of its turns' %+v", res.Usage, total)
	}
	if len(res.Turns) > 0 && res.Usage.TotalTokens == 0 {
		bad("Result.Usage is zero after %d turns", len(res.Turns))
	}
	if vd.finalMissing {
		attempts += vd.attempt // the error's attempts
	}
	if attempts != len(r.exchanges) {
		bad("the turns account for %d model calls; the fake saw %d requests", attempts, len(r.exchanges))
	}

	// The observer and the stream saw the same run.
	if nev := len(r.events); nev > 0 && r.events[nev-1].Kind == agent.EventDone {
		if done := r.events[nev-1]; done.Result != res || done.Err != err {
			bad("the observer's EventDone does not carry the run's Result and error")
		}
	}
	if r.stream && !slices.Equal(o.streamEvents, r.events) {
		bad("the stream yielded %d events, the observer saw %d different ones", len(o.streamEvents), len(r.events))
	}

	if r.replayErr != nil {
		bad("the history, replayed with one more message, was refused: %v", r.replayErr)
	}
}

// checkAnswered checks that contents is prev's history followed by prev's
// model turn with calls and one user content answering them.
func (s *soak) checkAnswered(bad func(string, ...any), r *soakRun, prev *exchange, contents []*genai.Content, where string, sum *soakSummary) (notRun int) {
	n := len(prev.contents)
	if len(contents) != n+2 {
		bad("%s has %d contents; want %d: request #%d's history, its model turn with calls and the answers",
			where, len(contents), n+2, prev.seq)
		return 0
	}
	if !sameJSON(prev.contents, contents[:n]) {
		bad("%s does not extend the history of request #%d: %s", where, prev.seq, diffContents(prev.contents, contents[:n]))
	}
	calls := s.checkModelTurn(bad, r, prev, contents[n], where)
	answers := contents[n+1]
	if answers.Role != genai.RoleUser || len(answers.Parts) != len(calls) {
		bad("%s: the answers to request #%d's %d calls are a %q content of %d parts", where, prev.seq, len(calls), answers.Role, len(answers.Parts))
		return 0
	}
	scripted := prev.calls()
	for i, p := range answers.Parts {
		fr := p.FunctionResponse
		if fr == nil || p.Text != "" || p.FunctionCall != nil || len(p.ThoughtSignature) > 0 {
			bad("%s: answer part %d is not a lone functionResponse", where, i)
			continue
		}
		if fr.Name != calls[i].Name || fr.ID != calls[i].ID {
			bad("%s: answer %d is for %s (id %q), call %d is %s (id %q): an answer lost, duplicated or out of order",
				where, i, fr.Name, fr.ID, i, calls[i].Name, calls[i].ID)
			continue
		}
		_, isResult := fr.Response["result"]
		msg, isError := fr.Response["error"]
		if len(fr.Response) != 1 || isResult == isError {
			bad("%s: answer %d is %v, not {\"result\": …} or {\"error\": …}", where, i, fr.Response)
			continue
		}
		if sum != nil && i < len(scripted) {
			sum.calls[callKindNames[scripted[i].kind]]++
			if i >= soakMaxCalls {
				sum.calls["over-cap"]++
			}
		}
		if prev.hangup || i >= len(scripted) {
			continue // the run was cancelled under the calls: any answer will do
		}
		ok, late := expectedAnswer(scripted[i], i, len(scripted), fr.Response)
		if !ok {
			errText, _ := msg.(string)
			bad("%s: call %d (%s, %s) was answered %v %s", where, i, scripted[i].call.Name, callKindNames[scripted[i].kind], fr.Response, errText)
		}
		if late && sum != nil {
			sum.late++
		}
		if strings.Contains(fmt.Sprint(msg), " was not run: ") && scripted[i].runs() {
			notRun++
		}
	}
	return notRun
}

// expectedAnswer reports whether resp is the answer to call i of n, and
// whether it is the timing-dependent alternative: a tool that should have
// answered at once timed out, or one that should have timed out answered
// (the machine was slower than ToolTimeout).
func expectedAnswer(p scriptPart, i, n int, resp map[string]any) (ok, late bool) {
	errMsg, _ := resp["error"].(string)
	result := resp["result"]
	timeout := fmt.Sprintf("tool %s was stopped: tool call timed out after %v", p.call.Name, soakToolTimeout)
	notRun := fmt.Sprintf("tool %s was not run: tool call timed out after %v", p.call.Name, soakToolTimeout)
	switch {
	case i >= soakMaxCalls:
		return strings.HasPrefix(errMsg, fmt.Sprintf("not run: %d function calls came in one turn and at most %d are run per turn", n, soakMaxCalls)), false
	case p.kind == callUnknown:
		return strings.HasPrefix(errMsg, fmt.Sprintf("unknown tool %q; available tools: ", p.call.Name)) && strings.Contains(errMsg, "lookup"), false
	case errMsg == notRun: // the timeout ran out before Execute began
		return true, true
	case p.kind == callBadArgs:
		return strings.HasPrefix(errMsg, "invalid arguments for lookup"), false
	case errMsg == timeout:
		return true, p.kind != callSlow && p.kind != callStubborn
	case p.kind == callOK:
		return result == "sunny in "+p.call.Args["city"].(string), false
	case p.kind == callFails:
		return errMsg == "backend unavailable", false
	case p.kind == callPanics:
		return errMsg == "tool panics failed: it panicked: boom", false
	case p.kind == callSlow:
		return result == "too late", true
	case p.kind == callStubborn:
		return result == "ignored", true
	}
	return false, false
}

// checkModelTurn checks that c is the model turn the script delivered in
// prev, and returns its calls.
func (s *soak) checkModelTurn(bad func(string, ...any), r *soakRun, prev *exchange, c *genai.Content, where string) []*genai.FunctionCall {
	var calls []*genai.FunctionCall
	if c.Role != genai.RoleModel || len(c.Parts) != len(prev.parts) {
		j, _ := json.Marshal(c)
		bad("%s: the model turn of request #%d is %s; want %d parts", where, prev.seq, j, len(prev.parts))
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall)
			}
		}
		return calls
	}
	first := true
	for i, p := range c.Parts {
		sp := prev.parts[i]
		if sp.call == nil {
			if p.FunctionCall != nil || p.Text != sp.text || p.Thought != sp.thought {
				bad("%s: part %d of the model turn of request #%d is %+v; want text %q (thought %v)", where, i, prev.seq, p, sp.text, sp.thought)
			}
			continue
		}
		fc := p.FunctionCall
		if fc == nil {
			bad("%s: part %d of the model turn of request #%d is not the call %s", where, i, prev.seq, sp.call.Name)
			continue
		}
		calls = append(calls, fc)
		wantID := sp.call.ID
		switch {
		case fc.Name != sp.call.Name || !sameArgs(fc.Args, sp.call.Args):
			bad("%s: call %d of request #%d is %s(%v); want %s(%v)", where, i, prev.seq, fc.Name, fc.Args, sp.call.Name, sp.call.Args)
		case wantID != "" && fc.ID != wantID,
			wantID == "" && r.model == model3 && fc.ID == "",
			wantID == "" && r.model != model3 && fc.ID != "":
			bad("%s: call %d of request #%d has id %q; the model sent %q (empty: the fake's on gemini-3, none on 2.5)", where, i, prev.seq, fc.ID, wantID)
		}
		if first && r.model == model3 && len(p.ThoughtSignature) == 0 {
			bad("%s: the first call of request #%d lost its thought signature", where, prev.seq)
		}
		first = false
	}
	return calls
}

func sameArgs(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func sameJSON(a, b []*genai.Content) bool {
	if len(a) != len(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// diffContents says where two histories part.
func diffContents(a, b []*genai.Content) string {
	for i := range min(len(a), len(b)) {
		ja, _ := json.Marshal(a[i])
		jb, _ := json.Marshal(b[i])
		if !bytes.Equal(ja, jb) {
			return fmt.Sprintf("content %d is %s, was %s", i, jb, ja)
		}
	}
	return fmt.Sprintf("%d contents, was %d", len(b), len(a))
}

func countKind(events []*agent.Event, kind agent.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func addUsage(u, v agent.Usage) agent.Usage {
	return agent.Usage{
		PromptTokens:        u.PromptTokens + v.PromptTokens,
		CandidatesTokens:    u.CandidatesTokens + v.CandidatesTokens,
		ThoughtsTokens:      u.ThoughtsTokens + v.ThoughtsTokens,
		CachedTokens:        u.CachedTokens + v.CachedTokens,
		ToolUsePromptTokens: u.ToolUsePromptTokens + v.ToolUsePromptTokens,
		TotalTokens:         u.TotalTokens + v.TotalTokens,
	}
}

func excerpt(text string, i int) string {
	return text[max(0, i-80):min(len(text), i+80)]
}
