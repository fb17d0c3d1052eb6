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
// let them overlap (a chat with one user) serializes them itself.
package session
