// Package sqlitestore is a [session.Store] that keeps conversations in one
// SQLite file, through the pure-Go driver modernc.org/sqlite (no cgo, no C
// toolchain).
//
//	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "sessions.db"))
//	if err != nil { … }
//	defer store.Close()
//	res, err := session.Run(ctx, a, store, "alice", genai.Text("Hi")...)
//
// # Durability and concurrency
//
// The file is in write-ahead-log mode (beside it, SQLite keeps its -wal and
// -shm files while it is open), with synchronous=FULL: an Append that
// returned is on disk, and survives a crash of the process or of the
// machine. Each Append (and each write to a journal) is committed whole or
// not at all, so a crash in the middle of one leaves the conversation as
// it was before it: never half of an append, never a corrupt file.
//
// Any number of goroutines, and of processes on one machine, may use one
// file at once. A Store reads through a few connections (as many as
// GOMAXPROCS, 4 at least), which never wait for a write, and writes
// through one: every write of the Store (Append, Delete, BeginRun,
// AppendRun, EndRun, ClaimRun, ReleaseRun) is queued to the goroutine
// that holds it, which commits the writes queued meanwhile together, in
// one transaction (group commit). So one fsync makes a whole group durable however many
// goroutines wrote, a write never busy-waits for the file's lock, and
// writes to one conversation never interleave. Each write is answered
// with its own outcome, once its transaction is committed, never before:
// one that the contract refuses (a run in progress, no such run, another's
// claim, a conversation not found) writes nothing and leaves the others
// of its group committed, and one that fails otherwise (a constraint, a
// full disk) undoes the group, fails alone, and the others are committed
// again without it. A call whose context ends while its write is queued
// returns the context's error and the write is not done; once the write
// is in a transaction, the call waits for its outcome. Processes that
// share the file take its write lock in turns: a group waits up to
// [BusyTimeout] for another process's transaction. The file must be on a
// local file system: SQLite's locks are not reliable over NFS and similar.
//
// # Storage
//
// Each content is stored as its JSON (see [session.Store]: thought
// signatures and inline data come back byte for byte), one row per content,
// with a row per conversation for List that keeps its length, its size in
// bytes (Info.Bytes, maintained at each append) and its times. The Store is
// a [session.Lister]: ListPage and Usage read the range of the ids' index
// that a prefix spans (an owner's conversations), never another
// conversation's row; a page's conversations are sorted in that range.
//
// The Store is a [session.Journaler]: the journal of a run in progress is
// a row of the table journals, its primary key the conversation's id (so
// the file holds one per conversation: of processes that race BeginRun,
// the database lets exactly one in), with its run, times and length, and
// a row per entry in journal_entries, and its claim (an owner, and the
// end of its lease or 0 for a claim that lasts as long as the owner's
// life). BeginRun, AppendRun and EndRun are committed whole or not at
// all, as Append is, and their statements check the writer's claim (the
// fence: session.Journaler); EndRun deletes the journal and appends the
// contents as Append does, in one, so a run is saved once. LoadRun reads
// one snapshot. The statements of Load, LoadRun, Append and the
// journal's writes are prepared at Open, once on each connection (SQLite
// would parse them at every call otherwise). ListRuns reads the range of
// the journals' ids that a prefix spans, the least recently written
// first: updated times of journals are unique and increasing across the
// file, as those of conversations are.
//
// [Store.Artifacts] is an artifact.Store in the same file (the tables
// artifact_names, artifact_files and artifact_chunks, created when it is
// first asked for, apart from the schema's version): files of at most
// MaxArtifactSize (64 MiB), in rows of ArtifactChunk (256 KiB), each save
// a new version given in one transaction (see [Artifacts]).
//
// The schema carries its version in PRAGMA user_version. Open migrates a
// file of an older version in one transaction (a process that opens it
// meanwhile waits, then finds it migrated): version 2 added the size of
// each conversation, computed from its contents for the conversations the
// file holds; version 3 added the journals; version 4 their claims and sizes
// (ClaimRun: an owner and the end of its lease, on this machine's clock,
// which the processes that share the file share); version 5 claims for an
// owner's life. A file written by a newer version of this package is
// refused rather than misread, so a file that a version 5 store has
// opened is refused by older versions of the package.
//
// The Store is a [session.LiveJournaler] on Unix: an owner's life is an
// exclusive flock of a file of its own in the directory beside the
// database (its path and "-lives"), which the kernel drops when the
// process dies, however it dies; whether an owner lives is whether its
// file is locked. A claim of zero lease is anyone's once its owner's file
// is not locked. Elsewhere Live fails with errors.ErrUnsupported, and
// claims have leases.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// BusyTimeout is how long a group of writes waits for the file's write
// lock while another process holds it, before the group's writes fail
// (the writes of one Store never wait for each other's lock: see the
// package doc), and how long a read waits while another process recovers
// the file's write-ahead log.
const BusyTimeout = 10 * time.Second

