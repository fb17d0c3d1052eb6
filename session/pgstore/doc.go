// Package pgstore is a [session.Store], a [session.Lister] and a
// [session.Journaler] that keeps conversations, and the journals of the
// runs in progress on them, in a PostgreSQL database, through pgx
// (github.com/jackc/pgx/v5) and its pool.
//
//	store, err := pgstore.Open(ctx, "postgres://app:secret@db.internal/app")
//	if err != nil { … }
//	defer store.Close()
//	res, err := session.Run(ctx, a, store, "alice", genai.Text("Hi")...)
//
// [Open] takes a URL (postgres:// or postgresql://) or a key=value
// connection string, as libpq and pgx do, and owns the pool it makes;
// [New] works over a *pgxpool.Pool the program already has, and leaves it
// open on Close. Open's pool has pgx's defaults (at most 4 connections,
// or one per CPU if more), which the URL changes (pool_max_conns=20). The
// database should be UTF8 (the server's default), on PostgreSQL 14 or
// newer (the tests run on 15).
//
// # Tables and versions
//
// The store keeps five tables, in the first schema of the connection's
// search_path (set search_path in the URL, ?search_path=myschema, to put
// them elsewhere):
//
//   - toolnexus_conversations: a row per conversation, its id the primary
//     key (text COLLATE "C": ids in byte order, so that the conversations
//     of a prefix, an owner's, are one range of the index), its created
//     and updated times, its length and its size in bytes (kept up to
//     date by each append), and an index on (updated DESC, id) for
//     listings of the whole store;
//   - toolnexus_contents: a row per content, (conversation, seq) its
//     primary key, the content's JSON as bytea (see [session.Store]:
//     thought signatures and inline data come back byte for byte);
//   - toolnexus_journals: a row per run in progress, its primary key the
//     conversation's id (COLLATE "C" as well), so that a conversation has
//     at most one, whichever process begins it: its run, its started and
//     updated times, its number of entries and its claim (ClaimRun: the
//     owner, and the end of its lease on the server's clock, so that the
//     clocks of the processes never matter, or NULL for a claim that lasts
//     as long as the owner's life), and an index on (updated, id) for
//     ListRuns of the whole store. Every write of a journal checks, in its
//     statement, that the writer's claim is the journal's (the fence:
//     session.Journaler);
//   - toolnexus_journal_entries: a row per entry, (conversation, seq) its
//     primary key, the entry as bytea, byte for byte;
//   - toolnexus_schema_version: the version of these tables, [SchemaVersion]
//     (version 2 added the journals, version 3 their claims, version 4
//     claims for an owner's life).
//
// The Store is a [session.LiveJournaler]: an owner's life is a
// session-level advisory lock (pg_try_advisory_lock, keyed by a hash of
// the owner's name) held on a connection the life opens for itself, which
// PostgreSQL drops with the connection: at once when the process dies
// (its socket closes), and after 5 s of silence and 3 unanswered TCP
// keepalives when the network between them fails (the life's connection
// sets tcp_keepalives_*). Whether an owner lives is whether a session
// holds its lock (pg_locks): a claim of zero lease is anyone's once its
// owner's lock is gone. The life checks its connection every
// [PingInterval] and is lost (Life.Done) as soon as a check fails or goes
// unanswered for [LifeTimeout], before the server would drop its lock, so
// that the process learns it lost its claims before another may take
// them. A life costs one connection besides the pool's.
//
// ListPage, ListRuns and Usage take a prefix of ids that PostgreSQL's text can
// hold: UTF-8, without NUL (a prefix that ends inside a character is an
// error, though Memory would list the ids that complete it).
//
// Open and New create the tables in an empty database, migrate older ones
// in one transaction, and refuse tables of a newer version rather than
// misread them (so a database that a version 4 store has opened is refused
// by older versions of the package). Processes that open one database at
// once take turns (pg_advisory_xact_lock): the tables are made once. When they are up to
// date, opening only reads their version, so a store opens on a read-only
// database (a standby) and reads there.
//
// # Concurrency
//
// A Store is safe for any number of goroutines, and any number of
// processes may share a database. An Append is one statement: it creates
// or updates the conversation's row, which locks it until the commit,
// numbers the contents from the length it found there, and inserts them.
// Appends to one conversation, from any process, so take turns and never
// interleave. Load reads one snapshot: an append is there whole or not at
// all. Delete waits for an append in progress and removes what it stored.
// Updated times come from the server's clock, and each append to a
// conversation makes its updated time later than the one before.
//
// The writes of a Store (Append, BeginRun, AppendRun, EndRun, ClaimRun,
// ReleaseRun) are committed by a few goroutines (half the pool's connections, one at
// least): the writes queued while they are busy go together in one
// transaction, in two round trips (begin, the writes' statements and the
// transaction's id sent together; commit), so that one commit, and one
// flush of the server's write-ahead log, makes a whole group durable
// (group commit); a write that comes while a committer is free goes at
// once, alone. Each write is answered with its own outcome, once its
// transaction is committed, never before: one that the contract refuses
// (a run in progress, no such run, another's claim) writes nothing and
// leaves the others of its group committed; when a group fails otherwise
// (one write's error, a lost connection, a row another transaction holds
// for longer than a second), each of its writes is tried alone, as
// described under Faults, so that the others do not fail with it nor
// wait for it. A call whose context ends while its write is queued
// returns the context's error and the write is not done; once the write
// is in a transaction, the call waits for its outcome.
//
// The journal of a run in progress is kept the same way, one write per
// call. BeginRun is one statement that inserts the journal's row
// unless the conversation has one (ON CONFLICT DO NOTHING on the primary
// key: of processes that race, exactly one wins, and a BeginRun against a
// journal that another transaction is creating or deleting waits for it)
// and its entries. AppendRun is one statement that updates the journal's
// row of that run if the writer's claim is the journal's, which locks it,
// and numbers the entries from the length it found; one that changes no
// row is refused, ErrNoRun or ErrClaimed, as a statement after it in the
// same transaction reads the journal's claim. EndRun is a statement that
// deletes the journal's row of that run under the writer's claim (an
// AppendRun or EndRun that waits for it then finds none: a run is saved
// once) and appends the contents as Append does, then one that deletes
// its entries (it sees the entries committed while the first waited).
// LoadRun
// reads one snapshot. A journal's updated time is later than its last
// one, from the server's clock: ListRuns orders by it, then by id.
//
// # Faults
//
// A server that is down fails Open at once with the driver's connect
// error; one that does not answer fails it within the URL's
// connect_timeout, [DefaultConnectTimeout] when it sets none. No error of
// this package holds the connection string's password: the package's
// errors name the database by host, port, database and user, and the
// driver's are its own, whose parse errors pgstore redacts again.
//
// Errors the server answers with, such as a violated constraint, a full
// disk (53100) or a read-only database (25006), fail the call with an
// error wrapping the driver's *pgconn.PgError (match it with errors.As),
// and an Append or a write to a journal that fails so writes nothing.
//
// A call is tried again, [Attempts] times at most, only when its failure
// may not recur and another try cannot do anything twice:
//
//   - Reads (Load, List, ListPage, Usage, LoadRun, ListRuns) write
//     nothing: they are tried again when the connection could not be
//     made or was lost, or when the server ended the session (shutting
//     down or starting: 57P01-57P03).
//   - An Append, a write to a journal (BeginRun, AppendRun, EndRun,
//     ClaimRun) or a Delete is tried again on the same failures when they
//     come before its commit, since a transaction the server never
//     committed left nothing behind; also after a serialization failure
//     or a deadlock (40001, 40P01), which the server rolled back. A
//     write whose group failed before its commit is tried alone, in a
//     transaction of its own, that many times more.
//   - An Append or a write to a journal whose connection is lost during
//     its commit, or whose commit is answered by the end of the session
//     (a FATAL error, such as an administrator's pg_terminate_backend,
//     can follow a commit that took effect), may have been stored, with
//     the writes of its group. Its committer asks the server, on another
//     connection, whether the transaction committed (pg_xact_status):
//     committed, the call succeeded (so a
//     BeginRun never meets its own journal as another's, an AppendRun
//     never appends twice, an EndRun never saves a run twice nor fails
//     with ErrNoRun); rolled back, it is tried again. A transaction still
//     in progress has a server that has not yet seen its client go (a
//     network partition): its backend is ended (pg_terminate_backend,
//     which needs the same role) and the server asked again. If the
//     server cannot be asked within [ResolveTimeout], the call fails with
//     an error wrapping [ErrUncertain]: stored whole or not at all,
//     unknown which.
//   - A Delete whose commit is so cut off is not tried again: it fails,
//     and the conversation is deleted or not.
//
// A try cut off before its commit by a network partition leaves a session
// on the server, idle in its transaction, that holds the conversation's
// row until the server sees the connection gone (its TCP keepalives, or
// idle_in_transaction_session_timeout, which a server shared with other
// programs should set): the next try of an append to that conversation
// waits for it, or for its context.
//
// Nothing else is retried: a refusal of the server, an error of the
// caller, a done context.
//
// # Artifacts
//
// [Store.Artifacts] is an artifact.Store in the same database (the tables
// toolnexus_artifact_names, toolnexus_artifact_files and
// toolnexus_artifact_chunks, created when it is first asked for): files of
// at most MaxArtifactSize (64 MiB), in rows of ArtifactChunk (256 KiB),
// each save a new version given in one transaction (see [Artifacts]).
//
// # Tests
//
// The tests run against a real server whose URL is in TOOLNEXUS_PG_URL
// (a role that may create databases: each test makes its own and drops it
// at the end). Without it they skip, saying why; with
// TOOLNEXUS_PG_REQUIRED=1, as in CI, they fail. The repository's
// .ci/postgres starts a throwaway server on loopback and prints the
// variables to export:
//
//	eval "$(bash .ci/postgres)"
//	go test ./session/pgstore/
//	bash .ci/postgres stop "$TOOLNEXUS_PG_DIR"
package pgstore
