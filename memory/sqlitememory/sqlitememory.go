// Package sqlitememory is a [memory.Store] that keeps users' memories in
// one SQLite file, through the pure-Go driver modernc.org/sqlite (no cgo),
// and matches them with SQLite's full-text index, FTS5.
//
//	store, err := sqlitememory.Open(ctx, filepath.Join(dir, "memory.db"))
//	if err != nil { … }
//	defer store.Close()
//	svc, err := memory.New(memory.Config{Store: store})
//
// The file may be the one a session/sqlitestore keeps conversations in:
// the tables are the store's own (their names begin with memory), and so
// is their version, kept in the table memory_schema.
//
// # Tables
//
//   - memories: a row per memory (its id, user, kind, text, author,
//     thread, message, time in Unix nanoseconds, the terms search matches,
//     and its vector as little-endian float32s, NULL until it is
//     embedded); its rowid orders additions. A unique index on (user,
//     thread, message) for messages is what remembers a thread's message
//     once, whoever adds it; (user, time, id) serves listings, and a
//     partial index the memories waiting for a vector.
//   - memories_fts: an FTS5 index, contentless (the text is in memories)
//     and without positions, of the distinct terms of each memory and of its
//     neighbours, each term prefixed by a hash of the memory's user: each
//     user's terms are tokens of their own, so that a search reads the
//     index entries of its user's memories only, however many users share
//     the file.
//   - memory_terms and memory_users: per user, the number of memories
//     holding each term, the number of memories and their lengths in terms:
//     what ranking needs, kept exact in the transaction of each change.
//
// Each call that writes is one transaction (synchronous=FULL in
// write-ahead-log mode, as sqlitestore: a write that returned survives a
// crash); reads do not wait for writes. Any number of goroutines and of
// processes on one machine may share the file.
//
// # Forgetting
//
// Deleting a memory, or a user, deletes its rows from every table in one
// transaction, its entries in the full-text index with them (FTS5's
// secure-delete, so that no term of it is left in the index), and the
// connections overwrite the pages it freed (PRAGMA secure_delete). Until
// the next checkpoint, the write-ahead log still holds the pages as they
// were; checkpoint (PRAGMA wal_checkpoint(TRUNCATE)) where that matters.
//
// # Vectors
//
// Hybrid search scores every vector of the user (memory.Store.Vectors):
// exact, and linear in the user's memories (see BENCHMARKS.md). The store
// is not a memory.VectorIndex; one that is can wrap it.
package sqlitememory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/memory"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// BusyTimeout is how long a write waits for the lock another connection
// or process holds before it fails.
const BusyTimeout = 10 * time.Second

// migrations[v] takes the schema from version v-1 to v.
var migrations = []string{
	1: `
CREATE TABLE memories (
	seq     INTEGER PRIMARY KEY, -- orders additions; the rowid of memories_fts
	id      TEXT NOT NULL UNIQUE,
	user    TEXT NOT NULL,
	kind    TEXT NOT NULL,
	text    TEXT NOT NULL,
	author  TEXT NOT NULL,
	thread  TEXT NOT NULL,
	message INTEGER NOT NULL,
	time    INTEGER NOT NULL, -- Unix nanoseconds
	terms   TEXT NOT NULL,
	before  TEXT NOT NULL,
	after   TEXT NOT NULL,
	vector  BLOB              -- little-endian float32s, NULL until embedded
);
CREATE UNIQUE INDEX memories_message ON memories (user, thread, message) WHERE kind = 'message';
CREATE INDEX memories_by_time ON memories (user, time DESC, id DESC);
CREATE INDEX memories_unembedded ON memories (user, seq) WHERE vector IS NULL;
CREATE VIRTUAL TABLE memories_fts USING fts5 (tokens,
	content = '', contentless_delete = 1, detail = none, tokenize = 'unicode61 remove_diacritics 0');
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
CREATE TABLE memory_terms (
	user TEXT NOT NULL,
	term TEXT NOT NULL,
	df   INTEGER NOT NULL,
	PRIMARY KEY (user, term)
) WITHOUT ROWID;
CREATE TABLE memory_users (
	user       TEXT PRIMARY KEY,
	count      INTEGER NOT NULL,
	terms_len  INTEGER NOT NULL,
	before_len INTEGER NOT NULL,
	after_len  INTEGER NOT NULL
);`,
}

// SchemaVersion is the version of the tables this package writes.
var SchemaVersion = len(migrations) - 1

