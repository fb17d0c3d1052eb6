package agentserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// run is one run of the local runner: its log, its pending calls, its
// entries, and what its goroutine needs to turn the agent's events into
// records while it runs.
type run struct {
	id, thread, conversation, user string
	l                              *localRunner
	message                        *genai.Content // Input.Message
	tools                          []ToolDecl     // Input.Tools
	cancel                         context.CancelCauseFunc
	started                        time.Time

	mu      sync.Mutex
	records []Record // the log, in offset order, from offset base
	// base is the offset of records[0]: 0, until the log of a run that
	// is over is cut to its last record (see trimLocked).
	base int64
	// keepLog says to keep the log once the run is over (Input.KeepLog);
	// joined is set once its offsets may have gaps (its text joined, or
	// the log rebuilt from the run's entries).
	keepLog, joined bool
	readers         []chan struct{} // each cursor's wake-up, signalled at each record
	endRead         bool            // a cursor read the KindDone record
	state           State
	done            *Done
	// phase is the run's in this process: running on its goroutine,
	// parked (waiting for decisions, no goroutine), or over.
	phase int
	// unwound is set while the run's goroutine ends at its pause to park
	// the run, and closed once it is parked (see park).
	unwound chan struct{}
	// ended and over are set by localRunner.ended, under its lock.
	ended time.Time
	over  bool
	// pending holds the calls the parked run waits for, decided or not;
	// order keeps them in the order they were paused.
	pending map[string]*pendingCall
	order   []string
	// settled remembers the calls decided or expired, so that a second
	// decision is told which it was.
	settled map[string]error
	// waitOf maps the calls of the turn that wait to their Call.
	waitOf map[*genai.FunctionCall]*Call
	// entries are the run's journal entries, as written (or read from
	// the store): what the run goes on from when it is woken. unsaved is
	// set once one could not be written to the store.
	entries []*entry
	stored  int // how many of them the store's journal holds
	unsaved bool

	// On a session.Journaler: claimed says this process holds the run's
	// journal; claimedAt when the last claim or write of it that proved
	// the claim began (leases); lost that the run is no longer this
	// process's, which writes nothing more of it. remote marks a copy,
	// from the store, of a run that another server holds.
	claimed   atomic.Bool
	claimedAt atomic.Int64
	lost      atomic.Bool
	remote    bool
	// parked is set while a Stream of the run ends because it parks, for
	// the observer, which runs on the loop's goroutines.
	parked atomic.Bool

	// What only the run's goroutine touches.
	ctx      context.Context
	browser  map[string]bool // the browser tools' names
	n        int             // the function calls of the turn
	calls    []*Call         // this turn's calls, by index
	waits    int             // this turn's calls that wait for a decision
	answered int             // results of this turn's calls that do not wait
	paused   bool            // this turn's pause was published
	parking  bool            // the run parks: what the loop reports now is not the run's
	observed bool            // this process's Config.Observer was shown the run
	agentRan bool            // the agent's EventDone was observed
	agentErr error           // the agent's own error
	holds    []bool          // which of this turn's calls wait for a decision
	// The offsets of this turn's step, and of the first pieces of its
	// thoughts and text: its entry keeps them.
	stepAt, thoughtAt, textAt int64
	// shown is the text of the answer in progress its readers were
	// shown: saved with the run when the run ends before the answer is
	// whole (Close, a cancel).
	shown strings.Builder

	// answer is the entry of a turn without calls, the run's answer, not
	// written yet: EndRun, which comes at once, stores it with the run
	// (one write less per run); it is written as a step of its own only
	// when something else comes first (see flushAnswer).
	answer *entry
	// A run that goes on from its entries (recovered, or woken) resumes
	// the turn they end with (resumed): the agent's turn 0 is that turn,
	// turnBase, whose calls' fate prior holds (see priorAnswer). finished
	// is set when the entries hold the run's answer whole.
	resumed  bool
	turnBase int
	prior    map[*genai.FunctionCall]*prior
	finished bool
}

