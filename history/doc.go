// Package history keeps what a model call sends within the model's
// context window. A [Trimmer] is a policy for the loop's history hook
// (agent.Config.PrepareHistory): before each model call, when the prompt
// has grown past a token threshold, it shortens old tool outputs, then
// drops the oldest exchanges, and the call sends what is left. A
// [Summarizer] trims the same way, and sends a summary of what it drops,
// written by the model, in its place.
//
//	a, err := agent.New(agent.Config{
//		Models:         client.Models,
//		Model:          "gemini-3.5-flash",
//		Tools:          tools,
//		PrepareHistory: history.Trimmer{MaxTokens: 200_000}.Prepare,
//	})
//
// Only what is sent is trimmed: Result.History, and a conversation kept by
// package session, stay whole.
//
// # How large the prompt is
//
// The API reports each call's prompt size (usageMetadata.promptTokenCount,
// the system instruction and the tool declarations included), and the loop
// hands it to the hook: the size of the next call is that count plus the
// model turn and the tool answers added since, which [Estimate] measures.
// No request is made to count tokens. The first call of a run has no count
// yet: there, every content is estimated, at a token per 3 bytes of JSON,
// more than Gemini counts for most text, but without the system
// instruction and the tool declarations, which the estimate does not see.
// So set MaxTokens below the model's input limit by at least their size;
// the default, three quarters of Gemini's 1,048,576 tokens, leaves plenty.
//
// # What is kept
//
// A trim goes down to TargetTokens, in this order, and stops as soon as the
// prompt fits:
//
//  1. Tool outputs larger than ToolOutputBytes, oldest first, become a
//     note saying how large the output was and a preview of its start (the
//     model can call the tool again). The most recent KeepToolOutputs tool
//     turns stay whole.
//  2. The oldest exchanges go, each whole: a user message and every model
//     turn and tool turn that followed it, so that a function call never
//     goes without its response or a response without its call. The first
//     user message stays, since it often states the task, unless
//     DropFirstMessage.
//
// The current exchange, from the last user message on, always stays: the
// API checks the thought signatures of its function calls (Gemini 3 refuses
// a request whose current turn lost one), and signatures are never moved or
// removed from what is kept. Model turns are never changed; a shortened
// tool turn is a new content, and the contents given are never modified.
//
// # Trade-offs
//
// Trimming forgets: dropped exchanges are gone from the model's view, and
// shortened outputs keep only their start. Dropping whole exchanges keeps
// what remains coherent, and shortening outputs first keeps the
// conversation's thread the longest, but a user who refers to something
// said long ago may get an answer that does not know it.
//
// A trim changes the start of the prompt, which the API's implicit prompt
// cache then misses, once. Trimming below the threshold, to TargetTokens,
// makes trims rare: in a long run, one every (MaxTokens - TargetTokens)
// tokens of growth. A Trimmer keeps no state, so a run that starts from a
// stored conversation trims it afresh on its first call.
//
// On the Interactions API (package geminiinteractions), where the server
// keeps the conversation and each call sends only what it lacks, a trim
// changes what the model sees, which only a request with the whole,
// trimmed, history can say: the call that trims sends it whole, and the
// calls after it continue that interaction. A Trimmer keeps no state, so
// once a stored conversation has outgrown MaxTokens, the first call of
// every run trims it afresh and is sent whole (about TargetTokens), and
// the run's later calls are not. BENCHMARKS.md measures it.
//
// A single run can outgrow the budget by itself: its steps are the current
// exchange, which is never dropped, so only its older tool outputs shrink.
// Agent's MaxTurns bounds that.
//
// # Summaries
//
// A [Summarizer] keeps more of the past than a Trimmer: the exchanges a
// trim drops go to the model as a plain-text [Transcript] (no function
// call or signature the API would check), with an instruction to
// summarize them, and the summary is sent where they were, in a user
// content that begins with [SummaryPrefix].
//
//	sum := &history.Summarizer{Trimmer: history.Trimmer{MaxTokens: 200_000}, Models: client.Models}
//	a, err := agent.New(agent.Config{…, PrepareHistory: sum.Prepare})
//
// What it costs: a model call each time a trim drops exchanges, made
// before the run's own model call, which waits for it. Its tokens are not
// in the run's Result.Usage: [Summarizer.Stats] sums them, with the count
// of summaries and of failed calls. A conversation kept by package session
// is whole in the store, so each run that resumes it past the threshold
// trims it again; the Summarizer remembers the summaries it wrote last (by
// the contents they summarize), so such a run asks only for a summary of
// the earlier summary and of what it drops beyond, or reuses the earlier
// one as it is. In a 60-run conversation of the package's tests that cut
// what the summary calls read by 11.7× (63 KB of transcripts against
// 735 KB), for the same 47 calls.
//
// What it risks: a summary of a summary loses detail each time it rolls
// forward, and the model may leave out what later matters; the tool
// outputs it summarizes were shortened first. A summary call that fails
// (or returns no text) does not fail the run: the exchanges are dropped
// as a Trimmer drops them, and the failure is logged and counted. Only a
// cancelled context ends the run.
//
// # Cost
//
// Under the threshold, each model call costs an estimate of the newest
// model and tool turns; the first call of a run estimates the whole
// history. A trim walks the history once and encodes the outputs it
// shortens. BENCHMARKS.md has the numbers.
package history
