package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
)

// DefaultConnectTimeout bounds each new connection to the server, from
// dialling to the end of authentication, when the URL [Open] is given sets
// no connect_timeout: a server that is down, or an address that never
// answers, fails Open within it rather than hanging.
const DefaultConnectTimeout = 10 * time.Second

// Attempts is how many times an operation is tried when it fails in a way
// that left nothing written and that another try may not meet: the
// connection was lost, or the server was shutting down, restarting or
// undoing a deadlock (see the package doc). The tries are 50 ms, then
// 100 ms apart.
const Attempts = 3

// ResolveTimeout bounds how long an Append or a write to a journal whose
// connection was lost during its commit spends learning whether the
// commit took effect.
const ResolveTimeout = 10 * time.Second

// ErrUncertain is returned, wrapped, by an Append (or a BeginRun,
// AppendRun or EndRun) whose connection was lost during its commit when
// the server could not be asked, within [ResolveTimeout], whether the
// commit took effect: the write is stored whole or not at all, and which
// is unknown.
var ErrUncertain = errors.New("pgstore: the write's commit was cut off and its outcome could not be learnt")

// Store is a [session.Store], a [session.Lister] and a
// [session.Journaler] in a PostgreSQL database. Make one with [Open] or
// [New] and close it with [Store.Close]. It is safe for concurrent use, by
// any number of goroutines and processes.
type Store struct {
	pool    *pgxpool.Pool
	owned   bool // Open made pool: Close closes it
	commits *committer
}

var (
	_ session.Lister    = (*Store)(nil)
	_ session.Journaler = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// or postgresql://
// URL, or a key=value connection string, as libpq and pgx take them),
// creates or migrates the store's tables there, and returns the store,
// which the caller must Close. A database that cannot be reached fails
// Open at once, or within the URL's connect_timeout
// ([DefaultConnectTimeout] if it sets none). No error holds the URL's
// password.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, &connStringError{err: err, secrets: secrets(url)}
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: opening %s: %w", where(&cfg.ConnConfig.Config), err)
	}
	s, err := open(ctx, pool, true)
	if err != nil {
		return nil, fmt.Errorf("pgstore: opening %s: %w", where(&cfg.ConnConfig.Config), err)
	}
	return s, nil
}

// New returns a store over a pool the program already has, after creating
// or migrating the store's tables in its database. Close does not close
// the pool: it stays the program's.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New: the pool is nil")
	}
	s, err := open(ctx, pool, false)
	if err != nil {
		return nil, fmt.Errorf("pgstore: opening %s: %w", where(&pool.Config().ConnConfig.Config), err)
	}
	return s, nil
}

func open(ctx context.Context, pool *pgxpool.Pool, owned bool) (*Store, error) {
	if err := migrate(ctx, pool); err != nil {
		if owned {
			pool.Close()
		}
		return nil, err
	}
	s := &Store{pool: pool, owned: owned}
	// Half the pool commits groups of writes; the rest reads (and tries
	// alone the writes of a group that failed).
	s.startCommitters(max(1, int(pool.Config().MaxConns)/2))
	return s, nil
}

// where names the database of a connection without its password.
func where(cfg *pgconn.Config) string {
	return fmt.Sprintf("database %q on %s:%d as %q", cfg.Database, cfg.Host, cfg.Port, cfg.User)
}

// Close closes the connections of a store made by Open, waiting for the
// operations in progress; calls after Close fail. A store made by New
// leaves its pool open.
func (s *Store) Close() error {
	s.commits.close()
	if s.owned {
		s.pool.Close()
	}
	return nil
}

// Load implements [session.Store].
func (s *Store) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	if err := record.CheckID(id); err != nil {
		return nil, err
	}
	// One statement reads one snapshot: an append in progress is either
	// all there or not at all. Reading writes nothing: any try may be
	// repeated.
	var stored [][]byte
	err := retry(ctx, func() (bool, error) {
		rows, err := s.pool.Query(ctx, "SELECT content FROM toolnexus_contents WHERE conversation = $1 ORDER BY seq", id)
		if err == nil {
			stored, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
		}
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading %q: %w", id, err)
	}
	if len(stored) == 0 {
		return nil, fmt.Errorf("pgstore: loading %q: %w", id, session.ErrNotFound)
	}
	out := make([]*genai.Content, len(stored))
	for i, b := range stored {
		if out[i], err = record.Decode(b); err != nil {
			return nil, fmt.Errorf("pgstore: loading %q: content %d: %w", id, i, err)
		}
	}
	return out, nil
}

