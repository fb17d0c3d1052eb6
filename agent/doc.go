// Package agent runs the Gemini tool-call loop: send generateContent,
// resolve each functionCall to a tool, run the calls concurrently, answer
// with functionResponse parts, and repeat until the model answers in text.
//
//	a, err := agent.New(agent.Config{
//		Models: client.Models,
//		Model:  "gemini-3.5-flash",
//		Tools:  toolset.MustNew(weather, search),
//	})
//	res, err := a.Run(ctx, genai.Text("What's the weather in Paris and Tokyo?"))
//	fmt.Println(res.Text)
//
// [Agent.Stream] runs the same loop and yields the text as it is generated,
// each tool call and result, and the end of each turn. [Agent.With] derives
// an agent for one run, or a family of runs: another system instruction,
// extra tools, an observer, other limits, at a fraction of New's cost.
//
// # One turn
//
//  1. The history is sent with the tools' declarations, converted once by
//     [New] and added to a copy of Config.GenerateConfig; the caller's config
//     is never modified. With no tools, the request carries no tools and no
//     function calling config (the API refuses them without declarations);
//     the rest of the tool config is sent. A forcing function calling mode
//     (ANY) applies to the first model call of a run only, unless
//     Config.ForceEveryTurn: forced on every turn, a model could never
//     answer. Config.PrepareHistory may shorten what is sent.
//  2. The model's content is appended to the history exactly as received:
//     every part, thought parts and thoughtSignatures included, in order.
//     Gemini refuses a history whose signatures were dropped or moved.
//     With several candidates (GenerateConfig.CandidateCount), the loop
//     continues the first; the others stay in [Turn].Response.
//  3. If the content has no function calls, the run is over: [Result].Text
//     is its text, thought parts left out.
//  4. Otherwise every call runs concurrently, at most Config.MaxParallel at
//     a time, each under Config.ToolTimeout when set; results are reported
//     as calls complete. Each answer goes in its call's slot, so that one
//     user content answers all the calls, in call order, each
//     functionResponse echoing its call's id (none is invented when the
//     call had none).
//
// # What goes back to the model
//
// A successful call is answered {"result": output}; any failure is answered
// {"error": message}, and the loop goes on so the model can correct itself:
// invalid arguments, an error or a panic in the tool, a timeout (see
// [toolset.Tool.Execute]), a call of an unknown tool (the message lists the
// available ones), a call over Config.MaxCallsPerTurn (not run), and a call
// refused by Config.Intercept or not approved. An output, or an answer
// given in a tool's place, that cannot be encoded as JSON is an error; one
// whose JSON is larger than Config.MaxOutputBytes is cut to that size, and
// the model is told. One failing call never cancels the others. The
// arguments a tool receives are the model's, with the schema's defaults
// filled in on copies: the history keeps the call as the model sent it.
//
// Media a tool returns (toolset.MediaOutput) go back inside its function
// response. With Config.Files (a [FileKeeper], such as package
// artifact's Keeper), they are kept as files first and the history holds
// references to them, which each model call resolves (inline bytes, or a
// Files API upload) without the history growing by their bytes.
//
// # What is retried
//
// A model call that fails for a transient reason (HTTP 408, 429, 500, 502,
// 503, 504, a network timeout, a refused, reset or dropped connection, a
// reply cut or garbled before its end) is retried with exponential backoff
// and jitter, waiting at least as long as the API's google.rpc.RetryInfo
// asks; 400, 401, 403 and 404 are not, nor what no wait can mend: a host
// name that does not exist, a refused TLS certificate, a malformed URL (see
// [RetryPolicy] for the bounds and defaults). A reply with no candidate, or
// no parts and a finish reason of STOP, OTHER or none, or one finished with
// MALFORMED_FUNCTION_CALL, or UNEXPECTED_TOOL_CALL without the call, is
// asked again with the same history, a bounded number of times; a reply
// that would fail the same way again (MAX_TOKENS, LANGUAGE,
// TOO_MANY_TOOL_CALLS…) never is. With Stream, a turn whose text has
// already been yielded is never replayed. A request of the flex tier
// (GenerateConfig.ServiceTier "flex") that the API sheds, 429 or 503, is
// retried longer (RetryPolicy.FlexMaxAttempts, FlexMaxElapsed): flex
// requests are served when the API can.
//
// # Long answers
//
// The API cuts an answer longer than it makes in one request (finish
// reason CONTINUATION, with a continuation token). The loop continues it,
// as it retries: it sends the same request again with the token, and
// again, at most Config.MaxContinuations (16) times, and merges the hops
// into the turn's response, as genai would (parts concatenated, usage
// summed, grounding shifted; see [Hops]); genai's own automatic
// continuation, unbounded, is turned off in the requests the loop sends.
// Each hop is a model call with its events (EventModelRequest with its Hop
// and the token in Config.ContinuationToken, then [EventHop]) and its
// retries under the retry policy. Result.Usage counts every hop, each of
// which the API bills, while the prompt size the next turn's
// Config.PrepareHistory reads (HistoryInfo.PromptTokens) is the first
// hop's: later hops re-read the answer so far, and a trimmer reading their
// sum would trim far too early. A stream resumes from its newest
// checkpoint (a chunk carrying a token) when it fails after one, as long
// as nothing was yielded since, so that no text is shown twice.
//
// An answer the API cut and the loop did not continue (the API sent no
// token, or one it had sent before, or MaxContinuations was reached, or
// continuation is off) ends the run with [ErrContinuation]: it is never
// taken for a whole one. A hop that fails for good ends it with a
// [*ContinuationError], which, like the Result, keeps the hops made. A
// caller who sets GenerateConfig.AutomaticContinuation gets what it asks:
// true leaves continuation to genai (unbounded, as genai documents; the
// loop still reads the first hop's prompt size from genai's
// InitialPromptTokenCount), false turns it off.
//
// # Context caching
//
// Config.Cache (a [CachePolicy]) turns on explicit context caching; it is
// off by default. What every request of the agent repeats, the system
// instruction, the tools' declarations (built-in tools included) and the
// tool config, goes into a cache made with the policy's Caches client
// (client.Caches) for the agent's model, and each model call names the
// cache (GenerateConfig.CachedContent) and leaves those three out, since
// the API refuses a request that names a cache and sets any of them. The
// rest of the config (sampling, thinking, the response schema, safety)
// stays on the request. With CachePolicy.ConversationStep, the cache
// holds a prefix of the conversation too, and each request sends only the
// contents after it: the prefix ends before a user message and grows in
// steps of about that many tokens, so a chat makes a cache every few
// runs, not every run (each new one deletes the one it extends). Without
// it, the conversation's contents are never cached.
//
//   - One cache per fingerprint: a SHA-256 of the model and the cached
//     parts, the conversation prefix included. An agent derived with [Agent.With] shares its agent's caches;
//     one whose tools or system instruction differ, a typed run's final-
//     answer tool, a first turn forcing a call (mode ANY, cached apart
//     from the later turns' AUTO) each get their own, never a stale one.
//     Past CachePolicy.MaxCaches (DefaultMaxCaches, 4) the cache least
//     recently used is deleted.
//   - The first model call that needs a cache makes it (concurrent runs
//     wait for that one); a cache with less than half its TTL left is
//     refreshed (Caches.Update) before the call that finds it so, on the
//     loop's clock (no Get).
//   - A call the API refuses for its cache (gone: 403 on the Gemini API,
//     400 FAILED_PRECONDITION or INVALID_ARGUMENT on Vertex AI; or any
//     400, 403 or 404 whose message speaks of the cache) is an EventRetry,
//     and is sent again at once through a cache made anew; refused a
//     second time in the turn, it is sent uncached, and the agent gives
//     that cache up.
//   - What is estimated (4 bytes a token of its JSON) below
//     CachePolicy.MinTokens, by default the model's minimum (2048 for
//     Gemini 2.5, 1024 for Gemini 3 Flash, 4096 for the others, as the
//     Gemini API documents them), is never sent to be cached. A create the
//     API refuses with a 400 or a 404 (too small, a model without caching)
//     makes that shape not cacheable for the agent's life; one that fails
//     otherwise (429, 5xx, a broken connection) is tried again a minute
//     later, the requests going uncached meanwhile.
//   - Caching never fails a run: every failure sends the request uncached,
//     is logged at Warn and reported to the observers as an [EventCache]
//     (CacheFallback, CacheNotCacheable), as are the caches made,
//     refreshed, made again and deleted.
//   - [Agent.Close] deletes the caches the agent made; after it the agent
//     still runs, uncached. Caches an agent never closed expire after
//     their TTL; until then the API bills their storage by the hour.
//   - A Models whose API takes no explicit caches says so
//     ([ExplicitCacher]), and New refuses a Config.Cache on it
//     ([ErrNoExplicitCaching]): geminiinteractions' Models does, as the
//     Interactions API caches implicitly only.
//
// Usage.CachedTokens counts the prompt tokens read from a cache, explicit
// or implicit; [Usage.UncachedTokens] those billed at the full price, and
// [Usage.Cost] prices a run, or each agent of Result.Agents, at the prices
// the program gives. The tokens of a cache are billed at the full price
// when it is made, which Usage does not count. Stream, typed runs and
// agents run as tools cache as Run does. [Steps] caches through
// [Steps.CacheRequest], which the temporalagent workflow's model activity
// calls: the cache is made and refreshed in activities, and the workflow
// keeps its [CacheRef] as state, so that a replay makes no cache.
//
// # Built-in tools
//
// Config.BuiltinTools (and [Overrides].BuiltinTools) give the model
// Gemini's own tools, which the API runs during the model call: Google
// Search, code execution, URL context, file search, Maps. They go in the
// request before the functions of Config.Tools; beside them, on the Gemini
// API, the request asks for the server-side invocations
// (toolConfig.includeServerSideToolInvocations, which the API requires for
// the mix; Vertex AI takes the mix without it and has no such field: set
// Config.Backend). The model content then holds toolCall and toolResponse
// parts (executableCode and codeExecutionResult for code), with their ids
// and thought signatures, between and beside the function calls: they go
// back exactly as received, are reported as [EventServerToolCall] and
// [EventServerToolResult] events, and are never run by the loop. The
// answer's grounding (the sources found, which text each supports) and
// citations are in Result.Grounding and Result.Citations.
//
// A turn the API ends with UNEXPECTED_TOOL_CALL holding the call the model
// tried (a function it was not given: Vertex AI sends it) is answered, not
// asked again: the call is not run, and the model is told which tools it
// may call ([UnexpectedCall]), which lets it correct itself on its next
// turn. TOO_MANY_TOOL_CALLS (the model called the built-in tools too many
// times in a row) ends the run with [ErrTooManyToolCalls], never asked
// again.
//
// # What ends the run
//
//   - The model answers without function calls: success.
//   - The answer was cut at the output token limit, or thinking used it all:
//     a [*StopError] (errors.Is [ErrMaxTokens]), with the cut text in
//     Result.Text and in the history, which can go on. A truncated answer
//     is never mistaken for a whole one: nor is one the API cut and the
//     loop did not continue ([ErrContinuation]), nor one the API stopped
//     after too many built-in tool calls ([ErrTooManyToolCalls]).
//   - A continuation hop fails for good: a [*ContinuationError], holding
//     the hops made, which the Result keeps too.
//   - Config.MaxTurns model turns were made and the model still calls tools:
//     [ErrMaxTurns], wrapped. The last turn's calls have run and been
//     answered, so the history can be continued.
//   - The prompt is blocked or the model stops for safety: a [*StopError]
//     (errors.Is [ErrPromptBlocked] or [ErrUnsafe]).
//   - Re-asks run out: a [*StopError] (errors.Is [ErrMalformedCall] or
//     [ErrEmptyReply]).
//   - A model call fails for good: a [*ModelError], from which errors.As
//     still extracts the [genai.APIError] (a value type: var e genai.APIError).
//   - The context is done: the run returns promptly with an error wrapping
//     the context's error (and its cause); running tools are cancelled.
//
// Every failure comes with the partial [Result], never nil, holding what
// happened so far.
//
// # Who owns what
//
// Run never modifies the contents it is given. Result.History is a new slice
// that belongs to the caller: the input's contents followed by every model
// and tool turn. The contents themselves are shared, not copied, and must not
// be modified while a run uses them. To continue a conversation, append a user
// message to Result.History and run again; the history survives a JSON round
// trip, thought signatures included.
//
// # Concurrency and cancellation
//
// An [Agent] is immutable and safe for concurrent use. Tool calls get the
// run's context, bounded by ToolTimeout. When it is done, the call's result
// is an error and the run does not wait for the tool: a tool that ignores
// its context keeps its own goroutine until it returns. That leak is the
// tool's; every tool this project ships honours its context.
//
// # Observing
//
// An [Observer] sees every step: model requests with what they send,
// responses with timing and usage, retries with their delay and cause, tool
// calls and results with their timing. A [ContextObserver] also chooses the
// context of the run, of each model call and of each tool call, which is
// what tracing nests spans on (see package otelagent). Config.Logger
// receives retries at Warn and failures at Debug. API keys never appear in
// any of them: the client sends the key in a header, which the loop never
// sees.
//
// # Progress
//
// A long tool says how far it is with [toolset.ReportProgress], from any
// of its goroutines. A run that someone listens to (an Observer, a Stream
// consumer) gives each call that runs its tool a listener in its context,
// and hands the reports out as [EventToolProgress] events, with the call
// they belong to, on the run's goroutine like every other event: between
// the results of the calls, as they come. They are paced and coalesced,
// so that a tool that reports in a tight loop floods no one: at most one
// event per call per Config.ProgressInterval (100 ms by default), with
// the latest report, and, when the call's result comes, the last report
// not yet handed out first. None comes after the call's EventToolResult.
// A plain Run with no Observer listens to nothing: ReportProgress then
// costs a context lookup (see BENCHMARKS.md).
//
// An agent run as a tool ([AsTool]) reports its own turns as the progress
// of the call it serves ("turn 2: calling search, fetch"; done counts the
// turns completed, the total is unknown), so that the calling run's
// consumer sees it work; the progress of the agent's own tools reaches
// the calling run's Observer as the agent's other events do, marked with
// Event.Agent and Event.Parent.
//
// # Typed answers and agents as tools
//
// [RunTyped] runs the loop and returns the final answer decoded into a Go
// value, validated against the schema inferred from its type; it picks,
// per backend and model, between sending the response schema with the
// tools and a final-answer tool (see [OutputStrategy]), and sends an
// invalid answer back to the model a bounded number of times.
// [StreamTyped] does the same while streaming. [AsTool] turns an agent into
// a tool another agent calls: the sub-run's usage is added to the parent's
// (Result.Agents breaks it down), its events reach the parent's observer
// marked with Event.Agent and Event.Parent, and the parent's cancellation
// and limits reach it. [Typed] returns the agent a typed run runs on, for
// runtimes that drive the loop themselves ([Steps.TypedTurn]): the
// temporalagent module makes durable typed runs with it.
//
// # Approvals
//
// Config.Intercept decides about each call before it runs: let it run, deny
// it, or answer it in the tool's place. Config.NeedsApproval picks the calls
// a person must approve: [Agent.Stream] hands each of them to its consumer
// as an EventApproval event, to decide in its own loop with the event's
// [Approval] before the run goes on (calls that need no approval run
// meanwhile); [Agent.Run], which has no consumer, leaves them to the
// Interceptor, and without one denies them.
//
// # Resuming a run
//
// A runtime that saves a run's history step by step can lose its process
// while a turn's calls run: the history then ends with the model content
// whose calls have no answer yet ([PendingCalls]). Run and Stream, given
// such a history, resume the run: they answer those calls first, exactly
// as a turn's calls are answered (Config.Intercept, Config.NeedsApproval
// and its EventApproval, the tools under MaxParallel and ToolTimeout, the
// EventToolCall, EventToolProgress, EventToolResult and EventTurnEnd
// events), then go on with the next model call, as after any turn. A call
// that was running when the process died may have taken effect: unless
// its tool is safe to repeat ([toolset.Tool.SafeToRepeat]), the runtime's
// Interceptor answers it with [Interrupted], the standard answer that
// tells the model it may or may not have run, and lets the others run.
//
// The resumed turn is turn 0 of the run, and makes no model call: it does
// not count against Config.MaxTurns, Result.Turns[0] holds its calls and
// results with no Response and Attempts 0, and Stream yields no
// EventModelRequest, EventModelResponse or EventText for it. The first
// model call is turn 1, and is sent as a later turn's is: a forcing
// function calling mode (ANY), which applies to a run's first model call
// only, was spent on the call that made the calls. Result.History is the
// history given, that model content included as it was, followed by the
// content answering its calls and the turns after.
//
// A history that ends with a user content, or whose last calls are
// answered, runs as it always did; no run leaves calls of its own turns
// unanswered in its Result.History, so that only a history saved while a
// run went resumes one. The pending calls run as if the model had just
// made them: a program that builds a history from input it does not trust
// (a client's messages) must not let that input end with a model content,
// or the client chooses which tools run, with what arguments.
package agent
