package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/toolnexus/toolnexus-go/session"
)

// maxGroup bounds the writes one transaction commits together.
const maxGroup = 256

// errClosed is the error of a write after Close.
var errClosed = errors.New("the store is closed")

// A writer owns the store's one writing connection: every write of the
// process is a request queued to its goroutine, which commits the
// requests queued meanwhile together, in one transaction (group commit),
// so that one fsync makes a whole group durable and writers never
// busy-wait for SQLite's write lock. Each request's outcome is its own:
// a request refused by the store's contract (a run in progress, no such
// run, another's claim, a conversation not found) writes nothing and
// leaves the others committed; one that fails otherwise rolls the group
// back, is answered with its error, and the others are committed again
// without it.
type writer struct {
	db    *sql.DB // one connection
	stmts map[string]*sql.Stmt
	reqs  chan *request // unbuffered: a request sent is one the goroutine holds
	quit  chan struct{}
	done  chan struct{}
	close sync.Once
	// commits counts the transactions committed, for the tests.
	commits atomic.Int64
}

// A request is a write, queued.
type request struct {
	// do runs the write's statements in tx, on the writer's connection.
	// It must write nothing when it returns a refusal (see refused), and
	// may be run again, in another transaction, when another request of
	// its group failed.
	do    func(tx *sql.Tx) error
	state atomic.Int32 // queued, taken or abandoned
	err   error
	done  chan struct{}
}

// The states of a request.
const (
	queued    int32 = iota
	taken           // the writer runs it: its caller waits for the outcome
	abandoned       // its caller's context ended first: the writer skips it
)

// background is the context of the statements the writer runs: a
// request taken is done whole, whatever its caller's context does.
var background = context.Background()

func newWriter(db *sql.DB) *writer {
	return &writer{db: db, stmts: map[string]*sql.Stmt{}, reqs: make(chan *request), quit: make(chan struct{}), done: make(chan struct{})}
}

// start starts the writer's goroutine.
func (w *writer) start() { go w.loop() }

// stop ends the writer's goroutine once the group in progress is
// committed; the writes queued after fail with errClosed.
func (w *writer) stop() {
	w.close.Do(func() { close(w.quit) })
	<-w.done
}

// write queues do and returns its outcome once its group is committed.
// A call whose context ends while the write is queued returns the
// context's error, and the write is not done; once the writer holds it,
// the call waits for its outcome.
func (w *writer) write(ctx context.Context, do func(tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{do: do, done: make(chan struct{})}
	select {
	case w.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.quit:
		return errClosed
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		<-r.done
		return r.err
	}
}

func (w *writer) loop() {
	defer close(w.done)
	group := make([]*request, 0, maxGroup)
	for {
		select {
		case r := <-w.reqs:
			group = append(group[:0], r)
		case <-w.quit:
			return
		}
		// What was queued while the last group committed joins this one.
	gather:
		for len(group) < maxGroup {
			select {
			case r := <-w.reqs:
				group = append(group, r)
			default:
				break gather
			}
		}
		w.commit(group)
		clear(group)
	}
}

// commit runs the requests of group in one transaction and answers each.
func (w *writer) commit(group []*request) {
	tx, err := w.db.BeginTx(background, nil) // BEGIN IMMEDIATE: the file's write lock
	if err != nil {
		for _, r := range group {
			if r.state.Load() == taken || r.state.CompareAndSwap(queued, taken) {
				r.finish(err)
			}
		}
		return
	}
	ran := make([]*request, 0, len(group))
	for i, r := range group {
		if r.state.Load() != taken && !r.state.CompareAndSwap(queued, taken) {
			continue // its caller left
		}
		err := r.do(tx)
		switch {
		case err == nil:
			ran = append(ran, r)
		case refused(err):
			ran = append(ran, r) // answered below, with the group: nothing to undo
			r.err = err
		default:
			// The transaction may hold part of r's writes: undo the
			// group, answer r, and commit the others again without it.
			tx.Rollback()
			r.finish(err)
			for _, o := range ran {
				o.err = nil
			}
			w.commit(append(ran, group[i+1:]...))
			return
		}
	}
	err = tx.Commit()
	w.commits.Add(1)
	for _, r := range ran {
		if err != nil {
			r.err = err
		}
		r.finish(r.err)
	}
}

func (r *request) finish(err error) {
	r.err = err
	close(r.done)
}

// refused reports whether err is a refusal of the store's contract, which
// a request returns having written nothing.
func refused(err error) bool {
	return errors.Is(err, session.ErrRunInProgress) || errors.Is(err, session.ErrNoRun) ||
		errors.Is(err, session.ErrClaimed) || errors.Is(err, session.ErrNotFound)
}

// stmt returns the statement query, prepared on the writer's connection
// at Open, in tx.
func (w *writer) stmt(tx *sql.Tx, query string) *sql.Stmt {
	return tx.StmtContext(background, w.stmts[query])
}
