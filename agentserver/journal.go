package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The kinds of a journal entry.
const (
	entryBegin    = "begin"    // the run was accepted: what it starts from
	entryTurn     = "turn"     // a model turn, complete, as the model sent it
	entryResult   = "result"   // a call's result
	entryPause    = "pause"    // the run waits for decisions
	entryDecision = "decision" // decisions about the calls a pause lists
)

// entry is one entry of a run's journal (session.Journaler), encoded as
// JSON: one per step the run takes (see the package documentation,
// "Durable runs").
type entry struct {
	Kind string `json:"kind"`
	// Time is when the entry was written: the time of the records it
	// shows.
	Time time.Time `json:"time,omitzero"`
	// At is the offset in the run's log of the first record the entry
	// shows (a turn's first call, a result, a pause, a decision's first
	// record), so that the log rebuilt from the journal holds each record
	// at the offset it had (0: not known, a journal of an older version).
	At int64 `json:"at,omitempty"`

	// entryBegin
	Run          string         `json:"run,omitempty"`
	User         string         `json:"user,omitempty"`
	Conversation string         `json:"conversation,omitempty"`
	Message      *genai.Content `json:"message,omitempty"`
	Tools        []ToolDecl     `json:"tools,omitempty"`
	KeepLog      bool           `json:"keepLog,omitempty"`
	Started      time.Time      `json:"started,omitzero"`

	// entryTurn, entryResult, entryPause, entryDecision
	Turn int `json:"turn"`
	// entryTurn: the model's content exactly as received (text, thoughts
	// with their signatures, calls), and the turn's usage; the offsets of
	// its step's record and of the first pieces of its thoughts and text
	// (joined in one record each when the log is rebuilt).
	Content   *genai.Content `json:"content,omitempty"`
	Usage     *agent.Usage   `json:"usage,omitempty"`
	StepAt    int64          `json:"stepAt,omitempty"`
	ThoughtAt int64          `json:"thoughtAt,omitempty"`
	TextAt    int64          `json:"textAt,omitempty"`

	// entryResult: the call's position in the turn, what the model is
	// sent (the tool's output as JSON, or the error text), and the result
	// as the log showed it.
	Index   int             `json:"index,omitempty"`
	Output  json.RawMessage `json:"output,omitempty"`
	IsError bool            `json:"isError,omitempty"`
	Shown   *CallResult     `json:"shown,omitempty"`

	// entryPause
	Pending []Pending `json:"pending,omitempty"`
	// entryDecision
	Decisions []Decision `json:"decisions,omitempty"`
}

// Write attempts: a step whose write fails for a reason of the store's
// (not the fence) is written again, stepAttempts times at most, the
// waits growing from stepRetry.
const (
	stepAttempts = 4
	stepRetry    = 100 * time.Millisecond
)

// errStepNotStored is the cause of a run stopped because a step its
// next effects need could not be stored (see run.write).
var errStepNotStored = errors.New("agentserver: a step of the run could not be stored")

// write appends e to the run's entries and, on a session.Journaler, to
// its journal, under the runner's claim: the store writes it only if
// that claim is the journal's. A write the fence refuses (another
// process took the run over, or it ended) loses the run at once: nothing
// more is written, and it stops (see lose). Another failure is written
// again, stepAttempts times at most, then returned (the entry stays in
// r.entries, and r.unsaved says the journal is behind them): the caller
// decides whether the run may go on (see the package documentation,
// "Durable runs"). A successful write proves the claim (r.proven).
func (r *run) write(ctx context.Context, e *entry) error { return r.writeStep(ctx, e, false) }

// writeLocked is write, r.mu held.
func (r *run) writeLocked(ctx context.Context, e *entry) error { return r.writeStep(ctx, e, true) }

