// Package pgmemory is a [memory.Store] that keeps users' memories in a
// PostgreSQL database, through pgx (github.com/jackc/pgx/v5) and its pool,
// and matches them with PostgreSQL's full-text search.
//
//	store, err := pgmemory.Open(ctx, "postgres://app:secret@db.internal/app")
//	if err != nil { … }
//	defer store.Close()
//	svc, err := memory.New(memory.Config{Store: store})
//
// [Open] takes a URL or a key=value connection string and owns the pool it
// makes; [New] works over a *pgxpool.Pool the program already has (the
// one of a session/pgstore, say) and leaves it open on Close. PostgreSQL 14
// or newer, the database in UTF8.
//
// # Tables
//
// In the first schema of the connection's search_path:
//
//   - toolnexus_memories: a row per memory (its id, user, kind, text,
//     author, thread, message, time in Unix nanoseconds, the terms search
//     matches, and its vector as little-endian float32s in a bytea, NULL
//     until it is embedded), seq ordering additions, and a tsvector of
//     the distinct terms of the memory and of its neighbours, each prefixed
//     by a hash of the user's name, under a GIN index: each user's terms
//     are lexemes of their own, so that a match reads the index entries of
//     its user's memories only, however many users share the table. A unique index on (user, thread,
//     message) for messages remembers a thread's message once, whichever
//     process adds it; (user, time, id) serves listings, and a partial
//     index the memories waiting for a vector.
//   - toolnexus_memory_terms and toolnexus_memory_users: per user, the
//     number of memories holding each term, the number of memories and
//     their lengths in terms, kept exact by the statement or transaction
//     of each change.
//   - toolnexus_memory_schema_version: the version of these tables.
//
// Open and New create the tables, or migrate older ones, in one
// transaction under an advisory lock (processes that open at once take
// turns), and refuse tables of a newer version.
//
// # Cost
//
// Add is one statement, one round trip, whatever the number of memories:
// the memories inserted, the counts of their terms and of their user
// updated, all or none. Stats and Match are one round trip each.
// Concurrent adds of one user take turns on the user's row of counts.
//
// # Forgetting
//
// Deleting a memory, or a user, deletes its rows from every table in one
// transaction. PostgreSQL keeps the dead row versions until VACUUM removes
// them (autovacuum does, in time); run VACUUM where that matters.
//
// # Vectors
//
// Hybrid search scores every vector of the user (memory.Store.Vectors):
// exact, and linear in the user's memories (see BENCHMARKS.md). Vectors
// stay in their row, uncompressed (toast_tuple_target 8160, storage
// EXTERNAL), so that the scan reads no TOAST table. With
// pgvector installed, a store that keeps vectors in a vector column with
// an HNSW index and implements memory.VectorIndex would answer in
// sublinear time; this one does not need the extension.
package pgmemory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolnexus/toolnexus-go/memory"
)

// DefaultConnectTimeout bounds the connection of Open when its URL sets
// no connect_timeout.
const DefaultConnectTimeout = 10 * time.Second

// migrations[v] takes the tables from version v to v+1.
var migrations = []string{
	`CREATE TABLE toolnexus_memories (
	seq     bigserial PRIMARY KEY,
	id      text COLLATE "C" NOT NULL UNIQUE,
	user_id text COLLATE "C" NOT NULL,
	kind    text NOT NULL,
	text    text NOT NULL,
	author  text NOT NULL,
	thread  text NOT NULL,
	message integer NOT NULL,
	time    bigint NOT NULL,
	terms   text NOT NULL,
	before  text NOT NULL,
	after   text NOT NULL,
	vector  bytea,
	tsv     tsvector NOT NULL -- the distinct terms of terms, before and after, each prefixed by the user's prefix
);
-- Vectors (3 KiB at 768 dimensions) stay in the row, uncompressed: a
-- hybrid search reads every vector of the user, and fetching each from
-- the TOAST table, or decompressing it, would cost more than the read.
ALTER TABLE toolnexus_memories SET (toast_tuple_target = 8160);
ALTER TABLE toolnexus_memories ALTER COLUMN vector SET STORAGE EXTERNAL;
CREATE UNIQUE INDEX toolnexus_memories_message ON toolnexus_memories (user_id, thread, message) WHERE kind = 'message';
CREATE INDEX toolnexus_memories_by_time ON toolnexus_memories (user_id, time DESC, id DESC);
CREATE INDEX toolnexus_memories_unembedded ON toolnexus_memories (user_id, seq) WHERE vector IS NULL;
CREATE INDEX toolnexus_memories_tsv ON toolnexus_memories USING gin (tsv);
CREATE TABLE toolnexus_memory_terms (
	user_id text COLLATE "C" NOT NULL,
	term    text COLLATE "C" NOT NULL,
	df      integer NOT NULL,
	PRIMARY KEY (user_id, term)
);
CREATE TABLE toolnexus_memory_users (
	user_id    text COLLATE "C" PRIMARY KEY,
	count      bigint NOT NULL,
	terms_len  bigint NOT NULL,
	before_len bigint NOT NULL,
	after_len  bigint NOT NULL
);`,
}

