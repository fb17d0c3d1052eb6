package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolnexus/toolnexus-go/session"
)

// Limits of a group of writes committed together.
const (
	// maxGroup bounds the writes of one transaction.
	maxGroup = 256
	// groupLockTimeout bounds how long a group waits for a row that
	// another transaction holds (another process's write to the same
	// conversation): past it, each write of the group is tried alone,
	// so that one conversation's wait never holds the others'.
	groupLockTimeout = "1s"
	// groupTimeout bounds a group's round trips, against a connection
	// that stops answering.
	groupTimeout = 10 * time.Second
)

// A write is one of the store's writes (Append, BeginRun, AppendRun,
// EndRun, ClaimRun): statements that change the database only together.
type write struct {
	// queue queues the write's statements in b; read reads their results,
	// in order, and returns nil, a refusal of the store's contract (see
	// refusal: the statements wrote nothing) or another error.
	queue func(b *pgx.Batch)
	read  func(br pgx.BatchResults) error

	ctx   context.Context // the caller's
	state atomic.Int32    // queued, taken or abandoned
	err   error
	done  chan struct{}
}

// The states of a write.
const (
	queued    int32 = iota
	taken           // a committer holds it: its caller waits for the outcome
	abandoned       // its caller's context ended first: it is not done
)

// A committer commits the writes of a Store: the writes queued while the
// committers are busy go together, in one transaction and one round trip
// (group commit), so that one commit, and one flush of PostgreSQL's WAL,
// makes a whole group durable. Each write's outcome is its own: one
// refused by the contract (a run in progress, no such run, another's
// claim) writes nothing and leaves the others committed; when a group
// fails otherwise (an error of one write, a lost connection, a wait for a
// lock longer than groupLockTimeout), each of its writes is tried alone,
// as a store without groups does (see the package doc, "Faults").
type committer struct {
	s    *Store
	reqs chan *write // unbuffered: a write sent is one a committer holds
	quit chan struct{}
	wg   sync.WaitGroup
	stop sync.Once
	// alone counts the writes in flight that a group handed to a try of
	// their own; Close waits for them.
	alone sync.WaitGroup
}

// startCommitters starts n committers of s's writes.
func (s *Store) startCommitters(n int) {
	s.commits = &committer{s: s, reqs: make(chan *write), quit: make(chan struct{})}
	s.commits.start(n)
}

// start starts n goroutines that commit.
func (c *committer) start(n int) {
	for range n {
		c.wg.Go(c.loop)
	}
}

// close ends the committers once their groups in progress are done; the
// writes queued after fail.
func (c *committer) close() {
	c.stop.Do(func() { close(c.quit) })
	c.wg.Wait()
	c.alone.Wait()
}

// errClosed is the error of a write after Close.
var errClosed = errors.New("pgstore: the store is closed")

// do queues w and returns its outcome once it is committed, or known not
// to be. A call whose context ends while the write is queued returns the
// context's error, and the write is not done; once a committer holds it,
// the call waits for its outcome.
func (c *committer) do(ctx context.Context, w *write) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.ctx, w.done = ctx, make(chan struct{})
	select {
	case c.reqs <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.quit:
		return errClosed
	}
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		if w.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		<-w.done
		return w.err
	}
}

func (c *committer) loop() {
	group := make([]*write, 0, maxGroup)
	for {
		select {
		case w := <-c.reqs:
			group = append(group[:0], w)
		case <-c.quit:
			return
		}
		// What was queued while the committers were busy joins the group.
	gather:
		for len(group) < maxGroup {
			select {
			case w := <-c.reqs:
				group = append(group, w)
			default:
				break gather
			}
		}
		c.commit(group)
		clear(group)
	}
}

func (w *write) finish(err error) {
	w.err = err
	close(w.done)
}

// commit commits group in one transaction, and answers each write.
func (c *committer) commit(group []*write) {
	writes := group[:0:0]
	for _, w := range group {
		if w.state.CompareAndSwap(queued, taken) {
			writes = append(writes, w)
		}
	}
	if len(writes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	outcomes := make([]error, len(writes))
	xid, err := c.try(ctx, writes, outcomes)
	if err == nil {
		for i, w := range writes {
			w.finish(outcomes[i])
		}
		return
	}
	var cut *cutCommit
	switch {
	case errors.As(err, &cut):
		// The commit went unanswered: the server knows whether it took
		// effect.
		committed, rerr := c.s.resolve(ctx, xid)
		switch {
		case rerr != nil:
			for _, w := range writes {
				w.finish(fmt.Errorf("%w: %w (asking: %w)", ErrUncertain, cut.err, rerr))
			}
			return
		case committed:
			for i, w := range writes {
				w.finish(outcomes[i])
			}
			return
		}
	case len(writes) == 1 && final(err):
		// The server's answer to this write alone: final, as for a try
		// alone.
		writes[0].finish(err)
		return
	}
	// Nothing was stored: each write is tried alone, on its own, as
	// often as a write is (retry), so that none waits for another.
	for _, w := range writes {
		c.alone.Go(func() {
			w.finish(retry(w.ctx, func() (bool, error) { return c.s.writeOnce(w.ctx, w) }))
		})
	}
}

// cutCommit is the error of a commit that went unanswered: it may have
// taken effect.
type cutCommit struct{ err error }

func (e *cutCommit) Error() string { return e.err.Error() }

// try runs writes in one transaction: begin, the writes' statements and
// the transaction's id in one round trip, then the commit. It sets each
// write's outcome (nil or a refusal) and returns nil once the commit took
// effect; otherwise an error, nothing stored, or a *cutCommit.
func (c *committer) try(ctx context.Context, writes []*write, outcomes []error) (xid string, err error) {
	conn, err := c.s.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue("SET LOCAL lock_timeout = '" + groupLockTimeout + "'")
	for _, w := range writes {
		w.queue(b)
	}
	b.Queue("SELECT pg_current_xact_id()::text")
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	for i, w := range writes {
		if err != nil {
			break
		}
		switch e := w.read(br); {
		case e == nil, refusal(e):
			outcomes[i] = e
		default:
			err = e
		}
	}
	if err == nil {
		err = br.QueryRow().Scan(&xid)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			// The transaction is aborted (or the connection lost): the
			// pool closes a connection released in a transaction.
			conn.Exec(ctx, "rollback")
		}
		return "", err
	}
	_, err = conn.Exec(ctx, "commit")
	if err == nil || refused(err) {
		return xid, err
	}
	// No answer to the commit, or the session ended instead (a FATAL
	// error can follow a commit that took effect).
	return xid, &cutCommit{err: err}
}

// refusal reports whether err is a refusal of the store's contract, which
// a write's statements return having written nothing.
func refusal(err error) bool {
	return errors.Is(err, session.ErrRunInProgress) || errors.Is(err, session.ErrNoRun) || errors.Is(err, session.ErrClaimed)
}

// final reports whether err, a group's, is the server's answer to its
// statements that a try alone would meet too: not a lost connection, a
// wait for a connection or a lock (55P03, groupLockTimeout's), nor a
// failure another try may not meet (see transient).
func final(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code != "55P03" && !transient(context.Background(), err)
}
