// Package memory remembers what users say across conversations, and
// finds it again when it matters: a thread remembers what was said in it,
// a Service remembers a user across all their threads.
//
//	svc, _ := memory.New(memory.Config{Store: store}) // memory.NewStore(), sqlitememory, pgmemory
//	defer svc.Close(ctx)
//	svc.IngestThread(ctx, "alice", "thread-1", contents, 0) // after a run: its messages
//	svc.Remember(ctx, "alice", memory.Fact{Text: "Alice is vegetarian."})
//	res, _ := svc.Search(ctx, "alice", "what does she eat?", nil)
//	svc.ForgetUser(ctx, "alice")
//
// # What is stored
//
// A [Memory] is a message of a conversation (KindMessage: its text, who
// said it, the thread and its position there, when) or a fact (KindFact:
// told directly with [Service.Remember], or written by a model that read
// a conversation, see [Extraction]), always one user's. A [Store] keeps
// them with the terms search matches (their own, and those of the
// messages around them) and, with an [Embedder], their embedding: in
// this process ([NewStore]), in a SQLite file (package sqlitememory,
// FTS5) or in PostgreSQL (package pgmemory, full-text search). Every
// store call is scoped to one user: another user's memory is never
// searched, returned, counted or changed, and answers as one that does
// not exist. A message is remembered once (by its thread and position),
// so a thread may be ingested again.
//
// # Ranking
//
// Search ranks without a model, from what the text gives. A query and
// each memory are analyzed the same way ([Analyze]): words, lower-cased,
// without English stop words, stemmed (Porter2). The store returns the
// memories holding the query's rarest terms (at most 400: common terms
// weigh little, and would make them many), and each is scored by BM25
// (k1 0.9, b 0.5, the user's own term statistics) over its terms, plus
// BM25 over the terms of its neighbours in the conversation (the message
// before it, weight 0.8: the question a message answers; the one after,
// 0.2), times 2 when the query names its author, times 2 when the query
// names its day or month ("on 13 October 2023", "in June"), and times up
// to 1.1 for recency (half of that bonus after 30 days). These weights
// were chosen on the two LoCoMo conversations of ../shared/locomo, each
// held out in turn (see docs/memory.md): recall@5 0.696 where BM25 gets
// 0.522.
//
// With an Embedder, search is hybrid: the lexical ranking's best 50 and
// the 100 memories nearest the query's embedding (cosine similarity,
// every vector of the user scored exactly, or a [VectorIndex]'s) are
// fused by reciprocal rank fusion (k 60). Memories are embedded in the
// background after they are stored: search finds a memory by its words
// at once, by its meaning once it is embedded. [GeminiEmbedder] embeds
// with Gemini's models, through genai.
//
// # Cost
//
// Search is two store round trips (the terms' statistics, the
// candidates) and scoring in Go: at 100,000 memories of one user, a few
// milliseconds of CPU on SQLite and PostgreSQL (BENCHMARKS.md). Ingest is
// one store write; embedding and extraction happen off the caller's path.
// Hybrid search adds a query embedding (a network call) and a scan of the
// user's vectors, linear in their memories.
//
// # Faults
//
// A query over Config.MaxQueryBytes, or a fact over MaxMemoryBytes, is
// refused ([ErrTooLarge]); a longer message of a conversation is kept cut
// (refusing it would lose the rest of the conversation). A query that
// cannot be embedded (an outage, a timeout) is ranked lexically, and the
// fallback is reported to the [Observer] and the Logger; a memory that
// could not be embedded is embedded at its user's next ingest. Extraction
// failures are retried (Config.MaxAttempts), then reported; the
// conversation's messages are remembered whatever happens to their
// extraction. [Service.ForgetUser] removes every trace of a user: their
// memories, vectors and term counts, and their background work, queued or
// running, which writes nothing after it.
//
// # Agents
//
// [Service.Tool] is a tool the model calls to search the user's memories
// on demand; [Preload] adds the most relevant memories to what the model
// reads before each new message, within a token budget. A served agent
// (package agentserver) remembers each run once it is saved, with
// [Service.RememberRun] as agentserver.Config.Remember, and reads the
// run's user with agentserver.RunUser:
//
//	pre := &memory.Preload{Service: svc, User: agentserver.RunUser}
//	search, _ := svc.Tool(memory.ToolOptions{User: agentserver.RunUser})
//	a, _ := agent.New(agent.Config{…, Tools: toolset.MustNew(search), PrepareHistory: pre.Prepare})
//	srv, _ := agentserver.New(agentserver.Config{Agent: a, Store: sessions, Remember: svc.RememberRun})
//
// Package devui shows which memories each run used (its Recorder is an
// Observer), and package otelagent records the service's work as spans.
package memory
