package agent

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of events, in the order a run produces them.
const (
	// EventRunStart: the run begins (Model). Always the first event.
	EventRunStart EventKind = iota + 1

	// EventModelRequest: a model call is about to be sent (Turn, Attempt,
	// Model, Contents: what is sent, Config: the request config, with the
	// tools' declarations, Stream: whether the call streams). Contents and
	// Config are the loop's: read them, never modify them.
	EventModelRequest

	// EventRetry: a model call failed and will be made again after Delay
	// (Turn, Attempt: the one that failed, Err: why, Delay). A re-ask of an
	// empty or malformed reply is a retry too, with a zero Delay, and so is
	// a typed run's answer that was refused (Err wraps ErrInvalidOutput):
	// the next turn asks again, and so is a call the API refused for its
	// context cache, sent again at once (see Config.Cache).
	EventRetry

	// EventText: a piece of the answer's text, as it streams (Turn, Text).
	// Stream only.
	EventText

	// EventThought: a piece of the model's thought text, as it streams
	// (Turn, Text). Never part of Result.Text. Stream only.
	EventThought

	// EventModelResponse: the model's response for the turn is complete
	// (Turn, Response, Usage, FinishReason, Duration: the turn's model time).
	EventModelResponse

	// EventToolCall: the model asked for this call; it is about to run
	// (Turn, Index, Call, Tool: nil for an unknown tool). One event per
	// call, in call order, once the turn's calls are known.
	EventToolCall

	// EventApproval: a call picked by Config.NeedsApproval waits for a
	// decision (Turn, Index, Call, Tool, Approval). A Stream consumer
	// decides with Approval's methods before it asks for the next event;
	// observers only see it. One event per such call, in call order, after
	// the turn's EventToolCall events.
	EventApproval

	// EventToolResult: a call finished (Turn, Index, Call, Tool,
	// ToolResult, Duration). Results come as calls complete, not in call
	// order.
	EventToolResult

	// EventTurnEnd: the turn is over, its tools included (Turn, TurnInfo,
	// Usage, FinishReason).
	EventTurnEnd

	// EventDone: the run is over (Result; Err when it failed, ErrStopped
	// when a Stream consumer broke out of its loop). Always the last event.
	EventDone

	// The kinds below come after EventDone in number only, so that the
	// numbers of the kinds above stay what they were; in a run they come
	// where their comments say.

	// EventHop: one request of an answer that took several is complete
	// (Turn, Hop, Attempt, Response: that request's own response, Usage:
	// its own usage, FinishReason: CONTINUATION but for the last hop,
	// Duration: the hop's time). The API cut the answer at its per-request
	// limit (finish reason CONTINUATION) and the loop continues it: each
	// hop is a model call of its own, with an EventModelRequest (its Hop
	// and Config.ContinuationToken set) and this event; the turn's
	// EventModelResponse follows the last hop, with the hops merged. An
	// answer made in one request has no EventHop. See Config.MaxContinuations.
	EventHop

	// EventServerToolCall: the API ran one of its built-in tools for the
	// model (Turn, Part: the toolCall or executableCode part, as the model
	// content holds it). The loop never runs it; see Config.BuiltinTools.
	// With Stream, it comes as it arrives, among the turn's EventText;
	// with Run, after the turn's EventModelResponse.
	EventServerToolCall

	// EventServerToolResult: what a built-in tool the API ran returned
	// (Turn, Part: the toolResponse or codeExecutionResult part), after its
	// EventServerToolCall.
	EventServerToolResult

	// EventToolProgress: a running call reported how far it has come
	// (Turn, Index, Call, Tool, Progress), through
	// [toolset.ReportProgress]. A call's reports are paced (at most one
	// event per Config.ProgressInterval) and coalesced (reports made
	// while the consumer is busy, or sooner than the interval, give one
	// event, with the latest): a call that reports a million times gives
	// a handful of events, the latest report always among them, and the
	// last one before the call's result comes before its EventToolResult.
	// No event of a call comes after its EventToolResult. A call of an
	// agent run as a tool ([AsTool]) reports the agent run's turns.
	EventToolProgress

	// EventCache: something happened to the agent's context cache during
	// a model call (Turn, Cache: what, Err: why, for a fallback), before
	// the EventModelRequest of the call it concerns: it was made,
	// refreshed, made again after the API lost it, deleted when replaced,
	// found not cacheable, or caching failed and the request goes
	// uncached (see Config.Cache). Only agents with a Config.Cache report
	// it.
	EventCache
)