// Store is a [memory.Store] in a SQLite file. Open it with [Open] and
// close it with [Store.Close]. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	path  string
	stmts map[string]*sql.Stmt
}

var _ memory.Store = (*Store)(nil)

// The columns of a memory, as read.
const columns = "id, user, kind, text, author, thread, message, time, terms, before, after"

// Statements of the frequent operations, prepared at Open.
const (
	insertMemory = `INSERT INTO memories (id, user, kind, text, author, thread, message, time, terms, before, after, vector)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	insertFTS = `INSERT INTO memories_fts (rowid, tokens) VALUES (?, ?)`
	addTerms  = `INSERT INTO memory_terms (user, term, df) SELECT ?, value, 1 FROM json_each(?) WHERE true ON CONFLICT (user, term) DO UPDATE SET df = df + 1`
	addUser   = `INSERT INTO memory_users (user, count, terms_len, before_len, after_len) VALUES (?, 1, ?, ?, ?)
		ON CONFLICT (user) DO UPDATE SET count = count + 1, terms_len = terms_len + excluded.terms_len,
		before_len = before_len + excluded.before_len, after_len = after_len + excluded.after_len`
	readUser    = `SELECT count, terms_len, before_len, after_len FROM memory_users WHERE user = ?`
	readTerms   = `SELECT term, df FROM memory_terms WHERE user = ? AND term IN (SELECT value FROM json_each(?))`
	matchMemory = `SELECT m.id, m.user, m.kind, m.text, m.author, m.thread, m.message, m.time, m.terms, m.before, m.after
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.user = ? ORDER BY memories_fts.rowid DESC LIMIT ?`
)

var prepared = []string{insertMemory, insertFTS, addTerms, addUser, readUser, readTerms, matchMemory}

// Open opens the store in the SQLite file at path, creating the file (not
// its directory) and the tables when they do not exist. The caller must
// Close it.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitememory: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("sqlitememory: opening %s: %w", path, err)
	}
	s := &Store{db: db, path: abs, stmts: map[string]*sql.Stmt{}}
	err = s.migrate(ctx)
	for _, q := range prepared {
		if err != nil {
			break
		}
		s.stmts[q], err = db.PrepareContext(ctx, q)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlitememory: opening %s: %w", path, err)
	}
	return s, nil
}

// dsn returns the driver's name for the file at abs, with what every
// connection sets: the busy timeout, WAL, full synchronous commits,
// transactions that take the write lock when they begin, and pages freed
// overwritten.
func dsn(abs string) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	q.Add("_pragma", "secure_delete(1)")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if u.Path[0] != '/' {
		u.Path = "/" + u.Path
	}
	return u.String()
}

func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS memory_schema (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		var version int
		err := tx.QueryRowContext(ctx, `SELECT version FROM memory_schema`).Scan(&version)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO memory_schema (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if version > SchemaVersion {
			return fmt.Errorf("the file holds memory tables of version %d, written by a newer version of sqlitememory (this one writes %d)", version, SchemaVersion)
		}
		for v := version + 1; v <= SchemaVersion; v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating the memory tables to version %d: %w", v, err)
			}
		}
		if version == SchemaVersion {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE memory_schema SET version = ?`, SchemaVersion)
		return err
	})
}

func (s *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *Store) stmt(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	if tx == nil {
		return s.stmts[q]
	}
	return tx.StmtContext(ctx, s.stmts[q])
}

// Close closes the database. Calls after Close fail.
func (s *Store) Close() error {
	for _, st := range s.stmts {
		if st != nil {
			st.Close()
		}
	}
	return s.db.Close()
}

// Path returns the absolute path of the file.
func (s *Store) Path() string { return s.path }

// tokens returns the full-text index's text for terms of a user's memory.
func tokens(prefix string, terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		b.WriteString(t)
	}
	return b.String()
}

func termsJSON(terms []string) string {
	if len(terms) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(terms)
	return string(b)
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlitememory: %s: %w", op, err)
}

// Add implements [memory.Store].
func (s *Store) Add(ctx context.Context, user string, recs []memory.Record) ([]string, error) {
	if err := memory.CheckRecords(user, recs); err != nil {
		return nil, err
	}
	var added []string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		added, err = s.add(ctx, tx, user, recs)
		return err
	})
	if err != nil {
		return nil, wrap("add", err)
	}
	return added, nil
}

