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
// each tool call and result, and the end of each turn.
//
// # One turn
//
//  1. The history is sent with the tools' declarations, converted once by
//     [New] and added to a copy of Config.GenerateConfig; the caller's config
//     is never modified. With no tools, the request carries no tools and no
//     tool config (the API refuses both without declarations).
//  2. The model's content is appended to the history exactly as received:
//     every part, thought parts and thoughtSignatures included, in order.
//     Gemini refuses a history whose signatures were dropped or moved.
//  3. If the content has no function calls, the run is over: [Result].Text
//     is its text, thought parts left out.
//  4. Otherwise every call runs concurrently, at most Config.MaxParallel at
//     a time, each under Config.ToolTimeout when set. Each answer goes in
//     its call's slot, so that one user content answers all the calls, in
//     call order, each functionResponse echoing its call's id (none is
//     invented when the call had none).
//
// # What goes back to the model
//
// A successful call is answered {"result": output}; any failure is answered
// {"error": message}, and the loop goes on so the model can correct itself:
// invalid arguments, an error or a panic in the tool, a timeout (see
// [toolset.Tool.Execute]), a call of an unknown tool (the message lists the
// available ones), a call over Config.MaxCallsPerTurn (not run), and a call
// refused by Config.Intercept. An output larger than
// Config.MaxOutputBytes of JSON is cut, and the model is told. One failing
// call never cancels the others.
//
// # What is retried
//
// A model call that fails for a transient reason (HTTP 408, 429, 500, 502,
// 503, 504, a broken connection, a reply cut or garbled before its end) is
// retried with exponential backoff and jitter, waiting at least as long as
// the API's google.rpc.RetryInfo asks; 400, 401, 403 and 404 are not (see
// [RetryPolicy] for the bounds and defaults). A reply with no candidate or no
// parts, or one finished with MALFORMED_FUNCTION_CALL, is asked again with
// the same history, a bounded number of times. With Stream, a turn whose
// text has already been yielded is never replayed.
//
// # What ends the run
//
//   - The model answers without function calls: success. A MAX_TOKENS
//     answer is a success too, with Result.FinishReason saying so.
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
// An [Observer] sees every step: model requests, responses with timing and
// usage, retries with their delay and cause, tool calls and results with
// their timing. Config.Intercept decides about each call before it runs,
// which is what approval prompts are built on. Config.Logger receives
// retries at Warn and failures at Debug. API keys never appear in any of
// them: the client sends the key in a header, which the loop never sees.
package agent