// migrations[v] takes the schema from version v-1 to v; the version a
// file holds is in PRAGMA user_version, and the schema this package
// writes is the last.
var migrations = []string{
	1: `
CREATE TABLE IF NOT EXISTS conversations (
	id      TEXT PRIMARY KEY,
	created INTEGER NOT NULL, -- Unix nanoseconds of the first append
	updated INTEGER NOT NULL, -- Unix nanoseconds of the last append, unique in the file
	length  INTEGER NOT NULL  -- the number of contents
);
CREATE INDEX IF NOT EXISTS conversations_by_updated ON conversations (updated);
CREATE TABLE IF NOT EXISTS contents (
	conversation TEXT    NOT NULL,
	seq          INTEGER NOT NULL, -- from 0, in order
	content      BLOB    NOT NULL, -- the content's JSON
	PRIMARY KEY (conversation, seq)
);`,
	// The size of each conversation's contents, kept at append, for
	// Usage and Info.Bytes.
	2: `
ALTER TABLE conversations ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET bytes = (SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM contents WHERE conversation = conversations.id);`,
	// The journals of the runs in progress: at most one per conversation
	// (the primary key), its entries in order.
	3: `
CREATE TABLE journals (
	id      TEXT PRIMARY KEY,  -- the conversation's
	run     TEXT    NOT NULL,
	started INTEGER NOT NULL,  -- Unix nanoseconds of BeginRun
	updated INTEGER NOT NULL,  -- of the last BeginRun or AppendRun, unique in the file
	length  INTEGER NOT NULL   -- the number of entries
);
CREATE INDEX journals_by_updated ON journals (updated);
CREATE TABLE journal_entries (
	conversation TEXT    NOT NULL,
	seq          INTEGER NOT NULL, -- from 0, in order
	entry        BLOB    NOT NULL,
	PRIMARY KEY (conversation, seq)
);`,
	// The claims of the journals (ClaimRun): who holds each, until when;
	// and their sizes.
	4: `
ALTER TABLE journals ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE journals ADD COLUMN lease INTEGER NOT NULL DEFAULT 0; -- Unix nanoseconds
ALTER TABLE journals ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0; -- the sum of the entries' sizes
UPDATE journals SET bytes = (SELECT coalesce(sum(length(entry)), 0) FROM journal_entries WHERE conversation = journals.id);`,
	// Claims that last as long as their owner's life: an owner with a
	// lease of 0 (version 4 read them as run out, and would take them);
	// a released claim has no owner.
	5: `
UPDATE journals SET owner = '', lease = 0 WHERE lease <= CAST(strftime('%s', 'now') AS INTEGER) * 1000000000;`,
}

// schemaVersion is the version of the schema this package writes.
var schemaVersion = len(migrations) - 1

