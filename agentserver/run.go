package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// run is one run of the local runner: its log, its pending calls, and
// what its goroutine needs to turn the agent's events into records.
type run struct {
	id, thread, conversation, user string
	l                              *localRunner
	cancel                         context.CancelCauseFunc
	started                        time.Time

	mu      sync.Mutex
	records []Record
	readers []chan struct{} // each cursor's wake-up, signalled at each record
	state   State
	done    *Done
	// ended and over are set by localRunner.ended, under its lock.
	ended time.Time
	over  bool
	// pending holds the calls of the current pause, decided or not, until
	// the run's goroutine takes their decisions; order keeps their order.
	pending map[string]*pendingCall
	order   []string
	// settled remembers the calls decided or expired, so that a second
	// decision is told which it was.
	settled map[string]error
	wake    chan struct{} // signalled when a decision arrives

	// What only the run's goroutine touches.
	ctx      context.Context
	browser  map[string]bool // the browser tools' names
	picked   []pickedCall    // calls NeedsApproval picked this turn
	calls    []*Call         // this turn's calls, by index
	waits    []*Call         // this turn's calls that wait for a decision
	pausedAt int             // 1 + the turn paused last; 0 when none
	browsErr map[string]bool // browser calls answered with an error
	agentRan bool            // the agent's EventDone was observed
	agentErr error           // the agent's own error
}

type pickedCall struct {
	call *genai.FunctionCall
	kind PendingKind
}

type pendingCall struct {
	Pending
	decided  bool
	decision Decision
}

func newRun(id string, in *Input, l *localRunner) *run {
	r := &run{
		id: id, thread: in.Thread, conversation: in.Conversation, user: in.User, l: l,
		started: time.Now(), state: StateRunning,
		wake: make(chan struct{}, 1), settled: map[string]error{},
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
	rec.Offset = int64(len(r.records))
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
		Len: int64(len(r.records)), Done: r.done}
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

// waiting reports whether the run waits for decisions.
func (r *run) waiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == StateWaiting
}

