// Package temporalagent runs the agent loop as a Temporal workflow, so that
// a run survives crashes and restarts of the processes that run it, spreads
// over any number of worker machines, and can wait days for a person's
// approval, with the wire behaviour of agent.Run: the same requests, the
// same answers to the model, the same retries, limits and errors.
//
// It is a module of its own (go.temporal.io/sdk only), so that users of the
// core module never download Temporal; the in-process Temporal server that
// its end-to-end tests and the embedded example start lives in a second
// module, temporalagent/examples, which users never need.
//
// # Workers hold the agents
//
// A worker registers named agents: an [agent.Agent] (its client and
// credentials, its tools, which are Go functions, its limits and hooks)
// under a name, with the settings only a durable run has ([Agent]). Runs
// refer to an agent by that name. Neither tools nor credentials ever enter
// the workflow history: the model call and each tool call run on a worker,
// which rebuilds nothing and looks the agent up by name.
//
//	a, _ := agent.New(agent.Config{Models: gemini.Models, Model: "gemini-3.5-flash", Tools: tools})
//	w := worker.New(c, "agents", worker.Options{})
//	err := temporalagent.Register(w, temporalagent.Agent{
//		Name:  "weather",
//		Agent: a,
//		Tools: map[string]temporalagent.ToolOptions{"get_weather": {Idempotent: true}},
//	})
//	err = w.Run(worker.InterruptCh())
//
// # Clients start runs
//
// Any process with a Temporal client starts runs and follows them:
//
//	ac := temporalagent.NewClient(c, "agents")
//	run, _ := ac.Start(ctx, client.StartWorkflowOptions{ID: "order-1234"}, "weather",
//		genai.Text("What is the weather in Paris and Tokyo?"))
//	res, err := run.Result(ctx) // an *agent.Result, as agent.Run returns it
//
// A Start with the ID of a run in progress fails with [ErrRunExists]
// instead of handing back that run with the new conversation dropped;
// StartWorkflowOptions.WorkflowIDConflictPolicy asks for another policy.
//
// [Run.Progress] reads the run's turn, usage, pending approvals and the
// progress of its running tool calls;
// [Run.Approve], [Run.Deny] and [Run.Decide] decide about calls that wait
// for approval; [Client.GetRun] follows a run started elsewhere.
//
// # One turn
//
// The workflow runs agent.Run's loop with the steps package agent shares
// for this ([agent.Steps]): no second copy of the loop's logic.
//
//  1. The model call is an activity. By default it is a local activity:
//     the worker that runs the workflow task makes it at once, which saves
//     a task-queue round trip per turn and keeps the request (the whole
//     conversation) out of the workflow history; Agent.RegularModelCalls
//     makes it a regular activity that any worker may pick up and that
//     heartbeats. The request config (tool declarations, system
//     instruction) is computed on the worker; genai's own retries are
//     turned off, and the HTTP headers genai records on a response are
//     dropped before it is returned.
//     An agent with a cache policy (agent.Config.Cache) caches as
//     agent.Run does, in the model activity and never in workflow code
//     ([agent.Steps.CacheRequest]): the activity makes, refreshes or
//     makes again the cache (a cache the API refuses is made again once
//     and the call sent again, then sent uncached), and returns the
//     [agent.CacheRef] it named, which the workflow keeps as state, over a
//     continue-as-new too, and hands to the next model activity. A worker
//     that holds no cache of that fingerprint (it did not make it, or it
//     restarted) adopts it, refreshing it first, instead of making
//     another. A replay runs no activity, so it makes no cache. Each
//     worker's agent.Close deletes the caches it made or adopted.
//  2. The worker checks the response as agent.Run does, and plans the
//     calls: unknown tools and calls over MaxCallsPerTurn are answered at
//     once, and NeedsApproval picks the calls that need approval. These
//     decisions are recorded in the history with the response, so a run
//     keeps them even if its workers restart with other settings.
//     An answer the API cut at its per-request output limit (finish reason
//     CONTINUATION, with a token) is continued as agent.Run continues it,
//     at most the agent's MaxContinuations times, each hop a model activity
//     of its own that sends the token of the hop before it: every hop's
//     response and token are in the workflow's history, so that a worker
//     lost during a long answer costs the hop in flight, which another
//     worker makes again with the same token, never the hops made. The
//     hops are merged as agent.Run merges them, the prompt size the next
//     turn's PrepareHistory reads is the first hop's, and an answer cut and
//     not continued ends the run with agent.ErrContinuation.
//  3. Every other call is a tool activity. A turn's calls run in parallel,
//     at most MaxParallel at once, and are answered in call order with
//     their ids echoed, exactly as agent.Run answers them (the Interceptor,
//     ToolTimeout, the output's check and cap all run on the worker, by
//     agent's code).
//
// # Retries, crashes and heartbeats
//
// A model call that fails for a transient reason (408, 429, 5xx, a broken
// connection) is retried by Temporal after the delay agent.Run would wait
// (the agent's RetryPolicy, at least the API's RetryInfo delay), up to the
// policy's attempts; 400, 401, 403 and 404 are not retried. A model call
// is safe to make twice, so one whose worker was lost is made again.
//
// A tool call is not retried: a tool may not be idempotent. A call that
// was running when its worker died is answered to the model as
// interrupted, never silently run twice; a call of a tool marked
// [ToolOptions].Idempotent is run again instead, on another worker. A
// completed call is recorded and never runs again, whatever crashes
// later. ToolTimeout becomes the tool activity's start-to-close timeout
// (plus a few seconds, so that the worker's own timeout answer, the one
// agent.Run gives, arrives first). While a tool runs, its activity
// heartbeats by itself, so that a lost worker is noticed within
// ToolOptions.HeartbeatTimeout (30 s by default), not at the timeout.
//
// # Progress
//
// A tool's progress reports (toolset.ReportProgress) ride on its
// activity's heartbeats: each heartbeat carries the call (turn, index,
// tool) and its latest report, and [Run.Progress] reads them from the
// run's pending activities, in Progress.Tools, from any process. The
// reports are paced (at most one per toolset.DefaultProgressInterval)
// and the SDK sends at most one heartbeat every 80% of the heartbeat
// timeout, the latest details kept: a client sees a report that much
// later at most, and a shorter ToolOptions.HeartbeatTimeout shows
// progress sooner. The worker's Observer also sees them, as
// EventToolProgress events, the last before the call's EventToolResult.
// A local activity ([ToolOptions].Local) has no heartbeats: its progress
// reaches the Observer only. Heartbeat details are decoded with the
// default data converter: a client whose converter encrypts payloads
// sees no progress.
//
// # Latency
//
// Each turn costs one workflow task (the model call runs inside it) and one
// task-queue round trip for its tool calls: 11 ms a turn at p50 over
// agent.Run on the in-process test server, about a bare workflow's round
// trip there (see BENCHMARKS.md). A server reads its transfer queue at most
// history.transferProcessorMaxPollRPS times a second per shard (20 by
// default), which on a quiet one-shard dev server puts about 50 ms on each
// round trip; the embedded server of the example raises it. A tool marked both Idempotent and [ToolOptions].Local
// runs as a local activity, inside the workflow task, so that a run of
// such tools costs about as much as agent.Run per turn; a local call is
// recorded only when its workflow task completes, so it may run again when
// its worker dies, which only an idempotent tool allows.
//
// # Approvals
//
// A call picked by the agent's NeedsApproval makes the run wait, with no
// worker busy, until a client decides about it ([Run.Approve], [Run.Deny])
// or Agent.ApprovalTimeout passes (the call is then denied). Calls of the
// turn that need no approval run meanwhile. Decisions are Temporal updates,
// validated before they are written: a decision about an id that waits for
// nothing is rejected with [ErrUnknownApproval], a second decision about a
// call with [ErrDecided], even after the run continued as new. An approved
// call runs without asking the agent's Interceptor, as in agent.Stream.
//
// # The Interactions API
//
// An agent whose Models is package geminiinteractions' runs durably on
// Gemini's Interactions API, its requests the very ones agent.Run sends:
// a worker's Models recognizes the histories it created, though each model
// call's contents come to it through a payload, so each call after the
// first continues the interaction before it with only what the server
// lacks. A worker that did not create the history (another process, after
// a restart) sends it whole once, and continues from there.
//
// # Long runs
//
// On generateContent every model call sends the whole conversation, and a
// run's workflow history grows with each. At a turn boundary, when the
// server suggests it or every Agent.ContinueAsNewEvery turns, the run
// continues as new, carrying its history, turns and usage, so that the
// workflow history stays bounded; MaxTurns counts the turns of the whole run. Each payload must
// stay under Temporal's limit (2 MiB by default): tool outputs are cut at
// Agent.MaxOutputBytes (256 KiB by default), and a run whose conversation
// outgrows Agent.MaxPayloadBytes fails with [ErrPayloadTooLarge] rather
// than being refused by the server.
//
// # Observing
//
// The agent's Observer, on each worker, sees the run's events as agent.Run
// gives them: EventModelRequest, EventRetry and EventModelResponse from the
// worker that makes the model call, EventToolCall and EventToolResult from
// the worker that runs the tool, and EventRunStart, EventApproval,
// EventTurnEnd and EventDone from the worker that runs the workflow task.
// An event is never reported twice when the workflow replays its history.
// A ContextObserver chooses the contexts of model and tool calls, as in
// agent.Run. A workflow task that fails midway (its worker crashed) is run
// again by another worker, which reports the events of that task again;
// activities are reported by the worker that runs them, once per attempt.
//
// A run spans processes, so the context the Observer chose for the run at
// EventRunStart does not reach its later steps by itself. When the
// Observer is an [agent.Carrier], what it carries of the run is recorded
// in the workflow history as the run starts (with its settings), handed to
// every model and tool activity, carried over continue-as-new, and
// resumed on whichever worker makes each step: the steps' contexts belong
// to the run, as in agent.Run. [WithObserver] gives the Client an Observer
// that carries, from Start's context, what the run should continue (the
// caller's span): it travels in the workflow's input ([Input].Context).
//
// # Tracing
//
// otelagent's Observer is a Carrier: a durable run makes the spans
// agent.Run makes for the same conversation (its tests compare the two):
// the run's invoke_agent span, under the span of the context the run was
// started with when the Client has WithObserver, and under it a
// generate_content span per model call attempt and an execute_tool span
// per tool call, wherever each ran, with the spans of the HTTP requests
// and the tools under theirs, and the same metrics.
//
//	obs := otelagent.New() // the global providers
//	a, _ := agent.New(agent.Config{..., Observer: obs})     // on the workers
//	ac := temporalagent.NewClient(c, "agents", temporalagent.WithObserver(obs)) // anywhere
//	run, _ := ac.Start(ctx, opts, "weather", contents)      // its spans under ctx's span
//
// The run's span starts on the worker that runs the run's first workflow
// task, and ends with the run, which may be days later, on another worker.
// The OpenTelemetry SDK ends a span only in the process that started it:
// when the run ends on a worker that does not hold its span (it moved to
// another worker, the worker restarted, evicted the run from its cache, or
// the run continued as new), that worker makes the run's span again, with
// its start time and under its caller, and, when the workers' tracer
// provider takes its ids from otelagent.NewIDGenerator, with the span id
// that its model and tool calls name as their parent:
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(otelagent.NewIDGenerator(nil)), ...)
//
// With another ID generator the span made again has a new id and a link
// to the one its children name. Either way it is exported once: the span
// the first worker started and could not end is never exported. A replay
// makes no span. A call that waits for approval has its execute_tool span
// from the moment it runs (or, for a denied call, is decided), and no
// approval_requested event; the attempt of a tool call whose worker was
// lost has no span (its worker never ended it).
//
// The run's span starts and ends in workflow code, which must not block:
// give the workers' tracer provider a batching span processor
// (sdktrace.WithBatcher, as exporters are usually installed), not one
// that exports as each span ends.
//
// # What differs from agent.Run
//
// Result.Turns[i].Results hold the tools' outputs as JSON decodes them
// (maps, float64 numbers), and their Err is nil: Go errors do not cross
// processes (the model received the same JSON either way). Their Media are
// those the model received: none for a model that takes no media from
// tools (it is told about them in words, as by agent.Run), and none when
// they were larger than Agent.MaxOutputBytes, since they would not fit a
// payload (the model is told so). Turn.Latency and ToolTime are measured
// by workflow time. PrepareHistory is called on the worker before each
// model call of a turn, including re-asks and retries, and continuation
// hops. The answers to a turn's calls are made for the model that made the
// calls, recorded with its response (media in the function responses'
// parts, or described in words, as agent.Run decides by the model): a
// worker whose agent names another model since, and a replay, make the
// same answers. A continued answer has an EventHop per hop and no
// EventModelResponse of its own, the hops being merged in the workflow;
// when a hop fails for good, the run fails with the model's error (an
// agent.ModelError, not an agent.ContinuationError), its last turn holding
// the hops made and Result.Text their text, but the history does not hold
// them. Result.Usage.ServiceTier is empty: the HTTP headers that say it
// are dropped.
//
// An agent used as a tool (agent.AsTool) runs, as any tool, within one tool
// activity: its usage counts in Result.Usage and Result.Agents as in
// agent.Run, and its events reach the worker's Observer with the call that
// ran it as their Parent.
//
// # Serving
//
// A [Runner] hosts the runs an agentserver.Server serves (set it as
// agentserver.Config.Runner on every instance), so that any instance
// answers any request about any run, and a run outlives the instance that
// started it. A served run is a run of this package's workflow (no second
// loop), with the workflow id "agentserver/" and the thread's store id:
// one run per thread at a time. What agentserver's Runner contract asks
// (its package doc, "Runners"), and how it holds:
//
//   - One run per thread: Start takes the thread in the store
//     (session.Journaler.BeginRun, whose journal holds the user's message)
//     and starts the thread's workflow, which Temporal refuses while one
//     runs; either refusal is ErrBusy. The thread's previous workflow,
//     saved but not yet closed, is waited for.
//   - Saved exactly once: the workflow's last activity ([RegisterStore])
//     calls EndRun, which appends the run's contents and drops its journal
//     in one step; an attempt that finds the journal gone after an earlier
//     attempt counts as saved. It runs on a disconnected context, so that a
//     cancelled run is saved too, before its KindDone record.
//   - A store out of reach loses nothing: the save is tried again (1 s,
//     then twice as long each time, up to 30 s apart) until it succeeds,
//     for as long as the run's own timeout (RunnerConfig.RunTimeout, 30
//     minutes by default; without bound when RunTimeout < 0) after the
//     save began. Meanwhile the run is not over (no KindDone record, its
//     readers wait) and its thread is busy: a new message gets 409 busy
//     (503 store_error from an instance that cannot reach the store
//     either). A save that fails for good ends the run failed with code
//     "store_error" and leaves its contents in the workflow's result; the
//     thread's next message saves them, whole, before its own run begins.
//   - The log is workflow state: the workflow code makes each record from
//     what its history holds (the model's response, each result, each
//     decision), so a replay makes the same records, with workflow time,
//     and no record costs a history event. It is carried over
//     continue-as-new. Any instance reads it with the [LogQueryName] query
//     (from an offset, 512 records at most per answer); a cursor polls it
//     every RunnerConfig.PollInterval while it waits (less and less often,
//     down to [MaxWaitingPollInterval], while the run waits for decisions
//     and nothing comes), and never blocks the run (a query writes
//     nothing). The model call returns an answer
//     whole, so a turn's text (and its thoughts) is one record: a long
//     answer, thousands of streamed chunks in the in-process runner, is
//     one record and no history event here, far from Temporal's limits
//     (10,240 events warned, 51,200 refused).
//   - A pause comes once the turn's other calls have their results.
//     Decisions are one update ([ServedDecideUpdateName]) per request,
//     validated all or none against the run's own pending calls before
//     anything is written: the first request anywhere wins; a second gets
//     ErrDecided, a late one ErrExpired, a forged one ErrUnknownCall. The
//     update answers the offset of its first record: Decide's cursor
//     starts there, before the records the decisions cause.
//   - Browser tools (a request's own, agentserver.ToolDecl) are part of
//     the run's input: every model activity of the run adds them to the
//     agent's tools, as the in-process runner does, so the model sees
//     them. A call of one is never run: it waits, as a call that needs
//     approval does, and is in the pause with kind agentserver.WaitBrowser;
//     the same update hands it the browser's output or error, validated as
//     in process (an output, as JSON, or an error, not both; 400
//     bad_decision otherwise). Start checks the declarations as the
//     server does (400 bad_tool, schema_too_large past
//     toolset.MaxSchemaSize) and refuses those whose JSON is over a
//     quarter of a Temporal payload (400 tools_too_large).
//   - Temporal out of reach: a request that needs it (Start, Decide,
//     Attach, Cancel) fails with 503 runner_unavailable; a cursor whose
//     polls fail asks again, about every half second, for
//     RunnerConfig.UnreachableTimeout (a poll that times out while
//     Temporal says the workflow runs is a busy run, not an outage: a
//     query waits for the workflow task that a local model call holds),
//     then fails with that error, which a stream sends as its protocol's
//     error (the AI SDK's error chunk, AG-UI's RUN_ERROR): the run itself
//     goes on wherever its workers reach Temporal, and a client attaches
//     again later. A Start whose
//     answer was lost (Temporal started the workflow, the client heard an
//     error) is not half started: before Start drops the run's journal it
//     asks Temporal whether the thread's workflow is the run's (its memo
//     names the run), and when it is, Start succeeds.
//   - Cancel cancels the workflow (its tools through their heartbeats);
//     RunnerConfig.RunTimeout is a workflow timer that does the same; both
//     save the run as far as it went.
//   - Close only stops taking runs: the runs live in Temporal, and go on.
//   - An instance killed (SIGKILL) loses no run either, but its worker's
//     sticky queue holds the runs it ran last: their next workflow task,
//     and the log query of a client that resumes on another instance, wait
//     there for worker.Options.StickyScheduleToStartTimeout (the SDK's
//     default, 5 s) before any worker takes them. A fleet that wants a
//     quicker fail-over sets it lower (the fleet command: 1 s); docs/fleet.md
//     says the trade.
//
// RunnerConfig.RunTimeout bounds a run, its waits for decisions included,
// and its zero value is agentserver's default, 30 minutes: right for a run
// that streams an answer, too short for one whose approval waits for a
// person overnight, which it would end failed ("timeout"). A fleet whose
// approvals may wait sets RunTimeout to the longest a run may last, waits
// included (a day or two; less than zero for no bound), and the Agent's
// ApprovalTimeout to how long one call waits for its decision before it is
// denied and the run goes on: a waiting run costs no worker, only its
// workflow's state (see BENCHMARKS.md). Every instance takes the same
// values; the fleet command's -run-timeout and -approval-timeout set them.
//
// A run's records stay readable while Temporal keeps its workflow (the
// namespace's retention) and the thread starts no newer run.
//
// A run that is over is read without any worker. Temporal answers a query
// of a closed workflow only by replaying it on a worker of its task queue:
// with none (a deploy that changed the queue, every worker down for a
// moment), a query waits ~10 s and fails. So the Runner queries with
// QueryRejectCondition NOT_OPEN, which costs an open workflow nothing (a
// cursor's poll stays one request) and has Temporal refuse a closed one at
// once; a closed one is then read from what it left:
//
//   - A run that ended (done, failed, cancelled, timed out by RunTimeout)
//     leaves its final view in its workflow's result (or its error's
//     details): its RunInfo and its whole log, a turn's text being one
//     record already, when that fits in [MaxFinalViewBytes] and in the
//     payload the run may write (Agent.MaxPayloadBytes); past them, its
//     KindDone record alone, as the in-process runner keeps of a run that
//     is over, with how its calls were decided (so that a late decision
//     still gets ErrDecided or ErrExpired), then without the record's
//     typed output, then with its text cut (ending with "…"): the thread
//     in the store holds the answer whole. A cursor on it reads the
//     records at or after its offset, then io.EOF. Reading it takes two
//     requests to Temporal besides the refused query (a describe, which
//     names the closed execution, so that a run starting meanwhile is not
//     waited for; then that execution's close event), and no worker.
//   - No command is added to the workflow (the view rides on the result it
//     returned anyway), so histories recorded before replay as they did.
//     A run whose workflow left no final view (ended on a worker of an
//     older version) is read with the log query, as before: by a worker.
//   - A workflow that closed before its run ended (terminated, or timed
//     out by a workflow timeout of Temporal's) saved nothing and left no
//     view: it reads as a failed run (Done.Error's code "terminated" or
//     "timeout") whose log is its done record alone, at offset 0, read at
//     any offset, made from the input of the workflow's latest execution
//     and its close time. Its journal in the store outlives it: the next
//     Start on the thread finds the journal's run over, saves the run's
//     user message to the thread (what the run made besides is lost with
//     its workflow) and drops the journal, then begins its own run. For a
//     run whose save failed for good (Done.Error's code "store_error"),
//     it saves the run's contents, which the workflow's result holds (the
//     user's message alone if they were too large for it).
//
// docs/fleet.md runs two instances on one machine.
//
// # Listing runs
//
// The Runner is an agentserver.RunLister, so agentserver.Server.Runs and
// what reads it (A2A's ListTasks) work on a fleet: [Runner.Runs] lists a
// user's runs in progress, and those over for less than
// RunnerConfig.KeepFinished, on whichever instance they began. The list
// comes from the store, not from Temporal's visibility:
//
//   - The store is what takes a thread for a run (BeginRun, before the
//     workflow starts), so a run in progress has a journal from its first
//     moment: the listing of a user's journals is exact, where visibility
//     is eventually consistent (a second or so behind on Elasticsearch)
//     and misses a run just started.
//   - A user's journals and threads are an index range of the store under
//     the user's prefix (agentserver.UserPrefix): one user's listing cannot
//     reach another's, no query string is built from a user's name, and
//     it is the listing agentserver's quotas read already. Visibility would
//     need the user in a search attribute an operator registers in the
//     namespace, or a prefix query over workflow ids.
//
// Each thread listed (those with a journal, then those appended to within
// KeepFinished, the latest first) is then read with the log query, which
// says how its latest run stands; a run whose workflow names another user
// is left out, as is a thread whose workflow is not a served run or is
// gone. The cost of a listing is bounded: two index ranges of the store
// and one query per thread, 4 at a time, [MaxListedRuns] (100) threads at
// most. A thread whose run is over is read without a worker (see
// Serving).
//
// # Limits of a fleet
//
// agentserver.Config's MaxRuns and MaxRunsPerUser bound the server's own
// in-process runner, and are not applied to a Runner it is given. Its
// quotas (MaxThreadsPerUser, MaxBytesPerUser) are, and count across the
// fleet, since they read the shared store. This Runner applies:
//
//   - RunnerConfig.MaxRunsPerUser, across the fleet: Start begins the
//     run's journal, then counts the user's journals (an index range of
//     MaxRunsPerUser+1 entries at most); over the bound, it drops the
//     journal and refuses the run with 429 (too_many_runs), and the thread
//     is free again. Runs of one user that start at once all count, so the
//     bound is never passed (all of them may be refused: the client tries
//     again).
//   - agentserver.MaxReaders cursors of Attach per run, per instance: each
//     one that waits queries the workflow every PollInterval. More get 429
//     (too_many_readers). A count across instances would need a shared
//     counter, which an instance killed would leave wrong.
//   - No bound on the runs in flight of the fleet: an instance holds none
//     (a run that waits for a decision costs it nothing); what a running
//     run costs is a worker's, bounded by its worker.Options
//     (MaxConcurrentActivityExecutionSize,
//     MaxConcurrentWorkflowTaskExecutionSize), and Temporal's storage.
//
// # Typed answers
//
// A run gives a Go value, as agent.RunTyped does, when its agent is the
// typed agent that agent.Typed makes: register it as any other, and wait
// for the run with [TypedResult] instead of Run.Result.
//
//	typed, err := agent.Typed[Invoice](a) // on the workers
//	err = temporalagent.Register(w, temporalagent.Agent{Name: "billing", Agent: typed})
//
//	inv, res, err := temporalagent.TypedResult[Invoice](ctx, run) // anywhere
//
// The run makes RunTyped's requests and decisions (the response schema or
// the final-answer tool, refused answers asked again, re-asks outside
// MaxTurns, across continue-as-new too), and fails, when no valid answer
// came, with RunTyped's *agent.OutputError. Result.Output holds the answer
// as JSON decodes it; TypedResult decodes it into T.
package temporalagent