// SchemaVersion is the version of the tables this package writes.
var SchemaVersion = len(migrations)

// Store is a [memory.Store] in a PostgreSQL database. It is safe for
// concurrent use by any number of goroutines and processes.
type Store struct {
	pool  *pgxpool.Pool
	owned bool
}

var _ memory.Store = (*Store)(nil)

// Open connects to the database at url, creates or migrates the tables,
// and returns the store, which the caller must Close. No error holds the
// URL's password.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("pgmemory: the connection string does not parse (it is not repeated here: it may hold a password)")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgmemory: opening %s: %w", where(&cfg.ConnConfig.Config), err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgmemory: opening %s: %w", where(&cfg.ConnConfig.Config), err)
	}
	return &Store{pool: pool, owned: true}, nil
}

// New returns a store over a pool the program already has, after creating
// or migrating the tables. Close leaves the pool open.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgmemory: New: the pool is nil")
	}
	if err := migrate(ctx, pool); err != nil {
		return nil, fmt.Errorf("pgmemory: opening %s: %w", where(&pool.Config().ConnConfig.Config), err)
	}
	return &Store{pool: pool}, nil
}

func where(cfg *pgconn.Config) string {
	return fmt.Sprintf("database %q on %s:%d as %q", cfg.Database, cfg.Host, cfg.Port, cfg.User)
}

// Close closes the pool of a store made by Open. Calls after Close fail.
func (s *Store) Close() error {
	if s.owned {
		s.pool.Close()
	}
	return nil
}

// migrationLock is the key of the advisory lock that serializes
// migrations ("tnmemory" in ASCII).
const migrationLock int64 = 0x746e6d656d6f7279

func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if v, err := version(ctx, pool); err != nil || v == SchemaVersion {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS toolnexus_memory_schema_version (version integer NOT NULL)"); err != nil {
			return err
		}
		v, err := version(ctx, tx)
		if err != nil || v == SchemaVersion {
			return err
		}
		for _, m := range migrations[v:] {
			if _, err := tx.Exec(ctx, m); err != nil {
				return fmt.Errorf("migrating the memory tables from version %d: %w", v, err)
			}
			v++
		}
		if _, err := tx.Exec(ctx, "DELETE FROM toolnexus_memory_schema_version"); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO toolnexus_memory_schema_version (version) VALUES ($1)", SchemaVersion)
		return err
	})
}

func version(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v *int
	err := q.QueryRow(ctx, "SELECT max(version) FROM toolnexus_memory_schema_version").Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, nil
	}
	if *v > SchemaVersion {
		return 0, fmt.Errorf("the database holds memory tables of version %d, written by a newer version of pgmemory (this one writes %d)", *v, SchemaVersion)
	}
	return *v, nil
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgmemory: %s: %w", op, err)
}

// retry runs f again when PostgreSQL ended it for a deadlock or a
// serialization failure (concurrent writes to a user's counts), a few
// times.
func retry(ctx context.Context, f func() error) error {
	for attempt := 1; ; attempt++ {
		err := f()
		var pe *pgconn.PgError
		if attempt == 5 || !errors.As(err, &pe) || (pe.Code != "40P01" && pe.Code != "40001") || ctx.Err() != nil {
			return err
		}
	}
}

