package agentserver

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
)

// How a runner holds the runs it runs, on a session.Journaler: every
// journal it writes is claimed by its owner, and every write names that
// claim (the store's fence). On a session.LiveJournaler that tracks the
// runner's life (sqlitestore on Unix, pgstore, session.Memory), the
// claims last as long as the life: no renewal, and a process that dies
// loses them at once. On another Journaler they have a lease
// (Config.RunLease) that keepClaims renews.

// errTakenOver is the cause of a run stopped because it is no longer
// this process's: another Server on the store claimed it (its claim ran
// out while this process stalled or lost the store, or its life on the
// store was lost), or it ended meanwhile. Nothing more of it is written.
var errTakenOver = errors.New("agentserver: the run is no longer this server's")

// errNoProof is the cause of a run stopped because the server could not
// prove that it still held it (its store failed) before a step that must
// not be taken by two servers.
var errNoProof = errors.New("agentserver: the server could not prove it still holds the run")

// errNoLife is the error of a write tried while the runner has no life
// on the store: it lost one, and has not begun the next yet.
var errNoLife = errors.New("agentserver: the server lost its life on the store and has not begun another yet")

// newOwner returns the name of a new life of the runner, or of the
// runner in lease mode.
func newOwner() string { return "agentserver_" + rand.Text() }

// startClaims begins the runner's life on a session.LiveJournaler (lease
// mode where the store cannot track lives), before anything is claimed.
func (l *localRunner) startClaims(ctx context.Context) error {
	lj, ok := l.js.(session.LiveJournaler)
	if !ok {
		l.owner = newOwner()
		return nil
	}
	owner := newOwner()
	life, err := lj.Live(ctx, owner)
	if errors.Is(err, errors.ErrUnsupported) {
		l.owner = owner
		return nil
	}
	if err != nil {
		return err
	}
	l.lives, l.life, l.owner = lj, life, owner
	return nil
}

// claim is the claim of the runs this runner runs: Owner "" while it has
// no life.
func (l *localRunner) claim() session.Claim {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	if l.lives != nil {
		return session.Claim{Owner: l.owner}
	}
	return session.Claim{Owner: l.owner, Lease: l.lease}
}

// proven records that a claim or a write of the run, begun at start,
// proved this process held its claim then.
func (r *run) proven(start time.Time) {
	r.claimedAt.Store(start.UnixNano())
}

// prove returns nil when the runner can prove that it still holds the
// run's claim, for long enough to start a step that must not be started
// by two processes (a tool call, a model call): on a store that tracks
// lives, from the life's check (at most a second old); otherwise from a
// claim or write of the run begun within half the lease, or a renewal
// made now. A run found lost is stopped (lose).
func (r *run) prove(ctx context.Context) error {
	l := r.l
	if l.js == nil || !r.claimed.Load() {
		return nil
	}
	if r.lost.Load() {
		return errTakenOver
	}
	l.cmu.Lock()
	life := l.life
	l.cmu.Unlock()
	if l.lives != nil {
		if life == nil {
			return errNoLife
		}
		err := life.Check(ctx)
		if errors.Is(err, session.ErrLifeLost) {
			r.lose(ctx, err)
			return errTakenOver
		}
		return err
	}
	if time.Since(time.Unix(0, r.claimedAt.Load())) < l.lease/2 {
		return nil
	}
	start := time.Now()
	err := l.js.ClaimRun(context.WithoutCancel(ctx), r.thread, r.id, l.claim())
	switch {
	case err == nil:
		r.proven(start)
	case errors.Is(err, session.ErrClaimed) || errors.Is(err, session.ErrNoRun):
		r.lose(ctx, err)
		return errTakenOver
	}
	return err
}

// lose stops the run, which is no longer this process's (why says so):
// nothing more of it is written or saved, and its readers are told that
// another server goes on with it (see outcome).
func (r *run) lose(ctx context.Context, why error) {
	if !r.lost.CompareAndSwap(false, true) {
		return
	}
	r.claimed.Store(false)
	r.l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: the run is no longer this server's: it stops here", slog.String("run", r.id),
		slog.String("thread", r.conversation), slog.Any("error", why))
	if r.cancel != nil {
		r.cancel(errTakenOver)
	}
}

// reclaim claims again, to end it, the run that released its journal at
// its pause and was cancelled before it parked.
func (r *run) reclaim(ctx context.Context) {
	l := r.l
	if l.js == nil || r.claimed.Load() || r.lost.Load() {
		return
	}
	claim, start := l.claim(), time.Now()
	err := errNoLife
	if claim.Owner != "" {
		err = l.js.ClaimRun(context.WithoutCancel(ctx), r.thread, r.id, claim)
	}
	switch {
	case err == nil:
		r.claimed.Store(true)
		r.proven(start)
	case fenced(err):
		r.lose(ctx, err)
	default:
		l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: claiming a run again to end it", slog.String("run", r.id),
			slog.String("thread", r.conversation), slog.Any("error", err))
	}
}

