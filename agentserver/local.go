package agentserver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// localRunner is the default Runner: each run is agent.Stream on a
// goroutine of the server's process while it runs, journaled and saved
// (journal.go), its log in memory; a run that waits for decisions holds
// no goroutine (park.go).
type localRunner struct {
	agent    *agent.Agent
	store    session.Store
	js       session.Journaler // the store, when it is a Journaler: runs are durable
	observer agent.Observer
	logger   *slog.Logger
	remember func(ctx context.Context, user, thread string, contents []*genai.Content, from int) // Config.Remember

	approvalTimeout time.Duration
	runTimeout      time.Duration
	keep            time.Duration
	maxRuns         int
	maxPerUser      int

	// ctx is the parent of every run's context: Close cancels it.
	ctx  context.Context
	stop context.CancelCauseFunc

	// mu guards what follows. A run's mu is taken before it, never
	// after.
	mu       sync.Mutex
	runs     map[string]*run // by id: those in flight here, parked ones loaded, and those over for less than keep
	threads  map[string]*run // by thread: its latest run, while runs has it
	finished []*run          // runs over, oldest first, until they are forgotten
	inflight int             // the runs running here (parked ones do not count)
	perUser  map[string]int  // the runs running here of each user that has one, when maxPerUser is set
	closing  bool
	wg       sync.WaitGroup // the runs' goroutines
	workers  *workers       // the runs' goroutines
	// The runs parked in the store that this runner knows of (park.go).
	parked     map[string]*parked // by thread
	parkedRuns map[string]*parked // by run id
	due        dueHeap            // the parked runs, by deadline
	timer      *time.Timer        // fires at the first deadline of due
	elsewhere  map[string]string  // runs another server holds, met by Latest: their thread, by id
	skipped    map[string]string  // the journals that are not agentserver's: their run, by thread

	// On a session.Journaler, the runner claims the journal of each run
	// it runs for owner (claims.go): for its life on a LiveJournaler, or
	// for lease at a time.
	cmu         sync.Mutex
	owner       string
	life        session.Life
	lives       session.LiveJournaler // nil: claims have leases
	lease       time.Duration
	stopClaims  context.CancelFunc // ends keepClaims' goroutine
	claimsEnded chan struct{}      // closed when it has ended
}

func newLocalRunner(cfg *Config) *localRunner {
	ctx, stop := context.WithCancelCause(context.Background())
	l := &localRunner{
		agent: cfg.Agent, store: cfg.Store, observer: cfg.Observer, logger: cfg.Logger, remember: cfg.Remember,
		approvalTimeout: cfg.ApprovalTimeout, runTimeout: cfg.RunTimeout, keep: cfg.KeepFinished, maxRuns: cfg.MaxRuns, maxPerUser: cfg.MaxRunsPerUser,
		ctx: ctx, stop: stop,
		runs: map[string]*run{}, threads: map[string]*run{}, perUser: map[string]int{},
		workers: newWorkers(),
		parked:  map[string]*parked{}, parkedRuns: map[string]*parked{}, elsewhere: map[string]string{}, skipped: map[string]string{},
		lease: cfg.RunLease,
	}
	l.js, _ = cfg.Store.(session.Journaler)
	return l
}

// open starts the runner on its store: its life there, then the runs
// the store holds unfinished (see scan), then the goroutine that keeps
// its claims and looks for runs.
func (l *localRunner) open(ctx context.Context) error {
	if l.js == nil {
		return nil
	}
	if err := l.startClaims(ctx); err != nil {
		return fmt.Errorf("agentserver: beginning the server's life on the store: %w", err)
	}
	if err := l.scan(ctx); err != nil {
		return err
	}
	l.keepClaims()
	return nil
}

