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
// A trim goes down to the cut point (see Cut points below: TargetTokens
// when the prompt has just passed MaxTokens), in this order, and stops as
// soon as the prompt is there:
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
// cache then misses, once. Cut points make trims rare, within a run and
// across the runs of a stored conversation alike.
//
// # Cut points
//
// A Trimmer keeps no state, so a run that starts from a stored
// conversation trims the whole of it afresh on its first call. Were each
// trim to go just under TargetTokens, every run of a chat past the
// threshold would drop one exchange more than the run before, and every
// new user message would change the prompt's prefix and miss the implicit
// cache. So a trim saves a whole number of steps, a step being MaxTokens -
// TargetTokens: the fewest that bring the prompt to MaxTokens or under.
// Where that lands depends only on the conversation's size, counted from
// its start, so consecutive runs drop the same exchanges, and send the
// same prefix byte for byte, until the conversation has grown by another
// step. Outputs are shortened first, and exchanges dropped only when all
// the older outputs are short; the cut point for dropping is chosen from
// the size with every older output shortened, so that it does not depend
// on how many outputs have aged since the last run. Each run shortens the
// output that has newly aged, which changes the prompt from there on, not
// before.
//
// The trade: between cuts, the prompt grows from about TargetTokens to
// MaxTokens, where trimming each run just under TargetTokens would send
// about TargetTokens every time; in exchange, the calls between cuts hit
// the implicit cache for all they kept. In the package's test of a
// 50-message chat on the fake (a 20,000-token system instruction,
// MaxTokens 20,000, TargetTokens 15,000), cut points sent 1,553,214 prompt
// tokens of which 1,407,346 were cached (90.6%; 145,868 billed at the full
// price), against 1,487,597 of which 1,108,895 (74.5%; 378,702 at the full
// price) cutting afresh each run, where 33 runs hit on the system
// instruction and the first message alone, against 8. A larger step
// (TargetTokens lower) makes cuts rarer and sends more between them;
// TargetTokens equal to MaxTokens has no steps: each run cuts as little as
// it can.
//
// On the Interactions API (package geminiinteractions), where the server
// keeps the conversation and each call sends only what it lacks, a trim
// changes what the model sees, which only a request with the whole,
// trimmed, history can say: the call that trims sends it whole, and the
// calls after it continue that interaction. A Trimmer keeps no state, so
// once a stored conversation has outgrown MaxTokens, the first call of
// every run trims it afresh and is sent whole (between TargetTokens and
// MaxTokens), and the run's later calls are not. BENCHMARKS.md measures
// it.
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
// the contents they summarize), so such a run reuses the earlier summary
// as it is while the cut point stays put (see Cut points), and past it
// asks only for a summary of the earlier summary and of what it drops
// beyond. In a 60-run conversation of the package's tests that made 8
// summary calls, reading 33 KB of transcripts in all, and reused a
// summary 33 times; cutting afresh each run, it took 47 calls and 63 KB
// (and 735 KB, summarizing the whole past each time).
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
