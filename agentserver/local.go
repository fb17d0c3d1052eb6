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
// goroutine of the server's process, journaled and saved (journal.go),
// its log in memory.
type localRunner struct {
	agent    *agent.Agent
	store    session.Store
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

	mu       sync.Mutex
	runs     map[string]*run // by id: those in flight, and those over for less than keep
	threads  map[string]*run // by thread: its latest run, while runs has it
	finished []*run          // runs over, oldest first, until they are forgotten
	inflight int
	perUser  map[string]int // the runs in flight of each user that has one, when maxPerUser is set
	closing  bool
	wg       sync.WaitGroup // the runs
	workers  *workers       // the runs' goroutines

	// On a session.Journaler, the runner claims the journal of each run
	// it runs for owner, for lease at a time (see keepClaims).
	owner       string
	lease       time.Duration
	stopClaims  context.CancelFunc // ends keepClaims' goroutine
	claimsEnded chan struct{}      // closed when it has ended
	skipped     map[string]string  // the journals that are not agentserver's: their run, by thread
}

func newLocalRunner(cfg *Config) *localRunner {
	ctx, stop := context.WithCancelCause(context.Background())
	return &localRunner{
		agent: cfg.Agent, store: cfg.Store, observer: cfg.Observer, logger: cfg.Logger, remember: cfg.Remember,
		approvalTimeout: cfg.ApprovalTimeout, runTimeout: cfg.RunTimeout, keep: cfg.KeepFinished, maxRuns: cfg.MaxRuns, maxPerUser: cfg.MaxRunsPerUser,
		ctx: ctx, stop: stop,
		runs: map[string]*run{}, threads: map[string]*run{}, perUser: map[string]int{},
		workers: newWorkers(),
		owner:   "agentserver_" + rand.Text(), lease: cfg.RunLease, skipped: map[string]string{},
	}
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
	l.inflight++
	if l.maxPerUser > 0 {
		l.perUser[in.User]++
	}
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
		l.inflight--
		if l.maxPerUser > 0 {
			if l.perUser[in.User]--; l.perUser[in.User] == 0 {
				delete(l.perUser, in.User)
			}
		}
		l.mu.Unlock()
		l.wg.Done()
		return RunInfo{}, nil, err
	}
	r.add(Record{Kind: KindStart})
	info := r.info()
	cur, _ := r.attach(0) // before the run begins: it misses nothing
	l.workers.Go(func() { l.execute(runCtx, r, in, tools, nil) })
	return info, cur, nil
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
// after keep. It is called before the run's last record is added, so that
// a client that reads the end may start the thread's next run at once
// (the run is saved by then).
func (l *localRunner) ended(r *run, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.over = true
	l.inflight--
	if l.maxPerUser > 0 {
		if l.perUser[r.user]--; l.perUser[r.user] == 0 {
			delete(l.perUser, r.user)
		}
	}
	r.ended = at
	l.finished = append(l.finished, r)
}

// lookup returns the run named id.
func (l *localRunner) lookup(id string) (*run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(time.Now())
	if r := l.runs[id]; r != nil {
		return r, nil
	}
	return nil, notFound("run %q not found", id)
}

func notFound(format string, args ...any) *Error {
	return newError(http.StatusNotFound, "not_found", ErrNotFound, format, args...)
}

// Attach implements [Runner].
func (l *localRunner) Attach(ctx context.Context, runID string, offset int64) (Cursor, error) {
	r, err := l.lookup(runID)
	if err != nil {
		return nil, err
	}
	return r.attach(offset)
}

// Decide implements [Runner].
func (l *localRunner) Decide(ctx context.Context, runID string, decisions []Decision) (Cursor, error) {
	r, err := l.lookup(runID)
	if err != nil {
		return nil, err
	}
	return r.decide(decisions)
}

// Cancel implements [Runner].
func (l *localRunner) Cancel(ctx context.Context, runID string) error {
	r, err := l.lookup(runID)
	if err != nil {
		return err
	}
	r.cancel(ErrCancelled)
	return nil
}

// Lookup implements [Runner].
func (l *localRunner) Lookup(ctx context.Context, runID string) (RunInfo, error) {
	r, err := l.lookup(runID)
	if err != nil {
		return RunInfo{}, err
	}
	return r.info(), nil
}

// Runs implements [RunLister].
func (l *localRunner) Runs(ctx context.Context, user string) ([]RunInfo, error) {
	l.mu.Lock()
	l.forget(time.Now())
	var runs []*run
	for _, r := range l.runs {
		if r.user == user {
			runs = append(runs, r)
		}
	}
	l.mu.Unlock()
	out := make([]RunInfo, len(runs))
	for i, r := range runs {
		out[i] = r.info()
	}
	return out, nil
}

// Latest implements [Runner].
func (l *localRunner) Latest(ctx context.Context, thread string) (RunInfo, error) {
	l.mu.Lock()
	l.forget(time.Now())
	r := l.threads[thread]
	l.mu.Unlock()
	if r == nil {
		return RunInfo{}, notFound("no run on this thread")
	}
	return r.info(), nil
}

// Close implements [Runner].
func (l *localRunner) Close(ctx context.Context) error {
	l.mu.Lock()
	l.closing = true
	for _, r := range l.threads {
		if !r.over && r.closeWaiting() {
			r.cancel(ErrClosed) // nobody can decide here any more
		}
	}
	l.mu.Unlock()
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
	l.releaseClaims()
	return err
}

// execute runs r to its end: the agent's Stream on the thread's
// history, the user's message and, for a recovered run, the contents its
// journal holds (prior); then it saves the run.
func (l *localRunner) execute(ctx context.Context, r *run, in *Input, tools []*toolset.Tool, prior []*genai.Content) {
	defer l.wg.Done()
	ctx = agent.WithConversation(ctx, in.Conversation)
	ctx = withRun(ctx, r.id, in.User)
	ctx = artifact.WithScope(ctx, in.User, in.Conversation) // the thread's files (Config.Artifacts)
	if l.runTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, l.runTimeout, errRunTimeout)
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
		Observer:      agent.Observers(agent.ObserverFunc(r.observeDone), l.observer),
	})
	var done *agent.Event
	loaded, err := l.store.Load(ctx, in.Thread)
	if errors.Is(err, session.ErrNotFound) {
		loaded, err = nil, nil
	}
	if err != nil {
		// Nothing ran: nothing is saved (the journal, if any, is dropped).
		err = fmt.Errorf("agentserver: loading thread %q: %w", in.Conversation, err)
		done = &agent.Event{Kind: agent.EventDone, Result: &agent.Result{}, Err: err}
	} else {
		history := slices.Concat(loaded, []*genai.Content{in.Message}, prior)
		for e := range a.Stream(ctx, history) {
			if e.Kind == agent.EventDone {
				done = e
				continue
			}
			r.event(ctx, e)
		}
	}
	if done != nil {
		e := *done
		e.Err = r.save(ctx, len(loaded), e.Result, e.Err)
		done = &e
	}
	r.finish(ctx, done)
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