var eventKindNames = [...]string{
	EventRunStart:         "RunStart",
	EventModelRequest:     "ModelRequest",
	EventRetry:            "Retry",
	EventText:             "Text",
	EventThought:          "Thought",
	EventModelResponse:    "ModelResponse",
	EventToolCall:         "ToolCall",
	EventApproval:         "Approval",
	EventToolResult:       "ToolResult",
	EventTurnEnd:          "TurnEnd",
	EventDone:             "Done",
	EventHop:              "Hop",
	EventServerToolCall:   "ServerToolCall",
	EventServerToolResult: "ServerToolResult",
	EventToolProgress:     "ToolProgress",
	EventCache:            "Cache",
}

// String returns the kind's name without its Event prefix, e.g. "ToolCall".
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "EventKind(?)"
}

// An Event reports one step of a run, to an [Observer] and from
// [Agent.Stream]. Which fields are set depends on Kind (see the EventKind
// constants). Events are handed out as pointers to avoid copying: a
// receiver may keep one but must not modify it.
type Event struct {
	Kind EventKind
	Turn int // the model turn, from 0

	// Agent names the agent whose run the event reports: Config.Name, or
	// the tool's name for an agent run as a tool (see [AsTool]).
	Agent string
	// Parent, on the events of an agent run as a tool, is the calling
	// run's EventToolCall event for the call the run serves (its Agent,
	// Turn, Index and Call; its own Parent leads further up). It is nil for
	// other runs, and when the calling run reports no events (it has no
	// Observer and is not a Stream).
	Parent *Event

	Model    string                       // EventRunStart, EventModelRequest: the model's name
	Contents []*genai.Content             // EventModelRequest: the contents sent
	Config   *genai.GenerateContentConfig // EventModelRequest: the request config
	Stream   bool                         // EventModelRequest: the call streams (Agent.Stream)

	Attempt  int           // EventModelRequest, EventRetry, EventHop: the model call of the turn, from 1
	Hop      int           // EventModelRequest, EventRetry, EventHop, EventModelResponse: the request of a continued answer, from 0 (see EventHop)
	Delay    time.Duration // EventRetry: the wait before the next attempt
	Err      error         // EventRetry: the failure; EventDone: the run's error, if any; EventCache: why caching failed
	Text     string        // EventText, EventThought: the new piece of text
	Duration time.Duration // EventModelResponse: the turn's model time; EventToolResult: the call's

	Response     *genai.GenerateContentResponse // EventModelResponse; EventHop: the hop's own
	Usage        Usage                          // EventModelResponse, EventTurnEnd: the turn's usage; EventHop: the hop's
	FinishReason genai.FinishReason             // EventModelResponse, EventTurnEnd, EventHop

	Part *genai.Part // EventServerToolCall, EventServerToolResult: the part, as the model content holds it

	Index      int                 // EventToolCall, EventApproval, EventToolProgress, EventToolResult: the call's position in the turn
	Call       *genai.FunctionCall // EventToolCall, EventApproval, EventToolProgress, EventToolResult
	Tool       *toolset.Tool       // EventToolCall, EventApproval, EventToolProgress, EventToolResult: the tool called, nil if unknown
	Approval   *Approval           // EventApproval
	Progress   *toolset.Progress   // EventToolProgress: how far the call has come
	ToolResult *ToolResult         // EventToolResult

	Cache *CacheReport // EventCache

	TurnInfo *Turn   // EventTurnEnd: the complete turn, as it is in Result.Turns
	Result   *Result // EventDone: the run's result, partial when Err is set
}