// needsApproval is the run's Config.NeedsApproval: a call of a browser
// tool waits for its result; another call needs approval when the agent's
// own NeedsApproval says so. It notes the calls it picks, so that the
// pause of their turn lists them all. The loop calls it on the run's
// goroutine, before the call's EventToolCall.
func (r *run) needsApproval(call *genai.FunctionCall) bool {
	var kind PendingKind
	if r.browser[call.Name] {
		kind = WaitBrowser
	} else if _, yes := r.l.agent.Steps().PlanCall(r.ctx, 0, 1, call); yes {
		kind = WaitApproval
	}
	if kind == "" {
		return false
	}
	r.picked = append(r.picked, pickedCall{call, kind})
	return true
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

// event turns one of the agent's events into records.
func (r *run) event(ctx context.Context, e *agent.Event) {
	switch e.Kind {
	case agent.EventModelRequest:
		if e.Attempt == 1 {
			r.picked, r.calls, r.waits = r.picked[:0], r.calls[:0], r.waits[:0]
			r.add(Record{Kind: KindStep, Turn: e.Turn})
		}
	case agent.EventText:
		r.add(Record{Kind: KindText, Turn: e.Turn, Text: e.Text})
	case agent.EventThought:
		r.add(Record{Kind: KindThought, Turn: e.Turn, Text: e.Text})
	case agent.EventRetry:
		r.add(Record{Kind: KindRetry, Turn: e.Turn, Retry: &Retry{Attempt: e.Attempt, Delay: e.Delay, Reason: retryReason(e.Err)}})
	case agent.EventToolCall:
		c := &Call{ID: r.callID(e.Turn, e.Index), Name: e.Call.Name, Args: argsJSON(e.Call.Args)}
		for _, p := range r.picked {
			if p.call == e.Call {
				c.Wait = p.kind
				r.waits = append(r.waits, c)
			}
		}
		for len(r.calls) <= e.Index {
			r.calls = append(r.calls, nil)
		}
		r.calls[e.Index] = c
		r.add(Record{Kind: KindToolCall, Turn: e.Turn, Call: c})
	case agent.EventApproval:
		r.approve(ctx, e)
	case agent.EventToolResult:
		r.add(Record{Kind: KindToolResult, Turn: e.Turn, Call: r.callAt(e), Result: r.result(e)})
	case agent.EventTurnEnd:
		u := e.Usage
		r.add(Record{Kind: KindStepEnd, Turn: e.Turn, Usage: &u})
	}
}

// callAt returns the Call of the event's call.
func (r *run) callAt(e *agent.Event) *Call {
	if e.Index < len(r.calls) && r.calls[e.Index] != nil {
		return r.calls[e.Index]
	}
	return &Call{ID: r.callID(e.Turn, e.Index), Name: e.Call.Name, Args: argsJSON(e.Call.Args)}
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
		cr.Denied = errors.Is(res.Err, agent.ErrDenied) && !r.browsErr[r.callID(e.Turn, e.Index)]
		return cr
	}
	out, err := json.Marshal(res.Output)
	if err != nil {
		out = []byte(`"(the output is not JSON)"`) // not reached: the loop checks outputs
	}
	cr.Output = out
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

// approve decides a call that waits: it publishes the turn's pause with
// every call that waits, at the first of them, then waits for this call's
// decision, from a request or the deadline. A run whose context ends
// meanwhile leaves it undecided: the loop answers it as cancelled.
func (r *run) approve(ctx context.Context, e *agent.Event) {
	id := r.callID(e.Turn, e.Index)
	r.mu.Lock()
	if r.pausedAt != e.Turn+1 {
		r.pausedAt = e.Turn + 1
		deadline := time.Now().Add(r.l.approvalTimeout)
		list := make([]Pending, 0, len(r.waits))
		r.pending = make(map[string]*pendingCall, len(r.waits))
		r.order = r.order[:0]
		for _, c := range r.waits {
			p := Pending{Call: *c, Kind: c.Wait, Deadline: deadline}
			list = append(list, p)
			r.pending[c.ID] = &pendingCall{Pending: p}
			r.order = append(r.order, c.ID)
		}
		r.state = StateWaiting
		r.addLocked(Record{Kind: KindPause, Turn: e.Turn, Pending: list})
	}
	r.mu.Unlock()
	d, ok := r.await(ctx, id)
	if !ok {
		return
	}
	switch p := r.kindOf(e); {
	case d.Expired:
		e.Approval.Deny(d.Reason)
	case p == WaitBrowser && d.Error != "":
		if r.browsErr == nil {
			r.browsErr = map[string]bool{}
		}
		r.browsErr[id] = true
		e.Approval.Deny(d.Error)
	case p == WaitBrowser:
		e.Approval.Answer(d.Output)
	case d.Approved:
		e.Approval.Approve()
	default:
		e.Approval.Deny(cmpOr(d.Reason, "the user denied this call"))
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// kindOf returns what the event's call waits for.
func (r *run) kindOf(e *agent.Event) PendingKind {
	if e.Index < len(r.calls) && r.calls[e.Index] != nil {
		return r.calls[e.Index].Wait
	}
	return WaitApproval
}

// await waits for the decision about call id, denying every call of the
// pause whose deadline passes. It returns false when ctx is done first.
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
			r.mu.Unlock()
			return Decision{}, false // not reached: every call that waits is in the pause
		}
		if p.decided {
			delete(r.pending, id)
			r.mu.Unlock()
			return p.decision, true
		}
		now := time.Now()
		if !now.Before(p.Deadline) {
			r.expireLocked(now)
			r.mu.Unlock()
			continue
		}
		wait := p.Deadline.Sub(now)
		r.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-r.wake:
		case <-timer.C:
		case <-ctx.Done():
			return Decision{}, false
		}
	}
}

