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

	// entryBegin
	Run          string         `json:"run,omitempty"`
	User         string         `json:"user,omitempty"`
	Conversation string         `json:"conversation,omitempty"`
	Message      *genai.Content `json:"message,omitempty"`
	Tools        []ToolDecl     `json:"tools,omitempty"`
	KeepLog      bool           `json:"keepLog,omitempty"`
	Started      time.Time      `json:"started,omitzero"`

	// entryTurn, entryResult, entryPause
	Turn int `json:"turn"`
	// entryTurn: the model's content exactly as received (text, thoughts
	// with their signatures, calls), and the turn's usage.
	Content *genai.Content `json:"content,omitempty"`
	Usage   *agent.Usage   `json:"usage,omitempty"`

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

// journal writes the steps of one run to its store's journal.
type journal struct {
	store  session.Journaler
	thread string
	run    string
}

// write appends e to the journal. A write that fails is logged, and the
// run goes on: it is saved at its end all the same, but a crash before
// then loses the step.
func (r *run) write(ctx context.Context, e *entry) {
	j := r.journal
	if j == nil || r.kept.Load() {
		return
	}
	b, err := json.Marshal(e)
	if err == nil {
		err = j.store.AppendRun(context.WithoutCancel(ctx), j.thread, j.run, [][]byte{b})
	}
	if err != nil {
		r.l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: journaling a step", slog.String("run", r.id),
			slog.String("thread", r.conversation), slog.String("step", e.Kind), slog.Any("error", err))
	}
}

// flushAnswer writes the entry of the run's answer (run.answer), if it
// was held for EndRun and something else came first.
func (r *run) flushAnswer(ctx context.Context) {
	if r.answer != nil {
		r.write(ctx, r.answer)
		r.answer = nil
	}
}

// begin creates the run's journal, holding what the run starts from.
func (l *localRunner) begin(ctx context.Context, r *run, in *Input) error {
	js, ok := l.store.(session.Journaler)
	if !ok {
		return nil
	}
	b, err := json.Marshal(&entry{Kind: entryBegin, Run: r.id, User: in.User, Conversation: in.Conversation,
		Message: in.Message, Tools: in.Tools, KeepLog: in.KeepLog, Started: r.started})
	if err != nil {
		return fmt.Errorf("agentserver: journaling the run: %w", err)
	}
	if err := js.BeginRun(ctx, in.Thread, r.id, [][]byte{b}); err != nil {
		if errors.Is(err, session.ErrRunInProgress) {
			return newError(http.StatusConflict, "busy", ErrBusy, "thread %q has a run in progress", in.Conversation)
		}
		l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: journaling a run", slog.String("thread", in.Conversation), slog.Any("error", err))
		return newError(http.StatusServiceUnavailable, "store", err, "the server cannot store the run; try again later")
	}
	// The run is this process's: another Server on the store leaves it
	// alone while the claim lasts (see keepClaims).
	if err := js.ClaimRun(ctx, in.Thread, r.id, l.owner, l.lease); err != nil {
		l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: claiming a run", slog.String("run", r.id),
			slog.String("thread", in.Conversation), slog.Any("error", err))
		if errors.Is(err, session.ErrClaimed) {
			// Another Server took the journal in the moment before the
			// claim: the run is its to run.
			return newError(http.StatusConflict, "busy", ErrBusy, "thread %q has a run in progress on another server", in.Conversation)
		}
		// Nobody runs the run: it is dropped, nothing of it saved.
		if err := js.EndRun(context.WithoutCancel(ctx), in.Thread, r.id, nil); err != nil {
			l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: dropping a run not claimed", slog.String("run", r.id),
				slog.String("thread", in.Conversation), slog.Any("error", err))
		}
		return newError(http.StatusServiceUnavailable, "store", err, "the server cannot store the run; try again later")
	}
	l.mu.Lock() // keepClaims reads it under the lock
	r.journal = &journal{store: js, thread: in.Thread, run: r.id}
	l.mu.Unlock()
	return nil
}

