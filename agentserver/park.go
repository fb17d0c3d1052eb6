package agentserver

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// A run that waits for decisions holds no goroutine: once its pause is
// published (and journaled), its agent.Stream ends (its context is
// cancelled with errParked), and the run is parked. On a
// session.Journaler it is parked in the store: its journal, released, is
// the run (any Server on the store may take its decisions), and this
// process keeps of it a parked entry, its deadline in one heap for all
// parked runs (one timer), and its log only while cursors read it. The
// decision, the deadline or the cancel that wakes it takes the run from
// the store, as a recovered run is taken: claimed, its log rebuilt from
// its entries (show), and run on from them (plan) on a new goroutine.

// errParked is the cause of a run's context when the run parks: its
// agent.Stream ends there, and the run goes on from its entries when it
// is woken.
var errParked = errors.New("agentserver: the run waits for decisions, parked")

// The phases of a run in this process.
const (
	phaseRunning = iota // its goroutine runs it
	phaseParked         // it waits for decisions, with no goroutine
	phaseOver           // it ended, or this copy of it did
)

// parked is what the runner keeps of a run parked in the store.
type parked struct {
	thread, id string
	deadline   time.Time // when its first pending call expires, or its RunTimeout ends
	index      int       // in the runner's due heap
}

// dueHeap orders parked runs by deadline.
type dueHeap []*parked

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *dueHeap) Push(x any) {
	p := x.(*parked)
	p.index = len(*h)
	*h = append(*h, p)
}
func (h *dueHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	p.index = -1
	return p
}

// indexLocked keeps the run id of thread as parked, expiring at
// deadline. l.mu is held.
func (l *localRunner) indexLocked(thread, id string, deadline time.Time) {
	if p := l.parked[thread]; p != nil {
		if p.id == id {
			p.deadline = deadline
			heap.Fix(&l.due, p.index)
			l.timerLocked()
			return
		}
		l.unindexLocked(thread, p.id)
	}
	p := &parked{thread: thread, id: id, deadline: deadline}
	l.parked[thread], l.parkedRuns[id] = p, p
	heap.Push(&l.due, p)
	l.timerLocked()
}

// unindexLocked forgets the parked run id of thread, if it is known.
// l.mu is held.
func (l *localRunner) unindexLocked(thread, id string) {
	p := l.parked[thread]
	if p == nil || p.id != id {
		return
	}
	delete(l.parked, thread)
	delete(l.parkedRuns, id)
	if p.index >= 0 {
		heap.Remove(&l.due, p.index)
	}
	l.timerLocked()
}

// timerLocked sets the timer to the first deadline. l.mu is held.
func (l *localRunner) timerLocked() {
	if len(l.due) == 0 || l.closing {
		if l.timer != nil {
			l.timer.Stop()
		}
		return
	}
	wait := max(time.Until(l.due[0].deadline), 0)
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.fire)
		return
	}
	l.timer.Reset(wait)
}

// stopTimer stops the deadlines' timer, for Close.
func (l *localRunner) stopTimer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
	}
}

// fire wakes the parked runs whose deadline passed, each on a worker.
func (l *localRunner) fire() {
	now := time.Now()
	l.mu.Lock()
	var due []*parked
	for len(l.due) > 0 && !l.due[0].deadline.After(now) && !l.closing {
		p := heap.Pop(&l.due).(*parked)
		// Until the wake is over, the run is looked for again later
		// rather than forgotten: the wake may find it held elsewhere.
		p.deadline = now.Add(max(l.lease/3, time.Second))
		heap.Push(&l.due, p)
		due = append(due, p)
	}
	l.timerLocked()
	l.mu.Unlock()
	for _, p := range due {
		l.workers.Go(func() { l.expire(p.thread, p.id) })
	}
}

// deadline returns when the parked run is woken if nobody decides: its
// first pending call's deadline, or the end of its RunTimeout.
func (r *run) deadline() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deadlineLocked()
}

// deadlineLocked is deadline, r.mu held.
func (r *run) deadlineLocked() time.Time {
	var at time.Time
	for _, id := range r.order {
		if p := r.pending[id]; p != nil && !p.decided && (at.IsZero() || p.Deadline.Before(at)) {
			at = p.Deadline
		}
	}
	if r.l.runTimeout > 0 {
		if end := r.started.Add(r.l.runTimeout); at.IsZero() || end.Before(at) {
			at = end
		}
	}
	return at
}

