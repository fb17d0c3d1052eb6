package agent

import (
	"context"
	"iter"
	"slices"

	"google.golang.org/genai"
)

// Stream runs the same loop as [Agent.Run], with the same limits, retries,
// hooks and errors, but streams the model's output and reports each step as
// it happens. It yields, in order: for each turn, the model's text as it
// arrives (EventText; thought text as EventThought, never mixed into the
// answer), the model response (EventModelResponse), each function call
// (EventToolCall) once the turn's calls are known, the progress the
// running calls report (EventToolProgress, paced and coalesced), each tool
// result as the call completes (EventToolResult), the end of the turn
// (EventTurnEnd); and
// last, always, EventDone with the complete [Result] (the same Result Run
// returns), together with the run's error if it failed. EventRunStart comes
// first; EventModelRequest and EventRetry events come before each model
// call and retry; an EventApproval comes for each call that
// Config.NeedsApproval picks, for the consumer to decide before it asks for
// the next event (see [Approval]).
//
// The chunks of a turn are merged into one model content for the history,
// as a non-streaming call would have returned it (see the package
// documentation).
//
// A transient failure before any text of the turn was yielded is retried as
// in Run. Once text was yielded the turn is not replayed, since the consumer
// has already shown it: the run ends, and EventDone carries a [*ModelError].
//
// Breaking out of the range loop stops the run: the model call is
// abandoned, running tools are cancelled, and nothing is left running once
// Stream returns (but a tool that ignores its context, as Run documents).
func (a *Agent) Stream(ctx context.Context, contents []*genai.Content) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		if a.err != nil {
			res := &Result{History: slices.Clone(contents)}
			yield(&Event{Kind: EventDone, Result: res, Err: a.err}, a.err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := a.newRun(ctx, contents, yield)
		r.cancel = cancel
		err := r.loop()
		if done := r.finish(err); done != nil {
			yield(done, err)
		}
	}
}