// Store is a [session.Store] in a SQLite file, a [session.Lister] and a
// [session.Journaler]. Open it with [Open] and close it with
// [Store.Close]. It is safe for concurrent use.
type Store struct {
	db   *sql.DB // the connections that read: at most readers()
	w    *writer // the one that writes
	path string
	// stmts holds the statements of the frequent reads, by their text,
	// prepared at Open (the writer holds the writes'): SQLite parses a
	// statement each time it is prepared, which costs about as much as
	// executing it.
	stmts map[string]*sql.Stmt
	// lives tracks the lives of claims' owners (lives.go).
	lives *lives
}

// readers returns how many connections read the file at once: reads
// never wait for a write (WAL), and each connection keeps its own page
// cache.
func readers() int { return max(4, runtime.GOMAXPROCS(0)) }

// Statements of the frequent operations, prepared at Open (Store.stmts).
const (
	loadContents   = "SELECT content FROM contents WHERE conversation = ? ORDER BY seq"
	insertContent  = "INSERT INTO contents (conversation, seq, content) VALUES (?, ?, ?)"
	readAppendLast = `SELECT
		(SELECT length FROM conversations WHERE id = ?),
		(SELECT max(updated) FROM conversations)`
	upsertConversation = `INSERT INTO conversations (id, created, updated, length, bytes) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, length = excluded.length, bytes = bytes + excluded.bytes`
)

// The statements Open prepares: on the reading connections, and on the
// writing one.
var (
	readsPrepared  = []string{loadContents, loadJournal}
	writesPrepared = []string{insertContent, readAppendLast, upsertConversation,
		insertEntry, beginJournal, appendJournal, deleteJournal, deleteEntries, claimedBy, setClaim}
)

var (
	_ session.Lister    = (*Store)(nil)
	_ session.Journaler = (*Store)(nil)
)

// Open opens the store in the SQLite file at path, creating the file, but
// not its directory, when it does not exist. The caller must Close it.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	s, err := open(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", path, err)
	}
	return s, nil
}

func open(ctx context.Context, abs string) (*Store, error) {
	// The writing connection first: it makes the file, in WAL mode, and
	// migrates it, before any other reads it.
	wdb, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		return nil, err
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	s := &Store{w: newWriter(wdb), path: abs, stmts: make(map[string]*sql.Stmt, len(readsPrepared)), lives: &lives{dir: abs + "-lives"}}
	err = s.migrate(ctx)
	for _, q := range writesPrepared {
		if err != nil {
			break
		}
		s.w.stmts[q], err = wdb.PrepareContext(ctx, q)
	}
	if err == nil {
		s.db, err = sql.Open("sqlite", dsn(abs, false))
	}
	if err == nil {
		n := readers()
		s.db.SetMaxOpenConns(n)
		s.db.SetMaxIdleConns(n) // kept open: a connection opened again prepares again
	}
	for _, q := range readsPrepared {
		if err != nil {
			break
		}
		s.stmts[q], err = s.db.PrepareContext(ctx, q)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.w.start()
	return s, nil
}

// dsn returns the driver's name for the file at abs, with the settings
// every connection applies: the busy timeout first (how long a write
// waits for another process's), then WAL and full synchronous commits.
// The writing connection's transactions take the write lock when they
// begin (a deferred one that reads, then writes, fails at once with
// SQLITE_BUSY when another process wrote in between, instead of
// waiting); the others are read-only.
func dsn(abs string, writes bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	if writes {
		q.Set("_txlock", "immediate")
	} else {
		q.Set("_query_only", "1")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if u.Path[0] != '/' { // C:/dir/file on Windows
		u.Path = "/" + u.Path
	}
	return u.String()
}

// migrate creates the schema in a new file, and brings an existing one's
// to this package's version, in one transaction on the writing
// connection, before its goroutine starts: a process that opens the file
// meanwhile waits for it, then finds the schema migrated.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = func() error {
		var version int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return err
		}
		if version > schemaVersion {
			return fmt.Errorf("the file holds schema version %d, written by a newer version of sqlitestore (this one writes %d)", version, schemaVersion)
		}
		for v := version + 1; v <= schemaVersion; v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating the schema to version %d: %w", v, err)
			}
		}
		if version == schemaVersion {
			return nil
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
		return err
	}()
	if err != nil {
		return err
	}
	return tx.Commit()
}

