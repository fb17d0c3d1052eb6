// Package session keeps conversations across runs and process restarts: a
// [Store] holds each conversation's contents, and [Run] and [Stream] run an
// agent on a stored conversation, saving what the run added.
//
//	store, err := sqlitestore.Open(ctx, "sessions.db") // or session.NewMemory()
//	…
//	res, err := session.Run(ctx, a, store, "alice", genai.Text("What's the weather in Paris?")...)
//	// later, in another process:
//	res, err = session.Run(ctx, a, store, "alice", genai.Text("And tomorrow?")...)
//
// # Stores
//
// [Memory] keeps conversations in memory; package sqlitestore keeps them in
// a SQLite file that several processes may share, and that a crash never
// leaves half-written. Both store each content as the JSON the API speaks,
// so what comes back is what was stored: thought signatures byte for byte,
// which Gemini 3 requires, thought parts, function calls and responses with
// their ids. Package sessiontest holds the contract tests any Store must
// pass, for stores of your own.
//
// Memory is bounded: by default it holds [DefaultMemoryMaxBytes] (512
// MiB) of contents, and an append over its MaxBytes forgets the
// conversations appended to least recently (see [Memory]).
//
// # Listing by owner
//
// A [Lister] lists the conversations whose ids start with a prefix (an
// owner's, as agentserver names them) a page at a time, the most recently
// appended to first, and totals them ([Usage]: how many, how many bytes),
// from an index rather than by reading the whole store: Memory keeps its
// ids sorted, sqlitestore and pgstore query an index range. A page's Next
// is an opaque cursor, (updated, id), that the next page starts after, so
// that appends between pages never make a listing repeat a conversation
// or skip one that was not appended to meanwhile. [ListPage] and [UsageOf]
// list any Store: through Lister when it is one, else through List, which
// reads every conversation.
//
// # Runs on a conversation
//
// [Run] loads a conversation, runs the agent on it followed by the new
// input, and appends the input and the run's contents in one atomic
// append. A run that fails is saved as far as it went: agent's partial
// Result.History always ends where the conversation can go on (every
// function call has its response; a call cut short by the run's end is
// answered with an error saying it did not run), so the next run continues
// it, with new input or none. The whole conversation is kept; to send the
// model only what fits its context window, give the agent a HistoryFunc,
// such as package history's Trimmer, which shortens what each model call
// sends without touching what is stored.
//
// Runs on one conversation are not serialized: two that overlap each append
// their own exchange, whole, one after the other. A program that must not
// let them overlap (a chat with one user) serializes them itself; across
// processes, a Journaler's BeginRun does (see below).
//
// # Runs in progress
//
// Run saves a run when it ends, but a served run can stream for minutes
// or wait days for a decision, and a crash or a deploy must not lose what
// its user has seen. A [Journaler] keeps, beside each conversation, the
// journal of the run in progress on it: entries opaque to the store
// (agentserver writes one per step: the user's message, each model turn,
// each tool result, each pause for decisions and each decision, the text
// of an answer cut short), appended as they happen, each write atomic
// and, in a durable store, stored once it returns. The conversation keeps its contract (every
// call it holds has its response); the journal holds what it cannot hold
// yet, and [Journaler.EndRun] moves the run's contents into the
// conversation and drops the journal in one atomic step. A process that
// starts lists the journals left behind ([Journaler.ListRuns], the least
// recently written first) and picks each run up from its entries.
//
// Memory, sqlitestore and pgstore are Journalers. A Store of your own is
// one when it does what follows; package sessiontest checks it:
//
//   - A conversation has at most one journal, whichever process holds it:
//     BeginRun on a conversation that has one fails with
//     [ErrRunInProgress] and writes nothing, and of BeginRuns that race,
//     from any goroutines or processes, exactly one wins. A durable store
//     lets its database decide (a primary key on the conversation's id),
//     never a check then a write.
//   - Entries come back byte for byte, in order, from values the store
//     does not share with its callers; every call is atomic, as Append is.
//   - AppendRun and EndRun act on the journal of the run they name only:
//     none, or another run's, is [ErrNoRun], and nothing changes.
//   - EndRun appends its contents exactly as Append does (the same
//     encoding; Info.Len, Bytes and Updated follow; no contents appends
//     nothing) and deletes the journal, in one transaction. A run is saved
//     once: of EndRuns that race, one succeeds and the others are
//     ErrNoRun, and a store that retries (a lost connection) never
//     applies a write twice: it retries only what is known not to have
//     taken effect, or learns whether its commit did.
//   - A journal is not a conversation: Load, List, ListPage and Usage do
//     not see it, and BeginRun does not create the conversation (EndRun
//     does, when it appends). Delete deletes the conversation and its
//     journal; a conversation that has only a journal (its first run in
//     progress) is deleted too, and Delete is ErrNotFound only when there
//     is neither.
//   - LoadRun and ListRuns tell a journal's size, Journal.Bytes: the sum
//     of its entries' lengths, kept by the writes (ListRuns reads no
//     entry), for quotas of storage that count runs in progress.
//   - ListRuns lists the journals whose ids start with a prefix, without
//     their entries, in pages with opaque cursors as ListPage's, the least
//     recently written first (Updated, then ID). A journal written to
//     between two pages moves to a later page, and may be listed again:
//     a program that recovers every run tolerates meeting one twice.
//   - ClaimRun takes a journal for one owner (a process) as a [Claim]
//     says: until a lease runs out on the store's clock, or, on a
//     [LiveJournaler], for as long as the owner lives (a claim of zero
//     lease), so that of the processes that pick up the runs left behind,
//     exactly one takes each, and a process that still runs a run keeps
//     it (renewing a claim of a lease). It is one atomic compare-and-set,
//     decided by the database (an update whose condition is that the
//     journal has no claim, its claim does not last, or the owner holds
//     it), never a read then a write: of claims that race, one succeeds
//     and the others are [ErrClaimed], and nothing changes for them.
//     ReleaseRun drops a claim; a claim held by its owner is renewed;
//     none on a journal of another run, or none, is ErrNoRun. A claim is
//     no write of the journal: entries and Updated stay as they were.
//     LoadRun and ListRuns show it (Journal.Owner, Lease, and Held,
//     whether it lasts); EndRun and Delete drop it with the journal, and
//     BeginRun claims the journal it creates as it is told. Lease times
//     come from one clock that every process sharing the store sees: the
//     database's, or the machine's for a file that one machine holds.
//   - Every write of a journal (AppendRun, EndRun) names the claim its
//     writer holds, and is made only if that is the journal's claim
//     (Owner "" for a journal nobody claims), checked in the same atomic
//     step as the write, never before it: a process whose claim another
//     took (its lease ran out, or its life ended, while it stalled or
//     lost the store) writes nothing more of the run, and learns it from
//     the error, [ErrClaimed]. A write renews the claim it names. So the
//     process that holds a run is the only one that writes it, whatever
//     the interleaving of processes, stalls and failures.
//   - A [LiveJournaler]'s lives come from the database's own knowledge of
//     which processes live (a PostgreSQL session's advisory lock, a
//     SQLite file's flock, a Memory's process), never from a protocol of
//     the store's own: a process that dies loses its claims of zero lease
//     at once, and a Life that the store loses is Done before another
//     process can take its claims.
//   - A call whose context is done fails with an error wrapping the
//     context's error.
//
// Memory counts journals toward its MaxBytes, and never forgets a journal
// nor a conversation that has one (see [Memory]).
package session