func (r *run) writeStep(ctx context.Context, e *entry, locked bool) error {
	if r.lost.Load() {
		return errTakenOver
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	lock := func() {
		if !locked {
			r.mu.Lock()
		}
	}
	unlock := func() {
		if !locked {
			r.mu.Unlock()
		}
	}
	lock()
	r.entries = append(r.entries, e)
	unlock()
	js := r.l.js
	if js == nil {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("agentserver: journaling a step: %w", err)
	}
	ctx = context.WithoutCancel(ctx)
	wait := stepRetry
	for attempt := 1; ; attempt++ {
		claim, start := r.l.claim(), time.Now()
		if claim.Owner == "" {
			err = errNoLife
		} else {
			err = js.AppendRun(ctx, r.thread, r.id, claim, [][]byte{b})
		}
		switch {
		case err == nil:
			r.proven(start)
			lock()
			r.stored++
			unlock()
			return nil
		case fenced(err):
			r.lose(ctx, err)
			return errTakenOver
		}
		r.l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: journaling a step", slog.String("run", r.id),
			slog.String("thread", r.conversation), slog.String("step", e.Kind), slog.Int("attempt", attempt), slog.Any("error", err))
		if attempt == stepAttempts {
			r.unsaved = true
			return err
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// fenced reports whether err is the fence's refusal of a write: the
// journal is another process's, or the run ended.
func fenced(err error) bool {
	return errors.Is(err, session.ErrClaimed) || errors.Is(err, session.ErrNoRun)
}

// flushAnswer writes the entry of the run's answer (run.answer), if it
// was held for EndRun and something else came first.
func (r *run) flushAnswer(ctx context.Context) {
	if r.answer != nil {
		r.write(ctx, r.answer)
		r.answer = nil
	}
}

// begin creates the run's journal, holding what the run starts from,
// claimed by this process.
func (l *localRunner) begin(ctx context.Context, r *run, in *Input) error {
	e := &entry{Kind: entryBegin, Time: r.started, Run: r.id, User: in.User, Conversation: in.Conversation,
		Message: in.Message, Tools: in.Tools, KeepLog: in.KeepLog, Started: r.started}
	r.entries = []*entry{e}
	if l.js == nil {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("agentserver: journaling the run: %w", err)
	}
	claim, start := l.claim(), time.Now()
	if claim.Owner == "" {
		return newError(http.StatusServiceUnavailable, "store", errNoLife, "the server cannot hold runs right now; try again later")
	}
	// The run is this process's from its first write: another Server on
	// the store leaves it alone while the claim lasts.
	if err := l.js.BeginRun(ctx, in.Thread, r.id, claim, [][]byte{b}); err != nil {
		if errors.Is(err, session.ErrRunInProgress) {
			return newError(http.StatusConflict, "busy", ErrBusy, "thread %q has a run in progress", in.Conversation)
		}
		l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: journaling a run", slog.String("thread", in.Conversation), slog.Any("error", err))
		return newError(http.StatusServiceUnavailable, "store", err, "the server cannot store the run; try again later")
	}
	r.claimed.Store(true)
	r.stored = 1
	r.proven(start)
	return nil
}

// save stores what the run added to the loaded contents: the run's
// contents, and the text of an answer cut short that its readers were
// shown. On a session.Journaler, EndRun stores them and drops the journal
// in one step, under the runner's claim. It returns the run's error
// joined with the store's, if any.
func (r *run) save(ctx context.Context, loaded int, res *agent.Result, runErr error) error {
	var contents []*genai.Content
	if res != nil && len(res.History) > loaded {
		contents = res.History[loaded:]
	}
	if cut := r.cutText(); cut != nil && len(contents) > 0 && contents[len(contents)-1].Role != genai.RoleModel {
		contents = append(slices.Clip(contents), cut)
	}
	ctx = context.WithoutCancel(ctx) // a run cancelled is saved all the same
	if r.lost.Load() {
		return runErr
	}
	var err error
	switch {
	case r.l.js != nil:
		claim := r.l.claim()
		if claim.Owner == "" {
			err = errNoLife
		} else {
			err = r.l.js.EndRun(ctx, r.thread, r.id, claim, contents)
		}
		switch {
		case err == nil:
			r.claimed.Store(false)
		case fenced(err):
			r.lose(ctx, err)
			return runErr
		default:
			// The journal stays, for the next Server on the store: it
			// must hold the answer, to save it rather than ask again,
			// and is released, for another Server to save it now.
			r.flushAnswer(ctx)
			r.release(ctx)
		}
	case len(contents) > 0:
		err = r.l.store.Append(ctx, r.thread, contents)
	}
	if err != nil {
		return errors.Join(runErr, fmt.Errorf("agentserver: saving the run to %q: %w", r.thread, err))
	}
	r.remember(ctx, res, loaded, contents)
	return runErr
}

// cutText returns the model content of the answer in progress, as far as
// its readers were shown its text: nil when no answer was cut short.
func (r *run) cutText() *genai.Content {
	if r.shown.Len() == 0 {
		return nil
	}
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: r.shown.String()}}}
}

