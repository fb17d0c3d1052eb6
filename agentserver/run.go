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

// run is one run of the local runner: its log, its pending calls, and
// what its goroutine needs to turn the agent's events into records.
type run struct {
	id, thread, conversation, user string
	l                              *localRunner
	message                        *genai.Content // Input.Message
	cancel                         context.CancelCauseFunc
	started                        time.Time

	mu      sync.Mutex
	records []Record // the log, in offset order, from offset base
	// base is the offset of records[0]: 0, until the log of a run that
	// is over is cut to its last record (see trimLocked).
	base int64
	// keepLog says to keep the log once the run is over (Input.KeepLog);
	// joined is set once its text was joined, so that its offsets have
	// gaps.
	keepLog, joined bool
	readers         []chan struct{} // each cursor's wake-up, signalled at each record
	endRead         bool            // a cursor read the KindDone record
	state           State
	done            *Done
	// ended and over are set by localRunner.ended, under its lock.
	ended time.Time
	over  bool
	// pending holds the calls that wait, decided or not, until the call
	// takes its decision; order keeps them in the order they were paused.
	pending map[string]*pendingCall
	order   []string
	// settled remembers the calls decided or expired, so that a second
	// decision is told which it was.
	settled map[string]error
	// decided is closed, and replaced, when decisions arrive: every call
	// that waits wakes up to look for its own.
	decided chan struct{}
	// waitOf maps the calls of the turn that wait to their Call.
	waitOf map[*genai.FunctionCall]*Call

	// What only the run's goroutine touches.
	ctx      context.Context
	browser  map[string]bool // the browser tools' names
	n        int             // the function calls of the turn
	calls    []*Call         // this turn's calls, by index
	waits    int             // this turn's calls that wait for a decision
	answered int             // results of this turn's calls that do not wait
	paused   bool            // this turn's pause was published
	agentRan bool            // the agent's EventDone was observed
	agentErr error           // the agent's own error
	holds    []bool          // which of this turn's calls wait for a decision
	// shown is the text of the answer in progress its readers were
	// shown: saved with the run when the run ends before the answer is
	// whole (Close, a cancel).
	shown strings.Builder

	// journal writes the run's steps to the store, when it is a
	// session.Journaler; nil otherwise.
	journal *journal
	// kept is set when Close leaves the run, waiting for decisions, to
	// the next process on the store: nothing more is journaled, and the
	// run is not saved (see localRunner.Close).
	kept atomic.Bool
	// answer is the entry of a turn without calls, the run's answer, not
	// written yet: EndRun, which comes at once, stores it with the run
	// (one write less per run); it is written as a step of its own only
	// when something else comes first (see flushAnswer).
	answer *entry
	// A recovered run resumes the turn its journal ends with (resumed):
	// the agent's turn 0 is the journal's turn turnBase, whose calls' fate
	// prior holds (see priorAnswer). finished is set when the journal
	// holds the run's answer whole.
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
		started: time.Now(), state: StateRunning,
		decided: make(chan struct{}), settled: map[string]error{}, waitOf: map[*genai.FunctionCall]*Call{},
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
	rec.Offset = r.lenLocked()
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

// closeWaiting reports whether the run waits for decisions, for Close
// to end it. A run that waits and is journaled is kept: left in its
// journal as it is, for the next process on the store to recover it
// waiting for the same calls.
func (r *run) closeWaiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != StateWaiting {
		return false
	}
	if r.journal != nil {
		r.kept.Store(true)
	}
	return true
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
// waitsFor) waits here, on its own goroutine, for its decision: the
// loop meanwhile reports the results of the turn's other calls as they
// complete, so that the pause comes after them. Other calls go to the
// agent's own Interceptor, if any.
func (r *run) intercept(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
	r.mu.Lock()
	c, p := r.waitOf[call], r.prior[call]
	r.mu.Unlock()
	if p != nil {
		if res, ok := r.priorAnswer(ctx, call, p, c != nil); ok {
			return res
		}
	}
	if c == nil {
		if base := r.l.agent.Steps().Interceptor(); base != nil {
			return base(ctx, call)
		}
		return nil
	}
	return r.answerOf(ctx, call, c)
}

// answerOf waits for the decision about call c, and returns what the call
// then answers. Apart from intercept, whose common path (a call that does
// not wait) it keeps small: intercept runs on each call's goroutine,
// whose stack would otherwise grow for it.
func (r *run) answerOf(ctx context.Context, call *genai.FunctionCall, c *Call) *toolset.Result {
	d, ok := r.await(ctx, c.ID)
	if !ok {
		return &toolset.Result{IsError: true, Err: context.Cause(ctx),
			Output: "tool " + call.Name + " was not run: the run ended before anyone decided about it"}
	}
	return decisionAnswer(call, c.Wait, d)
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
// "Durable runs").
func (r *run) event(ctx context.Context, e *agent.Event) {
	turn := e.Turn + r.turnBase
	resumed := r.resumed && e.Turn == 0 // the turn a recovered run resumes: its calls were shown
	switch e.Kind {
	case agent.EventModelRequest:
		r.flushAnswer(ctx)
		if e.Attempt == 1 {
			r.calls, r.holds, r.n, r.waits, r.answered, r.paused = r.calls[:0], r.holds[:0], 0, 0, 0, false
			r.shown.Reset()
			r.add(Record{Kind: KindStep, Turn: turn})
		}
	case agent.EventModelResponse:
		if c := e.Response.Candidates; len(c) > 0 && c[0].Content != nil {
			r.n = len(agent.FunctionCalls(c[0].Content))
			u := e.Usage
			if t := (&entry{Kind: entryTurn, Turn: turn, Content: c[0].Content, Usage: &u}); r.n > 0 {
				r.write(ctx, t)
			} else {
				r.answer = t
			}
		}
		r.shown.Reset()
	case agent.EventText:
		r.shown.WriteString(e.Text)
		r.add(Record{Kind: KindText, Turn: turn, Text: e.Text})
	case agent.EventThought:
		r.add(Record{Kind: KindThought, Turn: turn, Text: e.Text})
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
			r.write(ctx, &entry{Kind: entryResult, Turn: turn, Index: e.Index, Output: resultOutput(e.ToolResult), IsError: e.ToolResult.IsError, Shown: shown})
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
// response ends at the pause), if some calls wait.
func (r *run) pauseIfDone(ctx context.Context, turn int) {
	if r.paused || r.waits == 0 || r.answered < r.n-r.waits {
		return
	}
	r.paused = true
	deadline := time.Now().Add(r.l.approvalTimeout)
	list := make([]Pending, 0, r.waits)
	for i, c := range r.calls {
		if c != nil && r.holds[i] {
			list = append(list, Pending{Call: *c, Kind: c.Wait, Deadline: deadline})
		}
	}
	r.write(ctx, &entry{Kind: entryPause, Turn: turn, Pending: list})
	r.mu.Lock()
	if r.pending == nil {
		r.pending = map[string]*pendingCall{}
	}
	for _, p := range list {
		r.pending[p.Call.ID] = &pendingCall{Pending: p}
		r.order = append(r.order, p.Call.ID)
	}
	r.state = StateWaiting
	r.addLocked(Record{Kind: KindPause, Turn: turn, Pending: list})
	r.mu.Unlock()
	// A run that pauses once Close has begun is ended as Close ends the
	// runs that wait (Close either saw it waiting or is seen here).
	r.l.mu.Lock()
	closing := r.l.closing
	r.l.mu.Unlock()
	if closing && r.closeWaiting() {
		r.cancel(ErrClosed)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// await waits for the decision about call id, from a request or its
// deadline, and for those of the other calls of its pause: a pause is
// resolved whole. It returns false when ctx is done first.
func (r *run) await(ctx context.Context, id string) (Decision, bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		r.mu.Lock()
		p := r.pending[id]
		if p == nil {
			// Not paused yet: the turn's other calls are running.
			decided := r.decided
			r.mu.Unlock()
			select {
			case <-decided:
			case <-ctx.Done():
				return Decision{}, false
			}
			continue
		}
		if p.decided && r.undecidedLocked() == 0 {
			// The pause is resolved: every call of it goes on at once, so
			// that a pause is the last record of a run that waits.
			delete(r.pending, id)
			r.order = slices.DeleteFunc(r.order, func(s string) bool { return s == id })
			r.mu.Unlock()
			return p.decision, true
		}
		now := time.Now()
		if !now.Before(p.Deadline) {
			r.expireLocked(now)
			r.mu.Unlock()
			continue
		}
		wait, decided := p.Deadline.Sub(now), r.decided
		r.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-decided:
		case <-timer.C:
		case <-ctx.Done():
			return Decision{}, false
		}
	}
}

// wakeLocked wakes every call that waits, to look for its decision.
func (r *run) wakeLocked() {
	close(r.decided)
	r.decided = make(chan struct{})
}

// expireLocked denies the pending calls whose deadline passed.
func (r *run) expireLocked(now time.Time) {
	var expired []*pendingCall
	for _, id := range r.order {
		p := r.pending[id]
		if p == nil || p.decided || now.Before(p.Deadline) {
			continue
		}
		p.decided = true
		p.decision = Decision{CallID: id, Expired: true, Kind: p.Kind,
			Reason: fmt.Sprintf("nobody decided about this call within %v; it was not run", r.l.approvalTimeout)}
		r.settled[id] = ErrExpired
		expired = append(expired, p)
	}
	if len(expired) > 0 {
		taken := make([]Decision, len(expired))
		for i, p := range expired {
			taken[i] = p.decision
		}
		r.write(context.Background(), &entry{Kind: entryDecision, Turn: r.records[len(r.records)-1].Turn, Decisions: taken})
		for _, p := range expired {
			r.addLocked(Record{Kind: KindDecision, Decision: &p.decision})
		}
	}
	if r.undecidedLocked() == 0 {
		r.state = StateRunning
	}
	r.wakeLocked()
}

func (r *run) undecidedLocked() int {
	n := 0
	for _, id := range r.order {
		if p := r.pending[id]; p != nil && !p.decided {
			n++
		}
	}
	return n
}

// decide takes decisions from a request, all or none, and returns a
// cursor from the first record they add.
func (r *run) decide(ds []Decision) (Cursor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept.Load() {
		return nil, newError(http.StatusServiceUnavailable, "closing", ErrClosed,
			"the server is shutting down; the run waits for the next one, decide there")
	}
	seen := make(map[string]bool, len(ds))
	for i := range ds {
		d := &ds[i]
		p := r.pending[d.CallID]
		switch {
		case seen[d.CallID]:
			return nil, BadRequest(0, "duplicate_decision", "two decisions for call %q", d.CallID)
		case p == nil || p.decided:
			if err := r.settled[d.CallID]; err != nil {
				if errors.Is(err, ErrExpired) {
					return nil, newError(http.StatusConflict, "expired", ErrExpired, "call %q was not decided in time; it was denied", d.CallID)
				}
				return nil, newError(http.StatusConflict, "decided", ErrDecided, "call %q was decided already", d.CallID)
			}
			if p != nil {
				return nil, newError(http.StatusConflict, "decided", ErrDecided, "call %q was decided already", d.CallID)
			}
			return nil, newError(http.StatusConflict, "unknown_call", ErrUnknownCall, "no call %q waits for a decision", d.CallID)
		case d.Expired:
			return nil, BadRequest(0, "bad_decision", "a decision cannot be marked expired")
		case p.Kind == WaitApproval && (len(d.Output) > 0 || d.Error != ""):
			return nil, BadRequest(0, "bad_decision", "call %q needs approval, not a result", d.CallID)
		case p.Kind == WaitBrowser && (len(d.Output) > 0) == (d.Error != ""):
			return nil, BadRequest(0, "bad_decision", "call %q of browser tool %s needs its output or its error", d.CallID, p.Call.Name)
		case p.Kind == WaitBrowser && len(d.Output) > 0 && !json.Valid(d.Output):
			return nil, BadRequest(0, "bad_decision", "the output of call %q is not JSON", d.CallID)
		}
		seen[d.CallID] = true
	}
	offset := r.lenLocked()
	taken := make([]Decision, len(ds))
	for i, d := range ds {
		p := r.pending[d.CallID]
		p.decided, p.decision = true, d
		p.decision.Kind = p.Kind
		if d.Output != nil {
			p.decision.Output = slices.Clone(d.Output)
		}
		r.settled[d.CallID] = ErrDecided
		taken[i] = p.decision
	}
	// Journaled before they are shown (the lock keeps readers from the
	// records meanwhile: a decision is rare, its write short).
	r.write(context.Background(), &entry{Kind: entryDecision, Turn: r.records[len(r.records)-1].Turn, Decisions: taken})
	for _, d := range ds {
		r.addLocked(Record{Kind: KindDecision, Decision: &r.pending[d.CallID].decision})
	}
	if n := r.undecidedLocked(); n > 0 {
		// A response that continues the run ends at the calls still
		// waiting: they are paused again.
		list := make([]Pending, 0, n)
		for _, id := range r.order {
			if p := r.pending[id]; p != nil && !p.decided {
				list = append(list, p.Pending)
			}
		}
		r.addLocked(Record{Kind: KindPause, Turn: r.records[len(r.records)-1].Turn, Pending: list})
	} else {
		r.state = StateRunning
	}
	r.wakeLocked()
	return r.attachLocked(offset), nil
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
	r.l.ended(r, now)
	r.mu.Lock()
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
	r.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
}