// insert adds recs of user in one statement: the memories (a message
// already there is skipped), their terms' counts, the user's counts.
const insert = `WITH input AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::bigint[],
		$9::text[], $10::text[], $11::text[], $12::bytea[], $13::bigint[], $14::bigint[], $15::bigint[], $18::text[]) WITH ORDINALITY
		AS i(id, kind, text, author, thread, message, time, terms, before, after, vector, tlen, blen, alen, tokens, ord)
), ins AS (
	INSERT INTO toolnexus_memories (id, user_id, kind, text, author, thread, message, time, terms, before, after, vector, tsv)
	SELECT id, $1, kind, text, author, thread, message, time, terms, before, after, vector, to_tsvector('simple', tokens)
	FROM input ORDER BY ord
	ON CONFLICT DO NOTHING RETURNING id
), added AS (
	SELECT input.* FROM input JOIN ins USING (id)
), terms AS (
	INSERT INTO toolnexus_memory_terms (user_id, term, df)
	SELECT $1, x.term, count(*) FROM unnest($16::text[], $17::text[]) AS x(id, term) JOIN ins USING (id)
	GROUP BY x.term ORDER BY x.term
	ON CONFLICT (user_id, term) DO UPDATE SET df = toolnexus_memory_terms.df + excluded.df
), users AS (
	INSERT INTO toolnexus_memory_users (user_id, count, terms_len, before_len, after_len)
	SELECT $1, count(*), sum(tlen), sum(blen), sum(alen) FROM added HAVING count(*) > 0
	ON CONFLICT (user_id) DO UPDATE SET count = toolnexus_memory_users.count + excluded.count,
		terms_len = toolnexus_memory_users.terms_len + excluded.terms_len,
		before_len = toolnexus_memory_users.before_len + excluded.before_len,
		after_len = toolnexus_memory_users.after_len + excluded.after_len
)
SELECT id FROM ins`

// insertArgs returns the arguments of insert for recs of user.
func insertArgs(user string, recs []memory.Record) []any {
	n := len(recs)
	ids, kinds, texts, authors, threads := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	messages, times := make([]int32, n), make([]int64, n)
	terms, befores, afters := make([]string, n), make([]string, n), make([]string, n)
	vectors := make([][]byte, n)
	tlen, blen, alen := make([]int64, n), make([]int64, n), make([]int64, n)
	tokens := make([]string, n)
	prefix := memory.TermPrefix(user)
	var termIDs, termVals []string
	for i := range recs {
		r := &recs[i]
		ids[i], kinds[i], texts[i], authors[i], threads[i] = r.ID, string(r.Kind), r.Text, r.Author, r.Thread
		messages[i], times[i] = int32(r.Message), r.Time.UnixNano()
		terms[i], befores[i], afters[i] = r.Terms, r.Before, r.After
		vectors[i] = memory.EncodeVector(r.Vector)
		tlen[i], blen[i], alen[i] = memory.TermCount(r.Terms), memory.TermCount(r.Before), memory.TermCount(r.After)
		d := memory.DistinctTerms(r)
		var b strings.Builder
		for j, t := range d {
			termIDs = append(termIDs, r.ID)
			termVals = append(termVals, t)
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(prefix + t)
		}
		tokens[i] = b.String()
	}
	return []any{user, ids, kinds, texts, authors, threads, messages, times, terms, befores, afters, vectors, tlen, blen, alen, termIDs, termVals, tokens}
}