type pendingCall struct {
	Pending
	decided  bool
	decision Decision
}

func newRun(id string, in *Input, l *localRunner) *run {
	r := &run{
		id: id, thread: in.Thread, conversation: in.Conversation, user: in.User, l: l, keepLog: in.KeepLog, message: in.Message,
		tools: in.Tools, started: time.Now(), state: StateRunning,
		settled: map[string]error{}, waitOf: map[*genai.FunctionCall]*Call{},
		records: make([]Record, 0, 16),
	}
	for _, t := range in.Tools {
		if r.browser == nil {
			r.browser = map[string]bool{}
		}
		r.browser[t.Name] = true
	}
	return r
}

// add appends a record to the log and wakes its readers.
func (r *run) add(rec Record) {
	r.mu.Lock()
	r.addLocked(rec)
	r.mu.Unlock()
}

func (r *run) addLocked(rec Record) {
	r.addAt(rec, r.lenLocked())
}

// addAt appends a record to the log at offset at, or at the log's end
// when at is not past it (the offset a record of an older journal, or of
// one written twice, cannot have). r.mu is held.
func (r *run) addAt(rec Record, at int64) {
	rec.Offset = max(at, r.lenLocked())
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	r.records = append(r.records, rec)
	for _, c := range r.readers {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// info describes the run.
func (r *run) info() RunInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	info := RunInfo{ID: r.id, Thread: r.conversation, User: r.user, State: r.state, Started: r.started,
		Len: r.lenLocked(), Done: r.done, Message: r.message}
	if r.done != nil {
		info.Ended = r.records[len(r.records)-1].Time
	}
	if r.state == StateWaiting {
		for _, id := range r.order {
			if p := r.pending[id]; p != nil && !p.decided {
				info.Pending = append(info.Pending, p.Pending)
			}
		}
	}
	return info
}

// waitsFor returns what call index of the n calls of a turn waits for:
// a call of a browser tool waits for its result, a call the agent's own
// Config.NeedsApproval picks for its approval, as the loop would decide
// it (Steps.PlanCall: a call it cannot run, over the cap or of an unknown
// tool, waits for nothing).
func (r *run) waitsFor(index, n int, call *genai.FunctionCall) PendingKind {
	if r.browser[call.Name] {
		if index < r.l.agent.Steps().Limits().MaxCallsPerTurn {
			return WaitBrowser
		}
		return ""
	}
	if answer, yes := r.l.agent.Steps().PlanCall(r.ctx, index, n, call); answer == nil && yes {
		return WaitApproval
	}
	return ""
}

// intercept is the run's Config.Intercept. A call that waits (see
// waitsFor) for a decision nobody took waits here, on its own goroutine,
// until the run parks (which it does once the turn's other calls have
// their results, see pauseIfDone) or ends: the loop meanwhile reports the
// results of the turn's other calls as they complete, so that the pause
// comes after them. A call of a resumed turn gets what the run's entries
// say of it (priorAnswer). Other calls go to the agent's own
// Interceptor, if any. Before a call's tool runs, the run proves that it
// is still this process's (prove).
func (r *run) intercept(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
	r.mu.Lock()
	c, p := r.waitOf[call], r.prior[call]
	r.mu.Unlock()
	if p != nil {
		if res, ok := r.priorAnswer(ctx, call, p, c != nil); ok {
			if res != nil {
				return res
			}
			return r.startCall(ctx, call)
		}
	}
	if c != nil {
		<-ctx.Done()
		return &toolset.Result{IsError: true, Err: context.Cause(ctx),
			Output: "tool " + call.Name + " was not run: the run ended before anyone decided about it"}
	}
	if base := r.l.agent.Steps().Interceptor(); base != nil {
		if res := base(ctx, call); res != nil {
			return res
		}
	}
	return r.startCall(ctx, call)
}

// startCall returns nil, for call's tool to run, once the run proved it
// is still this process's; or, when the run ends or cannot prove it, the
// call's answer without running it.
func (r *run) startCall(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
	if ctx.Err() == nil {
		if err := r.prove(ctx); err != nil {
			r.halt(err)
		}
	}
	if ctx.Err() != nil {
		return r.notRun(ctx, call)
	}
	return nil
}

// notRun is the answer of a call that the run's end (or its parking)
// kept from running.
func (r *run) notRun(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
	return &toolset.Result{IsError: true, Err: context.Cause(ctx),
		Output: "tool " + call.Name + " was not run: the run ended before it could run"}
}

// halt stops the run, which cannot prove it is still this process's
// (err): one that is not is lost already; otherwise (the store failed)
// it is stopped before its next step, and saved as far as it went.
func (r *run) halt(err error) {
	if errors.Is(err, errTakenOver) || r.lost.Load() || r.ctx.Err() != nil {
		return // lost already, or ending
	}
	r.l.logger.LogAttrs(r.ctx, slog.LevelError, "agentserver: the server cannot prove it still holds the run: it stops", slog.String("run", r.id),
		slog.String("thread", r.conversation), slog.Any("error", err))
	r.cancel(fmt.Errorf("%w: %w", errNoProof, err))
}

// decisionAnswer returns what a call that waited for d answers: nil when
// it was approved, and its tool runs.
func decisionAnswer(call *genai.FunctionCall, wait PendingKind, d Decision) *toolset.Result {
	switch {
	case d.Expired:
		return agent.NotApproved(call, d.Reason)
	case wait == WaitBrowser && d.Error != "":
		return &toolset.Result{IsError: true, Output: d.Error, Err: errBrowserFailed}
	case wait == WaitBrowser:
		return agent.Answer(d.Output)
	case d.Approved:
		return nil // the tool runs
	}
	return agent.Deny(cmpOr(d.Reason, "the user denied this call"))
}

// errBrowserFailed is the Err of a browser tool's call answered with an
// error.
var errBrowserFailed = errors.New("agentserver: the browser tool failed")

// observer returns Config.Observer as this Stream of the run shows
// itself to it. A run that parks ends its agent.Stream at its pause, and
// a new Stream resumes it: an Observer that is not an
// agent.ContextObserver sees one run all the same, its events
// continuing (the end of the Stream that parks is not shown, nor, when
// this process showed the run before, the start of the one that resumes
// it and its resumed turn's calls; turns are numbered as the run's). A
// ContextObserver (tracing), which must see the end of every step it
// began, sees each Stream as it is.
func (r *run) observer() agent.Observer {
	o := r.l.observer
	if o == nil {
		return nil
	}
	if _, ok := o.(agent.ContextObserver); ok {
		return o
	}
	seen, base, resumed := r.observed, r.turnBase, r.resumed
	r.observed = true
	return agent.ObserverFunc(func(ctx context.Context, e *agent.Event) {
		if r.parked.Load() {
			return // the end of a Stream that parks
		}
		if e.Parent == nil {
			if seen && (e.Kind == agent.EventRunStart || resumed && e.Turn == 0 && e.Kind == agent.EventToolCall) {
				return
			}
			if base > 0 {
				ev := *e
				ev.Turn += base
				e = &ev
			}
		}
		o.Observe(ctx, e)
	})
}

// observeDone notes the agent's own end: its error, before the store's
// is joined to it.
func (r *run) observeDone(_ context.Context, e *agent.Event) {
	if e.Kind == agent.EventDone && e.Parent == nil {
		r.agentRan, r.agentErr = true, e.Err
	}
}

// callID is the id of call index of turn.
func (r *run) callID(turn, index int) string {
	b := make([]byte, 0, len(r.id)+12)
	b = append(b, r.id...)
	b = append(b, "-c"...)
	b = strconv.AppendInt(b, int64(turn), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(index), 10)
	return string(b)
}

// event turns one of the agent's events into records, and journals each
// step before the record that shows it (see the package documentation,
// "Durable runs"). Once the run parks, what the loop reports (the calls
// that wait, stopped) is not the run's: it is ignored.
func (r *run) event(ctx context.Context, e *agent.Event) {
	if r.parking || r.lost.Load() {
		return
	}
	turn := e.Turn + r.turnBase
	resumed := r.resumed && e.Turn == 0 // the turn a run that goes on from its entries resumes: its calls were shown
	switch e.Kind {
	case agent.EventModelRequest:
		r.flushAnswer(ctx)
		if e.Attempt == 1 {
			r.calls, r.holds, r.n, r.waits, r.answered, r.paused = r.calls[:0], r.holds[:0], 0, 0, 0, false
			r.shown.Reset()
			r.mu.Lock()
			r.stepAt, r.thoughtAt, r.textAt = r.lenLocked(), 0, 0
			r.addLocked(Record{Kind: KindStep, Turn: turn})
			r.mu.Unlock()
		}
		// The model call must not be sent by a server that lost the run.
		if ctx.Err() == nil {
			if err := r.prove(ctx); err != nil {
				r.halt(err)
			}
		}
	case agent.EventModelResponse:
		if c := e.Response.Candidates; len(c) > 0 && c[0].Content != nil {
			r.n = len(agent.FunctionCalls(c[0].Content))
			u := e.Usage
			t := &entry{Kind: entryTurn, Turn: turn, Content: c[0].Content, Usage: &u, At: r.length(),
				StepAt: r.stepAt, ThoughtAt: r.thoughtAt, TextAt: r.textAt}
			if r.n == 0 {
				r.answer = t
			} else if err := r.write(ctx, t); err != nil && !errors.Is(err, errTakenOver) {
				// The turn that asks for the calls is not stored: none of
				// them may run (a crash would ask the model again, and
				// run them twice).
				r.l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: a turn could not be stored: the run stops before its calls",
					slog.String("run", r.id), slog.String("thread", r.conversation), slog.Any("error", err))
				r.cancel(errStepNotStored)
			}
		}
		r.shown.Reset()
	case agent.EventText:
		r.shown.WriteString(e.Text)
		r.mu.Lock()
		if r.textAt == 0 {
			r.textAt = r.lenLocked()
		}
		r.addLocked(Record{Kind: KindText, Turn: turn, Text: e.Text})
		r.mu.Unlock()
	case agent.EventThought:
		r.mu.Lock()
		if r.thoughtAt == 0 {
			r.thoughtAt = r.lenLocked()
		}
		r.addLocked(Record{Kind: KindThought, Turn: turn, Text: e.Text})
		r.mu.Unlock()
	case agent.EventRetry:
		r.add(Record{Kind: KindRetry, Turn: turn, Retry: &Retry{Attempt: e.Attempt, Delay: e.Delay, Reason: retryReason(e.Err)}})
	case agent.EventToolCall:
		c := &Call{ID: r.callID(turn, e.Index), Name: e.Call.Name, Args: argsJSON(e.Call.Args)}
		c.Wait = r.waitsFor(e.Index, max(r.n, e.Index+1), e.Call)
		for len(r.calls) <= e.Index {
			r.calls = append(r.calls, nil)
			r.holds = append(r.holds, false)
		}
		r.calls[e.Index] = c
		r.mu.Lock()
		// A call of a resumed turn whose result or decision was journaled
		// waits for nothing more.
		if p := r.prior[e.Call]; c.Wait != "" && (!resumed || p == nil || (p.result == nil && p.decision == nil)) {
			r.waitOf[e.Call] = c
			r.holds[e.Index] = true
			r.waits++
		}
		if !resumed {
			r.addLocked(Record{Kind: KindToolCall, Turn: turn, Call: c})
		}
		r.mu.Unlock()
		if e.Index == r.n-1 {
			r.pauseIfDone(ctx, turn)
		}
	case agent.EventToolProgress:
		p := e.Progress
		r.add(Record{Kind: KindProgress, Turn: turn, Call: r.callAt(turn, e), Progress: &Progress{Done: p.Done, Total: p.Total, Message: p.Message}})
	case agent.EventToolResult:
		c := r.callAt(turn, e)
		if p := r.prior[e.Call]; !resumed || p == nil || p.result == nil { // a result reused was shown
			shown := r.result(e)
			// A result that cannot be stored is in the run's history all
			// the same, and saved with it; a crash before then answers
			// the call as interrupted.
			r.write(ctx, &entry{Kind: entryResult, Turn: turn, Index: e.Index, Output: resultOutput(e.ToolResult), IsError: e.ToolResult.IsError,
				Shown: shown, At: r.length()})
			r.add(Record{Kind: KindToolResult, Turn: turn, Call: c, Result: shown})
		}
		if e.Index >= len(r.holds) || !r.holds[e.Index] {
			r.answered++
			r.pauseIfDone(ctx, turn)
		}
	case agent.EventTurnEnd:
		u := e.Usage
		r.add(Record{Kind: KindStepEnd, Turn: turn, Usage: &u})
	}
}