func (s *Store) add(ctx context.Context, tx *sql.Tx, user string, recs []memory.Record) ([]string, error) {
	var added []string
	prefix := memory.TermPrefix(user)
	ins, fts, terms, users := s.stmt(ctx, tx, insertMemory), s.stmt(ctx, tx, insertFTS), s.stmt(ctx, tx, addTerms), s.stmt(ctx, tx, addUser)
	for i := range recs {
		r := &recs[i]
		res, err := ins.ExecContext(ctx, r.ID, user, string(r.Kind), r.Text, r.Author, r.Thread, r.Message, r.Time.UnixNano(),
			r.Terms, r.Before, r.After, memory.EncodeVector(r.Vector))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		rowid, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		d := memory.DistinctTerms(r)
		if _, err := fts.ExecContext(ctx, rowid, tokens(prefix, d)); err != nil {
			return nil, err
		}
		if _, err := terms.ExecContext(ctx, user, termsJSON(d)); err != nil {
			return nil, err
		}
		if _, err := users.ExecContext(ctx, user, memory.TermCount(r.Terms), memory.TermCount(r.Before), memory.TermCount(r.After)); err != nil {
			return nil, err
		}
		added = append(added, r.ID)
	}
	return added, nil
}

// remove deletes the memories of user with the given ids, and their
// index entries and counts.
func (s *Store) remove(ctx context.Context, tx *sql.Tx, user string, ids []string) (int, error) {
	removed := 0
	for _, id := range ids {
		var rowid int64
		var r memory.Record
		err := tx.QueryRowContext(ctx, `SELECT seq, terms, before, after FROM memories WHERE user = ? AND id = ?`, user, id).
			Scan(&rowid, &r.Terms, &r.Before, &r.After)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, err
		}
		terms := termsJSON(memory.DistinctTerms(&r))
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`DELETE FROM memories WHERE seq = ?`, []any{rowid}},
			{`DELETE FROM memories_fts WHERE rowid = ?`, []any{rowid}},
			{`UPDATE memory_terms SET df = df - 1 WHERE user = ? AND term IN (SELECT value FROM json_each(?))`, []any{user, terms}},
			{`DELETE FROM memory_terms WHERE user = ? AND df <= 0 AND term IN (SELECT value FROM json_each(?))`, []any{user, terms}},
			{`UPDATE memory_users SET count = count - 1, terms_len = terms_len - ?, before_len = before_len - ?, after_len = after_len - ? WHERE user = ?`,
				[]any{memory.TermCount(r.Terms), memory.TermCount(r.Before), memory.TermCount(r.After), user}},
			{`DELETE FROM memory_users WHERE user = ? AND count <= 0`, []any{user}},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
				return 0, err
			}
		}
		removed++
	}
	return removed, nil
}

// Replace implements [memory.Store].
func (s *Store) Replace(ctx context.Context, user string, add []memory.Record, remove []string) error {
	if err := memory.CheckRecords(user, add); err != nil {
		return err
	}
	return wrap("replace", s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.remove(ctx, tx, user, remove); err != nil {
			return err
		}
		_, err := s.add(ctx, tx, user, add)
		return err
	}))
}

// Stats implements [memory.Store].
func (s *Store) Stats(ctx context.Context, user string, terms []string) (memory.Stats, error) {
	st := memory.Stats{DF: make(map[string]int, len(terms))}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return memory.Stats{}, wrap("stats", err)
	}
	defer tx.Rollback()
	err = s.stmt(ctx, tx, readUser).QueryRowContext(ctx, user).Scan(&st.Count, &st.TermsLen, &st.BeforeLen, &st.AfterLen)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return memory.Stats{}, wrap("stats", err)
	}
	if len(terms) > 0 {
		rows, err := s.stmt(ctx, tx, readTerms).QueryContext(ctx, user, termsJSON(terms))
		if err != nil {
			return memory.Stats{}, wrap("stats", err)
		}
		defer rows.Close()
		for rows.Next() {
			var term string
			var df int
			if err := rows.Scan(&term, &df); err != nil {
				return memory.Stats{}, wrap("stats", err)
			}
			st.DF[term] = df
		}
		if err := rows.Err(); err != nil {
			return memory.Stats{}, wrap("stats", err)
		}
	}
	return st, nil
}

// matchExpr returns the FTS5 query of user's memories holding any of
// terms (none empty): each a string, so that none is read as an operator.
func matchExpr(user string, terms []string) string {
	prefix := memory.TermPrefix(user)
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(`"` + prefix + strings.ReplaceAll(t, `"`, `""`) + `"`)
	}
	return b.String()
}