// check refuses what PostgreSQL's text cannot hold, before a statement
// fails on it.
func check(user string, recs []memory.Record) error {
	if err := memory.CheckRecords(user, recs); err != nil {
		return err
	}
	bad := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	if bad(user) {
		return fmt.Errorf("%w: the user holds a NUL byte, which PostgreSQL's text cannot hold", memory.ErrInvalid)
	}
	for i := range recs {
		r := &recs[i]
		if bad(r.ID) || bad(r.Text) || bad(r.Author) || bad(r.Thread) || bad(r.Terms) || bad(r.Before) || bad(r.After) {
			return fmt.Errorf("%w: record %d holds a NUL byte, which PostgreSQL's text cannot hold", memory.ErrInvalid, i)
		}
	}
	return nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func add(ctx context.Context, q querier, user string, recs []memory.Record) ([]string, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, insert, insertArgs(user, recs)...)
	if err != nil {
		return nil, err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var added []string
	for _, r := range recs { // in the order given
		if slices.Contains(got, r.ID) {
			added = append(added, r.ID)
		}
	}
	return added, nil
}

// Add implements [memory.Store].
func (s *Store) Add(ctx context.Context, user string, recs []memory.Record) ([]string, error) {
	if err := check(user, recs); err != nil {
		return nil, err
	}
	var added []string
	err := retry(ctx, func() (err error) {
		added, err = add(ctx, s.pool, user, recs)
		return err
	})
	return added, wrap("add", err)
}

// remove deletes the memories of user with the given ids, and updates the
// counts, in tx.
func remove(ctx context.Context, tx pgx.Tx, user string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	rows, err := tx.Query(ctx, `DELETE FROM toolnexus_memories WHERE user_id = $1 AND id = ANY($2) RETURNING terms, before, after`, user, ids)
	if err != nil {
		return 0, err
	}
	var gone []memory.Record
	for rows.Next() {
		var r memory.Record
		if err := rows.Scan(&r.Terms, &r.Before, &r.After); err != nil {
			rows.Close()
			return 0, err
		}
		gone = append(gone, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(gone) == 0 {
		return 0, err
	}
	dfs := map[string]int32{}
	var tlen, blen, alen int64
	for i := range gone {
		for _, t := range memory.DistinctTerms(&gone[i]) {
			dfs[t]++
		}
		tlen, blen, alen = tlen+memory.TermCount(gone[i].Terms), blen+memory.TermCount(gone[i].Before), alen+memory.TermCount(gone[i].After)
	}
	terms := make([]string, 0, len(dfs))
	for t := range dfs {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	ns := make([]int32, len(terms))
	for i, t := range terms {
		ns[i] = dfs[t]
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE toolnexus_memory_terms t SET df = t.df - x.n FROM unnest($2::text[], $3::int[]) AS x(term, n)
		WHERE t.user_id = $1 AND t.term = x.term`, user, terms, ns)
	b.Queue(`DELETE FROM toolnexus_memory_terms WHERE user_id = $1 AND term = ANY($2) AND df <= 0`, user, terms)
	b.Queue(`UPDATE toolnexus_memory_users SET count = count - $2, terms_len = terms_len - $3, before_len = before_len - $4,
		after_len = after_len - $5 WHERE user_id = $1`, user, len(gone), tlen, blen, alen)
	b.Queue(`DELETE FROM toolnexus_memory_users WHERE user_id = $1 AND count <= 0`, user)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	return len(gone), nil
}

// Replace implements [memory.Store].
func (s *Store) Replace(ctx context.Context, user string, add_ []memory.Record, remove_ []string) error {
	if err := check(user, add_); err != nil {
		return err
	}
	return wrap("replace", retry(ctx, func() error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := remove(ctx, tx, user, remove_); err != nil {
				return err
			}
			_, err := add(ctx, tx, user, add_)
			return err
		})
	}))
}

// Stats implements [memory.Store].
func (s *Store) Stats(ctx context.Context, user string, terms []string) (memory.Stats, error) {
	st := memory.Stats{DF: make(map[string]int, len(terms))}
	if terms == nil {
		terms = []string{}
	}
	rows, err := s.pool.Query(ctx, `SELECT u.count, u.terms_len, u.before_len, u.after_len, t.term, t.df
		FROM toolnexus_memory_users u LEFT JOIN toolnexus_memory_terms t ON t.user_id = u.user_id AND t.term = ANY($2)
		WHERE u.user_id = $1`, user, terms)
	if err != nil {
		return memory.Stats{}, wrap("stats", err)
	}
	defer rows.Close()
	for rows.Next() {
		var term *string
		var df *int
		if err := rows.Scan(&st.Count, &st.TermsLen, &st.BeforeLen, &st.AfterLen, &term, &df); err != nil {
			return memory.Stats{}, wrap("stats", err)
		}
		if term != nil && df != nil {
			st.DF[*term] = *df
		}
	}
	return st, wrap("stats", rows.Err())
}

const columns = "id, user_id, kind, text, author, thread, message, time, terms, before, after"

func scanRecords(rows pgx.Rows) ([]memory.Record, error) {
	defer rows.Close()
	var out []memory.Record
	for rows.Next() {
		var r memory.Record
		var kind string
		var t int64
		var msg int32
		if err := rows.Scan(&r.ID, &r.User, &kind, &r.Text, &r.Author, &r.Thread, &msg, &t, &r.Terms, &r.Before, &r.After); err != nil {
			return nil, err
		}
		r.Kind, r.Message, r.Time = memory.Kind(kind), int(msg), time.Unix(0, t).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// tsquery returns the text search query of user's memories holding any of
// terms, for to_tsquery('simple', …): each term prefixed and quoted, so
// that none is read as an operator.
func tsquery(user string, terms []string) string {
	prefix := memory.TermPrefix(user)
	quote := strings.NewReplacer(`'`, `''`, `\`, `\\`)
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString("'" + quote.Replace(prefix+t) + "'")
	}
	return b.String()
}

// Match implements [memory.Store].
func (s *Store) Match(ctx context.Context, user string, terms []string, limit int) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap("match", err)
	}
	var kept []string
	for _, t := range terms {
		if t != "" && strings.IndexByte(t, 0) < 0 { // no memory holds a term with NUL
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 || limit <= 0 || strings.IndexByte(user, 0) >= 0 {
		return nil, nil
	}
	// The most recent, among the first 1.5×limit matches in the table's
	// order: a common term could match most of the user's memories, and
	// sorting them all would read them all.
	rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM (
		SELECT seq, `+columns+` FROM toolnexus_memories WHERE tsv @@ to_tsquery('simple', $1) AND user_id = $2 LIMIT $4
	) m ORDER BY seq DESC LIMIT $3`, tsquery(user, kept), user, limit, limit+limit/2)
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
	rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM toolnexus_memories WHERE user_id = $1 AND id = ANY($2)`, user, ids)
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
	q := `SELECT ` + columns + ` FROM toolnexus_memories WHERE user_id = $1`
	args := []any{user, n + 1}
	if opts.Cursor != "" {
		t, id, err := memory.DecodeCursor(opts.Cursor)
		if err != nil {
			return memory.Page{}, err
		}
		q += ` AND (time, id) < ($3, $4)`
		args = append(args, t, id)
	}
	q += ` ORDER BY time DESC, id DESC LIMIT $2`
	rows, err := s.pool.Query(ctx, q, args...)
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
	err := retry(ctx, func() error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) (err error) {
			n, err = remove(ctx, tx, user, []string{id})
			return err
		})
	})
	if err != nil {
		return wrap("delete", err)
	}
	if n == 0 {
		return fmt.Errorf("pgmemory: delete: %w: memory %q", memory.ErrNotFound, id)
	}
	return nil
}

