package agent

import (
	"context"
	"time"

	"google.golang.org/genai"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of events, in the order a turn produces them.
const (
	// EventModelRequest: a model call is about to be sent (Turn, Attempt).
	EventModelRequest EventKind = iota + 1

	// EventRetry: a model call failed and will be made again after Delay
	// (Turn, Attempt: the one that failed, Err: why, Delay). A re-ask of an
	// empty or malformed reply is a retry too, with a zero Delay.
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
	// (Turn, Index, Call). One event per call, in call order, once the
	// turn's calls are known.
	EventToolCall

	// EventToolResult: a call finished (Turn, Index, Call, ToolResult,
	// Duration). Results come as calls complete, not in call order.
	EventToolResult

	// EventTurnEnd: the turn is over, its tools included (Turn, TurnInfo,
	// Usage, FinishReason).
	EventTurnEnd

	// EventDone: the run is over (Result; Err when it failed, ErrStopped
	// when a Stream consumer broke out of its loop). Always the last event.
	EventDone
)

var eventKindNames = [...]string{
	EventModelRequest:  "ModelRequest",
	EventRetry:         "Retry",
	EventText:          "Text",
	EventThought:       "Thought",
	EventModelResponse: "ModelResponse",
	EventToolCall:      "ToolCall",
	EventToolResult:    "ToolResult",
	EventTurnEnd:       "TurnEnd",
	EventDone:          "Done",
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

	Attempt  int           // EventModelRequest, EventRetry: the model call of the turn, from 1
	Delay    time.Duration // EventRetry: the wait before the next attempt
	Err      error         // EventRetry: the failure; EventDone: the run's error, if any
	Text     string        // EventText, EventThought: the new piece of text
	Duration time.Duration // EventModelResponse: the turn's model time; EventToolResult: the call's

	Response     *genai.GenerateContentResponse // EventModelResponse
	Usage        Usage                          // EventModelResponse, EventTurnEnd: the turn's usage
	FinishReason genai.FinishReason             // EventModelResponse, EventTurnEnd

	Index      int                 // EventToolCall, EventToolResult: the call's position in the turn
	Call       *genai.FunctionCall // EventToolCall, EventToolResult
	ToolResult *ToolResult         // EventToolResult

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

// ObserverFunc adapts a function to an [Observer].
type ObserverFunc func(ctx context.Context, e *Event)

// Observe calls f(ctx, e).
func (f ObserverFunc) Observe(ctx context.Context, e *Event) { f(ctx, e) }

// Observers returns an Observer that hands every event to each of obs in
// turn. Nil observers are skipped; a panic in one does not keep the others
// from seeing the event.
func Observers(obs ...Observer) Observer {
	var list multiObserver
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	return list
}

type multiObserver []Observer

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