// appendSQL appends the contents $4 (their total size $3, their number
// $2) to the conversation $1 in one statement: it creates the
// conversation's row or updates it, which locks it until the transaction
// ends (an append to the same conversation waits for this one), and
// numbers the contents from the length it found.
var appendSQL = "WITH conversation AS (" + fmt.Sprintf(upsertConversation, "VALUES ($1, clock_timestamp(), clock_timestamp(), $2, $3)") + ")\n" + insertContents

// The parts of an append (appendSQL, and endRunSQL's): upsertConversation
// creates or updates the conversation's row, from the row its %s gives
// (id, created, updated, length $2, bytes $3), and returns the first
// content's seq; insertContents inserts the contents $4 from there.
const (
	upsertConversation = `INSERT INTO toolnexus_conversations AS c (id, created, updated, length, bytes)
	%s
	ON CONFLICT (id) DO UPDATE SET
		updated = greatest(clock_timestamp(), c.updated + interval '1 microsecond'),
		length = c.length + excluded.length,
		bytes = c.bytes + excluded.bytes
	RETURNING c.length - $2 AS first`
	insertContents = `INSERT INTO toolnexus_contents (conversation, seq, content)
	SELECT $1, conversation.first + t.n - 1, t.content
	FROM conversation, unnest($4::bytea[]) WITH ORDINALITY AS t(content, n)`
)

// Append implements [session.Store]. It is one statement, committed with
// the writes queued at the same time (see the package doc,
// "Concurrency"), which holds the conversation's row locked until its
// commit: appends to one conversation, from any process, never
// interleave. How a lost connection is handled is in the package doc.
func (s *Store) Append(ctx context.Context, id string, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err != nil {
		return err
	}
	if len(encoded) == 0 {
		return nil
	}
	size := sizeOf(encoded)
	err = s.commits.do(ctx, &write{
		queue: func(b *pgx.Batch) { b.Queue(appendSQL, id, len(encoded), size, encoded) },
		read:  execResult,
	})
	if err != nil {
		return fmt.Errorf("pgstore: appending to %q: %w", id, err)
	}
	return nil
}

// sizeOf returns the sum of the sizes of values.
func sizeOf(values [][]byte) int64 {
	var size int64
	for _, b := range values {
		size += int64(len(b))
	}
	return size
}

// execResult reads the result of a statement that returns no rows.
func execResult(br pgx.BatchResults) error {
	_, err := br.Exec()
	return err
}

// writeOnce tries the write w once, alone, in a transaction of its own
// (begin; its statements and the transaction's id, pg_current_xact_id, by
// which a commit that lost its connection is resolved; commit). When it
// fails, repeatable says that the write is known not to be stored (it
// never is in part), so that another try cannot store it twice. An answer
// of the store's contract (a run in progress, no such run, another's
// claim) is final: not repeatable.
func (s *Store) writeOnce(ctx context.Context, w *write) (repeatable bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return true, err
	}
	defer tx.Rollback(ctx)
	b := &pgx.Batch{}
	w.queue(b)
	b.Queue("SELECT pg_current_xact_id()::text")
	br := tx.SendBatch(ctx, b)
	err = w.read(br)
	var xid string
	if err == nil {
		err = br.QueryRow().Scan(&xid)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil { // nothing is stored before the commit
		return !refusal(err), err
	}
	err = tx.Commit(ctx)
	if err == nil || refused(err) {
		return true, err
	}
	// No answer to the commit, or the session ended instead (a FATAL
	// error can follow a commit that took effect): ask the server.
	committed, rerr := s.resolve(ctx, xid)
	switch {
	case rerr != nil:
		return false, fmt.Errorf("%w: %w (asking: %w)", ErrUncertain, err, rerr)
	case committed:
		return false, nil
	}
	return true, err
}

// refused reports whether err, the answer to a commit, is the server's
// refusal to commit (a deferred constraint, a serialization failure…): an
// ERROR, which rolled the transaction back. A FATAL or PANIC ends the
// session, and may follow a commit that took effect.
func refused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.SeverityUnlocalized == "ERROR" ||
		pgErr.SeverityUnlocalized == "" && pgErr.Severity == "ERROR")
}