// write has the writer do a write, and returns its outcome once it is
// committed (see writer).
func (s *Store) write(ctx context.Context, do func(*sql.Tx) error) error {
	return s.w.write(ctx, do)
}

// Close waits for the writes in progress, then closes the database. Calls
// after Close fail.
func (s *Store) Close() error {
	s.w.stop()
	return s.close()
}

// close closes what Open opened.
func (s *Store) close() error {
	for _, st := range s.stmts {
		st.Close()
	}
	for _, st := range s.w.stmts {
		st.Close()
	}
	err := s.w.db.Close()
	if s.db != nil {
		err = errors.Join(err, s.db.Close())
	}
	return err
}

// Path returns the absolute path of the file.
func (s *Store) Path() string { return s.path }

// Load implements [session.Store].
func (s *Store) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	if err := record.CheckID(id); err != nil {
		return nil, err
	}
	// One statement reads one snapshot: an append in progress is either
	// all there or not at all.
	rows, err := s.stmts[loadContents].QueryContext(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: loading %q: %w", id, err)
	}
	defer rows.Close()
	var out []*genai.Content
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("sqlitestore: loading %q: %w", id, err)
		}
		c, err := record.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: loading %q: content %d: %w", id, len(out), err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: loading %q: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sqlitestore: loading %q: %w", id, session.ErrNotFound)
	}
	return out, nil
}

// Append implements [session.Store]. It is one transaction.
func (s *Store) Append(ctx context.Context, id string, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err != nil {
		return err
	}
	if len(encoded) == 0 {
		return nil
	}
	err = s.write(ctx, func(tx *sql.Tx) error { return s.appendTx(tx, id, encoded) })
	if err != nil {
		return fmt.Errorf("sqlitestore: appending to %q: %w", id, err)
	}
	return nil
}

// appendTx appends encoded contents, at least one, to the conversation
// id in tx, the writer's.
func (s *Store) appendTx(tx *sql.Tx, id string, encoded [][]byte) error {
	var length, last sql.NullInt64
	err := s.w.stmt(tx, readAppendLast).QueryRowContext(background, id).Scan(&length, &last)
	if err != nil {
		return err
	}
	// Updated times are unique and increasing across the file, so that
	// List's order is the order of the appends, whatever the clocks say.
	now := max(time.Now().UnixNano(), last.Int64+1)
	n := int(length.Int64)
	var size int64
	for _, b := range encoded {
		size += int64(len(b))
	}
	if err := s.insertSeq(tx, insertContent, id, n, encoded); err != nil {
		return err
	}
	_, err = s.w.stmt(tx, upsertConversation).ExecContext(background, id, now, now, n+len(encoded), size)
	return err
}

// insertSeq inserts rows (conversation id, seq, value), numbered from
// first, with the statement insert (one of writesPrepared), in tx, the
// writer's.
func (s *Store) insertSeq(tx *sql.Tx, insert, id string, first int, values [][]byte) error {
	stmt := s.w.stmt(tx, insert)
	for i, v := range values {
		if _, err := stmt.ExecContext(background, id, first+i, v); err != nil {
			return err
		}
	}
	return nil
}

// List implements [session.Store].
func (s *Store) List(ctx context.Context) ([]session.Info, error) {
	return s.infos(ctx, "SELECT id, length, bytes, created, updated FROM conversations ORDER BY updated DESC, id")
}

