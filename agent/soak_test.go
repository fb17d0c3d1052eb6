package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/citest"
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
	soakMaxOutput   = 512 // Config.MaxOutputBytes of the soak's agents

	// The bounds below only turn a hang into a violation: no run of a
	// correct loop waits for them, however slow the machine. They are
	// generous because it can be very slow: with the soak's 32 runs at
	// once in a -race binary on a loaded two-core machine, a run's
	// requests came 5 s apart, and runs took over 30 s.
	soakLongTimeout = time.Minute      // ToolTimeout of the runs with a small MaxParallel
	soakGateWait    = 20 * time.Second // how long a call of such a run waits for an earlier call's result to be reported
	soakDeadline    = 3 * time.Minute  // each run's
	soakWindDown    = 30 * time.Second // how long the stubborn tools and the connections' goroutines may take to end
)

var (
	errSoakCancel = errors.New("soak: the run was cancelled during a model call")
	errSoakHangup = errors.New("soak: a tool cancelled the run")
)

// What the interceptor and the Stream consumer answer in place of a tool,
// and what the vault tool returns when it runs. The large ones are over
// soakMaxOutput once encoded, although their raw bytes are not: JSON
// escapes each of <, > and & into six bytes.
var (
	soakBigAnswer      = strings.Repeat("<", 150)
	soakVaultOutput    = strings.Repeat(`<&>"`, 60)
	soakDenial         = "the soak's consumer says no"
	soakVaultDenial    = "the vault is sealed"
	soakConsumerAnswer = "cached by the soak's consumer"
	soakVaultAnswer    = map[string]any{"sealed": true, "by": "interceptor"}
	soakInstruction    = "You are the chaos soak's model."
	soakAllowedNames   = []string{"lookup", "forecast"}
	// soakApprovalTools are the tools whose calls need approval in the
	// runs with Config.NeedsApproval.
	soakApprovalTools = map[string]bool{"lookup": true, "forecast": true, "vault": true, "panics": true}
)

// outcome is what the loop must do with a scripted reply.
type outcome int

const (
	outRetry        outcome = iota // transient failure: retried while attempts last
	outStreamedFail                // failure after text reached the consumer: ModelError, not replayed
	outPermanent                   // 400: ModelError at once
	outReask                       // empty reply or malformed call: asked again while re-asks last
	outStop                        // blocked prompt, unsafe answer, MAX_TOKENS without parts: StopError
	outCancel                      // the run's context is cancelled while the call waits
	outText                        // the answer (cut by MAX_TOKENS when exchange.maxTokens)
	outCalls                       // function calls
)

var outcomeNames = [...]string{"retry", "streamed-fail", "permanent", "reask", "stop", "cancel", "text", "calls"}

func (o outcome) String() string { return outcomeNames[o] }

// callKind is what a scripted function call does, which decides its answer.
type callKind int

const (
	callOK       callKind = iota // lookup with good arguments: {"result": "sunny in <city>"}
	callBadArgs                  // lookup or forecast with arguments of the wrong type or shape
	callFails                    // the tool returns an error
	callPanics                   // the tool panics
	callSlow                     // sleeps past ToolTimeout, honours its context
	callStubborn                 // sleeps past ToolTimeout, ignores its context
	callUnknown                  // a tool the agent does not have
	callHangup                   // the tool cancels the run's context
	callDefaults                 // forecast, whose schema fills in nested defaults
	callVault                    // vault: the interceptor answers it by its mode, or it returns a large output
	callClock                    // clock, a tool only the runs given it through Agent.With have
)

var (
	callKindNames = [...]string{"ok", "bad-args", "fails", "panics", "slow", "stubborn", "unknown", "hangup", "defaults", "vault", "clock"}
	callWeights   = [...]int{30, 10, 10, 7, 7, 6, 10, 1, 12, 10, 5}
	vaultModes    = []string{"nan", "chan", "big", "deny", "answer", "run"}
)

// decision is what the Stream consumer decides about a call that needs
// approval.
type decision int

const (
	decApprove   decision = iota // Approve: the tool runs, the interceptor is not asked
	decDeny                      // Deny(soakDenial)
	decAnswer                    // Answer(soakConsumerAnswer)
	decAnswerBig                 // Answer(soakBigAnswer): cut to MaxOutputBytes
	decAnswerInf                 // Answer(+Inf): refused, as it does not encode
	decUndecided                 // nothing: the call is denied; a decision made later has no effect
)

var (
	decisionNames   = [...]string{"approve", "deny", "answer", "answer-big", "answer-inf", "undecided"}
	decisionWeights = [...]int{40, 15, 12, 8, 8, 17}
)