// nonEmpty returns terms without the empty ones.
func nonEmpty(terms []string) []string {
	var out []string
	for _, t := range terms {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

func scanRecords(rows *sql.Rows) ([]memory.Record, error) {
	defer rows.Close()
	var out []memory.Record
	for rows.Next() {
		var r memory.Record
		var kind string
		var t int64
		if err := rows.Scan(&r.ID, &r.User, &kind, &r.Text, &r.Author, &r.Thread, &r.Message, &t, &r.Terms, &r.Before, &r.After); err != nil {
			return nil, err
		}
		r.Kind, r.Time = memory.Kind(kind), time.Unix(0, t).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Match implements [memory.Store].
func (s *Store) Match(ctx context.Context, user string, terms []string, limit int) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap("match", err)
	}
	terms = nonEmpty(terms)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	rows, err := s.stmts[matchMemory].QueryContext(ctx, matchExpr(user, terms), user, limit)
	if err != nil {
		return nil, wrap("match", err)
	}
	recs, err := scanRecords(rows)
	return recs, wrap("match", err)
}

// Get implements [memory.Store].
func (s *Store) Get(ctx context.Context, user string, ids []string) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap("get", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM memories WHERE user = ? AND id IN (SELECT value FROM json_each(?))`,
		user, termsJSON(ids))
	if err != nil {
		return nil, wrap("get", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, wrap("get", err)
	}
	return memory.InOrder(recs, ids), nil
}

// List implements [memory.Store].
func (s *Store) List(ctx context.Context, user string, opts memory.ListOptions) (memory.Page, error) {
	n := memory.ListLimit(opts)
	q := `SELECT ` + columns + ` FROM memories WHERE user = ?`
	args := []any{user}
	if opts.Cursor != "" {
		t, id, err := memory.DecodeCursor(opts.Cursor)
		if err != nil {
			return memory.Page{}, err
		}
		q += ` AND (time < ? OR time = ? AND id < ?)`
		args = append(args, t, t, id)
	}
	q += ` ORDER BY time DESC, id DESC LIMIT ?`
	args = append(args, n+1)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return memory.Page{}, wrap("list", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return memory.Page{}, wrap("list", err)
	}
	return memory.PageOf(recs, n), nil
}

// Delete implements [memory.Store].
func (s *Store) Delete(ctx context.Context, user, id string) error {
	var n int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.remove(ctx, tx, user, []string{id})
		return err
	})
	if err != nil {
		return wrap("delete", err)
	}
	if n == 0 {
		return fmt.Errorf("sqlitememory: delete: %w: memory %q", memory.ErrNotFound, id)
	}
	return nil
}

// DeleteUser implements [memory.Store].
func (s *Store) DeleteUser(ctx context.Context, user string) error {
	return wrap("delete user", s.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM memories_fts WHERE rowid IN (SELECT seq FROM memories WHERE user = ?)`,
			`DELETE FROM memories WHERE user = ?`,
			`DELETE FROM memory_terms WHERE user = ?`,
			`DELETE FROM memory_users WHERE user = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, user); err != nil {
				return err
			}
		}
		return nil
	}))
}

// SetVectors implements [memory.Store].
func (s *Store) SetVectors(ctx context.Context, user string, vectors map[string][]float32) error {
	return wrap("set vectors", s.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `UPDATE memories SET vector = ? WHERE user = ? AND id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for id, v := range vectors {
			if _, err := st.ExecContext(ctx, memory.EncodeVector(v), user, id); err != nil {
				return err
			}
		}
		return nil
	}))
}

// Unembedded implements [memory.Store].
func (s *Store) Unembedded(ctx context.Context, user string, limit int) ([]memory.Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM memories WHERE user = ? AND vector IS NULL ORDER BY seq LIMIT ?`, user, max(limit, 0))
	if err != nil {
		return nil, wrap("unembedded", err)
	}
	recs, err := scanRecords(rows)
	return recs, wrap("unembedded", err)
}

// Vectors implements [memory.Store].
func (s *Store) Vectors(ctx context.Context, user string, f func(id string, v []float32) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, vector FROM memories WHERE user = ? AND vector IS NOT NULL`, user)
	if err != nil {
		return wrap("vectors", err)
	}
	defer rows.Close()
	var v []float32
	var raw sql.RawBytes
	var id string
	for rows.Next() {
		if err := rows.Scan(&id, &raw); err != nil {
			return wrap("vectors", err)
		}
		v = memory.DecodeVector(raw, v)
		if err := f(id, v); err != nil {
			return err
		}
	}
	return wrap("vectors", rows.Err())
}