// An Observer sees every step of every run of an [Agent]: model requests,
// responses with their timing and usage, retries with their delay and
// cause, tool calls and their results with their timing.
//
// Observe is called from the run's goroutine, one event at a time and never
// concurrently for one run; runs of the same Agent call it concurrently, so
// it must be safe for that. It should return quickly: the run waits for it.
// It cannot break the run: a panic in Observe is recovered and logged.
type Observer interface {
	Observe(ctx context.Context, e *Event)
}

// A ContextObserver is an Observer that also chooses the contexts a run's
// steps run with: tracing is built on it, so that what a step does under
// its context (an HTTP request of the model call, a span a tool starts)
// nests under the step.
//
// StartContext is called, on the run's goroutine and before Observe sees
// the event, with each event that begins a step and the context the step
// would run with:
//
//   - EventRunStart: the run. The returned context is the parent of every
//     other step's, and Observe receives it with the run's other events
//     (EventTurnEnd, EventDone).
//   - EventModelRequest: one model call. The returned context is passed to
//     Models, and Observe receives it with that call's events:
//     EventModelRequest, EventText, EventThought, EventServerToolCall and
//     EventServerToolResult (Stream), and EventModelResponse, EventHop or
//     EventRetry. Each hop of a continued answer is a model call of its own
//     (see EventHop). A model call that fails for good is followed by no
//     event of its own: the run's EventDone reports the failure.
//   - EventToolCall: one tool call. The returned context is passed to the
//     Interceptor and the tool, and Observe receives it with that call's
//     EventToolCall, EventApproval, EventToolProgress and EventToolResult.
//
// It must return ctx or a context derived from it. The loop derives nothing
// else from it: a context that is done stops the step, as the run's would.
type ContextObserver interface {
	Observer
	StartContext(ctx context.Context, e *Event) context.Context
}

// ObserverFunc adapts a function to an [Observer].
type ObserverFunc func(ctx context.Context, e *Event)

// Observe calls f(ctx, e).
func (f ObserverFunc) Observe(ctx context.Context, e *Event) { f(ctx, e) }

// Observers returns an Observer that hands every event to each of obs in
// turn. Nil observers are skipped; a panic in one does not keep the others
// from seeing the event. When some of obs are [ContextObserver]s, so is the
// result: each of them derives the step's context from the one the
// previous returned, in order. It is then a [Carrier] too, which carries
// what those of obs that are Carriers carry.
func Observers(obs ...Observer) Observer {
	var list multiObserver
	scoped := false
	for _, o := range obs {
		if m, ok := o.(multiObserver); ok {
			list = append(list, m...)
		} else if m, ok := o.(scopedMulti); ok {
			list = append(list, m.multiObserver...)
		} else if o != nil {
			list = append(list, o)
		}
	}
	for _, o := range list {
		if _, ok := o.(ContextObserver); ok {
			scoped = true
		}
	}
	if len(list) == 1 {
		return list[0]
	}
	if scoped {
		return scopedMulti{list}
	}
	return list
}

type multiObserver []Observer

// scopedMulti is a multiObserver some of whose members choose contexts.
type scopedMulti struct{ multiObserver }

// StartContext chains the members' StartContext, in order.
func (m scopedMulti) StartContext(ctx context.Context, e *Event) context.Context {
	for _, o := range m.multiObserver {
		if c, ok := o.(ContextObserver); ok {
			ctx = c.StartContext(ctx, e)
		}
	}
	return ctx
}

// Observe hands e to every observer, then re-raises the first panic, if
// any, for the run to recover and log.
func (m multiObserver) Observe(ctx context.Context, e *Event) {
	var first any
	for _, o := range m {
		func() {
			defer func() {
				if v := recover(); v != nil && first == nil {
					first = v
				}
			}()
			o.Observe(ctx, e)
		}()
	}
	if first != nil {
		panic(first)
	}
}