// running reports whether the run's goroutine runs it.
func (r *run) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase == phaseRunning
}

// park parks r, whose goroutine has ended at its pause: the run no
// longer counts among those running here; on a store, its journal was
// released with the pause (unless a step of it could not be written:
// then this process keeps it, claimed, until it goes on here), and its
// copy here is dropped once nobody reads it.
func (l *localRunner) park(r *run) {
	l.mu.Lock()
	l.countLocked(r, -1)
	closing := l.closing
	l.mu.Unlock()
	r.mu.Lock()
	r.phase = phaseParked
	unwound := r.unwound
	r.unwound = nil
	r.mu.Unlock()
	if !r.lost.Load() {
		deadline := r.deadline() // the run's lock before the runner's
		l.mu.Lock()
		l.indexLocked(r.thread, r.id, deadline)
		l.mu.Unlock()
	}
	close(unwound)
	switch {
	case r.lost.Load():
		l.endLost(r)
	case closing:
		r.closeParked(context.Background())
	default:
		l.cool(r)
	}
}

// cool drops the copy of a parked run that nobody reads, and that the
// store holds whole: it is the store's, until something wakes it.
func (l *localRunner) cool(r *run) {
	if l.js == nil {
		return
	}
	// Under the run's lock (taken before the runner's, as everywhere):
	// no cursor attaches meanwhile.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseParked || len(r.readers) > 0 || r.claimed.Load() || r.unsaved {
		return
	}
	l.mu.Lock()
	if l.runs[r.id] == r {
		delete(l.runs, r.id)
	}
	if l.threads[r.thread] == r {
		delete(l.threads, r.thread)
	}
	l.mu.Unlock()
}

// waitParked waits until the run's goroutine, if it is parking the run,
// has parked it.
func (r *run) waitParked() {
	r.mu.Lock()
	unwound := r.unwound
	r.mu.Unlock()
	if unwound != nil {
		<-unwound
	}
}

// openThread returns the run of thread as this process sees it: its own
// copy while it runs the run, or holds a copy of it that the store's
// journal still matches; else the run the journal holds (nil when none,
// or when it is not agentserver's). That one is the run parked there, its
// copy kept here when adopt is set; or a run another server holds
// (remote: it can only be described); or a run nobody holds that does
// not wait (its server died, or could not save it), picked up here now.
func (l *localRunner) openThread(ctx context.Context, thread string, adopt bool) (*run, error) {
	l.mu.Lock()
	cur := l.threads[thread]
	l.mu.Unlock()
	if cur != nil && cur.running() {
		return cur, nil
	}
	j, err := l.js.LoadRun(ctx, thread)
	if errors.Is(err, session.ErrNoRun) {
		if cur != nil {
			cur.mu.Lock()
			parked := cur.phase == phaseParked
			cur.mu.Unlock()
			if parked {
				l.endStale(cur)
			}
		}
		l.mu.Lock()
		if p := l.parked[thread]; p != nil {
			l.unindexLocked(thread, p.id)
		}
		l.mu.Unlock()
		return nil, nil
	}
	if err != nil {
		return nil, newError(http.StatusServiceUnavailable, "store", err, "the server cannot read the thread's run; try again later")
	}
	if cur != nil {
		cur.mu.Lock()
		current := cur.id == j.Run && (cur.phase == phaseRunning || cur.phase == phaseParked && cur.stored == j.Len)
		cur.mu.Unlock()
		if current {
			return cur, nil
		}
		l.endStale(cur) // a copy the journal no longer matches (a copy that is over stays as it is)
	}
	l.mu.Lock()
	skipped := l.skipped[thread] == j.Run
	l.mu.Unlock()
	if skipped {
		return nil, nil
	}
	r, err := l.fromJournal(ctx, j)
	if err != nil || r == nil {
		return nil, err
	}
	own := l.claim().Owner
	switch {
	case j.Held && j.Owner != own:
		r.remote = true
		l.mu.Lock()
		if len(l.elsewhere) > 10000 {
			clear(l.elsewhere)
		}
		l.elsewhere[r.id] = thread
		l.mu.Unlock()
		return r, nil
	case r.state == StateWaiting && !j.Held:
		deadline := r.deadline() // the run's lock before the runner's
		l.mu.Lock()
		l.indexLocked(thread, r.id, deadline)
		l.mu.Unlock()
		if adopt {
			return l.adopt(r), nil
		}
		return r, nil
	}
	// Nobody holds it, and it does not wait: pick it up.
	picked, err := l.pickUp(ctx, j)
	if err != nil || picked == nil {
		return nil, err
	}
	return picked, nil
}

