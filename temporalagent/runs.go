package temporalagent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/session"
)

// MaxListedRuns bounds the runs one call of [Runner.Runs] lists: those in
// progress first, then those over, of the threads appended to most
// recently.
const MaxListedRuns = 100

// listQueries bounds the log queries one call of Runs has in flight.
const listQueries = 4

// Runs implements agentserver.RunLister: user's runs in progress, and
// those over for less than RunnerConfig.KeepFinished, MaxListedRuns at
// most, in any order. The store says which threads to look at (the
// journals of the user's runs in progress, then the user's threads
// appended to within KeepFinished, both under the user's prefix,
// agentserver.UserPrefix); the log query of each thread's workflow says
// how its latest run stands. A run whose workflow names another user is
// left out.
func (r *Runner) Runs(ctx context.Context, user string) ([]agentserver.RunInfo, error) {
	prefix, err := agentserver.UserPrefix(user)
	if err != nil {
		return nil, err
	}
	threads, err := r.threadsOf(ctx, prefix)
	if err != nil {
		return nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "store_error",
			Message: "the runs could not be listed", Err: fmt.Errorf("temporalagent: listing runs: %w", err)}
	}
	since := time.Now().Add(-r.cfg.KeepFinished)
	infos := make([]*agentserver.RunInfo, len(threads))
	errs := make([]error, len(threads))
	sem := make(chan struct{}, listQueries)
	var wg sync.WaitGroup
	for i, thread := range threads {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			lv, err := r.view(ctx, workflowID(thread), 0)
			switch {
			case errors.Is(err, agentserver.ErrNotFound):
			case err != nil:
				errs[i] = err
			case lv.User != user, lv.Info.State.Over() && lv.Info.Ended.Before(since):
			default:
				infos[i] = &lv.Info
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := []agentserver.RunInfo{}
	for _, info := range infos {
		if info != nil {
			out = append(out, *info)
		}
	}
	return out, nil
}

// threadsOf returns the store ids of the threads under prefix whose
// latest runs Runs looks at: those with a journal (a run in progress),
// then those appended to within KeepFinished, the latest first;
// MaxListedRuns at most.
func (r *Runner) threadsOf(ctx context.Context, prefix string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(id string) bool {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
		return len(out) < MaxListedRuns
	}
	opts := session.ListOptions{Prefix: prefix, Limit: MaxListedRuns}
	for {
		p, err := r.cfg.Store.ListRuns(ctx, opts)
		if err != nil {
			return nil, err
		}
		for _, j := range p.Journals {
			if !add(j.ID) {
				return out, nil
			}
		}
		if opts.Cursor = p.Next; opts.Cursor == "" {
			break
		}
	}
	since := time.Now().Add(-r.cfg.KeepFinished)
	opts = session.ListOptions{Prefix: prefix, Limit: MaxListedRuns}
	for {
		p, err := session.ListPage(ctx, r.cfg.Store, opts)
		if err != nil {
			return nil, err
		}
		for _, info := range p.Infos {
			if info.Updated.Before(since) {
				return out, nil // the listing is the latest appended first
			}
			if !add(info.ID) {
				return out, nil
			}
		}
		if opts.Cursor = p.Next; opts.Cursor == "" {
			return out, nil
		}
	}
}

// checkUser refuses a run of user when the user has more than
// MaxRunsPerUser runs in flight across the fleet, the one starting
// included: its journal is begun already, so that two runs that start
// at once both count, and neither takes the user over the bound. A run
// without a user (the Runner used without a Server) is not counted.
func (r *Runner) checkUser(ctx context.Context, user string) error {
	limit := r.cfg.MaxRunsPerUser
	if limit < 0 || user == "" {
		return nil
	}
	prefix, err := agentserver.UserPrefix(user)
	if err != nil {
		return err
	}
	n := 0
	opts := session.ListOptions{Prefix: prefix, Limit: min(limit+1, session.MaxPageSize)}
	for {
		p, err := r.cfg.Store.ListRuns(ctx, opts)
		if err != nil {
			return &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "store_error",
				Message: "the runs in flight could not be counted", Err: fmt.Errorf("temporalagent: counting runs: %w", err)}
		}
		if n += len(p.Journals); n > limit {
			return &agentserver.Error{Status: http.StatusTooManyRequests, Code: "too_many_runs", Err: agentserver.ErrTooManyRuns,
				Message: fmt.Sprintf("you have %d runs in progress, as many as the server takes of one user: wait for one to end, or cancel it", limit)}
		}
		if opts.Cursor = p.Next; opts.Cursor == "" {
			return nil
		}
	}
}

// readers counts the cursors of Attach that read each run in this
// process, to bound them by agentserver.MaxReaders: each one that waits
// queries the run's workflow every PollInterval.
type readers struct {
	mu sync.Mutex
	n  map[string]int
}

func (rs *readers) add(run string) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.n[run] >= agentserver.MaxReaders {
		return &agentserver.Error{Status: http.StatusTooManyRequests, Code: "too_many_readers", Err: agentserver.ErrTooManyReaders,
			Message: fmt.Sprintf("%d streams read this run on this server already: close one first", agentserver.MaxReaders)}
	}
	rs.n[run]++
	return nil
}

func (rs *readers) done(run string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.n[run]--; rs.n[run] <= 0 {
		delete(rs.n, run)
	}
}