// Start implements [Runner].
func (l *localRunner) Start(ctx context.Context, in *Input) (RunInfo, Cursor, error) {
	tools, err := browserTools(in.Tools)
	if err != nil {
		return RunInfo{}, nil, err
	}
	l.mu.Lock()
	l.forget(time.Now())
	switch {
	case l.closing:
		l.mu.Unlock()
		return RunInfo{}, nil, newError(http.StatusServiceUnavailable, "closing", ErrClosed, "the server is shutting down")
	case l.threads[in.Thread] != nil && !l.threads[in.Thread].over:
		l.mu.Unlock()
		return RunInfo{}, nil, newError(http.StatusConflict, "busy", ErrBusy, "thread %q has a run in progress", in.Conversation)
	case l.maxRuns > 0 && l.inflight >= l.maxRuns:
		l.mu.Unlock()
		return RunInfo{}, nil, newError(http.StatusServiceUnavailable, "too_many_runs", ErrTooManyRuns, "the server is busy; try again later")
	case l.maxPerUser > 0 && l.perUser[in.User] >= l.maxPerUser:
		l.mu.Unlock()
		return RunInfo{}, nil, newError(http.StatusTooManyRequests, "too_many_runs", ErrTooManyRuns,
			"you have %d runs in progress, as many as the server takes of one user: wait for one to end, or cancel it", l.maxPerUser)
	}
	r := newRun("run_"+rand.Text(), in, l)
	runCtx, cancel := context.WithCancelCause(l.ctx)
	r.cancel = cancel
	l.runs[r.id] = r
	l.threads[in.Thread] = r
	l.countLocked(r, 1)
	l.wg.Add(1)
	l.mu.Unlock()

	// The run is accepted once its journal holds the user's message.
	if err := l.begin(ctx, r, in); err != nil {
		cancel(err)
		l.mu.Lock()
		delete(l.runs, r.id)
		if l.threads[in.Thread] == r {
			delete(l.threads, in.Thread)
		}
		l.countLocked(r, -1)
		l.mu.Unlock()
		l.wg.Done()
		return RunInfo{}, nil, err
	}
	r.add(Record{Kind: KindStart})
	info := r.info()
	cur, _ := r.attach(0) // before the run begins: it misses nothing
	l.workers.Go(func() { l.execute(runCtx, r, tools, nil) })
	return info, cur, nil
}

// countLocked counts r among the runs running here (n 1), or no more
// (n -1). l.mu is held.
func (l *localRunner) countLocked(r *run, n int) {
	l.inflight += n
	if l.maxPerUser > 0 {
		if l.perUser[r.user] += n; l.perUser[r.user] <= 0 {
			delete(l.perUser, r.user)
		}
	}
}

// forget drops the runs over for longer than keep. l.mu is held.
func (l *localRunner) forget(now time.Time) {
	n := 0
	for _, r := range l.finished {
		if now.Sub(r.ended) < l.keep {
			break
		}
		delete(l.runs, r.id)
		if l.threads[r.thread] == r {
			delete(l.threads, r.thread)
		}
		n++
	}
	if n > 0 {
		l.finished = append(l.finished[:0], l.finished[n:]...)
	}
}

// ended records that r is over: its thread is free, and it is forgotten
// after keep (at once when it is no longer this process's). It is called
// before the run's last record is added, so that a client that reads the
// end may start the thread's next run at once (the run is saved by then).
func (l *localRunner) ended(r *run, at time.Time, running bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.over = true
	if running {
		l.countLocked(r, -1)
	}
	r.ended = at
	l.unindexLocked(r.thread, r.id)
	if r.lost.Load() {
		// Another server goes on with it: this one answers from the
		// store, not from its copy.
		if l.runs[r.id] == r {
			delete(l.runs, r.id)
		}
		if l.threads[r.thread] == r {
			delete(l.threads, r.thread)
		}
		return
	}
	l.finished = append(l.finished, r)
}

// lookup returns the run named id that this process holds in memory.
func (l *localRunner) lookup(id string) (*run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(time.Now())
	if r := l.runs[id]; r != nil {
		return r, nil
	}
	return nil, notFound("run %q not found", id)
}

// find returns the run named id: one this process holds, or, for a run
// it knows is parked in the store or held by another server, that run as
// the store shows it (see openThread).
func (l *localRunner) find(ctx context.Context, id string, adopt bool) (*run, error) {
	r, err := l.lookup(id)
	if err == nil || l.js == nil {
		return r, err
	}
	l.mu.Lock()
	thread := l.elsewhere[id]
	if p := l.parkedRuns[id]; p != nil {
		thread = p.thread
	}
	l.mu.Unlock()
	if thread == "" {
		return nil, err
	}
	r, err = l.openThread(ctx, thread, adopt)
	if err == nil && (r == nil || r.id != id) {
		err = notFound("run %q not found", id)
	}
	return r, err
}