// fromJournal returns the run a journal holds, rebuilt; nil for a
// journal that is not agentserver's (logged, and left alone: its thread
// stays busy until it is deleted).
func (l *localRunner) fromJournal(ctx context.Context, j session.Journal) (*run, error) {
	entries, err := decodeEntries(j.Entries)
	var r *run
	if err == nil {
		r, err = l.runOf(j.ID, entries)
	}
	if err != nil {
		l.skip(ctx, j, err)
		return nil, nil
	}
	return r, nil
}

// adopt keeps r, a parked run's copy from the store, as this process's
// copy of it, or returns the copy kept already.
func (l *localRunner) adopt(r *run) *run {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.threads[r.thread]; cur != nil && cur.id == r.id && !cur.over {
		return cur
	}
	r.phase = phaseParked
	l.runs[r.id] = r
	l.threads[r.thread] = r
	return r
}

// endStale ends this process's copy of a parked run that the store's
// journal no longer matches: another server woke it (or it was deleted).
// Its readers read the end of the copy, which tells them so.
func (l *localRunner) endStale(r *run) {
	r.mu.Lock()
	over := r.phase == phaseOver
	r.mu.Unlock()
	if over {
		return
	}
	r.lost.Store(true)
	l.endLost(r)
}

// endLost ends this process's copy of a run that is not running here and
// is no longer this process's: its readers read that another server goes
// on with it.
func (l *localRunner) endLost(r *run) {
	r.endCopy(&Done{State: StateCancelled, Error: takenOver})
}

// takenOver is the failure of a run that another server goes on with.
var takenOver = &Failure{"taken_over", "another server goes on with the run: reload to follow it"}

// endCopy ends this process's copy of a run that does not run here,
// with done, as its last record; nothing is saved.
func (r *run) endCopy(done *Done) {
	r.mu.Lock()
	if r.phase == phaseOver {
		r.mu.Unlock()
		return
	}
	r.phase = phaseOver
	r.mu.Unlock()
	now := time.Now()
	r.l.ended(r, now, false)
	r.mu.Lock()
	r.state, r.done = done.State, done
	r.pending, r.order = nil, nil
	r.addLocked(Record{Kind: KindDone, Time: now, Turn: r.lastTurnLocked(), Done: done})
	r.trimLocked()
	r.mu.Unlock()
}

// closeParked ends, for Close, a run parked here. On a store it stays
// there, for the next Server: readers of this process's copy read that
// the server shut down. Otherwise nothing would keep it: it is cancelled,
// and saved with its calls not run.
func (r *run) closeParked(ctx context.Context) {
	r.mu.Lock()
	parked := r.phase == phaseParked
	r.mu.Unlock()
	switch {
	case !parked:
	case r.l.js != nil:
		r.release(ctx)
		r.endCopy(&Done{State: StateCancelled, Error: &Failure{"server_closing",
			"the server is shutting down; the run waits for its decisions on the next one"}})
	default:
		r.stop(ctx, ErrClosed)
	}
}

// take claims the parked run's journal for this process, before a write
// that wakes it; the copy must still match the journal. It fails with
// errElsewhere when another server holds it (or woke it meanwhile).
// r.mu is held.
func (r *run) takeLocked(ctx context.Context) error {
	l := r.l
	if l.js == nil {
		return nil
	}
	if r.claimed.Load() {
		return r.prove(ctx)
	}
	claim, start := l.claim(), time.Now()
	if claim.Owner == "" {
		return newError(http.StatusServiceUnavailable, "store", errNoLife, "the server cannot hold runs right now; try again later")
	}
	err := l.js.ClaimRun(ctx, r.thread, r.id, claim)
	switch {
	case errors.Is(err, session.ErrClaimed):
		return errElsewhere()
	case errors.Is(err, session.ErrNoRun):
		go l.endStale(r)
		return newError(http.StatusConflict, "decided", ErrDecided, "the run went on, or ended, on another server: reload the thread")
	case err != nil:
		return newError(http.StatusServiceUnavailable, "store", err, "the server cannot take the run from its store; try again later")
	}
	r.claimed.Store(true)
	r.proven(start)
	// Claimed: nobody else writes it now. The copy is current if the
	// journal holds what it holds.
	j, err := l.js.LoadRun(ctx, r.thread)
	if err == nil && (j.Run != r.id || j.Len != r.stored) {
		r.release(ctx)
		go l.endStale(r)
		return errElsewhere()
	}
	if err != nil {
		r.release(ctx)
		return newError(http.StatusServiceUnavailable, "store", err, "the server cannot read the run from its store; try again later")
	}
	return nil
}