// prior is what a run's entries say of a call of the turn it resumes.
type prior struct {
	result   *entry    // its result, reused as it is
	decision *Decision // the decision taken about it, if no result came
	// fresh says that the decision was just taken, by the request or
	// deadline that resumes the run: the call has not run (a call
	// approved in a journal that a process left behind may have).
	fresh bool
}

// priorAnswer returns the answer of a call of a resumed turn, from what
// the run's entries say, and whether it has one: a result journaled is
// reused, never run again; a decision is applied (an approved call runs,
// if its decision is fresh); and a call that was running when the process
// stopped is answered with agent.Interrupted, unless its tool is safe to
// repeat (then it runs again: nil, true). A call that waits for a
// decision nobody took has no answer yet (false): it waits again.
func (r *run) priorAnswer(ctx context.Context, call *genai.FunctionCall, p *prior, waits bool) (*toolset.Result, bool) {
	switch {
	case p.result != nil:
		res := &toolset.Result{IsError: p.result.IsError}
		if p.result.IsError {
			var msg string
			_ = json.Unmarshal(p.result.Output, &msg)
			res.Output = msg
			if p.result.Shown != nil && p.result.Shown.Denied {
				// A denial stays one: the history marks it so.
				res.Err = agent.ErrDenied
			}
		} else if err := json.Unmarshal(p.result.Output, &res.Output); err != nil {
			res.Output = string(p.result.Output)
		}
		return res, true
	case p.decision != nil && !(p.decision.Approved && p.decision.Kind == WaitApproval):
		return decisionAnswer(call, p.decision.Kind, *p.decision), true
	case p.decision != nil && p.fresh:
		return nil, true // approved just now: it runs
	case p.decision == nil && waits:
		return nil, false
	}
	// The call was running.
	if t, ok := r.l.agent.Steps().Tools().Lookup(call.Name); ok && t.SafeToRepeat() {
		if base := r.l.agent.Steps().Interceptor(); base != nil && p.decision == nil {
			return base(ctx, call), true
		}
		return nil, true
	}
	return agent.Interrupted(call), true
}