// resolve learns whether the transaction xid committed. While it is in
// progress (the server has not yet seen its connection drop: a network
// partition can hide it for as long as TCP keepalives allow), resolve
// ends the backend that runs it, as its client is gone, and asks again.
func (s *Store) resolve(ctx context.Context, xid string) (committed bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ResolveTimeout)
	defer cancel()
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var status *string
		err := s.pool.QueryRow(ctx, "SELECT pg_xact_status($1::xid8)", xid).Scan(&status)
		switch {
		case err != nil:
		case status == nil:
			return false, fmt.Errorf("the server no longer knows transaction %s", xid)
		case *status != "in progress":
			return *status == "committed", nil
		default:
			// The backend whose transaction this is: its pid cannot be
			// another's while the transaction is in progress.
			_, err = s.pool.Exec(ctx, `SELECT pg_terminate_backend(pid, 1000) FROM pg_stat_activity
				WHERE backend_xid::text = ($1::xid8::text::numeric % 4294967296)::text`, xid)
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return false, err
			}
			return false, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// retry calls try until it succeeds, fails in a way that another try
// would meet too, or fails saying that another try is not safe
// (repeatable false: it may have written), [Attempts] times at most.
func retry(ctx context.Context, try func() (repeatable bool, err error)) error {
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		repeatable, err := try()
		if err == nil || !repeatable || attempt == Attempts || !transient(ctx, err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// transient reports whether err, from a try that wrote nothing, may not
// happen again: the server ending the session or the transaction for a
// reason of its own (shutting down, starting, a serialization failure or a
// deadlock), or any failure that is not the server's answer: a connection
// that could not be made or was lost. The server's other answers
// (a constraint, a full disk, a read-only database…) and a done context
// are not.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return true
	}
	switch pgErr.Code {
	case "40001", "40P01", "57P01", "57P02", "57P03":
		return true
	}
	return strings.HasPrefix(pgErr.Code, "08") // connection exceptions
}

// List implements [session.Store].
func (s *Store) List(ctx context.Context) ([]session.Info, error) {
	infos, err := s.infos(ctx, "SELECT "+infoColumns+" FROM toolnexus_conversations ORDER BY updated DESC, id")
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing conversations: %w", err)
	}
	return infos, nil
}

// infoColumns are the columns infos reads, in its order.
const infoColumns = "id, length, bytes, created, updated"

// infos runs a query of infoColumns, retried as reads are.
func (s *Store) infos(ctx context.Context, sql string, args ...any) ([]session.Info, error) {
	var infos []session.Info
	err := retry(ctx, func() (bool, error) {
		rows, err := s.pool.Query(ctx, sql, args...)
		if err == nil {
			infos, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Info, error) {
				var info session.Info
				err := row.Scan(&info.ID, &info.Len, &info.Bytes, &info.Created, &info.Updated)
				return info, err
			})
		}
		return true, err
	})
	return infos, err
}

// Delete implements [session.Store]: it deletes the conversation and its
// journal, in one transaction. It waits for an append to the conversation
// or its journal in progress, and removes what it stored. It is
// ErrNotFound when the database holds neither.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := record.CheckID(id); err != nil {
		return err
	}
	// Once the conversation's and the journal's rows are deleted (and
	// locked), a second statement, which sees every append committed
	// meanwhile, deletes their contents and entries. A try that lost its
	// connection may have deleted the conversation: only one that failed
	// before its commit is repeated.
	err := retry(ctx, func() (bool, error) {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return true, err
		}
		defer tx.Rollback(ctx)
		var deleted int
		err = tx.QueryRow(ctx, `WITH c AS (DELETE FROM toolnexus_conversations WHERE id = $1 RETURNING 1),
			j AS (DELETE FROM toolnexus_journals WHERE id = $1 RETURNING 1)
			SELECT (SELECT count(*) FROM c) + (SELECT count(*) FROM j)`, id).Scan(&deleted)
		if err != nil {
			return true, err
		}
		if deleted == 0 {
			return false, session.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `WITH c AS (DELETE FROM toolnexus_contents WHERE conversation = $1)
			DELETE FROM toolnexus_journal_entries WHERE conversation = $1`, id); err != nil {
			return true, err
		}
		err = tx.Commit(ctx)
		return err == nil || refused(err), err
	})
	if err != nil {
		return fmt.Errorf("pgstore: deleting %q: %w", id, err)
	}
	return nil
}