func notFound(format string, args ...any) *Error {
	return newError(http.StatusNotFound, "not_found", ErrNotFound, format, args...)
}

// errElsewhere is the answer to a request about a run that another
// server holds: it runs it, or is taking a decision about it.
func errElsewhere() *Error {
	return newError(http.StatusServiceUnavailable, "elsewhere", ErrElsewhere,
		"the run is in progress on another server; try again (the request may reach it), or wait for it to pause or end")
}

// Attach implements [Runner].
func (l *localRunner) Attach(ctx context.Context, runID string, offset int64) (Cursor, error) {
	r, err := l.find(ctx, runID, true)
	if err != nil {
		return nil, err
	}
	if r.remote {
		return nil, errElsewhere()
	}
	return r.attach(offset)
}

// Decide implements [Runner].
func (l *localRunner) Decide(ctx context.Context, runID string, decisions []Decision) (Cursor, error) {
	r, err := l.find(ctx, runID, true)
	if err != nil {
		return nil, err
	}
	if r.remote {
		return nil, errElsewhere()
	}
	return r.decide(ctx, decisions)
}

// Cancel implements [Runner].
func (l *localRunner) Cancel(ctx context.Context, runID string) error {
	r, err := l.find(ctx, runID, true)
	if err != nil {
		return err
	}
	if r.remote {
		return errElsewhere()
	}
	return r.stop(ctx, ErrCancelled)
}

// Lookup implements [Runner].
func (l *localRunner) Lookup(ctx context.Context, runID string) (RunInfo, error) {
	r, err := l.find(ctx, runID, false)
	if err != nil {
		return RunInfo{}, err
	}
	return r.info(), nil
}

// Runs implements [RunLister]: the user's runs this process holds, and
// those parked in the store that it knows of.
func (l *localRunner) Runs(ctx context.Context, user string) ([]RunInfo, error) {
	prefix, err := userPrefix(user)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.forget(time.Now())
	var runs []*run
	for _, r := range l.runs {
		if r.user == user {
			runs = append(runs, r)
		}
	}
	var parked []string
	for thread, p := range l.parked {
		if len(thread) > len(prefix) && thread[:len(prefix)] == prefix && l.runs[p.id] == nil {
			parked = append(parked, thread)
		}
	}
	l.mu.Unlock()
	out := make([]RunInfo, 0, len(runs)+len(parked))
	for _, r := range runs {
		out = append(out, r.info())
	}
	for _, thread := range parked {
		if r, err := l.openThread(ctx, thread, false); err == nil && r != nil && r.user == user {
			out = append(out, r.info())
		}
	}
	return out, nil
}

// Latest implements [Runner]. A thread whose run this process does not
// run is looked up in the store: a run parked there (waiting for
// decisions) is described from its journal, one another server holds
// too (it runs it), and one that nobody holds and that does not wait (its
// server died) is picked up here, now.
func (l *localRunner) Latest(ctx context.Context, thread string) (RunInfo, error) {
	l.mu.Lock()
	l.forget(time.Now())
	r := l.threads[thread]
	l.mu.Unlock()
	if r != nil && (l.js == nil || r.running()) {
		return r.info(), nil
	}
	if l.js != nil {
		s, err := l.openThread(ctx, thread, false)
		switch {
		case err != nil:
			return RunInfo{}, err
		case s != nil:
			return s.info(), nil
		}
	}
	if r == nil || r.lost.Load() {
		return RunInfo{}, notFound("no run on this thread")
	}
	return r.info(), nil // a run of this process's, over
}

// Close implements [Runner].
func (l *localRunner) Close(ctx context.Context) error {
	l.mu.Lock()
	l.closing = true
	var live []*run
	for _, r := range l.threads {
		if !r.over {
			live = append(live, r)
		}
	}
	l.mu.Unlock()
	for _, r := range live {
		r.closeParked(ctx) // those that run are Close's to wait for
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		l.stop(ErrClosed)
		<-done // cancelled runs end promptly, and are saved
	}
	l.stop(ErrClosed)
	l.workers.close()
	l.stopTimer()
	l.stopClaiming()
	return err
}

