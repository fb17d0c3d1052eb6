// Package agentserver serves an agent to web clients: what every protocol
// shares. Its protocol packages make HTTP handlers of a [Server]: package
// agui speaks AG-UI (CopilotKit and most agent UIs), package aisdk the AI
// SDK's UI message stream (useChat).
//
//	a, _ := agent.New(agent.Config{Models: client.Models, Model: "gemini-3.5-flash", Tools: tools,
//		NeedsApproval: func(c *genai.FunctionCall) bool { return c.Name == "send_email" }})
//	srv, _ := agentserver.New(agentserver.Config{Agent: a, Store: store, Authenticate: auth})
//	defer srv.Close(context.Background())
//	http.Handle("/agui", agui.Handler(srv))
//	http.Handle("/api/chat", aisdk.Handler(srv))
//	http.Handle("/api/chat/", aisdk.Handler(srv)) // the resume route, GET /api/chat/{id}/stream
//
// # Threads
//
// A thread (AG-UI's threadId, the AI SDK's chat id) is a conversation of
// Config.Store, on the server, owned by the user Config.Authenticate
// names: the store id is the user, escaped, then the thread's id, so no
// user reaches another's threads, and another user's thread answers
// exactly as one that does not exist (ErrNotFound, 404). The client's copy
// of the history is never trusted: a request contributes its new user
// message, decisions about the calls its thread's run waits for, and the
// results of browser tools the run waits for; every other message it
// carries (a model turn, a tool result, a system prompt) changes nothing.
// Threads only grow: a client's edit of an old message, or a request to
// regenerate an answer, cannot rewrite what is stored (see the protocol
// packages for how each is answered).
//
// # Runs
//
// A thread has one run at a time. A run is the agent's Stream on the
// thread's history and the new message, on a goroutine of the server's
// (not of the request that started it) while it runs (one that waits for
// decisions holds none), journaled step by step and saved when it ends
// (see Durable runs): a client
// that goes away does not lose the answer, and does not stop the run (a
// reload resumes it); [Server.CancelThread], each protocol's cancel
// route, does. A second request on a busy
// thread is refused with ErrBusy (409), unless it decides calls the run
// waits for.
//
// Each run keeps a log of [Record]s: text as it streams, thoughts
// (summaries: thought signatures stay in the stored history, where the
// next model call needs them), each tool call, its progress and its
// result, turns, retries, pauses and decisions, and the end. Records are protocol-neutral values
// that serialize as JSON, numbered from 0 by their Offset. A response is a
// [Cursor] on the log: it reads at its own pace, and a browser that stops
// reading holds nothing but its cursor, never the run. [Server.Stream]
// answers a protocol's request (its deep work on a goroutine of its own,
// so that an open stream keeps a small stack: about 16 KiB per stream,
// its connection's buffers included) and [Server.ServeEvents] streams a
// cursor as server-sent events through a protocol's [Encoder]: LF-framed,
// flushed per record, a keep-alive comment when idle, a write deadline
// that drops a client that reads nothing.
//
// A run that is over can be looked up for Config.KeepFinished. Its log is
// cut to its last record once a reader has read its end and nobody reads
// it, so that the runs kept cost little; a run started with
// Request.KeepLog, for a protocol whose clients ask for a run's whole
// story after its end (A2A's tasks/get), keeps its log, each turn's text
// joined into one record.
//
// # Durable runs
//
// When Config.Store is a session.Journaler (session.Memory, sqlitestore
// and pgstore are), the in-process runner writes each step of a run to
// the thread's journal as it happens, and a server that starts on the
// same store picks up the runs another process left unfinished: a crash,
// a kill or a deploy loses at most the step in flight. What is written,
// one entry each (JSON, agentserver's own; the store keeps them opaque):
//
//   - the run, when it is accepted: its id, user, thread, the user's
//     message, the browser tools the request declared, when it started.
//     Start writes it before it returns, so an accepted run is stored
//     (a store that refuses it fails the request: 409 busy when another
//     process holds the thread's journal, 503 otherwise);
//   - each model turn with calls, once its response is complete: the
//     content exactly as received (text, thoughts with their signatures,
//     calls) and its usage, before the records of its calls. The turn
//     that answers (no calls) is stored by the run's EndRun, which comes
//     at once, with the rest of the run (one write less); it is written
//     as a step of its own only when EndRun fails, or when the loop asks
//     the model again after it;
//   - each call's result, as it comes, before its record;
//   - each pause (the calls that wait, with their deadlines), before its
//     record, and each decision (a request's, or a deadline's), before
//     its records.
//
// Each entry keeps the offsets its records have in the run's log, so a
// log rebuilt from the journal holds every record at its offset, the
// pieces of each turn's text and thoughts joined in one record at the
// first piece's (as a kept log's are once its run is over), progress and
// retries not kept. The pieces of text are not written one by one (an
// answer has thousands): the turn's entry holds them, once the response
// is whole. So a crash in the middle of an answer loses the text shown of
// it, and the run, picked up, asks the model again. Close and a cancel do
// not lose it: a run that ends in the middle of an answer is saved with
// the text its readers were shown, as a model content of its own. A run
// ends with session.Journaler's EndRun, which appends the run's contents
// to the thread and drops its journal in one step: saved once, never
// twice.
//
// No call runs unless the turn that asks for it is stored, and no call
// that waited runs unless its decision is: a turn's entry that cannot be
// written (after four tries, its waits growing from 100 ms) stops the
// run before its calls run, and it is saved as far as it went (its
// clients read a store_error that says so); a decision that cannot be
// written is not taken (503, Retry-After), and changes nothing; a pause
// that cannot be written keeps the run with this server (a crash then has
// its calls wait again). A result that cannot be written is logged
// (Config.Logger), and the run goes on with it: it is in the run's
// history, saved with the run; a crash before then answers the call as
// interrupted.
//
// Each run is run by one Server at a time, however many share the store
// (in one process or several). A Server claims the journal of each run it
// runs (session.Journaler's claims: BeginRun claims the journal it
// creates), and every write of the run names that claim: the store makes
// the write only if the claim is still the journal's, in the same
// statement as the write (the fence). On a session.LiveJournaler the
// claims last as long as the Server's life on the store, which the
// database knows (pgstore: an advisory lock on a connection of the
// Server's own, which PostgreSQL drops with it; sqlitestore: a file lock
// the kernel drops with the process; session.Memory: the process): a
// Server that dies loses its claims at once, and the next Server to look
// takes its runs, without waiting for a lease. On another Journaler a
// claim lasts Config.RunLease, renewed every third of it. A Server loses
// a run when a write of it is refused (another Server took it: it stalled
// or lost the store longer than the lease, or its life on the store was
// lost), when a renewal finds it claimed by another or ended, or when its
// life is lost (pgstore: its connection broke; the Server then begins a
// new life, under a new name, and looks for runs to pick up, its own
// former ones included): the run stops at once in this Server, which
// writes nothing more of it, and its clients read its end, cancelled,
// with the code taken_over: another server goes on with it, and a reload
// follows it there. Before a call's tool starts and before a model call
// is sent, the run proves its Server still holds it (the life's check, at
// most a second old, which pgstore makes well before PostgreSQL may let
// another take the claims; with leases, a claim or write begun within
// half the lease, or a renewal made then), and stops when it cannot. A
// decision is taken by a write under the claim. So no interleaving of
// servers, kills and store failures runs a call of a run twice (a call
// that was running when its Server lost the run is answered, by the
// Server that goes on with it, as interrupted: it may or may not have
// run, and the model is told so), nor loses a step a client saw.
//
// A run that waits for decisions holds no goroutine. Once its pause is
// written, its journal is released (claimed by no Server) and the run's
// agent.Stream ends at the pause: the run is parked in the store. The
// Server keeps of it a small entry (about 250 bytes), its deadline in one
// heap of all parked runs (one timer), and a copy of its log only while
// someone reads it. Any Server on the store takes its decisions: the
// decision (or its deadline, or a cancel) claims the journal, writes the
// decision, and runs the run on from its journal, as a run left by a
// dead Server is picked up, on a new goroutine; decisions that leave
// calls waiting park it again. The deadlines are the pause's, stored with
// it: a Server that takes a parked run keeps them. Parked runs do not
// count against MaxRuns.
//
// New picks up, before it returns, every run the store's journals show
// unfinished (session.Journaler.ListRuns over the threads of every user
// of the server) that no live Server holds: those that wait are parked
// here (their deadlines kept), the others go on here, now. Each Server
// looks again every third of Config.RunLease. Meanwhile, and for a run of
// a thread that another Server runs, each route answers from the store
// what is true: Current and the resume routes show a run parked there
// (its pending calls, its log), a decision continues it, a cancel ends
// it; a run that another Server holds is in progress (a new message is
// 409 busy; reading it, deciding or cancelling it is 503 with
// Retry-After: the request may reach that Server, or find the run
// parked); a run that nobody holds and that does not wait is picked up at
// once by the request that finds it. After a kill -9 the next process
// shows a waiting run's approval as soon as it serves (see BENCHMARKS.md,
// "Durable runs that hold").
//
// When a run goes on from its journal (picked up, or woken), its log
// shows again what its readers were shown, and the run goes on from its
// last step:
//
//   - one that died in a model call sends it again;
//   - one that died while its calls ran answers them: a result written is
//     reused, never run again; a call whose result was not written is
//     answered with agent.Interrupted ("may or may not have run"), unless
//     its tool is safe to repeat (toolset.Tool.SafeToRepeat: read-only or
//     idempotent), which runs again; a call decided before the crash
//     gets its decision (an approved one may have been running, so it is
//     interrupted or run again as above);
//   - one that waited for decisions waits again for the calls nobody
//     decided, with the same call ids and deadlines (parked);
//   - one woken by the decisions it waited for runs its approved calls;
//   - one whose answer was written whole (its EndRun failed), and that
//     died before it was saved, is saved, and not run.
//
// A journal that is not agentserver's is logged and left as it is (its
// thread stays busy until it is deleted). A transient failure of the
// store while a run is picked up never drops its journal: the run is
// tried again (a Load of its thread, until it works or the run's context
// ends; a journal that cannot be read, at the next look). New fails when
// the store cannot list the journals. A run whose save failed (the store
// down at its end) keeps its journal, released, and the next Server to
// look for runs on the store (or the next request on its thread) picks
// it up from its last step.
//
// Close (a deploy's SIGTERM) leaves the runs that wait in the store,
// parked, as they are: readers of this process's copy of one read its
// end, cancelled, server_closing (the run waits for the next server).
// A run still streaming or running tools gets the grace period (Close's
// ctx) to finish; those still running when it ends are cancelled and
// saved as far as they went, with the text their readers were shown:
// left journaled instead, the answer cut short would be lost from the
// thread (a turn is journaled only whole) and asked for again. On a store
// that is not a Journaler, a run that waits is parked in the process
// (no goroutine), and Close cancels it, and saves it with its calls not
// run.
//
// # Approvals and browser tools
//
// A call the agent's Config.NeedsApproval picks, and a call of a browser
// tool (one a request declared: it joins the agent's tools for that run,
// validated and converted as the agent's own are), wait for a decision.
// The turn's other calls run meanwhile, and once their results are in the
// log it gets a KindPause record listing every call of the turn that
// waits; the response ends there with the protocol's request for
// decisions (clients such as the AI SDK's decide only once every other
// call of the step has its result), and the run waits. The next request
// that carries decisions (Request.Decisions, Request.Results) continues
// the same run: its response reads the log from the decisions on. A
// decision is taken once, for a call the server holds pending: one for an
// unknown, decided or expired call fails the whole request and changes
// nothing. A pause is resolved whole: its calls go on once all of them are
// decided. A call nobody decides within Config.ApprovalTimeout is denied,
// and the model is told why. The loop runs no browser tool: their calls
// are answered by the result the browser sends, or its error.
//
// The server decides those calls in the Interceptor of each run (see
// agent.Interceptor); the agent's own Interceptor still decides the other
// calls. So a served run reports no EventApproval to its observers: the
// log's pauses and decisions say what was decided, and when. Once the
// pause is published the run parks (see Durable runs): its agent.Stream
// ends, the calls that wait answered there with an error whose Err is the
// stream context's cause, and a new Stream resumes the run when its
// decisions come, answering those calls first.
//
// # Errors
//
// Bad input gets a 4xx JSON error ({"error":{"code","message"}}) before
// anything runs: nothing reaches the model, nothing is written to the
// store. A run that fails ends with a [Failure]: a stable code and a short
// message that never holds a key, a stack or the model's raw error body;
// the error itself goes to Config.Logger.
//
// # Hostile requests
//
// Every request is taken as hostile. A body is read only when it says it
// is application/json (415 otherwise: a page of another site may post a
// body of no type, or a form, without asking the browser, and not JSON),
// within Config.MaxBodyBytes, its messages, parts and browser tools
// within MaxMessages, MaxParts and MaxTools, each browser tool's schema
// nested at most MaxSchemaDepth (64) levels of objects and arrays (400
// schema_too_deep, found in one pass over its bytes before it is
// decoded; a schema is decoded in time and memory linear in its size, see
// DecodeToolSchema) and within toolset.MaxSchemaSize (as written and with
// every $ref followed: 400 schema_too_large; a schema whose shared
// definitions would grow more than twice when inlined reaches Gemini with
// its $defs kept); ids are bounded (a user name 256 bytes, a thread id
// 200). A request that would start a run is checked against its user's
// quotas before its browser tools, and a body whose client went away
// while it was read is not decoded (nor its tools checked).
//
// The bodies being read are bounded in bytes, not only in time:
// Config.MaxBodyBytesInFlight (64 MiB) in all, 503 too_many_bodies
// beyond, and Config.MaxBodyBytesInFlightPerUser (16 MiB: four bodies of
// the default MaxBodyBytes) per user, 429 too_many_bodies beyond. A body
// counts for its Content-Length, the size of the buffer it is read into,
// from the moment its reading starts until it is decoded, browser tools'
// schemas included (sent without a length, for the buffer it has grown
// to, doubling), and one over a bound
// is refused before a byte of it is read, as is one whose Content-Length
// is over MaxBodyBytes (413): clients that send bodies slowly cannot make
// the server hold more than the bounds, however many connections they
// open. [Server.BodyBytesInFlight] reports the count. A file the new message names by URI
// rather than sends (a fileData part) is read by Gemini with the server's
// credentials: any gs:// object the service account can read on Vertex
// AI, any file of the project's Files API, other users' uploads included.
// So it is refused (400, code bad_part) unless Config.AllowFileURI, the
// check of a server that can tell which URIs a user owns, allows that
// user that URI; every protocol's file parts go through it. Files sent
// inline (base64) are always taken. Without Config.Authenticate, a
// request that reached a loopback address for another host than
// localhost is refused (403 bad_host): what a page whose name was
// rebound to 127.0.0.1 sends (DNS rebinding). Runs, threads and stored
// bytes are bounded (see Limits and quotas). A run takes MaxReaders
// readers at a time (its streams, resumed ones included; 429 beyond), and
// a reader that stops reading is dropped after Config.WriteTimeout.
//
// A body must arrive within Config.BodyTimeout (30 s by default) of the
// handler taking the request, or the client is answered 408 and its
// connection closed: the handlers set the connection's read deadline
// through http.ResponseController, and lift it once the body is read, so
// that the stream that answers lasts as long as its run. What comes
// before the handlers, and between requests, is the http.Server's to
// bound: a server that mounts them must set ReadHeaderTimeout (a client
// that sends its headers slowly) and IdleTimeout (a kept-alive connection
// that sends nothing more); ReadTimeout may bound a whole request's
// reading too (the handlers' deadline replaces it once they take the
// request, and net/http lifts it once a body is read: it does not cut a
// stream). WriteTimeout is not needed: the handlers give each write of
// a stream its own deadline (Config.WriteTimeout), which replaces it.
//
// # Limits and quotas
//
// The zero Config is safe for a server open to many users: every bound
// below is a Config field whose zero value means its default, and a value
// less than zero turns it off.
//
//   - Runs in flight (running here: a run that waits for decisions is
//     parked, and does not count): DefaultMaxRuns (256) in all, more
//     refused with 503 too_many_runs, and DefaultMaxRunsPerUser (8) of one
//     user, more refused with 429 too_many_runs, so that one user cannot
//     take them all.
//   - A run's duration, from its start, its waits for decisions
//     included: DefaultRunTimeout (30 minutes); then it is cancelled, and
//     saved as far as it went. Each wait for a decision is bounded on its
//     own by ApprovalTimeout (10 minutes from its pause).
//   - One user's threads in the store: DefaultMaxThreadsPerUser (1000).
//     A run on a new thread of a user who has that many is refused with
//     429 thread_quota; their existing threads go on. A thread counts
//     once its first run is saved, so runs in flight on new threads may
//     take a user past it, by MaxRunsPerUser at most.
//   - One user's stored bytes (their threads' contents as the store
//     encodes them, session.Info.Bytes, and the journals of their runs in
//     progress, session.Journal.Bytes, which a run that waits for days
//     keeps): DefaultMaxBytesPerUser (64 MiB).
//     Once their threads hold that much, every new run of theirs is
//     refused with 429 storage_quota (the run accepted last may take them
//     past it).
//
// Both quotas are [ErrQuota], checked when a run is accepted (decisions
// for a run that waits are never refused by one), from the store's totals
// of the user's threads (session.UsageOf: a range of the store's index
// for a session.Lister, every conversation's Info for another Store;
// session.Journaler.ListRuns of the user's journals, which reads no
// entry).
// Without Config.Authenticate every request is one user's, so the
// per-user bounds are the server's. The default store, a session.Memory,
// holds 512 MiB at most, and forgets the threads appended to least
// recently beyond that: a server that must keep its threads gives a
// durable Store. A Runner of another kind than the in-process one applies
// its own bounds of runs in flight and of their duration; the quotas are
// the Server's, whatever the Runner.
//
// # Pages of other origins
//
// A page of another origin (a Vite dev server on another port, an app on
// another host) calls the server once Config.AllowedOrigins lists its
// origin: every protocol handler is wrapped in [Server.CORS], which
// answers the browser's preflights and tells it the page may read the
// answers. A listed origin is trusted as the server's own pages are: its
// requests carry the user's cookies (fetch with credentials: "include";
// the answer echoes the origin, with Access-Control-Allow-Credentials,
// never "*"), so a page there acts as the user, and a cookie that
// Authenticate reads must be SameSite=None; Secure for an origin of
// another site (localhost:5173 and localhost:8080 are the same site). "*"
// allows every origin without credentials, and so only requests that
// carry their own credentials (an Authorization header): it needs
// Authenticate, since an anonymous server would take every site's runs.
// A request of an origin that is not listed gets no CORS header, and
// every request that may change something (any method but GET, HEAD and
// OPTIONS) that the browser says comes from a page of another origin
// (Sec-Fetch-Site, or an Origin other than the request's host:
// http.CrossOriginProtection) is refused, 403 cross_origin, before it is
// read, whatever the route reads: a form, a body of text, or a POST of
// no body (A2A 1.0's cancel takes none), with the user's cookies, changes
// nothing; a GET changes nothing either. Under "*", such a request is
// taken when it carries an Authorization header (which no page sends
// without the preflight "*" answers). Programs (no Origin, no
// Sec-Fetch-Site) are not affected. A body that is not JSON is refused
// too (415). The DNS rebinding check of an anonymous server applies
// whatever the origin.
//
// # Observing
//
// Runs are ordinary agent runs: the agent's Observer and Config.Observer
// see every event, with contexts that [RunID], [RunUser] and
// agent.Conversation read the run, its user and the thread from (so do
// the tools the run calls), and otelagent records the thread as
// gen_ai.conversation.id. A run that parks is two agent runs or more (one
// per Stream, see Approvals and browser tools): Config.Observer, unless
// it is an agent.ContextObserver, sees one run all the same (not the end
// of a Stream that parks; when this process showed it the run, not the
// start of the one that resumes it, nor its resumed turn's calls again;
// turns numbered as the run's), while the agent's own Observer, and a
// ContextObserver (tracing, which must end every step it began), see each
// Stream as it is. [Server.Run] describes a run by id (its state,
// the calls it waits for, how it ended: text, typed answer, usage),
// [Server.Current] a thread's run in progress, [Server.Attach] reads a
// run's log from an offset, [Server.Cancel] stops it ([Server.CancelThread]
// stops a thread's run and waits for its end), [Server.Runs] lists a
// user's runs that are kept (of a [RunLister] Runner: the in-process one
// is, and temporalagent's), [Server.Threads]
// and [Server.History] list a user's threads and read one: the Go API a
// development UI or another protocol builds on. Threads lists a page at a
// time, with a cursor for the next, from the store's listing by owner
// (session.ListPage): a range of the store's index for a session.Lister
// (session.Memory, sqlitestore, pgstore), the whole store's List for
// another Store.
//
// # Files
//
// With Config.Artifacts (an artifact.Keeper), the server keeps the files
// of its threads: those tools return (their media) and those users send
// (a new message's inline files), each a versioned file of the thread in
// the Keeper's store, to which the stored history refers
// ("artifact:chart.png?version=2") instead of holding their bytes; the
// model reads them as the Keeper resolves them, inline or uploaded once
// with the Files API. A call's result lists its files
// (CallResult.Files), which each protocol sends as links to
// [Server.ArtifactsHandler], mounted at Config.ArtifactsPath: a thread's
// files listed, downloaded (ranges served, types checked before a browser
// is let to render them), uploaded with PUT, deleted. A user reaches
// their own files only, as their threads. [Server.DeleteThread] deletes a
// thread and its files. A new message's files past the user's quota
// (artifact.KeeperOptions.MaxBytesPerUser) are refused with 429,
// artifact_quota. See docs/artifacts.md.
//
// # Memory across threads
//
// A thread remembers what was said in it. For the agent to remember a
// user across their threads, Config.Remember is told of each run once it
// is saved (package memory's Service.RememberRun is one), and the agent
// reads the memories of the run's user (RunUser) before each new message
// or through a tool (memory.Preload, memory.Service.Tool): see
// docs/memory.md.
//
// # Runners
//
// The runs live behind a [Runner]: by default one in the server's
// process. Another may host them elsewhere (a durable workflow engine,
// where any server instance reattaches to any run and approvals wait for
// days), if it guarantees what the in-process one does:
//
//   - One run per thread: Start fails with ErrBusy while the thread's
//     latest run is not over, and a run's thread is free again once the run
//     is saved, before its last record is readable, so a client that read
//     the end may start the next run at once. Latest describes the
//     thread's latest run, over or not, for as long as runs are kept.
//   - Each run is saved exactly once, when it ends however it ends, as far
//     as it went (its contents appended to the thread in one step, with
//     the text of an answer cut short that its readers were shown), before
//     its KindDone record.
//   - To survive a crash, as the in-process runner does on a
//     session.Journaler (see Durable runs): each step is stored before
//     the record that shows it, a call runs only once the turn (and the
//     decision) asking for it is stored, every write is fenced by the
//     runner's claim of the run, and a runner that starts picks up the
//     runs its store shows unfinished, under their ids.
//   - The log is ordered and append-only: offsets start at 0, every
//     reader sees the same records at the same offsets, Attach at any
//     offset up to the log's length works while the run goes on (the
//     in-process runner takes MaxReaders cursors of one run at a time,
//     besides those of decisions: more get 429), the
//     first record is KindStart and the last KindDone. The log of a run
//     that is over may be cut to its last record (the in-process runner
//     cuts it once a cursor has read its end and none reads it any more):
//     a cursor on it reads the end. The log of a run started with
//     Input.KeepLog is kept whole for as long as the run is, every record
//     at its offset, except that the pieces of a turn's text (and of its
//     thoughts) may be joined once the run is over: the joined record has
//     its first piece's offset and the text of them all, and the offsets
//     of the others are no record's.
//   - A pause comes once the turn's other calls have their results, and
//     is the last record while the run waits; decisions are appended after
//     it (KindDecision), then, if calls still wait, a new pause listing
//     them. Cursor.Buffered counts the records already in the log, so a
//     reader knows whether the pause it reads was resolved.
//   - Start and Decide return cursors attached before the records they
//     cause, so that the response they serve misses none of them, however
//     fast the run goes.
//   - Decisions are validated against the run's own pending calls, all or
//     none, and each call is decided once: by the first request that
//     decides it, or by its deadline, which denies it and tells the model.
//   - Cancel and Close stop the run's tools; a run stopped so is saved.
//     A runner that survives a crash may leave the runs that wait for
//     decisions to the next runner on the store instead (the in-process
//     runner parks them there on a session.Journaler): Close then does
//     not save them.
//   - Readers never block the run: a reader that stops reading holds only
//     its offset.
package agentserver