// save stores what the run added to the loaded contents: the run's
// contents, and the text of an answer cut short that its readers were
// shown. With a journal, EndRun stores them and drops the journal in one
// step. It returns the run's error joined with the store's, if any.
func (r *run) save(ctx context.Context, loaded int, res *agent.Result, runErr error) error {
	var contents []*genai.Content
	if res != nil && len(res.History) > loaded {
		contents = res.History[loaded:]
	}
	if cut := r.cutText(); cut != nil && len(contents) > 0 && contents[len(contents)-1].Role != genai.RoleModel {
		contents = append(slices.Clip(contents), cut)
	}
	ctx = context.WithoutCancel(ctx) // a run cancelled is saved all the same
	if r.kept.Load() {
		r.l.logger.LogAttrs(ctx, slog.LevelInfo, "agentserver: a run that waits is left to the next server on the store",
			slog.String("run", r.id), slog.String("thread", r.conversation))
		return runErr
	}
	var err error
	switch {
	case r.journal != nil:
		if err = r.journal.store.EndRun(ctx, r.thread, r.id, contents); err != nil {
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

// prior is what a recovered run's journal says of a call of the turn it
// resumes.
type prior struct {
	result   *entry    // its result, reused as it is
	decision *Decision // the decision taken about it, if no result came
}

// priorAnswer returns the answer of a call of a recovered run's resumed
// turn, from what its journal says, and whether it has one: a result
// journaled is reused, a decision journaled is applied, and a call that
// was running when the process stopped is answered with
// agent.Interrupted, unless its tool is safe to repeat (then it runs
// again: nil, true). A call that waits for a decision nobody took has no
// answer yet (false): it waits again.
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

// recoverRuns picks up the runs the store's journals show unfinished:
// those a process that stopped (a crash, a kill, a deploy) left behind.
func (l *localRunner) recoverRuns(ctx context.Context) error {
	js, ok := l.store.(session.Journaler)
	if !ok {
		return nil
	}
	opts := session.ListOptions{Prefix: storePrefix, Limit: session.MaxPageSize}
	for {
		page, err := js.ListRuns(ctx, opts)
		if err != nil {
			return fmt.Errorf("agentserver: listing the runs to recover: %w", err)
		}
		for _, j := range page.Journals {
			if err := l.recoverRun(ctx, js, j); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		opts.Cursor = page.Next
	}
}

// recoverRun picks up the run in progress on thread from its journal,
// under its id: its log shows again what the run's readers were shown
// (a turn's text pieces joined in one record), and the run goes on from
// its last step.
//
// The run is claimed first (session.Journaler.ClaimRun): one whose claim
// another Server holds, and has not let run out, is left to it.
func (l *localRunner) recoverRun(ctx context.Context, js session.Journaler, listed session.Journal) error {
	thread := listed.ID
	l.mu.Lock()
	cur, closing, skipped := l.threads[thread], l.closing, l.skipped[thread] == listed.Run
	l.mu.Unlock()
	switch {
	case closing, skipped:
		return nil
	case cur != nil && (cur.id == listed.Run || !cur.over):
		return nil // this process's, or listed twice
	case listed.Owner != "" && listed.Owner != l.owner && listed.Lease.After(time.Now()):
		return nil // held, as far as this clock tells: ClaimRun would say so
	}
	switch err := js.ClaimRun(ctx, thread, listed.Run, l.owner, l.lease); {
	case errors.Is(err, session.ErrClaimed), errors.Is(err, session.ErrNoRun):
		return nil // held by another Server, or over
	case err != nil:
		return fmt.Errorf("agentserver: claiming the run on %q: %w", thread, err)
	}
	jr, err := js.LoadRun(ctx, thread)
	if err == nil && jr.Run != listed.Run {
		err = session.ErrNoRun // another run began since
	}
	if errors.Is(err, session.ErrNoRun) {
		return nil // it ended meanwhile
	}
	if err != nil {
		return fmt.Errorf("agentserver: loading the run on %q: %w", thread, err)
	}
	entries := make([]*entry, 0, len(jr.Entries))
	for i, b := range jr.Entries {
		e := new(entry)
		if err := json.Unmarshal(b, e); err != nil || (i == 0) != (e.Kind == entryBegin) {
			l.skip(ctx, jr, fmt.Errorf("entry %d is not one of agentserver's", i))
			return nil
		}
		entries = append(entries, e)
	}
	b := entries[0]
	in := &Input{Thread: thread, Conversation: b.Conversation, User: b.User, Message: b.Message, Tools: b.Tools, KeepLog: b.KeepLog}
	tools, err := browserTools(in.Tools)
	if err != nil {
		l.skip(ctx, jr, fmt.Errorf("its browser tools: %w", err))
		return nil
	}
	r := newRun(jr.Run, in, l)
	r.started = b.Started
	r.journal = &journal{store: js, thread: thread, run: jr.Run}
	r.ctx = ctx
	r.add(Record{Kind: KindStart, Time: b.Started})
	prior := r.replay(entries[1:])
	if r.finished {
		// The answer is journaled whole: only its saving was lost.
		saved := append([]*genai.Content{in.Message}, prior...)
		if err := js.EndRun(ctx, thread, jr.Run, saved); err != nil && !errors.Is(err, session.ErrNoRun) {
			return fmt.Errorf("agentserver: saving run %s on %q: %w", jr.Run, thread, err)
		} else if err == nil {
			r.rememberSaved(withRun(ctx, r.id, in.User), saved)
		}
		return nil
	}
	runCtx, cancel := context.WithCancelCause(l.ctx)
	r.cancel = cancel
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		cancel(ErrClosed)
		r.release(ctx)
		return nil
	}
	l.runs[r.id] = r
	l.threads[thread] = r
	l.inflight++
	if l.maxPerUser > 0 {
		l.perUser[in.User]++
	}
	l.wg.Add(1)
	l.mu.Unlock()
	l.logger.LogAttrs(ctx, slog.LevelInfo, "agentserver: recovered a run", slog.String("run", r.id), slog.String("thread", in.Conversation),
		slog.Int("entries", len(entries)))
	l.workers.Go(func() { l.execute(runCtx, r, in, tools, prior) })
	return nil
}

// skip logs a journal that cannot be recovered, and leaves it in the
// store: the thread stays busy until it is deleted.
func (l *localRunner) skip(ctx context.Context, jr session.Journal, err error) {
	l.mu.Lock()
	l.skipped[jr.ID] = jr.Run // not again
	l.mu.Unlock()
	l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: a run cannot be recovered", slog.String("run", jr.Run),
		slog.String("thread", jr.ID), slog.Any("error", err))
}

// replay adds to the log the records of the steps the journal holds, and
// returns the contents they add to the history after the user's message.
// The last turn, when its calls are not all answered in a later one, is
// the one the run resumes: its calls go to r.prior, and its pauses and
// decisions are not shown again (the resumed turn pauses anew for the
// calls still undecided). A last turn without calls is the run's answer:
// r.finished is set.
func (r *run) replay(entries []*entry) []*genai.Content {
	var turns []*entry
	results := map[[2]int]*entry{}
	decisions := map[string]*Decision{}
	for _, e := range entries {
		switch e.Kind {
		case entryTurn:
			turns = append(turns, e)
		case entryResult:
			results[[2]int{e.Turn, e.Index}] = e
		case entryDecision:
			for i := range e.Decisions {
				decisions[e.Decisions[i].CallID] = &e.Decisions[i]
			}
		}
	}
	if len(turns) == 0 {
		return nil
	}
	last := turns[len(turns)-1]
	var contents []*genai.Content
	for _, e := range entries {
		switch e.Kind {
		case entryTurn:
			r.replayTurn(e, results)
			calls := agent.FunctionCalls(e.Content)
			contents = append(contents, e.Content)
			if e != last {
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
				usage := agent.Usage{}
				if e.Usage != nil {
					usage = *e.Usage
				}
				r.add(Record{Kind: KindStepEnd, Turn: e.Turn, Usage: &usage})
			}
		case entryPause:
			if e.Turn != last.Turn {
				r.add(Record{Kind: KindPause, Turn: e.Turn, Pending: e.Pending})
			}
		case entryDecision:
			if e.Turn != last.Turn {
				for i := range e.Decisions {
					r.add(Record{Kind: KindDecision, Turn: e.Turn, Decision: &e.Decisions[i]})
				}
			}
		}
	}
	calls := agent.FunctionCalls(last.Content)
	if len(calls) == 0 {
		r.finished = true
		return contents
	}
	r.resumed, r.turnBase, r.n = true, last.Turn, len(calls)
	r.prior = make(map[*genai.FunctionCall]*prior, len(calls))
	for i, c := range calls {
		p := &prior{result: results[[2]int{last.Turn, i}], decision: decisions[r.callID(last.Turn, i)]}
		r.prior[c] = p
	}
	return contents
}

// replayTurn adds the records of a journaled turn: the step, its
// thoughts and text (each joined in one record), its calls and the
// results journaled.
func (r *run) replayTurn(e *entry, results map[[2]int]*entry) {
	r.add(Record{Kind: KindStep, Turn: e.Turn})
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
		r.add(Record{Kind: KindThought, Turn: e.Turn, Text: thought.String()})
	}
	if text.Len() > 0 {
		r.add(Record{Kind: KindText, Turn: e.Turn, Text: text.String()})
	}
	calls := agent.FunctionCalls(e.Content)
	shown := make([]*Call, len(calls))
	for i, fc := range calls {
		c := &Call{ID: r.callID(e.Turn, i), Name: fc.Name, Args: argsJSON(fc.Args)}
		c.Wait = r.waitsFor(i, len(calls), fc)
		shown[i] = c
		r.add(Record{Kind: KindToolCall, Turn: e.Turn, Call: c})
	}
	for i := range calls {
		if res := results[[2]int{e.Turn, i}]; res != nil {
			r.add(Record{Kind: KindToolResult, Turn: e.Turn, Call: shown[i], Result: res.Shown})
		}
	}
}

// errTakenOver is the cause of a run stopped because another Server on
// the store claimed it: its claim ran out (this process stalled for
// longer than the lease, or lost the store meanwhile).
var errTakenOver = errors.New("agentserver: another server took the run over")

// release releases the run's claim, for another Server on the store to
// take it at once.
func (r *run) release(ctx context.Context) {
	j := r.journal
	if j == nil {
		return
	}
	if err := j.store.ClaimRun(context.WithoutCancel(ctx), j.thread, j.run, r.l.owner, 0); err != nil && !errors.Is(err, session.ErrNoRun) {
		r.l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: releasing a run", slog.String("run", r.id),
			slog.String("thread", r.conversation), slog.Any("error", err))
	}
}