// decodeEntries decodes a journal's entries: nil, and why, when they
// are not agentserver's.
func decodeEntries(raw [][]byte) ([]*entry, error) {
	entries := make([]*entry, 0, len(raw))
	for i, b := range raw {
		e := new(entry)
		if err := json.Unmarshal(b, e); err != nil || (i == 0) != (e.Kind == entryBegin) {
			return nil, fmt.Errorf("entry %d is not one of agentserver's", i)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, errors.New("the journal has no entries")
	}
	return entries, nil
}

// runOf returns the run of a journal's entries, as it stands: its log
// rebuilt, and, when it waits for decisions, its pending calls; or an
// error saying why the journal is not one of agentserver's.
func (l *localRunner) runOf(thread string, entries []*entry) (*run, error) {
	b := entries[0]
	in := &Input{Thread: thread, Conversation: b.Conversation, User: b.User, Message: b.Message, Tools: b.Tools, KeepLog: b.KeepLog}
	if _, err := browserTools(in.Tools); err != nil {
		return nil, fmt.Errorf("its browser tools: %w", err)
	}
	r := newRun(b.Run, in, l)
	r.started = b.Started
	r.entries, r.stored = entries, len(entries)
	r.show()
	return r, nil
}

// turnsOf returns the turn entries of entries, each turn once (a write
// made again after an uncertain failure may have stored one twice), and
// the results, by turn and index, and decisions, by call id.
func turnsOf(entries []*entry) (turns []*entry, results map[[2]int]*entry, decisions map[string]*Decision) {
	results, decisions = map[[2]int]*entry{}, map[string]*Decision{}
	for _, e := range entries {
		switch e.Kind {
		case entryTurn:
			if len(turns) == 0 || turns[len(turns)-1].Turn != e.Turn {
				turns = append(turns, e)
			}
		case entryResult:
			results[[2]int{e.Turn, e.Index}] = e
		case entryDecision:
			for i := range e.Decisions {
				decisions[e.Decisions[i].CallID] = &e.Decisions[i]
			}
		}
	}
	return turns, results, decisions
}

// show adds to the (empty) log the records of the run's entries, each at
// the offset it had when the entry was written: the start, then for each
// turn its step, its thoughts and its text (each joined in one record),
// its calls and their results, its end once the next turn began, and
// the pauses and decisions, a pause again after decisions that left
// calls undecided. A run whose last pause waits for decisions nobody
// took waits again: its pending calls are those, with their deadlines. A
// last turn without calls is the run's answer: r.finished is set.
func (r *run) show() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.joined = true // offsets may have gaps: the pieces of text, progress, retries
	first := r.entries[0]
	r.addAt(Record{Kind: KindStart, Time: first.Started}, 0)
	_, results, _ := turnsOf(r.entries)
	var last *entry // the turn shown last
	var shown []*Call
	pending := map[string]Pending{}
	var order []string
	for _, e := range r.entries[1:] {
		switch e.Kind {
		case entryTurn:
			if last != nil && last.Turn == e.Turn {
				continue // written twice
			}
			if last != nil && len(agent.FunctionCalls(last.Content)) > 0 {
				usage := agent.Usage{}
				if last.Usage != nil {
					usage = *last.Usage
				}
				r.addAt(Record{Kind: KindStepEnd, Time: e.Time, Turn: last.Turn, Usage: &usage}, e.StepAt-1)
			}
			last = e
			shown = r.showTurn(e)
			pending, order = map[string]Pending{}, nil
		case entryResult:
			if e.Shown != nil && last != nil && e.Turn == last.Turn && e.Index < len(shown) && results[[2]int{e.Turn, e.Index}] == e {
				r.addAt(Record{Kind: KindToolResult, Time: e.Time, Turn: e.Turn, Call: shown[e.Index], Result: e.Shown}, e.At)
			}
		case entryPause:
			list := slices.Clone(e.Pending)
			for _, p := range list {
				if _, ok := pending[p.Call.ID]; !ok {
					order = append(order, p.Call.ID)
				}
				pending[p.Call.ID] = p
			}
			r.addAt(Record{Kind: KindPause, Time: e.Time, Turn: e.Turn, Pending: list}, e.At)
		case entryDecision:
			at := e.At
			for i := range e.Decisions {
				d := &e.Decisions[i]
				r.settled[d.CallID] = ErrDecided
				if d.Expired {
					r.settled[d.CallID] = ErrExpired
				}
				delete(pending, d.CallID)
				r.addAt(Record{Kind: KindDecision, Time: e.Time, Turn: e.Turn, Decision: d}, at)
				at = r.lenLocked()
			}
			if len(pending) > 0 {
				r.addAt(Record{Kind: KindPause, Time: e.Time, Turn: e.Turn, Pending: pendingList(pending, order)}, at)
			}
		}
	}
	if last != nil && len(agent.FunctionCalls(last.Content)) == 0 {
		r.finished = true
		return
	}
	if len(pending) > 0 {
		r.pending = make(map[string]*pendingCall, len(pending))
		for id, p := range pending {
			r.pending[id] = &pendingCall{Pending: p}
		}
		r.order = slices.DeleteFunc(order, func(id string) bool { return r.pending[id] == nil })
		r.state = StateWaiting
	}
}

