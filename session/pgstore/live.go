package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
)

// An owner's life (session.LiveJournaler) is a session-level advisory
// lock, of the key (livesKey, hashtext(owner)), held by a connection of
// the life's own: the server drops it with the connection, when the
// process dies (its socket closes) or when the server stops hearing from
// it (TCP keepalives, which the life's connection asks of the server:
// see liveSettings). Whether an owner lives is whether its key is locked
// (livesSQL), which pg_locks tells any session of the database. Two
// owners whose names hash alike look alive while either lives: a dead
// one's claims then wait for the other's end, never the reverse.

// livesKey is the first half of the keys of lives' advisory locks: "live"
// in ASCII.
const livesKey = 0x6c697665

// livesSQL says whether the owner of a row of toolnexus_journals lives:
// whether a session holds the advisory lock of its life.
var livesSQL = `EXISTS (SELECT FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND l.classid = ` + strconv.Itoa(livesKey) + ` AND l.objid = (hashtext(owner)::bigint & 4294967295)::oid)`

// liveSettings are what a life's connection asks of the server: to end
// it, and so release the life's lock, after 5 s of silence and 3
// keepalives unanswered 1 s apart (over TCP; a Unix socket has no
// partition to detect). The life pings every PingInterval, and is lost
// once a ping goes unanswered for LifeTimeout: well before the server
// may end it, so that the process knows it lost its claims before any
// other may take them.
var liveSettings = []string{"SET tcp_keepalives_idle = 5", "SET tcp_keepalives_interval = 1", "SET tcp_keepalives_count = 3"}

// The timing of a life's checks (see liveSettings).
const (
	// PingInterval is how often a life checks its connection.
	PingInterval = time.Second
	// LifeTimeout is how long a check of a life may wait for the server's
	// answer before the life is taken as lost.
	LifeTimeout = 2 * time.Second
)

var _ session.LiveJournaler = (*Store)(nil)

// Live implements [session.LiveJournaler]: it opens a connection of its
// own (with the pool's settings), takes the advisory lock of owner's
// life there, and checks the connection every [PingInterval]. The life
// is lost (Done, Err) when a check fails or goes unanswered for
// [LifeTimeout]: the connection is then closed, and the server drops the
// lock. Live fails when another session holds the lock: owner's life is
// going on already.
func (s *Store) Live(ctx context.Context, owner string) (session.Life, error) {
	if err := record.CheckOwner(owner); err != nil || owner == "" {
		if err == nil {
			err = errors.New("the owner is empty")
		}
		return nil, fmt.Errorf("pgstore: beginning a life: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("pgstore: beginning the life of %q: %w", owner, err)
	}
	fail := func(err error) (session.Life, error) {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("pgstore: beginning the life of %q: %w", owner, err)
	}
	for _, set := range liveSettings {
		if _, err := conn.Exec(ctx, set); err != nil {
			return fail(err)
		}
	}
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, hashtext($2))", livesKey, owner).Scan(&locked); err != nil {
		return fail(err)
	}
	if !locked {
		return fail(errors.New("it is going on already"))
	}
	l := &pgLife{owner: owner, conn: conn, done: make(chan struct{}), stop: make(chan struct{}), ok: time.Now()}
	go l.watch()
	return l, nil
}

// pgLife is a life held by an advisory lock on its connection.
type pgLife struct {
	owner string
	done  chan struct{} // closed when the life is over
	stop  chan struct{} // closed by Close, for watch

	mu   sync.Mutex // the connection is one session: one check at a time
	conn *pgx.Conn  // nil once the life is over
	ok   time.Time  // when the last check that the server answered began
	err  error      // why the life was lost
}

// watch checks the life every PingInterval until it is over.
func (l *pgLife) watch() {
	tick := time.NewTicker(PingInterval)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if l.ping() != nil {
			return
		}
	}
}

// ping checks the connection; a check that fails or goes unanswered for
// LifeTimeout loses the life.
func (l *pgLife) ping() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return l.overLocked()
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), LifeTimeout)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "SELECT 1"); err != nil {
		l.err = fmt.Errorf("pgstore: the life of %q: its connection failed: %v: %w", l.owner, err, session.ErrLifeLost)
		l.endLocked()
		return l.err
	}
	l.ok = start
	return nil
}

// overLocked returns the error of a life that is over. l.mu is held.
func (l *pgLife) overLocked() error {
	if l.err != nil {
		return l.err
	}
	return fmt.Errorf("pgstore: the life of %q ended: %w", l.owner, session.ErrLifeLost)
}

// endLocked closes the connection, which releases the lock, and marks
// the life over. l.mu is held.
func (l *pgLife) endLocked() {
	ctx, cancel := context.WithTimeout(context.Background(), LifeTimeout)
	defer cancel()
	l.conn.Close(ctx)
	l.conn = nil
	close(l.done)
}

func (l *pgLife) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pgstore: checking the life of %q: %w", l.owner, err)
	}
	l.mu.Lock()
	switch {
	case l.conn == nil:
		err := l.overLocked()
		l.mu.Unlock()
		return err
	case time.Since(l.ok) < PingInterval:
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	return l.ping()
}

func (l *pgLife) Done() <-chan struct{} { return l.done }

func (l *pgLife) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close unlocks the life's lock and closes its connection.
func (l *pgLife) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	close(l.stop)
	ctx, cancel := context.WithTimeout(context.Background(), LifeTimeout)
	defer cancel()
	_, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1, hashtext($2))", livesKey, l.owner)
	l.endLocked()
	return err
}