// expireLocked denies the pending calls whose deadline passed.
func (r *run) expireLocked(now time.Time) {
	for _, id := range r.order {
		p := r.pending[id]
		if p == nil || p.decided || now.Before(p.Deadline) {
			continue
		}
		p.decided = true
		p.decision = Decision{CallID: id, Expired: true, Kind: p.Kind,
			Reason: fmt.Sprintf("nobody decided about this call within %v; it was not run", r.l.approvalTimeout)}
		r.settled[id] = ErrExpired
		r.addLocked(Record{Kind: KindDecision, Decision: &p.decision})
	}
	if r.undecidedLocked() == 0 {
		r.state = StateRunning
	}
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

// decide takes decisions from a request, all or none.
func (r *run) decide(ds []Decision) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make(map[string]bool, len(ds))
	for i := range ds {
		d := &ds[i]
		p := r.pending[d.CallID]
		switch {
		case seen[d.CallID]:
			return 0, BadRequest(0, "duplicate_decision", "two decisions for call %q", d.CallID)
		case p == nil || p.decided:
			if err := r.settled[d.CallID]; err != nil {
				if errors.Is(err, ErrExpired) {
					return 0, newError(http.StatusConflict, "expired", ErrExpired, "call %q was not decided in time; it was denied", d.CallID)
				}
				return 0, newError(http.StatusConflict, "decided", ErrDecided, "call %q was decided already", d.CallID)
			}
			if p != nil {
				return 0, newError(http.StatusConflict, "decided", ErrDecided, "call %q was decided already", d.CallID)
			}
			return 0, newError(http.StatusConflict, "unknown_call", ErrUnknownCall, "no call %q waits for a decision", d.CallID)
		case d.Expired:
			return 0, BadRequest(0, "bad_decision", "a decision cannot be marked expired")
		case p.Kind == WaitApproval && (len(d.Output) > 0 || d.Error != ""):
			return 0, BadRequest(0, "bad_decision", "call %q needs approval, not a result", d.CallID)
		case p.Kind == WaitBrowser && (len(d.Output) > 0) == (d.Error != ""):
			return 0, BadRequest(0, "bad_decision", "call %q of browser tool %s needs its output or its error", d.CallID, p.Call.Name)
		case p.Kind == WaitBrowser && len(d.Output) > 0 && !json.Valid(d.Output):
			return 0, BadRequest(0, "bad_decision", "the output of call %q is not JSON", d.CallID)
		}
		seen[d.CallID] = true
	}
	offset := int64(len(r.records))
	for _, d := range ds {
		p := r.pending[d.CallID]
		p.decided, p.decision = true, d
		p.decision.Kind = p.Kind
		if d.Output != nil {
			p.decision.Output = slices.Clone(d.Output)
		}
		r.settled[d.CallID] = ErrDecided
		r.addLocked(Record{Kind: KindDecision, Decision: &p.decision})
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
		r.addLocked(Record{Kind: KindPause, Turn: r.pausedAt - 1, Pending: list})
	} else {
		r.state = StateRunning
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return offset, nil
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
	r.mu.Unlock()
}

func (r *run) lastTurnLocked() int {
	for i := len(r.records) - 1; i >= 0; i-- {
		if r.records[i].Kind == KindStep {
			return r.records[i].Turn
		}
	}
	return 0
}

// attach returns a cursor on the log at offset.
func (r *run) attach(offset int64) (Cursor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if offset < 0 || offset > int64(len(r.records)) {
		return nil, BadRequest(0, "bad_offset", "offset %d is not in the run's log (%d records)", offset, len(r.records))
	}
	c := &cursor{r: r, pos: offset, wake: make(chan struct{}, 1)}
	r.readers = append(r.readers, c.wake)
	return c, nil
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
		if c.pos < int64(len(r.records)) {
			rec := r.records[c.pos]
			c.pos++
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
	return len(c.r.records) - int(c.pos)
}

// Close implements [Cursor].
func (c *cursor) Close() {
	r := c.r
	r.mu.Lock()
	if i := slices.Index(r.readers, c.wake); i >= 0 {
		r.readers = slices.Delete(r.readers, i, i+1)
	}
	r.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
}