// decide takes decisions from a request, all or none, and returns a
// cursor from the first record they add. The decisions are journaled
// before anything else (they are refused if they cannot be); once no call
// of the pause waits, the run goes on, here.
func (r *run) decide(ctx context.Context, ds []Decision) (Cursor, error) {
	r.waitParked()
	r.mu.Lock()
	defer r.mu.Unlock()
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
	if r.phase != phaseParked {
		return nil, newError(http.StatusConflict, "unknown_call", ErrUnknownCall, "no call of the run waits for a decision")
	}
	taken := make([]Decision, len(ds))
	for i, d := range ds {
		taken[i] = d
		taken[i].Kind = r.pending[d.CallID].Kind
		if d.Output != nil {
			taken[i].Output = slices.Clone(d.Output)
		}
	}
	offset := r.lenLocked()
	if err := r.settleLocked(ctx, taken); err != nil {
		return nil, err
	}
	return r.attachLocked(offset), nil
}

// settleLocked takes decisions about pending calls of the parked run
// (a request's, or its deadline's): it claims the journal, writes them
// (they are not taken if they cannot be), shows them, and then either
// runs the run on, here, when no call of the pause waits any more, or
// parks it again. r.mu is held.
func (r *run) settleLocked(ctx context.Context, taken []Decision) error {
	if err := r.takeLocked(ctx); err != nil {
		return err
	}
	at := r.lenLocked()
	e := &entry{Kind: entryDecision, At: at, Turn: r.lastTurnLocked(), Decisions: taken}
	unsaved := r.unsaved
	if err := r.writeLocked(ctx, e); err != nil {
		r.entries, r.unsaved = r.entries[:len(r.entries)-1], unsaved // not taken
		r.release(ctx)
		if errors.Is(err, errTakenOver) {
			go r.l.endLost(r)
			return errElsewhere()
		}
		return newError(http.StatusServiceUnavailable, "store", err, "the server cannot store the decisions; they were not taken: try again later")
	}
	for i, d := range taken {
		p := r.pending[d.CallID]
		p.decided, p.decision = true, d
		r.settled[d.CallID] = ErrDecided
		if d.Expired {
			r.settled[d.CallID] = ErrExpired
		}
		r.addLocked(Record{Kind: KindDecision, Decision: &taken[i]})
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
		r.addLocked(Record{Kind: KindPause, Turn: r.lastTurnLocked(), Pending: list})
		r.release(ctx)
		r.l.mu.Lock()
		r.l.indexLocked(r.thread, r.id, r.deadlineLocked())
		r.l.mu.Unlock()
		return nil
	}
	r.resumeLocked(nil, true)
	return nil
}

// undecidedLocked counts the pending calls nobody decided.
func (r *run) undecidedLocked() int {
	n := 0
	for _, id := range r.order {
		if p := r.pending[id]; p != nil && !p.decided {
			n++
		}
	}
	return n
}

// resumeLocked runs the parked run on, from its entries, on a new
// goroutine, counted among the runs running here (never refused for
// MaxRuns); with cause, its context is cancelled with it at once (a
// cancel, Close, its RunTimeout): the calls that wait are answered as
// not run, and the run is saved. fresh says the decisions of its pause
// were taken by what resumes it (its approved calls have not run); a run
// picked up from a journal left behind may have run them. The journal is
// claimed. r.mu is held.
func (r *run) resumeLocked(cause error, fresh bool) {
	l := r.l
	r.phase, r.state = phaseRunning, StateRunning
	r.pending, r.order = nil, nil
	prior := r.plan(fresh)
	tools, _ := browserTools(r.tools)
	runCtx, cancel := context.WithCancelCause(l.ctx)
	r.cancel = cancel
	if cause != nil {
		cancel(cause)
	}
	l.mu.Lock()
	l.unindexLocked(r.thread, r.id)
	l.runs[r.id] = r
	l.threads[r.thread] = r
	l.countLocked(r, 1)
	l.wg.Add(1)
	l.mu.Unlock()
	l.workers.Go(func() { l.execute(runCtx, r, tools, prior) })
}