// scriptPart is one part of a scripted model turn: text, or a call.
type scriptPart struct {
	thought  bool
	text     string
	call     *genai.FunctionCall // ID set only when the script chose it
	kind     callKind
	decision decision // what the consumer decides, if the call needs approval
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
		{"no-candidate", 3}, {"blocked", 1}, {"unsafe", 1}, {"cancel", 1}, {"max-tokens-empty", 3},
	}
	streamFaults = []weighted{
		{"429", 12}, {"500", 8}, {"503", 10}, {"400", 2}, {"drop", 8}, {"malformed-body", 4},
		{"cut-before-first-event", 6}, {"cut-after-events", 10}, {"cut-mid-event", 5},
		{"malformed-event", 4}, {"error-event-first", 3}, {"error-event-after", 6},
		{"no-finish-reason", 4}, {"malformed-call", 8}, {"empty", 6}, {"no-candidate", 3},
		{"blocked", 1}, {"unsafe", 1}, {"cancel", 1}, {"max-tokens-empty", 3},
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
	parts    []scriptPart  // outText, outCalls: the model turn (candidate 0)
	others   []scriptPart  // outText, outCalls: candidate 1, in the runs with CandidateCount 2
	hangup   bool          // outCalls: a hangup call within the cap
	text     bool          // Stream: text or thought reached the consumer
	answer   bool          // Stream: answer text (EventText) reached the consumer
	stamp    time.Duration // since the soak began, for traces

	maxTokens bool // outText: the answer was cut by MAX_TOKENS

	// What the request carried besides its contents.
	toolConfig     bool // a tool config at all
	fcMode         genai.FunctionCallingConfigMode
	fcNames        []string
	retrieval      string // toolConfig.retrievalConfig.languageCode
	system         string // the system instruction's text
	decls          []string
	toolGroups     int
	candidateCount int32
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

// soakSetup is how a run's agent is configured beyond the soak's agents:
// the settings its plan draws. The runs of Agent.Run and Stream get them
// through Agent.With (or, for ForceEveryTurn, an agent of their own); the
// runs of agent.Run through their Config.
type soakSetup struct {
	force       string // "", "any", "any-names": GenerateConfig's function calling mode ANY, with allowed names
	every       bool   // Config.ForceEveryTurn
	candidates  bool   // GenerateConfig.CandidateCount 2
	intercept   bool   // an Interceptor: it answers the vault's calls by their mode
	approvals   bool   // Config.NeedsApproval picks the calls of soakApprovalTools
	instruction bool   // a system instruction of the run's own
	viaConfig   bool   // … given in the GenerateConfig override, not Overrides.SystemInstruction
	clock       bool   // the extra tool clock
	observer    bool   // an observer of the run's own, after the agent's
	maxTurns    int    // 0: soakMaxTurns
	maxCalls    int    // 0: soakMaxCalls
	maxParallel int    // 0: the default (8); set with soakLongTimeout and the gate
	maxOutput   int    // 0: soakMaxOutput; -1: no bound
	toolTimeout time.Duration
}

// soakRun is one run: its plan, its script generator and what happened.
type soakRun struct {
	id        int
	stream    bool
	pkgRun    bool // Run through the package's agent.Run, not Agent.Run
	model     string
	faultRate float64
	breakOn   agent.EventKind // Stream: the consumer breaks at the first event of this kind
	setup     soakSetup
	rng       *rand.Rand   // the script; used by the reply function only
	toolRuns  atomic.Int32 // tool functions entered
	seq       atomic.Int64 // orders the tools' steps and the reports of their results

	mu        sync.Mutex
	cancel    context.CancelCauseFunc
	exchanges []*exchange
	events    []*agent.Event // seen by the observer
	ownEvents []*agent.Event // seen by the run's own observer
	captured  strings.Builder
	records   map[callRef]*callRecord
	oddities  []string // what the tools, the interceptor and the observer saw amiss

	// Set by the run's worker.
	input     []*genai.Content
	input0    *genai.Content
	out       runOutcome
	hung      bool
	replayErr error

	// lateHangup is set when a hangup call cancelled the run only after
	// its own context had ended: where the run then stops is a race.
	lateHangup bool
}

// callRef names a call of a run: its turn and its index in the turn.
type callRef struct{ turn, index int }

// callRecord is what happened to one call, seen from its tool, the
// interceptor and the observer.
type callRecord struct {
	ran        bool          // its tool's function was entered
	returned   int64         // r.seq when its tool's function returned; 0: it did not
	reported   int64         // r.seq when the observer saw its EventToolResult; 0: not yet
	reportedCh chan struct{} // closed at the report
	asked      int           // the interceptor was asked about it
	askedDone  bool          // … once with the run's context done
}

// record returns the record of a call. r.mu is held.
func (r *soakRun) record(ref callRef) *callRecord {
	if r.records == nil {
		r.records = map[callRef]*callRecord{}
	}
	rec := r.records[ref]
	if rec == nil {
		rec = &callRecord{reportedCh: make(chan struct{})}
		r.records[ref] = rec
	}
	return rec
}

func (r *soakRun) oddity(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.oddities = append(r.oddities, fmt.Sprintf(format, args...))
}

// The run's limits, the soak's unless its setup overrides them.
func (r *soakRun) maxTurns() int { return orSoak(r.setup.maxTurns, soakMaxTurns) }
func (r *soakRun) maxCalls() int { return orSoak(r.setup.maxCalls, soakMaxCalls) }
func (r *soakRun) maxOutput() int {
	return orSoak(r.setup.maxOutput, soakMaxOutput)
}
func (r *soakRun) toolTimeout() time.Duration {
	if r.setup.toolTimeout > 0 {
		return r.setup.toolTimeout
	}
	return soakToolTimeout
}

// gated reports whether the run's tools wait, as they begin, for the
// results of the calls that completed before them to be reported: a run
// whose results waited for later calls to start would stall there.
func (r *soakRun) gated() bool { return r.setup.maxParallel > 0 }

func orSoak(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// instruction is the system instruction the run's requests must carry.
func (r *soakRun) instruction() string {
	if r.setup.instruction {
		return fmt.Sprintf("You are the model of soak run %d.", r.id)
	}
	return soakInstruction
}

// toolNames are the tools the run's agent has, in the order declared.
func (r *soakRun) toolNames() []string {
	names := []string{"lookup", "fails", "panics", "slow", "stubborn", "hangup", "forecast", "vault"}
	if r.setup.clock {
		names = append(names, "clock")
	}
	return names
}

func (r *soakRun) hasTool(name string) bool { return slices.Contains(r.toolNames(), name) }

// allowedNames are the AllowedFunctionNames of the run's forcing config.
func (r *soakRun) allowedNames() []string {
	if r.setup.force == "any-names" {
		return soakAllowedNames
	}
	return nil
}

// needsApproval reports whether call i of a turn needs approval: it is
// within the cap, of a known tool that NeedsApproval picks.
func (r *soakRun) needsApproval(p scriptPart, i int) bool {
	return r.setup.approvals && i < r.maxCalls() && r.hasTool(p.call.Name) && soakApprovalTools[p.call.Name]
}

// route is who decides about a call within the cap, of a known tool.
type route int

const (
	routeTool      route = iota // nobody: the tool runs
	routeIntercept              // the interceptor (which lets all but the vault's run)
	routeConsumer               // the Stream consumer, through EventApproval
	routeNobody                 // nobody can approve it (Run without an interceptor): denied
)

func (r *soakRun) route(p scriptPart, i int) route {
	switch {
	case r.needsApproval(p, i) && r.stream:
		return routeConsumer
	case r.setup.intercept:
		return routeIntercept
	case r.needsApproval(p, i):
		return routeNobody
	}
	return routeTool
}

// runsTool reports whether call i of a turn, delivered whole, runs its
// tool's function (unless its timeout runs out before it begins).
func (r *soakRun) runsTool(p scriptPart, i int) bool {
	if p.call == nil || i >= r.maxCalls() || !r.hasTool(p.call.Name) || p.kind == callBadArgs {
		return false
	}
	switch r.route(p, i) {
	case routeNobody:
		return false
	case routeConsumer:
		return p.decision == decApprove
	case routeIntercept:
		return p.kind != callVault || p.call.Args["mode"] == "run"
	}
	return true
}

// asksInterceptor reports whether the interceptor must be asked about
// call i of a turn.
func (r *soakRun) asksInterceptor(p scriptPart, i int) bool {
	return r.setup.intercept && i < r.maxCalls() && r.hasTool(p.call.Name) && r.route(p, i) == routeIntercept
}

// hasApproval reports whether the consumer of a Stream gets an
// EventApproval for a call of ex.
func (r *soakRun) hasApproval(ex *exchange) bool {
	for i, p := range ex.calls() {
		if r.stream && r.needsApproval(p, i) {
			return true
		}
	}
	return false
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

type (
	soakRunKey  struct{}
	soakCallKey struct{}
)

func runOf(ctx context.Context) *soakRun {
	r, _ := ctx.Value(soakRunKey{}).(*soakRun)
	return r
}

// callOf returns the call whose context ctx is: the soak's observer, a
// ContextObserver, tags the context of each tool call.
func callOf(ctx context.Context) (callRef, bool) {
	ref, ok := ctx.Value(soakCallKey{}).(callRef)
	return ref, ok
}

// soak is the state shared by the runs.
type soak struct {
	seed     uint64
	key      string
	start    time.Time
	runs     []*soakRun // by id; nil for ids not run
	srv      *fake.Server
	client   *genai.Client
	agents   map[string]*agent.Agent // by model, and "+every" for ForceEveryTurn
	configs  map[string]agent.Config // the agents' configs, for agent.Run
	tools    []*toolset.Tool
	clock    *toolset.Tool // the tool runs add through Agent.With
	logs     *syncBuffer   // the agents' slog output
	stdlog   *syncBuffer   // the standard logger's output (genai logs stream errors there)
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
// consumer, and the settings of its agent: a forcing function calling
// mode, several candidates, an interceptor, approvals, a small
// MaxParallel, per-run overrides through Agent.With) and the script of its
// replies come from generators seeded with (seed, run id), so a run
// behaves the same whatever the interleaving: the requests of one run are
// sequential. The seed is printed first; replay a failure with
// SOAK_SEED=<seed>, a single run with SOAK_ONLY=<id>[,<id>…], and set the
// number of runs with SOAK_RUNS. The last line sums up the soak: runs and
// their setups, faults injected by kind, retries, MAX_TOKENS replies,
// calls, the vault's and the consumer's answers, results and typed errors
// by kind, violations, rejections, key leaks and leaked goroutines.
//
// The checks, per run: the run returns before its deadline, without
// panicking, with a Result and nil or a typed error, the one the script
// calls for (an oracle replays the script through the contract: retries,
// re-asks, the turn cap, stops, MAX_TOKENS never asked again,
// cancellations); each request carries the run's system instruction,
// declarations, candidate count and tool config (a forcing mode on the
// first turn only, retries included, unless ForceEveryTurn), resends the
// previous history unchanged after a failure or a re-ask, and after a
// delivered model turn with calls appends exactly that turn (candidate 0,
// the model's arguments byte for byte, although tools fill in defaults)
// and one user content answering every call in call order, with its id
// and name, the answer being the one the call's tool, the interceptor, the
// consumer's decision and the caps call for (answers that do not encode
// refused, large ones cut to MaxOutputBytes of JSON); the history of the
// Result ends the same way; usage adds up over turns; the observers and the
// Stream consumer see what the run did, each tool call's events with the
// call's context, approvals where and only where they are due; tools run
// for the calls that may run, and only for them; with a small MaxParallel,
// results are reported as calls complete, never after later calls start;
// the history, replayed into the fake with one more message, is accepted.
// Globally: the fake rejected no request, every request was scripted and
// carried the API key, which appears in no error, log line, event or
// result; every goroutine returns.
func TestChaosSoak(t *testing.T) {
	seed := envUint(t, "SOAK_SEED", soakSeed)
	n := soakShortRuns
	if citest.Enabled() {
		n = soakRuns
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
	waitFor(soakWindDown, func() bool { return s.stubborn.Load() == 0 })
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
	waitFor(soakWindDown, func() bool {
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
		violations = append(violations, fmt.Sprintf("%d events, tool calls or interceptions came with a context that is not a run's", k))
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

	line := fmt.Sprintf("chaos soak: seed=%d runs=%d (Agent.Run %d, agent.Run %d, Stream %d; gemini-3 %d, gemini-2.5 %d) setups={%s} "+
		"requests=%d replays=%d faults={%s} retries=%d reasks=%d max-tokens={%s} calls={%s} vault={%s} approvals={%s} "+
		"capped=%d late-tool-answers=%d results={%s} "+
		"violations=%d rejections=%d unscripted=%d key-leaks=%d leaked-goroutines=%d elapsed=%v",
		seed, len(ids), sum.runs["run"], sum.runs["pkg-run"], sum.runs["stream"], sum.runs[model3], sum.runs[model], counts(sum.setups),
		sum.requests, s.replays.Load(), counts(sum.faults), sum.retries, sum.reasks, counts(sum.maxTokens), counts(sum.calls),
		counts(sum.vault), counts(sum.approvals), sum.capped, sum.late, counts(sum.results),
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

// soakSeed is the fixed seed of the soak; SOAK_SEED=<n> replays or explores
// another one.
const soakSeed = 20261129

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
		s.runs[id] = newSoakRun(seed, id)
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
		for _, every := range []bool{false, true} {
			cfg := agent.Config{
				Models: client.Models,
				Model:  m,
				Tools:  toolset.MustNew(s.tools...),
				GenerateConfig: &genai.GenerateContentConfig{
					SystemInstruction: genai.NewContentFromText(soakInstruction, ""),
				},
				MaxTurns:        soakMaxTurns,
				MaxCallsPerTurn: soakMaxCalls,
				ToolTimeout:     soakToolTimeout,
				MaxOutputBytes:  soakMaxOutput,
				ForceEveryTurn:  every,
				Retry: agent.RetryPolicy{MaxAttempts: soakMaxAttempts, InitialDelay: time.Millisecond,
					MaxDelay: 4 * time.Millisecond, Jitter: 0.5, MaxReasks: soakMaxReasks},
				Observer: soakObserver{s},
				Logger:   logger,
			}
			a, err := agent.New(cfg)
			if err != nil {
				t.Fatalf("agent.New: %v", err)
			}
			key := agentKey(m, every)
			s.agents[key], s.configs[key] = a, cfg
		}
	}
	return s
}

// newSoakRun draws the plan of a run.
func newSoakRun(seed uint64, id int) *soakRun {
	plan := rand.New(rand.NewPCG(seed, uint64(id)*2))
	r := &soakRun{id: id, rng: rand.New(rand.NewPCG(seed, uint64(id)*2+1))}
	r.stream = plan.IntN(2) == 0
	r.model = model
	if plan.IntN(2) == 0 {
		r.model = model3
	}
	r.faultRate = []float64{0.1, 0.3, 0.5, 0.7}[plan.IntN(4)]
	r.pkgRun = !r.stream && plan.IntN(3) == 0
	st := &r.setup
	if plan.IntN(100) < 15 {
		st.force = []string{"any", "any-names"}[plan.IntN(2)]
		st.every = plan.IntN(3) == 0
	}
	st.candidates = plan.IntN(100) < 12
	st.intercept = plan.IntN(100) < 30
	st.approvals = plan.IntN(100) < 20
	if plan.IntN(100) < 10 {
		st.maxParallel, st.toolTimeout = 1+plan.IntN(2), soakLongTimeout
	}
	if plan.IntN(100) < 10 {
		st.instruction, st.viaConfig = true, r.pkgRun || plan.IntN(2) == 0
	}
	st.clock = plan.IntN(100) < 15
	st.observer = plan.IntN(100) < 10
	if plan.IntN(100) < 8 {
		st.maxTurns = 2 + plan.IntN(2)
	}
	if plan.IntN(100) < 8 {
		st.maxCalls = 3
	}
	if plan.IntN(100) < 15 {
		st.maxOutput = []int{256, 2048, -1}[plan.IntN(3)]
	}
	if r.stream && plan.IntN(100) < 12 {
		kinds := []agent.EventKind{agent.EventText, agent.EventToolResult, agent.EventToolCall}
		if st.approvals {
			kinds = []agent.EventKind{agent.EventApproval}
		}
		r.breakOn = kinds[plan.IntN(len(kinds))]
		if r.breakOn == agent.EventToolCall && plan.IntN(2) == 0 {
			// Every call of the turn starts once the run is over: the
			// interceptor must not be asked about any.
			st.intercept = true
		}
	}
	return r
}

func agentKey(model string, every bool) string {
	if every {
		return model + "+every"
	}
	return model
}

// generateConfig is the GenerateConfig of a run whose setup needs one of
// its own, or nil.
func (r *soakRun) generateConfig() *genai.GenerateContentConfig {
	st := &r.setup
	if st.force == "" && !st.candidates && !(st.instruction && st.viaConfig) {
		return nil
	}
	gc := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(soakInstruction, "")}
	if st.instruction && st.viaConfig {
		gc.SystemInstruction = genai.NewContentFromText(r.instruction(), "")
	}
	if st.force != "" {
		gc.ToolConfig = &genai.ToolConfig{
			FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny,
				AllowedFunctionNames: slices.Clone(r.allowedNames())},
			RetrievalConfig: &genai.RetrievalConfig{LanguageCode: "fr"},
		}
	}
	if st.candidates {
		gc.CandidateCount = 2
	}
	return gc
}

// agentFor returns the agent a run of Agent.Run or Stream uses: the
// soak's, through Agent.With when its setup overrides anything.
func (s *soak) agentFor(r *soakRun) *agent.Agent {
	a := s.agents[agentKey(r.model, r.setup.every)]
	st := &r.setup
	o := agent.Overrides{
		GenerateConfig:  r.generateConfig(),
		MaxTurns:        st.maxTurns,
		MaxParallel:     st.maxParallel,
		MaxCallsPerTurn: st.maxCalls,
		ToolTimeout:     st.toolTimeout,
		MaxOutputBytes:  st.maxOutput,
	}
	if st.instruction && !st.viaConfig {
		o.SystemInstruction = genai.NewContentFromText(r.instruction(), genai.RoleUser)
	}
	if st.clock {
		o.Tools = []*toolset.Tool{s.clock}
	}
	if st.observer {
		o.Observer = agent.ObserverFunc(r.observeOwn)
	}
	if st.intercept {
		o.Intercept = s.intercept
	}
	if st.approvals {
		o.NeedsApproval = soakNeedsApproval
	}
	if reflect.ValueOf(o).IsZero() {
		return a
	}
	return a.With(o)
}

// configFor returns the Config a run of agent.Run uses: the soak's, with
// the run's setup.
func (s *soak) configFor(r *soakRun) agent.Config {
	cfg := s.configs[agentKey(r.model, r.setup.every)]
	st := &r.setup
	if gc := r.generateConfig(); gc != nil {
		cfg.GenerateConfig = gc
	}
	if st.clock {
		cfg.Tools = toolset.MustNew(append(slices.Clone(s.tools), s.clock)...)
	}
	if st.observer {
		cfg.Observer = agent.Observers(cfg.Observer, agent.ObserverFunc(r.observeOwn))
	}
	if st.intercept {
		cfg.Intercept = s.intercept
	}
	if st.approvals {
		cfg.NeedsApproval = soakNeedsApproval
	}
	cfg.MaxTurns = r.maxTurns()
	cfg.MaxCallsPerTurn = r.maxCalls()
	cfg.MaxOutputBytes = r.maxOutput()
	cfg.ToolTimeout = r.toolTimeout()
	cfg.MaxParallel = st.maxParallel
	return cfg
}

func soakNeedsApproval(call *genai.FunctionCall) bool { return soakApprovalTools[call.Name] }

// forecastSchema declares defaults inside nested objects: the model's
// arguments must reach the history as it sent them, and the tool must see
// the defaults.
func forecastSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Required: []string{"city"}, Properties: map[string]*jsonschema.Schema{
		"city": {Type: "string"},
		"opts": {Type: "object", Properties: map[string]*jsonschema.Schema{
			"unit": {Type: "string", Default: json.RawMessage(`"celsius"`)},
			"detail": {Type: "object", Properties: map[string]*jsonschema.Schema{
				"hourly": {Type: "boolean", Default: json.RawMessage(`false`)},
			}},
		}},
	}}
}

// newTools returns the soak's tools, and sets s.clock. Each records its
// calls on its run.
func (s *soak) newTools() []*toolset.Tool {
	type cityIn struct {
		City string `json:"city" jsonschema:"the city"`
	}
	lookup := toolset.MustFunc("lookup", "Current weather for a city", func(ctx context.Context, in cityIn) (string, error) {
		_, leave := s.enter(ctx)
		defer leave()
		return "sunny in " + in.City, nil
	})
	fails := tool("fails", func(ctx context.Context, _ map[string]any) (any, error) {
		_, leave := s.enter(ctx)
		defer leave()
		return nil, errors.New("backend unavailable")
	})
	panics := tool("panics", func(ctx context.Context, _ map[string]any) (any, error) {
		_, leave := s.enter(ctx)
		defer leave()
		panic("boom")
	})
	slow := tool("slow", func(ctx context.Context, _ map[string]any) (any, error) {
		_, leave := s.enter(ctx)
		defer leave()
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
		s.stubborn.Add(1)
		defer s.stubborn.Add(-1)
		_, leave := s.enter(ctx)
		defer leave()
		time.Sleep(3 * soakToolTimeout) // ignores ctx
		return "ignored", nil
	})
	hangup := tool("hangup", func(ctx context.Context, _ map[string]any) (any, error) {
		r, leave := s.enter(ctx)
		defer leave()
		r.mu.Lock()
		cancel := r.cancel
		r.mu.Unlock()
		if cancel != nil {
			cancel(errSoakHangup)
			if errors.Is(context.Cause(ctx), agent.ErrToolTimeout) {
				// The call's own context had ended first, its ToolTimeout
				// run out before this goroutine got a CPU: Execute may
				// have answered the call already, and the run gone on
				// before the cancellation reached it.
				r.mu.Lock()
				r.lateHangup = true
				r.mu.Unlock()
			}
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	forecast := toolset.MustDefine(toolset.Tool{Name: "forecast", Description: "Forecast",
		InputSchema: forecastSchema(),
		Run: func(ctx context.Context, args map[string]any) (any, error) {
			_, leave := s.enter(ctx)
			defer leave()
			opts, _ := args["opts"].(map[string]any)
			detail, _ := opts["detail"].(map[string]any)
			return fmt.Sprintf("%v: %v, hourly %v", args["city"], opts["unit"], detail["hourly"]), nil
		}})
	vault := tool("vault", func(ctx context.Context, _ map[string]any) (any, error) {
		_, leave := s.enter(ctx)
		defer leave()
		return soakVaultOutput, nil
	})
	s.clock = tool("clock", func(ctx context.Context, _ map[string]any) (any, error) {
		_, leave := s.enter(ctx)
		defer leave()
		return "12:00", nil
	})
	return []*toolset.Tool{lookup, fails, panics, slow, stubborn, hangup, forecast, vault}
}

// enter records a tool function entered for a call, waits at the gate in
// the runs that have one, and returns the run and the function that
// records its return.
func (s *soak) enter(ctx context.Context) (*soakRun, func()) {
	r := runOf(ctx)
	ref, tagged := callOf(ctx)
	if r == nil || !tagged {
		s.stray.Add(1)
		if r == nil {
			return &soakRun{}, func() {}
		}
	}
	r.toolRuns.Add(1)
	r.mu.Lock()
	rec := r.record(ref)
	rec.ran = true
	r.mu.Unlock()
	if r.gated() {
		r.gate(ctx, ref)
	}
	return r, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		rec.returned = r.seq.Add(1)
	}
}

// gate waits until the results of the calls of the turn whose tools have
// returned are reported. The loop reports each result as its call
// completes, so the wait is short; a loop that reports results only once
// every call has started would keep them waiting for this call, and this
// call for them.
func (r *soakRun) gate(ctx context.Context, self callRef) {
	r.mu.Lock()
	var waits []int
	var chans []chan struct{}
	for ref, rec := range r.records {
		if ref.turn == self.turn && ref != self && rec.returned > 0 && rec.reported == 0 {
			waits, chans = append(waits, ref.index), append(chans, rec.reportedCh)
		}
	}
	r.mu.Unlock()
	timer := time.NewTimer(soakGateWait)
	defer timer.Stop()
	for i, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-timer.C:
			r.oddity("call %d of turn %d began after call %d had completed, and waited %v for that result to be reported: a result waits for a later call",
				self.index, self.turn, waits[i], soakGateWait)
			return
		}
	}
}

// intercept is the soak's Interceptor: it lets every call run but the
// vault's, which it answers by their mode.
func (s *soak) intercept(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
	r := runOf(ctx)
	ref, tagged := callOf(ctx)
	if r == nil || !tagged {
		s.stray.Add(1)
		return nil
	}
	done := ctx.Err() != nil
	r.mu.Lock()
	rec := r.record(ref)
	rec.asked++
	rec.askedDone = rec.askedDone || done
	r.mu.Unlock()
	if call.Name != "vault" {
		return nil
	}
	switch call.Args["mode"] {
	case "nan":
		return agent.Answer(math.NaN())
	case "chan":
		return agent.Answer(map[string]any{"c": make(chan int)})
	case "big":
		return agent.Answer(soakBigAnswer)
	case "deny":
		return agent.Deny(soakVaultDenial)
	case "answer":
		return agent.Answer(cloneMap(soakVaultAnswer))
	}
	return nil
}

func cloneMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// soakObserver is the soak agents' observer. As a ContextObserver it tags
// the context of each tool call with the call, which the tools, the
// interceptor and Observe read back.
type soakObserver struct{ s *soak }

func (o soakObserver) Observe(ctx context.Context, e *agent.Event) { o.s.observe(ctx, e) }

func (o soakObserver) StartContext(ctx context.Context, e *agent.Event) context.Context {
	if e.Kind == agent.EventToolCall {
		return context.WithValue(ctx, soakCallKey{}, callRef{e.Turn, e.Index})
	}
	return ctx
}

func (s *soak) observe(ctx context.Context, e *agent.Event) {
	r := runOf(ctx)
	if r == nil {
		s.stray.Add(1)
		return
	}
	text := eventText(e)
	ref, tagged := callOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.captured.WriteString(text)
	switch e.Kind {
	case agent.EventToolCall, agent.EventApproval, agent.EventToolResult:
		if !tagged || ref != (callRef{e.Turn, e.Index}) {
			r.oddities = append(r.oddities, fmt.Sprintf("%s of call %d of turn %d was observed with the context of call %+v (tagged: %v), not its own",
				e.Kind, e.Index, e.Turn, ref, tagged))
		}
	default:
		if tagged {
			r.oddities = append(r.oddities, fmt.Sprintf("%s of turn %d was observed with the context of tool call %+v", e.Kind, e.Turn, ref))
		}
	}
	if e.Kind == agent.EventToolResult {
		rec := r.record(callRef{e.Turn, e.Index})
		if rec.reported != 0 {
			r.oddities = append(r.oddities, fmt.Sprintf("the result of call %d of turn %d was reported twice", e.Index, e.Turn))
			return
		}
		rec.reported = r.seq.Add(1)
		close(rec.reportedCh)
	}
}

// observeOwn is the observer a run adds through Agent.With (or its Config).
func (r *soakRun) observeOwn(_ context.Context, e *agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ownEvents = append(r.ownEvents, e)
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

// newExchange records what req carried.
func newExchange(req *fake.Request) *exchange {
	ex := &exchange{seq: req.Seq, stream: req.Method == fake.MethodStreamGenerateContent, contents: req.Contents}
	if tc := req.ToolConfig; tc != nil {
		ex.toolConfig = true
		if fc := tc.FunctionCallingConfig; fc != nil {
			ex.fcMode, ex.fcNames = fc.Mode, fc.AllowedFunctionNames
		}
		if rc := tc.RetrievalConfig; rc != nil {
			ex.retrieval = rc.LanguageCode
		}
	}
	if si := req.SystemInstruction; si != nil {
		ex.system = text(si)
	}
	ex.toolGroups = len(req.Tools)
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			ex.decls = append(ex.decls, d.Name)
		}
	}
	if gc := req.GenerationConfig; gc != nil {
		ex.candidateCount = gc.CandidateCount
	}
	return ex
}

// next draws the reply to req. r.mu is held.
func (r *soakRun) next(req *fake.Request) (*exchange, *fake.Reply) {
	rng := r.rng
	ex := newExchange(req)
	if rng.Float64() >= r.faultRate {
		reply, _, streamedAt, answerAt := r.body(ex, req)
		ex.kind, ex.out = "text", outText
		for _, p := range ex.parts {
			if p.call != nil {
				ex.kind, ex.out = "calls", outCalls
			}
		}
		for i, p := range ex.calls() {
			ex.hangup = ex.hangup || p.kind == callHangup && i < r.maxCalls()
		}
		ex.text = ex.stream && streamedAt > 0
		ex.answer = ex.stream && answerAt > 0
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
		reply, events, streamedAt, answerAt := r.body(ex, req)
		sent := f(reply, events)
		ex.text = ex.stream && streamedAt > 0 && sent >= streamedAt
		ex.answer = ex.stream && answerAt > 0 && sent >= answerAt
		if ex.text {
			ex.out = outStreamedFail
		}
		ex.parts, ex.others, ex.maxTokens = nil, nil, false // never delivered
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
			if reply.Chunks != nil {
				for _, c := range reply.Chunks {
					chunk := *c
					chunk.Candidates = nil
					for _, cand := range c.Candidates {
						cc := *cand
						cc.FinishReason = ""
						chunk.Candidates = append(chunk.Candidates, &cc)
					}
					raw.Chunks = append(raw.Chunks, &chunk)
				}
				return len(raw.Chunks)
			}
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
	case "max-tokens-empty":
		// Thinking used the whole output budget: asking again would burn
		// as many tokens for the same nothing.
		ex.out, ex.stopKind = outStop, agent.ErrMaxTokens
		return ex, fake.Finish(genai.FinishReasonMaxTokens)
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

// body draws a model turn, text or calls, into ex.parts (and candidate 1
// into ex.others in the runs with two candidates) and returns its reply,
// the number of stream events it makes, and the number of events up to the
// first that carries candidate 0's text or thought, and its answer text
// (0: none does). A request that forces calls (mode ANY) gets calls, of
// the allowed functions when it names them.
func (r *soakRun) body(ex *exchange, req *fake.Request) (reply *fake.Reply, events, streamedAt, answerAt int) {
	rng := r.rng
	forced := ex.fcMode == genai.FunctionCallingConfigModeAny
	var parts []scriptPart
	if !forced && rng.IntN(10) < 3 {
		ex.maxTokens = rng.IntN(5) == 0
		if ex.maxTokens && rng.IntN(3) == 0 {
			// Thinking used the whole budget: a thought and nothing else.
			parts = append(parts, scriptPart{thought: true, text: "Thinking: " + words(rng)})
		} else {
			if rng.IntN(5) == 0 {
				parts = append(parts, scriptPart{thought: true, text: "Thinking: " + words(rng)})
			}
			parts = append(parts, scriptPart{text: fmt.Sprintf("Run %d answers: %s.", r.id, words(rng))})
		}
	} else {
		if rng.IntN(4) == 0 {
			parts = append(parts, scriptPart{thought: rng.IntN(2) == 0, text: "Let me look that up."})
		}
		n := 1 + rng.IntN(r.maxCalls()-1)
		if rng.IntN(100) < 15 {
			n = r.maxCalls() + 1 + rng.IntN(3) // over the cap
		}
		weights := callWeights
		if len(ex.fcNames) > 0 {
			// Only lookup and forecast may be called.
			weights = [len(callWeights)]int{callOK: 30, callBadArgs: 10, callDefaults: 12}
		}
		if r.setup.approvals {
			weights[callHangup] = 0 // whether it cancels before the approval is asked is a race
		}
		scriptedIDs := rng.IntN(2) == 0 || ex.stream && r.setup.candidates && r.model == model3
		for i := range n {
			kind := callKind(pickIndex(rng, weights[:]))
			call := soakCall(rng, kind)
			if scriptedIDs {
				call.ID = fmt.Sprintf("call-%d-%d-%d", r.id, ex.seq, i)
			}
			parts = append(parts, scriptPart{call: call, kind: kind, decision: decision(pickIndex(rng, decisionWeights[:]))})
		}
	}
	ex.parts = parts
	if r.setup.candidates {
		// Candidate 1 says something else: mixed into candidate 0, it
		// would show.
		if rng.IntN(2) == 0 {
			ex.others = []scriptPart{{text: fmt.Sprintf("Candidate 1 of run %d: %s.", r.id, words(rng))}}
		} else {
			call := fake.Call("lookup", map[string]any{"city": "Atlantis"})
			if r.model == model3 {
				call.ID = fmt.Sprintf("other-%d-%d", r.id, ex.seq)
			}
			ex.others = []scriptPart{{call: call}}
		}
	}
	gparts := func(parts []scriptPart, signed bool) []*genai.Part {
		out := make([]*genai.Part, len(parts))
		first := true
		for i, p := range parts {
			if p.call == nil {
				out[i] = &genai.Part{Text: p.text, Thought: p.thought}
				continue
			}
			out[i] = &genai.Part{FunctionCall: p.call}
			if signed && first {
				out[i].ThoughtSignature = []byte(fmt.Sprintf("soak-signature-%d-%d", r.id, ex.seq))
			}
			first = false
		}
		return out
	}
	var finish genai.FinishReason // the fake's STOP
	if ex.maxTokens {
		finish = genai.FinishReasonMaxTokens
	}
	switch {
	case r.setup.candidates && ex.stream:
		return r.chunked(req, gparts(parts, r.model == model3), gparts(ex.others, r.model == model3), finish)
	case r.setup.candidates:
		reply = &fake.Reply{Response: &genai.GenerateContentResponse{Candidates: []*genai.Candidate{
			{Content: &genai.Content{Role: genai.RoleModel, Parts: gparts(parts, false)}, FinishReason: finish},
			{Index: 1, Content: &genai.Content{Role: genai.RoleModel, Parts: gparts(ex.others, false)}},
		}}}
		return reply, 1, 0, 0
	}
	reply = fake.Parts(gparts(parts, false)...)
	reply.Response.Candidates[0].FinishReason = finish
	if !ex.stream {
		return reply, 1, 0, 0
	}
	reply.TextChunk = 3 + rng.IntN(10)
	if parts[len(parts)-1].call == nil && rng.IntN(5) == 0 {
		reply.TrailingSignature = true
	}
	// The fake streams one event per call and per piece of text, and one
	// more for a trailing signature.
	for _, p := range parts {
		if p.call != nil {
			events++
			continue
		}
		if streamedAt == 0 {
			streamedAt = events + 1
		}
		if !p.thought && answerAt == 0 {
			answerAt = events + 1
		}
		events += (len(p.text) + reply.TextChunk - 1) / reply.TextChunk
	}
	if reply.TrailingSignature {
		events++
	}
	return reply, events, streamedAt, answerAt
}

// chunked streams two candidates: each event carries a piece of candidate
// 0, of candidate 1, or one of each in either order, as the script draws.
// It fills in what the fake fills in for other replies (the fake fills in
// candidates by their position in an event, not by their index): the
// role, each candidate's finish reason on its last piece, and the usage,
// counted as the fake counts it so that it adds up with the fake's other
// replies to the same request.
func (r *soakRun) chunked(req *fake.Request, c0, c1 []*genai.Part, finish0 genai.FinishReason) (reply *fake.Reply, events, streamedAt, answerAt int) {
	rng := r.rng
	size := 3 + rng.IntN(10)
	pieces := func(parts []*genai.Part) []*genai.Part {
		var out []*genai.Part
		for _, p := range parts {
			if p.FunctionCall != nil {
				out = append(out, p)
				continue
			}
			for len(p.Text) > size {
				out = append(out, &genai.Part{Text: p.Text[:size], Thought: p.Thought})
				p = &genai.Part{Text: p.Text[size:], Thought: p.Thought}
			}
			out = append(out, p)
		}
		return out
	}
	p0, p1 := pieces(c0), pieces(c1)
	prompt := fakePromptTokens(req)
	var candidateBytes int
	reply = &fake.Reply{Raw: true}
	take := func(index int32, ps *[]*genai.Part, finish genai.FinishReason) *genai.Candidate {
		p := (*ps)[0]
		*ps = (*ps)[1:]
		c := &genai.Candidate{Index: index, Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}}
		if len(*ps) == 0 {
			c.FinishReason = finish
		}
		candidateBytes += len(p.Text)
		if index == 0 && p.FunctionCall == nil {
			if streamedAt == 0 {
				streamedAt = len(reply.Chunks) + 1
			}
			if !p.Thought && answerAt == 0 {
				answerAt = len(reply.Chunks) + 1
			}
		}
		return c
	}
	if finish0 == "" {
		finish0 = genai.FinishReasonStop
	}
	for len(p0) > 0 || len(p1) > 0 {
		var cs []*genai.Candidate
		switch k := rng.IntN(4); {
		case len(p1) == 0 || k == 0 && len(p0) > 0:
			cs = append(cs, take(0, &p0, finish0))
		case len(p0) == 0 || k == 1:
			cs = append(cs, take(1, &p1, genai.FinishReasonStop))
		case k == 2:
			cs = append(cs, take(0, &p0, finish0), take(1, &p1, genai.FinishReasonStop))
		default:
			cs = append(cs, take(1, &p1, genai.FinishReasonStop), take(0, &p0, finish0))
		}
		cand := int32((candidateBytes + 3) / 4)
		reply.Chunks = append(reply.Chunks, &genai.GenerateContentResponse{Candidates: cs, ModelVersion: r.model,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: prompt, CandidatesTokenCount: cand, TotalTokenCount: prompt + cand}})
	}
	return reply, len(reply.Chunks), streamedAt, answerAt
}

// fakePromptTokens counts a request's prompt tokens as the fake does
// (internal/fake/usage.go): the JSON of its contents, system instruction
// and tools, at 4 bytes a token.
func fakePromptTokens(req *fake.Request) int32 {
	n := 0
	for _, v := range []any{req.Contents, req.SystemInstruction, req.Tools} {
		b, _ := json.Marshal(v)
		if string(b) != "null" {
			n += len(b)
		}
	}
	return int32((n + 3) / 4)
}

// soakCall draws a call of a kind.
func soakCall(rng *rand.Rand, kind callKind) *genai.FunctionCall {
	city := soakCities[rng.IntN(len(soakCities))]
	switch kind {
	case callOK:
		return fake.Call("lookup", map[string]any{"city": city})
	case callBadArgs:
		return []*genai.FunctionCall{
			fake.Call("lookup", map[string]any{"city": 42}),
			fake.Call("lookup", map[string]any{}),
			fake.Call("lookup", map[string]any{"city": city, "units": "metric"}),
			fake.Call("lookup", map[string]any{"city": []any{city}}),
			fake.Call("lookup", map[string]any{"town": city}),
			fake.Call("forecast", map[string]any{"city": city, "opts": "metric"}),
			fake.Call("forecast", map[string]any{"city": city, "opts": map[string]any{"detail": map[string]any{"hourly": "yes"}}}),
			fake.Call("forecast", map[string]any{"opts": map[string]any{}}),
		}[rng.IntN(8)]
	case callUnknown:
		return fake.Call([]string{"no_such_tool", "rm_rf", "lookup_v2"}[rng.IntN(3)], map[string]any{"city": city})
	case callDefaults:
		return fake.Call("forecast", []map[string]any{
			{"city": city},
			{"city": city, "opts": map[string]any{}},
			{"city": city, "opts": map[string]any{"unit": "kelvin"}},
			{"city": city, "opts": map[string]any{"detail": map[string]any{}}},
			{"city": city, "opts": map[string]any{"unit": "kelvin", "detail": map[string]any{"hourly": true}}},
		}[rng.IntN(5)])
	case callVault:
		return fake.Call("vault", map[string]any{"mode": vaultModes[rng.IntN(len(vaultModes))]})
	case callClock:
		return fake.Call("clock", nil)
	}
	if rng.IntN(2) == 0 {
		return fake.Call(callToolName(kind), nil)
	}
	return fake.Call(callToolName(kind), map[string]any{"note": words(rng)})
}

func callToolName(kind callKind) string {
	switch kind {
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
			o.res, o.err = agent.Run(ctx, s.configFor(r), r.input)
			return
		case !r.stream:
			o.res, o.err = s.agentFor(r).Run(ctx, r.input)
			return
		}
		var late []*agent.Approval // left undecided: decided once the loop has gone on, to no effect
		for ev, err := range s.agentFor(r).Stream(ctx, r.input) {
			for _, ap := range late {
				ap.Approve()
			}
			late = nil
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
			if ev != nil && ev.Kind == agent.EventApproval && r.decide(ev) == decUndecided {
				late = append(late, ev.Approval)
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

// decide is the Stream consumer's decision about a call that needs
// approval: the one the script drew for it.
func (r *soakRun) decide(e *agent.Event) decision {
	var p *scriptPart
	r.mu.Lock()
	if n := len(r.exchanges); n > 0 {
		if calls := r.exchanges[n-1].calls(); e.Index < len(calls) {
			p = &calls[e.Index]
		}
	}
	r.mu.Unlock()
	if p == nil || e.Call == nil || p.call.Name != e.Call.Name || e.Approval == nil {
		r.oddity("the EventApproval of call %d of turn %d is for no call the model sent in its last turn", e.Index, e.Turn)
		return decUndecided
	}
	switch p.decision {
	case decApprove:
		e.Approval.Approve()
	case decDeny:
		e.Approval.Deny(soakDenial)
	case decAnswer:
		e.Approval.Answer(soakConsumerAnswer)
	case decAnswerBig:
		e.Approval.Answer(soakBigAnswer)
	case decAnswerInf:
		e.Approval.Answer(math.Inf(1))
	}
	return p.decision
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
	ctx, cancel := context.WithTimeout(context.Background(), soakDeadline)
	defer cancel()
	// Without declarations, which the history's acceptance does not
	// depend on and every request of the run has carried.
	resp, err := s.client.Models.GenerateContent(ctx, r.model, history, nil)
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
	var more []string
	st := &r.setup
	if st.force != "" {
		force := "mode ANY"
		if st.force == "any-names" {
			force += " with allowed names"
		}
		if st.every {
			force += " every turn"
		}
		more = append(more, force)
	}
	for _, f := range []struct {
		on   bool
		what string
	}{
		{st.candidates, "2 candidates"}, {st.intercept, "interceptor"}, {st.approvals, "approvals"},
		{st.maxParallel > 0, fmt.Sprintf("MaxParallel %d", st.maxParallel)},
		{st.instruction, "own system instruction"}, {st.clock, "extra tool"}, {st.observer, "own observer"},
		{st.maxTurns > 0, fmt.Sprintf("MaxTurns %d", st.maxTurns)},
		{st.maxCalls > 0, fmt.Sprintf("MaxCallsPerTurn %d", st.maxCalls)},
		{st.maxOutput != 0, fmt.Sprintf("MaxOutputBytes %d", st.maxOutput)},
	} {
		if f.on {
			more = append(more, f.what)
		}
	}
	desc := fmt.Sprintf("%s, %s, fault rate %.1f", mode, r.model, r.faultRate)
	if len(more) > 0 {
		desc += "; " + strings.Join(more, ", ")
	}
	return desc
}

// trace describes what a run was sent and what it returned, for failures.
func (s *soak) trace(r *soakRun) string {
	var b strings.Builder
	for _, ex := range r.exchanges {
		method := "unary"
		if ex.stream {
			method = "stream"
		}
		fmt.Fprintf(&b, "  #%d at %v: %s, %d contents", ex.seq, ex.stamp.Round(time.Millisecond), method, len(ex.contents))
		if ex.fcMode != "" {
			fmt.Fprintf(&b, ", mode %s %v", ex.fcMode, ex.fcNames)
		}
		fmt.Fprintf(&b, " -> %s (%s)", ex.kind, ex.out)
		if ex.maxTokens {
			b.WriteString(" cut by MAX_TOKENS")
		}
		for i, p := range ex.calls() {
			args, _ := json.Marshal(p.call.Args)
			fmt.Fprintf(&b, " %s%s[%s", p.call.Name, args, callKindNames[p.kind])
			if r.needsApproval(p, i) {
				fmt.Fprintf(&b, ", %s", decisionNames[p.decision])
			}
			b.WriteString("]")
		}
		if len(ex.others) > 0 {
			b.WriteString(" (and candidate 1)")
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
	runs, setups, faults, maxTokens, calls, vault, approvals, results map[string]int
	requests, retries, reasks                                         int
	late, capped                                                      int
}

func newSoakSummary() *soakSummary {
	return &soakSummary{runs: map[string]int{}, setups: map[string]int{}, faults: map[string]int{}, maxTokens: map[string]int{},
		calls: map[string]int{}, vault: map[string]int{}, approvals: map[string]int{}, results: map[string]int{}}
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

// countSetup counts the settings of a run.
func (r *soakRun) countSetup(sum *soakSummary) {
	st := &r.setup
	for _, f := range []struct {
		on   bool
		name string
	}{
		{st.force == "any", "any"}, {st.force == "any-names", "any-names"}, {st.every, "any-every-turn"},
		{st.candidates, "candidates"}, {st.intercept, "interceptor"}, {st.approvals, "approvals"},
		{st.maxParallel > 0, fmt.Sprintf("max-parallel-%d", st.maxParallel)},
		{st.instruction, "instruction"}, {st.clock, "extra-tool"}, {st.observer, "own-observer"},
		{st.maxTurns > 0, "max-turns"}, {st.maxCalls > 0, "max-calls"}, {st.maxOutput != 0, "max-output"},
		{!r.pkgRun && *st != (soakSetup{every: st.every}), "with"},
		{r.breakOn != 0, "break-at-" + r.breakOn.String()},
	} {
		if f.on {
			sum.setups[f.name]++
		}
	}
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
	last            *exchange   // the exchange that ends the run
	turn, attempt   int         // the turn the run ends in, and the model calls made for it
	wholePerTurn    []int       // per turn Result.Turns must hold: the whole responses received
	attemptsPerTurn []int       // and the model calls made
	turnEx          []*exchange // per turn, the exchange that delivered its model turn
	breakTurn       int         // the turn the consumer stopped the stream in, or -1
	finalMissing    bool        // the last turn got no whole response, so it is not in Result.Turns
	retries         int         // the EventRetry events the run must emit
	toolRuns        int         // the tool runs the delivered calls ask for
	notRun          int         // calls whose timeout ran out before they began (they do not run)
	toolsExact      bool        // toolRuns is exact, not an upper bound
}

// call returns call index of turn, as the script sent it.
func (vd *verdict) call(turn, index int) (scriptPart, bool) {
	if turn < 0 || turn >= len(vd.turnEx) {
		return scriptPart{}, false
	}
	calls := vd.turnEx[turn].calls()
	if index < 0 || index >= len(calls) {
		return scriptPart{}, false
	}
	return calls[index], true
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
	r.countSetup(sum)
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
	for _, o := range r.oddities {
		bad("%s", o)
	}
	if len(exs) == 0 {
		bad("no request of the run reached the fake")
		return v
	}
	for i := 1; i < len(exs); i++ {
		if exs[i].seq <= exs[i-1].seq {
			bad("requests #%d and #%d overlapped: a run's requests must be sequential", exs[i-1].seq, exs[i].seq)
		}
	}
	if r.lateHangup {
		// The cancellation reached the run at a point no script can
		// know: the oracle has nothing to hold it to.
		sum.results["late-hangup"]++
		return v
	}
	vd := s.walk(r, bad, sum)
	if vd == nil {
		return v
	}

	// The observers saw every model call, every retry and the end.
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
	if r.setup.observer && !slices.Equal(r.ownEvents, r.events) {
		bad("the run's own observer saw %d events, the agent's %d: both must see every event, in order", len(r.ownEvents), len(r.events))
	}

	if vd.end == endBreak {
		sum.results["consumer-break"]++
		s.checkBreak(r, vd, bad)
	} else {
		s.checkResult(r, vd, bad, sum)
	}
	s.checkCalls(r, vd, bad)

	// Tools ran for the calls that may run, and only for them.
	if got := int(r.toolRuns.Load()); got > vd.toolRuns || vd.toolsExact && got != vd.toolRuns-vd.notRun {
		bad("tools ran %d times; the delivered calls that may run ask for %d (%d timed out before they began)",
			got, vd.toolRuns, vd.notRun)
	}
	return v
}

// walk is the oracle: it follows the run's exchanges through the contract
// (retries, re-asks, stops, the turn cap, cancellations, the consumer's
// break), checks each request against the run's setup and the request
// before it, and returns how the run must end; nil when the requests did
// not end where the script says.
func (s *soak) walk(r *soakRun, bad func(string, ...any), sum *soakSummary) *verdict {
	vd := &verdict{toolsExact: true, breakTurn: -1}
	var reasks, whole int // of the current turn
	next := nextNone
	exs := r.exchanges
	for i, ex := range exs {
		if vd.end != endNone {
			bad("request #%d (%s) came after the run should have ended (%s) at request #%d (%s)",
				ex.seq, ex.kind, endNames[vd.end], vd.last.seq, vd.last.kind)
			break
		}
		s.checkRequest(r, ex, vd.turn, bad)
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
			if ex.stopKind == agent.ErrMaxTokens {
				sum.maxTokens["empty"]++
			}
		case ex.out == outCancel:
			end = endCancel
		case ex.out == outText:
			whole++
			end = endSuccess
			vd.turnEx = append(vd.turnEx, ex)
			switch {
			case ex.maxTokens && ex.parts[0].thought && len(ex.parts) == 1:
				sum.maxTokens["thought"]++
			case ex.maxTokens:
				sum.maxTokens["text"]++
			}
		case ex.out == outCalls:
			whole++
			vd.turnEx = append(vd.turnEx, ex)
			if ex.hangup {
				var answers []*genai.Content
				switch {
				case i+1 < len(exs):
					answers = exs[i+1].contents
				case r.out.res != nil:
					answers = r.out.res.History
				}
				if r.hangupSkipped(ex, answers) {
					ex.hangup = false // the machine was slower than ToolTimeout: nobody cancelled the run
				}
			}
			var runs, unapproved int // calls that run; those that need no approval
			for j, p := range ex.calls() {
				if r.runsTool(p, j) {
					runs++
					if !r.needsApproval(p, j) {
						unapproved++
					}
				}
			}
			switch {
			case r.breakOn == agent.EventToolCall:
				// The consumer stops at the turn's first EventToolCall,
				// before any call starts: none runs.
				end = endBreak
			case r.breakOn == agent.EventApproval && r.hasApproval(ex):
				// No call that needs approval runs; the others may have.
				vd.toolRuns += unapproved
				end, vd.toolsExact = endBreak, false
			case r.breakOn == agent.EventToolResult:
				vd.toolRuns += runs
				end, vd.toolsExact = endBreak, false // the break cancels the turn's other calls
			case ex.hangup:
				vd.toolRuns += runs
				end, vd.toolsExact = endHangup, false // so does the hangup
			default:
				vd.toolRuns += runs
				vd.wholePerTurn = append(vd.wholePerTurn, whole)
				vd.attemptsPerTurn = append(vd.attemptsPerTurn, vd.attempt)
				vd.turn++
				vd.attempt, reasks, whole = 0, 0, 0
				if vd.turn == r.maxTurns() {
					end = endMaxTurns
				} else {
					next = nextAnswers
				}
			}
			if end == endBreak {
				vd.breakTurn = vd.turn
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

// hangupSkipped reports whether contents answers every hangup call of ex
// within the cap as not run, its timeout having run out before it began:
// then nothing cancelled the run.
func (r *soakRun) hangupSkipped(ex *exchange, contents []*genai.Content) bool {
	n := len(ex.contents)
	if len(contents) < n+2 {
		return false
	}
	answers := contents[n+1].Parts
	for i, p := range ex.calls() {
		if p.kind != callHangup || i >= r.maxCalls() {
			continue
		}
		if i >= len(answers) || answers[i].FunctionResponse == nil ||
			answers[i].FunctionResponse.Response["error"] != fmt.Sprintf("tool hangup was not run: tool call timed out after %v", r.toolTimeout()) {
			return false
		}
	}
	return true
}

// checkRequest checks what a request of turn carried besides its
// contents: the run's system instruction, declarations and candidate
// count, and its tool config, whose forcing mode applies to the first
// turn only (its retries and re-asks included) unless ForceEveryTurn.
func (s *soak) checkRequest(r *soakRun, ex *exchange, turn int, bad func(string, ...any)) {
	st := &r.setup
	if want := r.instruction(); ex.system != want {
		bad("request #%d carries the system instruction %q; want %q", ex.seq, ex.system, want)
	}
	if want := r.toolNames(); ex.toolGroups != 1 || !slices.Equal(ex.decls, want) {
		bad("request #%d declares %v in %d tools; want %v in one", ex.seq, ex.decls, ex.toolGroups, want)
	}
	var count int32
	if st.candidates {
		count = 2
	}
	if ex.candidateCount != count {
		bad("request #%d asks for %d candidates; want %d", ex.seq, ex.candidateCount, count)
	}
	if st.force == "" {
		if ex.toolConfig {
			bad("request #%d carries a tool config (mode %q); the run has none", ex.seq, ex.fcMode)
		}
		return
	}
	mode, names := genai.FunctionCallingConfigModeAny, r.allowedNames()
	if turn > 0 && !st.every {
		mode, names = genai.FunctionCallingConfigModeAuto, nil
	}
	if ex.fcMode != mode || !slices.Equal(ex.fcNames, names) {
		bad("request #%d (turn %d) carries function calling mode %q, allowed names %v; want %q, %v",
			ex.seq, turn, ex.fcMode, ex.fcNames, mode, names)
	}
	if ex.retrieval != "fr" {
		bad("request #%d (turn %d) lost the rest of the tool config (retrieval language %q)", ex.seq, turn, ex.retrieval)
	}
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
	if n := len(r.events); n > 0 && r.events[n-1].Kind == agent.EventDone && !errors.Is(r.events[n-1].Err, agent.ErrStopped) {
		bad("the observer's EventDone after the consumer stopped carries %v; want ErrStopped", r.events[n-1].Err)
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
		var want, thought string
		for _, p := range last.parts {
			if p.thought {
				thought += p.text
			} else {
				want += p.text
			}
		}
		finish := genai.FinishReasonStop
		switch {
		case last.maxTokens:
			// A cut answer is kept, and the run says it is cut.
			finish = genai.FinishReasonMaxTokens
			if !errors.As(err, &se) || !errors.Is(err, agent.ErrMaxTokens) || se.Turn != vd.turn || se.Attempts != vd.attempt ||
				se.FinishReason != genai.FinishReasonMaxTokens {
				bad("the answer of request #%d was cut by MAX_TOKENS, yet the run returned %v; want a *StopError of kind ErrMaxTokens, turn %d after %d attempts",
					last.seq, err, vd.turn, vd.attempt)
			}
		case err != nil:
			bad("the model answered in text in request #%d, yet the run failed: %v", last.seq, err)
		}
		if res.Text != want || res.FinishReason != finish {
			bad("Result.Text = %q, FinishReason %q; want %q, %s", res.Text, res.FinishReason, want, finish)
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
			bad("%d turns of calls, yet the error is %v; want ErrMaxTurns", r.maxTurns(), err)
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
		if last.stopKind == agent.ErrMaxTokens && (se.FinishReason != genai.FinishReasonMaxTokens ||
			res.FinishReason != genai.FinishReasonMaxTokens || res.Text != "") {
			bad("a reply of no parts cut by MAX_TOKENS: StopError.FinishReason %q, Result.FinishReason %q, Result.Text %q; want MAX_TOKENS twice and no text",
				se.FinishReason, res.FinishReason, res.Text)
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
		if i < len(vd.turnEx) {
			s.checkTurn(bad, r, i, vd.turnEx[i], &tn)
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

// checkTurn checks a turn of Result.Turns against the exchange that
// delivered it: the other candidate kept whole, by its index, in the
// response; the results the loop made itself of the kinds errors.Is finds.
func (s *soak) checkTurn(bad func(string, ...any), r *soakRun, i int, ex *exchange, tn *agent.Turn) {
	if len(ex.others) > 0 {
		cands := tn.Response.Candidates
		if len(cands) != 2 || cands[0].Index != 0 || cands[1].Index != 1 || cands[1].Content == nil || len(cands[1].Content.Parts) != 1 {
			j, _ := json.Marshal(cands)
			bad("turn %d: the response's candidates are %s; want candidate 0 and candidate 1 (one part), by index", i, j)
		} else {
			p, want := cands[1].Content.Parts[0], ex.others[0]
			if want.call == nil && (p.Text != want.text || p.FunctionCall != nil) ||
				want.call != nil && (p.FunctionCall == nil || p.FunctionCall.Name != want.call.Name || !sameArgs(p.FunctionCall.Args, want.call.Args)) {
				j, _ := json.Marshal(p)
				bad("turn %d: candidate 1 is %s; the model sent %q %v", i, j, want.text, want.call)
			}
		}
	}
	if ex.out != outCalls || ex.hangup {
		return
	}
	calls := ex.calls()
	for j, tr := range tn.Results {
		if j >= len(calls) {
			break
		}
		if want := r.answerErr(calls[j], j); want != nil && (!tr.IsError || !errors.Is(tr.Err, want)) {
			bad("turn %d: the result of call %d (%s) is error %v (IsError %v); want one matching %v", i, j, calls[j].call.Name, tr.Err, tr.IsError, want)
		}
	}
}

// answerErr is the error kind of the result of call i of a turn, for the
// results the loop makes itself; nil for the others.
func (r *soakRun) answerErr(p scriptPart, i int) error {
	switch {
	case i >= r.maxCalls():
		return agent.ErrTooManyCalls
	case !r.hasTool(p.call.Name):
		return agent.ErrUnknownTool
	}
	switch r.route(p, i) {
	case routeNobody:
		return agent.ErrDenied
	case routeConsumer:
		switch p.decision {
		case decDeny, decUndecided:
			return agent.ErrDenied
		case decAnswerInf:
			return toolset.ErrOutputNotJSON
		}
	case routeIntercept:
		switch p.call.Args["mode"] {
		case "nan", "chan":
			return toolset.ErrOutputNotJSON
		case "deny":
			return agent.ErrDenied
		}
	}
	return nil
}

// checkCalls checks each call of the run against what its tool, the
// interceptor and the observer saw: events hand out the calls as the model
// sent them; approvals are asked where and only where they are due, after
// the turn's EventToolCall events, and decided as the consumer decided;
// tools run only for the calls that may run; the interceptor is asked
// about the calls it decides, once, never after the run's end; with
// MaxParallel 1, results are reported in the order the calls complete,
// each after its call.
func (s *soak) checkCalls(r *soakRun, vd *verdict, bad func(string, ...any)) {
	approvals := map[int][]*agent.Event{}
	lastCallEvent := map[int]int{} // per turn, the position of its last EventToolCall
	for k, e := range r.events {
		switch e.Kind {
		case agent.EventToolCall:
			lastCallEvent[e.Turn] = k
		case agent.EventApproval:
			if len(approvals[e.Turn]) == 0 && k < lastCallEvent[e.Turn] {
				bad("turn %d: an EventApproval came before the turn's last EventToolCall", e.Turn)
			}
			approvals[e.Turn] = append(approvals[e.Turn], e)
		}
		if e.Call == nil {
			continue
		}
		p, ok := vd.call(e.Turn, e.Index)
		if !ok {
			bad("%s for call %d of turn %d, which the model never sent", e.Kind, e.Index, e.Turn)
			continue
		}
		if e.Call.Name != p.call.Name || !sameArgs(e.Call.Args, p.call.Args) {
			j, _ := json.Marshal(e.Call.Args)
			want, _ := json.Marshal(p.call.Args)
			bad("the call of %s %d of turn %d reads %s(%s) after the run; the model sent %s(%s)", e.Kind, e.Index, e.Turn, e.Call.Name, j, p.call.Name, want)
		}
	}
	for t, ex := range vd.turnEx {
		if ex.out != outCalls {
			continue
		}
		calls := ex.calls()
		broke := t == vd.breakTurn
		beforeStart := broke && r.breakOn == agent.EventToolCall // every call starts after the run is cancelled
		racy := ex.hangup || broke && (r.breakOn == agent.EventToolResult || r.breakOn == agent.EventApproval)

		var want, got []int
		for j, p := range calls {
			if r.stream && r.needsApproval(p, j) && !beforeStart {
				want = append(want, j)
			}
		}
		if broke && r.breakOn == agent.EventApproval {
			want = want[:1] // the consumer stopped at the first
		}
		for _, e := range approvals[t] {
			got = append(got, e.Index)
			p, _ := vd.call(t, e.Index)
			switch {
			case e.Approval == nil || e.Approval.Call != e.Call || e.Tool == nil || e.Tool.Name != e.Call.Name:
				bad("turn %d: the EventApproval of call %d does not carry the call, its tool and an Approval for it", t, e.Index)
			case e.Approval.Decided() != (p.decision != decUndecided && !(broke && r.breakOn == agent.EventApproval)):
				bad("turn %d: the approval of call %d reports Decided() %v; the consumer's decision was %s (a late one does not count)",
					t, e.Index, e.Approval.Decided(), decisionNames[p.decision])
			}
		}
		if !slices.Equal(got, want) {
			bad("turn %d: approvals were asked for calls %v; want %v", t, got, want)
		}

		var order []*callRecord
		for j, p := range calls {
			rec := r.records[callRef{t, j}]
			if rec == nil {
				rec = &callRecord{}
			}
			switch {
			case beforeStart:
				if rec.ran || rec.asked > 0 {
					bad("turn %d: the consumer stopped at the turn's first EventToolCall, before any call started, yet call %d (%s) ran (%v) or the interceptor was asked about it (%d times)",
						t, j, p.call.Name, rec.ran, rec.asked)
				}
			case broke && r.breakOn == agent.EventApproval && r.needsApproval(p, j):
				if rec.ran {
					bad("turn %d: call %d (%s) needed approval and the consumer stopped at an approval, yet it ran", t, j, p.call.Name)
				}
			case racy:
			default:
				if rec.ran && !r.runsTool(p, j) {
					bad("turn %d: call %d (%s, %s) ran; it may not", t, j, p.call.Name, callKindNames[p.kind])
				}
				asks := 0
				if r.asksInterceptor(p, j) {
					asks = 1
				}
				if rec.asked != asks {
					bad("turn %d: the interceptor was asked %d times about call %d (%s); want %d", t, rec.asked, j, p.call.Name, asks)
				}
				if rec.returned > 0 && rec.reported > 0 {
					order = append(order, rec)
				}
			}
			if rec.askedDone && !racy {
				bad("turn %d: the interceptor was asked about call %d (%s) once the run's context was done", t, j, p.call.Name)
			}
		}
		if r.gated() {
			slices.SortFunc(order, func(a, b *callRecord) int { return int(a.returned - b.returned) })
			for k, rec := range order {
				if rec.reported < rec.returned {
					bad("turn %d: a result was reported before its tool returned", t)
				}
				if r.setup.maxParallel == 1 && k > 0 && rec.reported < order[k-1].reported {
					bad("turn %d: with MaxParallel 1, results were not reported in the order their calls completed", t)
				}
			}
		}
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
		_, marked := fr.Response["denied"]
		if denied, _ := fr.Response["denied"].(bool); len(fr.Response) != 1 && (!isError || !denied || len(fr.Response) != 2) || marked && !denied || isResult == isError {
			bad("%s: answer %d is %v, not {\"result\": …}, {\"error\": …} or {\"error\": …, \"denied\": true}", where, i, fr.Response)
			continue
		}
		if sum != nil && i < len(scripted) {
			sp := scripted[i]
			sum.calls[callKindNames[sp.kind]]++
			switch {
			case i >= r.maxCalls():
				sum.calls["over-cap"]++
			case !r.hasTool(sp.call.Name):
			case r.route(sp, i) == routeConsumer:
				sum.approvals[decisionNames[sp.decision]]++
			case r.route(sp, i) == routeNobody:
				sum.approvals["nobody-to-ask"]++
			case sp.kind == callVault && r.route(sp, i) == routeIntercept:
				sum.vault[sp.call.Args["mode"].(string)]++
			case sp.kind == callVault:
				sum.vault["not-intercepted"]++
			}
			if s, ok := fr.Response["result"].(string); ok && strings.HasPrefix(s, "[output truncated: ") {
				sum.capped++
			}
		}
		if prev.hangup || i >= len(scripted) {
			continue // the run was cancelled under the calls: any answer will do
		}
		ok, late := s.expectedAnswer(r, scripted[i], i, len(scripted), fr.Response)
		if !ok {
			j, _ := json.Marshal(fr.Response)
			bad("%s: call %d (%s, %s) was answered %.300s", where, i, scripted[i].call.Name, callKindNames[scripted[i].kind], j)
		}
		if late && sum != nil {
			sum.late++
		}
		if strings.Contains(fmt.Sprint(msg), " was not run: ") && r.runsTool(scripted[i], i) {
			notRun++
		}
	}
	return notRun
}

// expectedAnswer reports whether resp is the answer to call i of n, and
// whether it is the timing-dependent alternative: a tool that should have
// answered at once timed out, or one that should have timed out answered
// (the machine was slower than ToolTimeout). An answer is marked denied
// ("denied": true) exactly when the call was refused rather than run.
func (s *soak) expectedAnswer(r *soakRun, p scriptPart, i, n int, resp map[string]any) (ok, late bool) {
	ok, late = s.expectedOutcome(r, p, i, n, resp)
	return ok && refusal(r, p, i) == (resp["denied"] == true), late
}

// refusal reports whether call i is refused rather than run: nobody can
// approve it, the consumer denies it or decides nothing, or the
// interceptor denies it.
func refusal(r *soakRun, p scriptPart, i int) bool {
	if i >= r.maxCalls() || !r.hasTool(p.call.Name) {
		return false
	}
	switch r.route(p, i) {
	case routeNobody:
		return true
	case routeConsumer:
		return p.decision == decDeny || p.decision == decUndecided
	case routeIntercept:
		return p.kind == callVault && p.call.Args["mode"] == "deny"
	}
	return false
}

// expectedOutcome is expectedAnswer without the denial mark.
func (s *soak) expectedOutcome(r *soakRun, p scriptPart, i, n int, resp map[string]any) (ok, late bool) {
	errMsg, _ := resp["error"].(string)
	result, isResult := resp["result"]
	name := p.call.Name
	switch {
	case i >= r.maxCalls():
		return strings.HasPrefix(errMsg, fmt.Sprintf("not run: %d function calls came in one turn and at most %d are run per turn", n, r.maxCalls())), false
	case !r.hasTool(name):
		return errMsg == fmt.Sprintf("unknown tool %q; available tools: %s", name, strings.Join(r.toolNames(), ", ")), false
	}
	switch r.route(p, i) {
	case routeNobody:
		return errMsg == "tool "+name+" was not run: it needs approval, and nobody was asked (Run has no Interceptor)", false
	case routeConsumer:
		switch p.decision {
		case decDeny:
			return errMsg == soakDenial, false
		case decAnswer:
			return result == soakConsumerAnswer, false
		case decAnswerBig:
			return isResult && cappedOK(result, soakBigAnswer, r.maxOutput()), false
		case decAnswerInf:
			return errMsg == refused(name, math.Inf(1)), false
		case decUndecided:
			return errMsg == "tool "+name+" was not run: it needed approval and was not approved", false
		}
	case routeIntercept:
		if p.kind == callVault {
			switch p.call.Args["mode"] {
			case "nan":
				return errMsg == refused(name, math.NaN()), false
			case "chan":
				return errMsg == refused(name, map[string]any{"c": make(chan int)}), false
			case "big":
				return isResult && cappedOK(result, soakBigAnswer, r.maxOutput()), false
			case "deny":
				return errMsg == soakVaultDenial, false
			case "answer":
				a, _ := json.Marshal(result)
				b, _ := json.Marshal(soakVaultAnswer)
				return bytes.Equal(a, b), false
			}
		}
	}
	// The tool runs.
	timeout := fmt.Sprintf("tool %s was stopped: tool call timed out after %v", name, r.toolTimeout())
	notRun := fmt.Sprintf("tool %s was not run: tool call timed out after %v", name, r.toolTimeout())
	long := r.toolTimeout() > 4*soakToolTimeout // no tool sleeps that long
	switch {
	case errMsg == notRun: // the timeout ran out before Execute began
		return true, true
	case p.kind == callBadArgs:
		return strings.HasPrefix(errMsg, "invalid arguments for "+name), false
	case errMsg == timeout:
		return !long, p.kind != callSlow && p.kind != callStubborn
	case p.kind == callOK:
		return result == "sunny in "+p.call.Args["city"].(string), false
	case p.kind == callFails:
		return errMsg == "backend unavailable", false
	case p.kind == callPanics:
		return errMsg == "tool panics failed: it panicked: boom", false
	case p.kind == callSlow:
		return result == "too late", !long
	case p.kind == callStubborn:
		return result == "ignored", !long
	case p.kind == callDefaults:
		return result == forecastAnswer(p.call.Args), false
	case p.kind == callVault:
		return isResult && cappedOK(result, soakVaultOutput, r.maxOutput()), false
	case p.kind == callClock:
		return result == "12:00", false
	}
	return false, false
}

// forecastAnswer is what the forecast tool answers to args: the defaults
// of its schema fill in what args leave out, nested objects included.
func forecastAnswer(args map[string]any) string {
	unit, hourly := any("celsius"), any(false)
	if opts, ok := args["opts"].(map[string]any); ok {
		if v, ok := opts["unit"]; ok {
			unit = v
		}
		if detail, ok := opts["detail"].(map[string]any); ok {
			if v, ok := detail["hourly"]; ok {
				hourly = v
			}
		}
	}
	return fmt.Sprintf("%v: %v, hourly %v", args["city"], unit, hourly)
}

// refused is the answer to a call whose answer, given in place of running
// its tool, does not encode.
func refused(name string, answer any) string {
	return fmt.Sprintf("tool %s was not run, and the answer given in its place was refused: %v", name, toolset.CheckOutput(answer))
}

// cappedOK reports whether got is output as a bound of limit bytes of JSON
// (negative: none) lets it through: whole when its JSON fits; else a note
// saying it was cut and how large it was, followed by as much of its start
// as fits, escaped, with the note counted at its longest.
func cappedOK(got any, output string, limit int) bool {
	s, ok := got.(string)
	if !ok {
		return false
	}
	size := jsonStringLen(output)
	if limit < 0 || size <= limit {
		return s == output
	}
	note := func(kept int) string {
		return fmt.Sprintf("[output truncated: it was %d bytes of JSON, over the limit of %d; the first %d bytes follow]\n", size, limit, kept)
	}
	budget, keep := limit-jsonStringLen(note(len(output))), 0
	for i, c := range output {
		w := jsonStringLen(string(c)) - 2
		if w > budget {
			break
		}
		budget -= w
		keep = i + len(string(c))
	}
	return s == note(keep)+output[:keep] && jsonStringLen(s) <= limit
}

// jsonStringLen is the length of s encoded as JSON by encoding/json, as
// the SDK sends it.
func jsonStringLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
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
			got, _ := json.Marshal(fc.Args)
			want, _ := json.Marshal(sp.call.Args)
			bad("%s: call %d of request #%d is %s(%s); the model sent %s(%s)", where, i, prev.seq, fc.Name, got, sp.call.Name, want)
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

// sameArgs reports whether two calls' arguments encode to the same JSON,
// byte for byte.
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