// execute runs r until it ends or parks: the agent's Stream on the
// thread's history, the user's message and, for a run that goes on from
// its entries (recovered, or woken from its pause), the contents they
// hold (prior); then it saves the run, unless it parked.
func (l *localRunner) execute(ctx context.Context, r *run, tools []*toolset.Tool, prior []*genai.Content) {
	defer l.wg.Done()
	ctx = agent.WithConversation(ctx, r.conversation)
	ctx = withRun(ctx, r.id, r.user)
	ctx = artifact.WithScope(ctx, r.user, r.conversation) // the thread's files (Config.Artifacts)
	if l.runTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, r.started.Add(l.runTimeout), errRunTimeout)
		defer cancel()
	}
	r.ctx = ctx
	a := l.agent.With(agent.Overrides{
		Tools: tools,
		// The server decides the calls that wait, in its Interceptor: the
		// loop's own approvals would hold the turn's other results until
		// the decisions (see run.intercept).
		NeedsApproval: func(*genai.FunctionCall) bool { return false },
		Intercept:     r.intercept,
		Observer:      agent.Observers(agent.ObserverFunc(r.observeDone), r.observer()),
	})
	var done *agent.Event
	loaded, err := l.loadThread(ctx, r, prior != nil)
	if err != nil {
		// Nothing ran. A new run's journal holds only the message its
		// client is told was not run: it is dropped. One that went on
		// from its entries stays, for this or another Server to go on
		// with it once the store answers.
		if prior == nil && !r.lost.Load() && l.js != nil {
			if err := l.js.EndRun(context.WithoutCancel(ctx), r.thread, r.id, l.claim(), nil); err == nil {
				r.claimed.Store(false)
			}
		}
		r.release(ctx)
		err = fmt.Errorf("agentserver: loading thread %q: %w", r.conversation, err)
		done = &agent.Event{Kind: agent.EventDone, Result: &agent.Result{}, Err: err}
	} else {
		history := slices.Concat(loaded, []*genai.Content{r.message}, prior)
		for e := range a.Stream(ctx, history) {
			if e.Kind == agent.EventDone {
				done = e
				continue
			}
			r.event(ctx, e)
		}
	}
	if r.parking {
		if errors.Is(context.Cause(ctx), errParked) {
			l.park(r)
			return
		}
		// Cancelled (or closed, or out of time) as it parked: it ends,
		// saved, under the claim it released at its pause.
		r.reclaim(ctx)
	}
	if done != nil {
		e := *done
		e.Err = r.save(ctx, len(loaded), e.Result, e.Err)
		done = &e
	}
	r.finish(ctx, done)
}

// loadThread loads the thread's history, even for a run already
// cancelled (it is saved as far as it went, after the history). A run
// that goes on from its entries (patient) tries again, its waits growing
// to 5 s, until the store answers or the run's context ends: a failing
// store never loses its journal. A new run tries stepAttempts times.
func (l *localRunner) loadThread(ctx context.Context, r *run, patient bool) ([]*genai.Content, error) {
	wait := stepRetry
	for attempt := 1; ; attempt++ {
		loaded, err := l.store.Load(context.WithoutCancel(ctx), r.thread)
		if errors.Is(err, session.ErrNotFound) {
			return nil, nil
		}
		if err == nil || (!patient && attempt == stepAttempts) {
			return loaded, err
		}
		l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: loading a run's thread", slog.String("run", r.id),
			slog.String("thread", r.conversation), slog.Int("attempt", attempt), slog.Any("error", err))
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// errNoEnd is the error of a run whose stream ended without its last
// event, which agent.Stream never does.
var errNoEnd = errors.New("agentserver: the run ended without its result")

// runKey is the context key of RunID.
type runKey struct{}

// RunID returns the id of the served run whose context ctx is, or is
// derived from: an [agent.Observer] given as Config.Observer reads it
// from the contexts it is handed, to tell the server's runs apart. It
// returns "" for other contexts.
func RunID(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}