// stop stops the run with cause: a run that runs is cancelled; a parked
// one is woken to end at once, its calls that wait answered as not run,
// and saved.
func (r *run) stop(ctx context.Context, cause error) error {
	r.waitParked()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.phase {
	case phaseRunning:
		r.cancel(cause)
	case phaseParked:
		if err := r.takeLocked(ctx); err != nil {
			return err
		}
		r.resumeLocked(cause, true)
	}
	return nil
}

// expire wakes the parked run id of thread at its deadline: it ends at
// once past its RunTimeout; else its pending calls whose deadline passed
// are denied, and it goes on once none waits.
func (l *localRunner) expire(thread, id string) {
	ctx := context.Background()
	r, err := l.openThread(ctx, thread, true)
	if err != nil || r == nil || r.id != id || r.remote {
		if err != nil {
			l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: waking a run at its deadline", slog.String("run", id), slog.Any("error", err))
		}
		return // looked for again later, or gone
	}
	r.waitParked()
	now := time.Now()
	if l.runTimeout > 0 && !now.Before(r.started.Add(l.runTimeout)) {
		if err := r.stop(ctx, errRunTimeout); err != nil {
			l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: ending a run at its deadline", slog.String("run", id), slog.Any("error", err))
		}
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseParked {
		return
	}
	var expired []Decision
	for _, cid := range r.order {
		p := r.pending[cid]
		if p == nil || p.decided || now.Before(p.Deadline) {
			continue
		}
		expired = append(expired, Decision{CallID: cid, Expired: true, Kind: p.Kind,
			Reason: fmt.Sprintf("nobody decided about this call within %v; it was not run", l.approvalTimeout)})
	}
	if len(expired) == 0 {
		l.mu.Lock()
		l.indexLocked(thread, id, r.deadlineLocked())
		l.mu.Unlock()
		return
	}
	if err := r.settleLocked(ctx, expired); err != nil {
		l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: expiring the calls of a run", slog.String("run", id), slog.Any("error", err))
	}
}

// scan picks up the runs the store's journals show unfinished that no
// Server holds: those a process that stopped (a crash, a kill, a deploy)
// left behind, and those parked there (indexed here, for their
// deadlines). It fails when the store cannot list them; a journal that
// cannot be read is logged, and looked at again at the next scan.
func (l *localRunner) scan(ctx context.Context) error {
	opts := session.ListOptions{Prefix: storePrefix, Limit: session.MaxPageSize}
	for {
		page, err := l.js.ListRuns(ctx, opts)
		if err != nil {
			return fmt.Errorf("agentserver: listing the runs to pick up: %w", err)
		}
		for _, j := range page.Journals {
			if _, err := l.look(ctx, j); err != nil && ctx.Err() == nil {
				l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: picking up a run", slog.String("thread", j.ID), slog.Any("error", err))
			}
		}
		if page.Next == "" {
			return nil
		}
		opts.Cursor = page.Next
	}
}

// look looks at a journal a listing shows: one this process knows, or
// that another server holds, is left as it is; one parked in the store
// is indexed; another (its server died, or could not save it) is picked
// up.
func (l *localRunner) look(ctx context.Context, listed session.Journal) (*run, error) {
	l.mu.Lock()
	cur, p, closing, skipped := l.threads[listed.ID], l.parked[listed.ID], l.closing, l.skipped[listed.ID] == listed.Run
	known := cur != nil && cur.id == listed.Run && !cur.over || p != nil && p.id == listed.Run
	l.mu.Unlock()
	switch {
	case closing, skipped:
		return nil, nil
	case known:
		return nil, nil // known here
	case listed.Held && listed.Owner != l.claim().Owner:
		return nil, nil // another server's
	}
	j, err := l.js.LoadRun(ctx, listed.ID)
	if errors.Is(err, session.ErrNoRun) {
		return nil, nil // it ended meanwhile
	}
	if err != nil {
		return nil, err
	}
	if j.Run != listed.Run || (j.Held && j.Owner != l.claim().Owner) {
		return nil, nil
	}
	r, err := l.fromJournal(ctx, j)
	if err != nil || r == nil {
		return nil, err
	}
	if r.state == StateWaiting && !j.Held {
		deadline := r.deadline() // the run's lock before the runner's
		l.mu.Lock()
		l.indexLocked(j.ID, r.id, deadline)
		l.mu.Unlock()
		return nil, nil
	}
	return l.pickUp(ctx, j)
}

// pickUp claims and runs on the run of a journal nobody holds, that does
// not wait for decisions (or whose server died while it took them): the
// run goes on here from its last step, under its id. One that waits is
// parked (released, indexed); one whose answer is journaled whole (only
// its saving was lost) is saved.
func (l *localRunner) pickUp(ctx context.Context, listed session.Journal) (*run, error) {
	claim := l.claim()
	if claim.Owner == "" {
		return nil, errNoLife
	}
	switch err := l.js.ClaimRun(ctx, listed.ID, listed.Run, claim); {
	case errors.Is(err, session.ErrClaimed), errors.Is(err, session.ErrNoRun):
		return nil, nil // taken by another Server, or over
	case err != nil:
		return nil, fmt.Errorf("agentserver: claiming the run on %q: %w", listed.ID, err)
	}
	start := time.Now()
	j, err := l.js.LoadRun(ctx, listed.ID)
	if err == nil && j.Run != listed.Run {
		return nil, nil // another run began since
	}
	if errors.Is(err, session.ErrNoRun) {
		return nil, nil // it ended meanwhile
	}
	var r *run
	if err == nil {
		r, err = l.fromJournal(ctx, j)
	}
	if err != nil || r == nil {
		l.js.ReleaseRun(context.WithoutCancel(ctx), listed.ID, listed.Run, claim.Owner)
		if err != nil {
			return nil, fmt.Errorf("agentserver: loading the run on %q: %w", listed.ID, err)
		}
		return nil, nil
	}
	r.claimed.Store(true)
	r.proven(start)
	if r.finished {
		// The answer is journaled whole: only its saving was lost.
		saved := append([]*genai.Content{r.message}, r.plan(false)...)
		err := l.js.EndRun(ctx, r.thread, r.id, claim, saved)
		switch {
		case err == nil:
			r.rememberSaved(withRun(ctx, r.id, r.user), saved)
		case !fenced(err):
			r.release(ctx)
			return nil, fmt.Errorf("agentserver: saving run %s on %q: %w", r.id, r.thread, err)
		}
		return nil, nil
	}
	if r.state == StateWaiting {
		r.release(ctx)
		deadline := r.deadline() // the run's lock before the runner's
		l.mu.Lock()
		l.indexLocked(r.thread, r.id, deadline)
		l.mu.Unlock()
		return r, nil
	}
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		r.release(ctx)
		return nil, nil
	}
	if cur := l.threads[r.thread]; cur != nil && cur.id == r.id && !cur.over {
		l.mu.Unlock()
		r.release(ctx)
		return cur, nil // picked up meanwhile, by this process
	}
	l.mu.Unlock()
	l.logger.LogAttrs(ctx, slog.LevelInfo, "agentserver: picked up a run", slog.String("run", r.id), slog.String("thread", r.conversation),
		slog.Int("entries", len(r.entries)))
	r.mu.Lock()
	r.resumeLocked(nil, false)
	r.mu.Unlock()
	return r, nil
}

// skip logs a journal that cannot be picked up, and leaves it in the
// store: the thread stays busy until it is deleted.
func (l *localRunner) skip(ctx context.Context, j session.Journal, err error) {
	l.mu.Lock()
	l.skipped[j.ID] = j.Run // not again
	l.mu.Unlock()
	l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: a run cannot be recovered", slog.String("run", j.Run),
		slog.String("thread", j.ID), slog.Any("error", err))
}

// sweep drops the copies of parked runs that nobody reads, and forgets
// the runs met elsewhere.
func (l *localRunner) sweep() {
	l.mu.Lock()
	var parked []*run
	for _, r := range l.threads {
		if !r.over {
			parked = append(parked, r)
		}
	}
	clear(l.elsewhere)
	l.mu.Unlock()
	for _, r := range parked {
		l.cool(r)
	}
}