// The listing by prefix reads the range of the primary key's index that
// the prefix spans (id >= prefix AND id < the prefix's end), then sorts
// that range: it never reads another conversation's row.
const (
	listPage = `SELECT id, length, bytes, created, updated FROM conversations
		WHERE id >= ?1 AND id < ?2 AND (?3 = 0 OR updated < ?4 OR (updated = ?4 AND id > ?5))
		ORDER BY updated DESC, id LIMIT ?6`
	usage = `SELECT count(*), coalesce(sum(bytes), 0) FROM conversations WHERE id >= ?1 AND id < ?2`
)

// ListPage implements [session.Lister]: one query on the range of the
// ids' index that the prefix spans.
func (s *Store) ListPage(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	args, n, err := pageArgs(opts)
	if err != nil {
		return session.Page{}, fmt.Errorf("sqlitestore: listing conversations: %w", err)
	}
	infos, err := s.infos(ctx, listPage, args...)
	if err != nil {
		return session.Page{}, err
	}
	var p session.Page
	if len(infos) > n {
		infos = infos[:n]
		p.Next = record.Cursor(infos[n-1].Updated, infos[n-1].ID)
	}
	p.Infos = infos
	return p, nil
}

// pageArgs returns the arguments of a listing's query (listPage,
// listRuns) for opts: the prefix's range, whether a cursor continues the
// listing and where, and one more row than the page holds, to know
// whether another page follows; and the page's size.
func pageArgs(opts session.ListOptions) ([]any, int, error) {
	var after bool
	var updated time.Time
	var id string
	if opts.Cursor != "" {
		if updated, id, after = record.ParseCursor(opts.Cursor); !after {
			return nil, 0, session.ErrBadCursor
		}
	}
	n := record.PageSize(opts.Limit, session.DefaultPageSize, session.MaxPageSize)
	return []any{opts.Prefix, prefixEnd(opts.Prefix), after, updated.UnixNano(), id, n + 1}, n, nil
}

// Usage implements [session.Lister]: one query on the range of the ids'
// index that the prefix spans.
func (s *Store) Usage(ctx context.Context, prefix string) (session.Usage, error) {
	var u session.Usage
	if err := s.db.QueryRowContext(ctx, usage, prefix, prefixEnd(prefix)).Scan(&u.Conversations, &u.Bytes); err != nil {
		return session.Usage{}, fmt.Errorf("sqlitestore: totalling conversations: %w", err)
	}
	return u, nil
}

// prefixEnd returns the end of the range of the ids that start with
// prefix: prefix and a byte 0xff, greater than every byte of UTF-8, so
// that id >= prefix AND id < prefixEnd(prefix) holds exactly the ids that
// start with prefix (every id, for "").
func prefixEnd(prefix string) string { return prefix + "\xff" }

// infos runs a query of conversations' rows.
func (s *Store) infos(ctx context.Context, query string, args ...any) ([]session.Info, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: listing conversations: %w", err)
	}
	defer rows.Close()
	var out []session.Info
	for rows.Next() {
		var info session.Info
		var created, updated int64
		if err := rows.Scan(&info.ID, &info.Len, &info.Bytes, &created, &updated); err != nil {
			return nil, fmt.Errorf("sqlitestore: listing conversations: %w", err)
		}
		info.Created, info.Updated = time.Unix(0, created), time.Unix(0, updated)
		out = append(out, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: listing conversations: %w", err)
	}
	return out, nil
}

// Delete implements [session.Store]: it deletes the conversation and its
// journal, in one transaction. It is ErrNotFound when the file holds
// neither.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := record.CheckID(id); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var deleted int64
		for _, q := range []string{
			"DELETE FROM conversations WHERE id = ?",
			"DELETE FROM journals WHERE id = ?",
			"DELETE FROM contents WHERE conversation = ?",
			"DELETE FROM journal_entries WHERE conversation = ?",
		} {
			res, err := tx.ExecContext(background, q, id)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			deleted += n
		}
		if deleted == 0 {
			return session.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: deleting %q: %w", id, err)
	}
	return nil
}