// length returns the length of the log: the offset of the next record.
func (r *run) length() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lenLocked()
}

// resultOutput returns what the model is sent of a call's result, as
// JSON: the output, or the error text.
func resultOutput(res *agent.ToolResult) json.RawMessage {
	b, err := json.Marshal(res.Output)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(res.Output))
	}
	return b
}

// callAt returns the Call of the event's call.
func (r *run) callAt(turn int, e *agent.Event) *Call {
	if e.Index < len(r.calls) && r.calls[e.Index] != nil {
		return r.calls[e.Index]
	}
	return &Call{ID: r.callID(turn, e.Index), Name: e.Call.Name, Args: argsJSON(e.Call.Args)}
}

// maxErrorText bounds the error text of a call result in the log.
const maxErrorText = 2000

// result returns the CallResult of an EventToolResult.
func (r *run) result(e *agent.Event) *CallResult {
	res := e.ToolResult
	cr := &CallResult{Duration: res.Duration}
	if res.IsError {
		msg := fmt.Sprint(res.Output)
		if len(msg) > maxErrorText {
			msg = msg[:maxErrorText] + "…"
		}
		cr.Error = msg
		cr.Denied = errors.Is(res.Err, agent.ErrDenied)
		return cr
	}
	out, err := json.Marshal(res.Output)
	if err != nil {
		out = []byte(`"(the output is not JSON)"`) // not reached: the loop checks outputs
	}
	cr.Output = out
	cr.Files = callFiles(res.Media)
	return cr
}