// DeleteUser implements [memory.Store].
func (s *Store) DeleteUser(ctx context.Context, user string) error {
	return wrap("delete user", pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM toolnexus_memories WHERE user_id = $1`, user)
		b.Queue(`DELETE FROM toolnexus_memory_terms WHERE user_id = $1`, user)
		b.Queue(`DELETE FROM toolnexus_memory_users WHERE user_id = $1`, user)
		return tx.SendBatch(ctx, b).Close()
	}))
}

// SetVectors implements [memory.Store].
func (s *Store) SetVectors(ctx context.Context, user string, vectors map[string][]float32) error {
	if err := ctx.Err(); err != nil {
		return wrap("set vectors", err)
	}
	ids := make([]string, 0, len(vectors))
	for id := range vectors {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	vs := make([][]byte, len(ids))
	for i, id := range ids {
		vs[i] = memory.EncodeVector(vectors[id])
	}
	_, err := s.pool.Exec(ctx, `UPDATE toolnexus_memories m SET vector = x.v FROM unnest($2::text[], $3::bytea[]) AS x(id, v)
		WHERE m.user_id = $1 AND m.id = x.id`, user, ids, vs)
	return wrap("set vectors", err)
}

// Unembedded implements [memory.Store].
func (s *Store) Unembedded(ctx context.Context, user string, limit int) ([]memory.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM toolnexus_memories WHERE user_id = $1 AND vector IS NULL ORDER BY seq LIMIT $2`,
		user, max(limit, 0))
	if err != nil {
		return nil, wrap("unembedded", err)
	}
	recs, err := scanRecords(rows)
	return recs, wrap("unembedded", err)
}

// Vectors implements [memory.Store].
func (s *Store) Vectors(ctx context.Context, user string, f func(id string, v []float32) error) error {
	rows, err := s.pool.Query(ctx, `SELECT id, vector FROM toolnexus_memories WHERE user_id = $1 AND vector IS NOT NULL`, user)
	if err != nil {
		return wrap("vectors", err)
	}
	defer rows.Close()
	var v []float32
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 2 {
			return wrap("vectors", errors.New("unexpected columns"))
		}
		v = memory.DecodeVector(raw[1], v)
		if err := f(string(raw[0]), v); err != nil {
			return err
		}
	}
	return wrap("vectors", rows.Err())
}