// pendingList returns the pending calls, in order.
func pendingList(pending map[string]Pending, order []string) []Pending {
	out := make([]Pending, 0, len(pending))
	for _, id := range order {
		if p, ok := pending[id]; ok {
			out = append(out, p)
		}
	}
	return out
}

// showTurn adds the records of a journaled turn: the step, its thoughts
// and text (each joined in one record), its calls; and returns its calls
// as shown. r.mu is held.
func (r *run) showTurn(e *entry) []*Call {
	r.addAt(Record{Kind: KindStep, Time: e.Time, Turn: e.Turn}, e.StepAt)
	var text, thought strings.Builder
	for _, p := range e.Content.Parts {
		switch {
		case p == nil || p.Text == "":
		case p.Thought:
			thought.WriteString(p.Text)
		default:
			text.WriteString(p.Text)
		}
	}
	if thought.Len() > 0 {
		r.addAt(Record{Kind: KindThought, Time: e.Time, Turn: e.Turn, Text: thought.String()}, e.ThoughtAt)
	}
	if text.Len() > 0 {
		r.addAt(Record{Kind: KindText, Time: e.Time, Turn: e.Turn, Text: text.String()}, e.TextAt)
	}
	calls := agent.FunctionCalls(e.Content)
	shown := make([]*Call, len(calls))
	at := e.At
	for i, fc := range calls {
		c := &Call{ID: r.callID(e.Turn, i), Name: fc.Name, Args: argsJSON(fc.Args)}
		c.Wait = r.waitsFor(i, len(calls), fc)
		shown[i] = c
		r.addAt(Record{Kind: KindToolCall, Time: e.Time, Turn: e.Turn, Call: c}, at)
		at = r.lenLocked()
	}
	return shown
}

// plan prepares the run to go on from its entries: it returns the
// contents they add to the history after the user's message, and sets
// the turn the run resumes (its calls' fate in r.prior, fresh for the
// decisions of a resume that the caller begins itself) and the turn's
// counters. A last turn without calls is the run's answer: r.finished.
func (r *run) plan(fresh bool) []*genai.Content {
	turns, results, decisions := turnsOf(r.entries)
	r.prior, r.resumed, r.turnBase = nil, false, 0
	r.calls, r.holds, r.n, r.waits, r.answered, r.paused, r.parking = r.calls[:0], r.holds[:0], 0, 0, 0, false, false
	r.parked.Store(false)
	if len(turns) == 0 {
		return nil
	}
	last := turns[len(turns)-1]
	var contents []*genai.Content
	for _, e := range turns {
		contents = append(contents, e.Content)
		if e == last {
			break
		}
		calls := agent.FunctionCalls(e.Content)
		res := make([]agent.ToolResult, len(calls))
		for i, c := range calls {
			res[i].Call = c
			if p := (&prior{result: results[[2]int{e.Turn, i}]}); p.result != nil {
				out, _ := r.priorAnswer(r.ctx, c, p, false)
				res[i].Result = *out
			} else {
				res[i].Result = *agent.Interrupted(c)
			}
		}
		contents = append(contents, agent.ResponseContent(r.l.agent.Steps().Model(), calls, res))
	}
	calls := agent.FunctionCalls(last.Content)
	if len(calls) == 0 {
		r.finished = true
		return contents
	}
	r.resumed, r.turnBase, r.n = true, last.Turn, len(calls)
	r.prior = make(map[*genai.FunctionCall]*prior, len(calls))
	for i, c := range calls {
		r.prior[c] = &prior{result: results[[2]int{last.Turn, i}], decision: decisions[r.callID(last.Turn, i)], fresh: fresh}
	}
	return contents
}