// release releases the run's claim, for another Server on the store to
// take it at once.
func (r *run) release(ctx context.Context) {
	l := r.l
	if l.js == nil || !r.claimed.Load() || r.lost.Load() {
		return
	}
	owner := l.claim().Owner
	if owner == "" {
		return
	}
	err := l.js.ReleaseRun(context.WithoutCancel(ctx), r.thread, r.id, owner)
	switch {
	case err == nil, errors.Is(err, session.ErrNoRun):
		r.claimed.Store(false)
	case errors.Is(err, session.ErrClaimed):
		r.claimed.Store(false)
		r.lost.Store(true)
	default:
		l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: releasing a run", slog.String("run", r.id),
			slog.String("thread", r.conversation), slog.Any("error", err))
	}
}

// keepClaims starts, on a session.Journaler, the goroutine that watches
// the runner's life (lives) or renews the claims of its runs every third
// of the lease (leases), looks for runs to pick up as often (see scan),
// and expires what waits at its deadline (see the parked runs' timer).
// Close ends it (stopClaims).
func (l *localRunner) keepClaims() {
	if l.js == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.stopClaims, l.claimsEnded = cancel, make(chan struct{})
	go func() {
		defer close(l.claimsEnded)
		tick := time.NewTicker(l.lease / 3)
		defer tick.Stop()
		for {
			l.cmu.Lock()
			life := l.life
			l.cmu.Unlock()
			var lost <-chan struct{}
			if life != nil {
				lost = life.Done()
			}
			select {
			case <-ctx.Done():
				return
			case <-lost:
				l.relive(ctx, life)
				continue
			case <-tick.C:
			}
			if l.lives == nil {
				l.renewClaims(ctx)
			}
			if err := l.scan(ctx); err != nil && ctx.Err() == nil {
				l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: looking for runs to pick up", slog.Any("error", err))
			}
			l.sweep()
		}
	}()
}

// relive handles the loss of the runner's life: every run it holds is
// lost (another Server may take it at once), and a new life, under a new
// owner, begins as soon as the store allows; then the runner looks for
// runs to pick up, its own former ones included.
func (l *localRunner) relive(ctx context.Context, lost session.Life) {
	l.logger.LogAttrs(ctx, slog.LevelError, "agentserver: the store lost this server's life: its runs stop here, for any server to pick up",
		slog.Any("error", lost.Err()))
	l.cmu.Lock()
	l.owner, l.life = "", nil
	l.cmu.Unlock()
	lost.Close()
	l.mu.Lock()
	var held []*run
	for _, r := range l.threads {
		if !r.over && r.claimed.Load() {
			held = append(held, r)
		}
	}
	l.mu.Unlock()
	for _, r := range held {
		r.lose(ctx, lost.Err())
		r.mu.Lock()
		parked := r.phase == phaseParked
		r.mu.Unlock()
		if parked {
			l.endLost(r)
		}
	}
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		owner := newOwner()
		life, err := l.lives.Live(ctx, owner)
		if err == nil {
			l.cmu.Lock()
			l.owner, l.life = owner, life
			l.cmu.Unlock()
			l.logger.LogAttrs(ctx, slog.LevelInfo, "agentserver: began a new life on the store", slog.String("owner", owner))
			if err := l.scan(ctx); err != nil && ctx.Err() == nil {
				l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: looking for runs to pick up", slog.Any("error", err))
			}
			return
		}
		l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: beginning a new life on the store", slog.Any("error", err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// renewClaims renews the claims of the runs this runner holds (leases
// only). A run that another Server claimed meanwhile, or that ended, is
// no longer this one's: it stops here, and writes nothing more.
func (l *localRunner) renewClaims(ctx context.Context) {
	l.mu.Lock()
	var held []*run
	for _, r := range l.threads {
		if !r.over && r.claimed.Load() && !r.lost.Load() {
			held = append(held, r)
		}
	}
	l.mu.Unlock()
	for _, r := range held {
		start := time.Now()
		err := l.js.ClaimRun(ctx, r.thread, r.id, l.claim())
		switch {
		case err == nil:
			r.proven(start)
		case errors.Is(err, session.ErrClaimed), errors.Is(err, session.ErrNoRun):
			r.lose(ctx, err)
			r.mu.Lock()
			parked := r.phase == phaseParked
			r.mu.Unlock()
			if parked {
				l.endLost(r)
			}
		case ctx.Err() == nil:
			l.logger.LogAttrs(ctx, slog.LevelWarn, "agentserver: renewing the claim of a run", slog.String("run", r.id),
				slog.String("thread", r.conversation), slog.Any("error", err))
		}
	}
}

// stopClaiming ends keepClaims' goroutine, releases the claims of the
// runs Close left in the store, for the next Server to take them at once,
// and ends the runner's life.
func (l *localRunner) stopClaiming() {
	if l.stopClaims != nil {
		l.stopClaims()
		<-l.claimsEnded
	}
	l.mu.Lock()
	var held []*run
	for _, r := range l.threads {
		if r.claimed.Load() && !r.lost.Load() {
			held = append(held, r)
		}
	}
	l.mu.Unlock()
	for _, r := range held {
		r.release(context.Background())
	}
	l.cmu.Lock()
	life := l.life
	l.owner, l.life = "", nil
	l.cmu.Unlock()
	if life != nil {
		life.Close()
	}
}