// argsJSON returns a call's arguments as JSON: an object, {} when none.
func argsJSON(args map[string]any) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}") // not reached: args came as JSON
	}
	return b
}

// pauseIfDone publishes the turn's pause, once every call that does not
// wait has its result (so that the clients have them all when the
// response ends at the pause), if some calls wait; then the run parks:
// its context is cancelled with errParked, its agent.Stream ends, and it
// holds no goroutine until something wakes it (see park.go).
func (r *run) pauseIfDone(ctx context.Context, turn int) {
	if r.paused || r.waits == 0 || r.answered < r.n-r.waits || ctx.Err() != nil {
		return // a run that ends does not pause
	}
	r.paused = true
	deadline := time.Now().Add(r.l.approvalTimeout)
	list := make([]Pending, 0, r.waits)
	for i, c := range r.calls {
		if c != nil && r.holds[i] {
			list = append(list, Pending{Call: *c, Kind: c.Wait, Deadline: deadline})
		}
	}
	// Stored, the pause is the store's, released before it is shown: any
	// server may take its decisions. One that cannot be stored leaves
	// the run with this process, claimed: a crash then has the calls
	// wait again.
	if err := r.write(ctx, &entry{Kind: entryPause, Turn: turn, Pending: list, At: r.length()}); errors.Is(err, errTakenOver) {
		return
	}
	if !r.unsaved {
		r.release(ctx)
	}
	r.mu.Lock()
	r.pending = make(map[string]*pendingCall, len(list))
	r.order = r.order[:0]
	for _, p := range list {
		r.pending[p.Call.ID] = &pendingCall{Pending: p}
		r.order = append(r.order, p.Call.ID)
	}
	r.state = StateWaiting
	r.unwound = make(chan struct{})
	r.addLocked(Record{Kind: KindPause, Turn: turn, Pending: list})
	r.mu.Unlock()
	r.parking = true
	r.parked.Store(true)
	r.cancel(errParked)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// finish ends the run with its last record, once it is saved.
func (r *run) finish(ctx context.Context, e *agent.Event) {
	var err error = errNoEnd
	var res *agent.Result
	if e != nil {
		err, res = e.Err, e.Result
	}
	state, failure := outcome(r.agentErr, err, r.agentRan, context.Cause(ctx))
	done := &Done{State: state, Error: failure}
	if res != nil {
		done.Text, done.Usage = res.Text, res.Usage
		if res.Output != nil && err == nil {
			if b, err := json.Marshal(res.Output); err == nil {
				done.Output = b
			}
		}
	}
	if err != nil {
		level := slog.LevelWarn
		if state == StateCancelled {
			level = slog.LevelInfo
		}
		r.l.logger.LogAttrs(ctx, level, "agentserver: run ended", slog.String("run", r.id), slog.String("thread", r.conversation),
			slog.String("code", failure.Code), slog.Any("error", err))
	}
	now := time.Now()
	r.l.ended(r, now, true)
	r.mu.Lock()
	r.phase = phaseOver
	r.state, r.done = state, done
	r.pending, r.order = nil, nil
	r.addLocked(Record{Kind: KindDone, Time: now, Turn: r.lastTurnLocked(), Done: done})
	r.trimLocked()
	r.mu.Unlock()
}

// lenLocked returns the length of the log: the offset of the next record.
func (r *run) lenLocked() int64 {
	if n := len(r.records); n > 0 {
		return r.records[n-1].Offset + 1
	}
	return r.base
}

// indexLocked returns the index in r.records of the first record at or
// after offset pos (len(r.records) when there is none).
func (r *run) indexLocked(pos int64) int {
	switch {
	case pos <= r.base:
		return 0
	case !r.joined:
		return int(min(pos-r.base, int64(len(r.records))))
	}
	i, _ := slices.BinarySearchFunc(r.records, pos, func(rec Record, pos int64) int { return cmp.Compare(rec.Offset, pos) })
	return i
}

// trimLocked cuts the log of a run that is over, and that nobody reads
// any more, to its last record: a run is kept for a while after its end, to be
// looked up and its late decisions answered, and its records would make
// that costly. A reader that attaches later reads the end.
//
// A log is cut only once a reader has read its end: a request that
// started or continued the run may attach after the run ended, and must
// still read what the run did. The log of a run started with KeepLog is
// not cut: its text is joined instead (see joinLocked).
func (r *run) trimLocked() {
	if r.done == nil || len(r.readers) > 0 {
		return
	}
	if r.keepLog {
		r.joinLocked()
		return
	}
	if !r.endRead || len(r.records) <= 1 {
		return
	}
	last := r.records[len(r.records)-1]
	r.base = last.Offset
	r.records = []Record{last}
}

// joinLocked joins the pieces of text of each turn that follow one
// another in the log into one record, and the pieces of thoughts so too:
// the record keeps its first piece's offset and time. A kept log then
// holds each text once, as the thread does, and a record per call, result
// and turn. Nobody reads the log (a reader's offset could fall among
// the pieces), and the run is over: no record comes after.
func (r *run) joinLocked() {
	if r.joined {
		return
	}
	r.joined = true
	n := 0
	for i := range r.records {
		if i == 0 || !continues(&r.records[i-1], &r.records[i]) {
			n++
		}
	}
	if n == len(r.records) {
		return
	}
	out := make([]Record, 0, n)
	for i := 0; i < len(r.records); {
		rec := r.records[i]
		j := i + 1
		for j < len(r.records) && continues(&r.records[j-1], &r.records[j]) {
			j++
		}
		if j > i+1 {
			var b strings.Builder
			size := 0
			for k := i; k < j; k++ {
				size += len(r.records[k].Text)
			}
			b.Grow(size)
			for k := i; k < j; k++ {
				b.WriteString(r.records[k].Text)
			}
			rec.Text = b.String()
		}
		out = append(out, rec)
		i = j
	}
	r.records = out
}

// continues reports whether rec is a piece of the same text as prev: of
// the same turn, and both the answer's text or both thoughts.
func continues(prev, rec *Record) bool {
	return (rec.Kind == KindText || rec.Kind == KindThought) && rec.Kind == prev.Kind && rec.Turn == prev.Turn
}

func (r *run) lastTurnLocked() int {
	for i := len(r.records) - 1; i >= 0; i-- {
		if r.records[i].Kind == KindStep {
			return r.records[i].Turn
		}
	}
	return 0
}

// MaxReaders bounds the cursors that read one run of the in-process
// runner at a time, other than those of the requests that decide its
// calls: Attach refuses more (429, ErrTooManyReaders), so that one user
// cannot open streams on a run without bound (each record wakes every
// reader).
const MaxReaders = 32

// attach returns a cursor on the log at offset.
func (r *run) attach(offset int64) (Cursor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if offset < 0 || offset > r.lenLocked() {
		return nil, BadRequest(0, "bad_offset", "offset %d is not in the run's log (%d records)", offset, r.lenLocked())
	}
	if len(r.readers) >= MaxReaders {
		return nil, newError(http.StatusTooManyRequests, "too_many_readers", ErrTooManyReaders,
			"%d streams read this run already: close one first", MaxReaders)
	}
	return r.attachLocked(offset), nil
}

func (r *run) attachLocked(offset int64) *cursor {
	c := &cursor{r: r, pos: offset, wake: make(chan struct{}, 1)}
	r.readers = append(r.readers, c.wake)
	return c
}

// cursor is a reader of a run's log.
type cursor struct {
	r     *run
	pos   int64
	wake  chan struct{}
	timer *time.Timer
}

// Next implements [Cursor].
func (c *cursor) Next(ctx context.Context, wait time.Duration) (Record, bool, error) {
	for {
		r := c.r
		r.mu.Lock()
		// A log that was cut holds its end from base; one that was joined
		// has gaps in its offsets: the cursor reads the next record there is.
		if i := r.indexLocked(c.pos); i < len(r.records) {
			rec := r.records[i]
			c.pos = rec.Offset + 1
			if rec.Kind == KindDone {
				r.endRead = true
			}
			r.mu.Unlock()
			return rec, true, nil
		}
		over := r.done != nil
		r.mu.Unlock()
		if over {
			return Record{}, false, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return Record{}, false, err
		}
		if wait <= 0 {
			return Record{}, false, nil
		}
		if c.timer == nil {
			c.timer = time.NewTimer(wait)
		} else {
			c.timer.Reset(wait)
		}
		select {
		case <-c.wake:
			c.timer.Stop()
		case <-c.timer.C:
			// The wait ran out; a record may have come at the last moment.
			wait = 0
		case <-ctx.Done():
			c.timer.Stop()
			return Record{}, false, ctx.Err()
		}
	}
}

// Buffered implements [Cursor].
func (c *cursor) Buffered() int {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return len(c.r.records) - c.r.indexLocked(c.pos)
}

// Close implements [Cursor].
func (c *cursor) Close() {
	r := c.r
	r.mu.Lock()
	if i := slices.Index(r.readers, c.wake); i >= 0 {
		r.readers = slices.Delete(r.readers, i, i+1)
	}
	r.trimLocked()
	idle := r.phase == phaseParked && len(r.readers) == 0
	r.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	if idle {
		r.l.cool(r)
	}
}