// keepClaims starts, on a session.Journaler, the goroutine that every
// third of the lease renews the claims of the runs in flight here, and
// takes over the runs whose claims ran out (another Server that died):
// a run is run by one process at a time. Close ends it (releaseClaims).
func (l *localRunner) keepClaims() {
	js, ok := l.store.(session.Journaler)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.stopClaims, l.claimsEnded = cancel, make(chan struct{})
	go func() {
		defer close(l.claimsEnded)
		tick := time.NewTicker(l.lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			l.renewClaims(ctx, js)
			if err := l.recoverRuns(ctx); err != nil && ctx.Err() == nil {
				l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: looking for runs to take over", slog.Any("error", err))
			}
		}
	}()
}

// renewClaims renews the claims of the runs in flight here. A run that
// another Server claimed meanwhile is its: this process stops it, and
// writes nothing more of it.
func (l *localRunner) renewClaims(ctx context.Context, js session.Journaler) {
	l.mu.Lock()
	var held []*run
	for _, r := range l.threads {
		if !r.over && r.journal != nil && !r.kept.Load() {
			held = append(held, r)
		}
	}
	l.mu.Unlock()
	for _, r := range held {
		err := js.ClaimRun(ctx, r.thread, r.id, l.owner, l.lease)
		switch {
		case err == nil, errors.Is(err, session.ErrNoRun): // renewed, or it ended meanwhile
		case errors.Is(err, session.ErrClaimed):
			l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: another server took a run over", slog.String("run", r.id),
				slog.String("thread", r.conversation), slog.Any("error", err))
			r.kept.Store(true)
			r.cancel(errTakenOver)
		case ctx.Err() == nil:
			l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: renewing the claim of a run", slog.String("run", r.id),
				slog.String("thread", r.conversation), slog.Any("error", err))
		}
	}
}

// releaseClaims ends keepClaims' goroutine, and releases the claims of
// the runs Close left in the store (kept), for the next Server to take
// them at once.
func (l *localRunner) releaseClaims() {
	if l.stopClaims == nil {
		return
	}
	l.stopClaims()
	<-l.claimsEnded
	l.mu.Lock()
	var kept []*run
	for _, r := range l.threads {
		if r.journal != nil && r.kept.Load() {
			kept = append(kept, r)
		}
	}
	l.mu.Unlock()
	for _, r := range kept {
		r.release(context.Background())
	}
}
