package fake

import (
	"net/http"
	"time"

	"google.golang.org/genai"
)

// Reply is one scripted answer to one request, unary or streaming.
//
// What is sent is decided in this order: Err (an API error), then Fault (a
// transport fault; the cut faults send part of Response first), then
// Response or Chunks. A Reply with none of them sends an empty response
// (auto-filled unless Raw). The other fields modify how the answer is sent.
//
// The server never modifies a Reply: it works on copies, so one Reply may be
// enqueued several times or returned by a reply function concurrently.
type Reply struct {
	// Response is the model's answer. Unless Raw, it is auto-filled: see the
	// package documentation, section "Auto-fill".
	Response *genai.GenerateContentResponse
	// Err, when set, is sent with HTTP status Err.Code in the API's error
	// JSON; Response, Chunks and Fault are then ignored.
	Err *APIError
	// Fault is a transport-level fault; see [Fault].
	Fault Fault
	// Delay is the latency before anything is written. The wait ends early,
	// writing nothing, when the request's context is done or the server
	// closes.
	Delay time.Duration
	// Body, when set, is sent as it is: the whole 200 body of a unary
	// answer, or the data of the one event of a stream. It scripts what a
	// genai type cannot say, such as a functionCall whose args are not an
	// object. Response, Chunks and the stream shape are then ignored.
	Body []byte
	// Raw sends Response (or Chunks) without auto-fill: no role, index,
	// finishReason, usage, model version, response id, function-call ids or
	// thought signatures are added.
	Raw bool
	// AddIDs gives every functionCall without an id a unique one, and
	// AddSignatures gives the turn thought signatures, as models whose name
	// starts with "gemini-3" always do (see the package documentation);
	// they let other models behave the same way for one reply.
	AddIDs, AddSignatures bool

	// The fields below shape streams. For unary requests, Chunks are merged
	// into one response, TextChunk, TrailingSignature and EventDelay are
	// ignored, StreamErr is sent as the HTTP error, and the cut faults cut
	// the body in half.

	// Chunks are explicit stream events, sent in order as they are. Auto-fill
	// still applies unless Raw: every event gets the running usage totals,
	// the model version and the response id, the last one the finishReason,
	// and the turn spread over the chunks gets ids and signatures as a
	// Response would. When Chunks is set, Response is ignored.
	Chunks []*genai.GenerateContentResponse
	// TextChunk splits each text part of an automatically split Response
	// into pieces of at most TextChunk bytes, cut on rune boundaries. Zero
	// sends one event per part.
	TextChunk int
	// TrailingSignature moves the thought signature of the last text part
	// into a trailing event whose only part is {"text":"","thoughtSignature":…},
	// as the API sometimes does. A signature is generated if the part has
	// none.
	TrailingSignature bool
	// EventDelay is the pause before each stream event after the first; it
	// honours the request's context and Close like Delay.
	EventDelay time.Duration
	// CutAfter is the number of events sent before a cut fault, a
	// malformed event or StreamErr. A value larger than the number of
	// events sends them all first.
	CutAfter int
	// StreamErr is sent as the event `data: {"error":{…}}` after CutAfter
	// events, and the stream then ends cleanly.
	StreamErr *APIError

	// The fields below make the answer long, as the API makes an answer
	// longer than one request holds (see the package documentation,
	// "Long answers").

	// Continue makes the reply one hop of a long answer that the API cut:
	// its candidate finishes with CONTINUATION and carries a continuation
	// token, which the next request must send back, with the same request.
	Continue bool
	// ContinuationToken is the token Continue sends; empty means one the
	// server makes up. Scripting a token sent before imitates a server
	// that repeats itself.
	ContinuationToken []byte
	// Checkpoints makes every Checkpoints-th stream event that holds
	// content (the last one excepted) a checkpoint: it carries a
	// continuation token, and a request that sends it back gets the rest of
	// the stream from there, as the API resumes a stream cut after a
	// checkpoint. Zero sends none. Ignored for unary requests.
	Checkpoints int
}

// Fault is a transport-level fault injected instead of, or in the middle
// of, a normal answer.
type Fault int

const (
	// FaultNone sends the answer normally.
	FaultNone Fault = iota
	// FaultDropConnection closes the connection before any byte of the
	// response is written; the client sees EOF.
	FaultDropConnection
	// FaultMalformedBody answers 200 with a body that is not JSON. Streams
	// send CutAfter good events and then the event `data: {not json`.
	FaultMalformedBody
	// FaultCutStream aborts the connection at an event boundary after
	// CutAfter events (0: before the first one); the client sees
	// "unexpected EOF". Unary bodies are cut in the middle.
	FaultCutStream
	// FaultCutMidEvent writes half of event CutAfter+1 and then aborts the
	// connection; the client fails to parse the partial event. Unary bodies
	// are cut in the middle.
	FaultCutMidEvent
)

// String returns the name of the fault constant.
func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "FaultNone"
	case FaultDropConnection:
		return "FaultDropConnection"
	case FaultMalformedBody:
		return "FaultMalformedBody"
	case FaultCutStream:
		return "FaultCutStream"
	case FaultCutMidEvent:
		return "FaultCutMidEvent"
	}
	return "Fault(?)"
}

// Text returns a reply whose model turn is one text part.
func Text(text string) *Reply {
	return Parts(&genai.Part{Text: text})
}

// Parts returns a reply whose model turn holds these parts, in order. The
// parts are used as given; the server copies them before sending.
func Parts(parts ...*genai.Part) *Reply {
	return &Reply{Response: &genai.GenerateContentResponse{
		Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}},
	}}
}

// Calls returns a reply whose model turn is one functionCall part per call,
// in order: parallel function calls.
func Calls(calls ...*genai.FunctionCall) *Reply {
	parts := make([]*genai.Part, len(calls))
	for i, c := range calls {
		parts[i] = &genai.Part{FunctionCall: c}
	}
	return Parts(parts...)
}

// Call returns a function call with this name and these arguments, and no
// id (models whose name starts with "gemini-3", and [Reply.WithIDs], add
// one).
func Call(name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{Name: name, Args: args}
}

// Error returns a reply that answers with an API error of this HTTP code and
// message, and the status the API uses for that code: 400 INVALID_ARGUMENT,
// 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 408 and 504
// DEADLINE_EXCEEDED, 429 RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL,
// 502 and 503 UNAVAILABLE.
func Error(code int, message string) *Reply {
	return &Reply{Err: &APIError{Code: code, Message: message}}
}

// RateLimitMessage is the message of the 429 that [RateLimited] sends, as the
// API words it.
const RateLimitMessage = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."

// RateLimited returns a reply that answers 429 RESOURCE_EXHAUSTED the way
// the API does when a quota runs out: a QuotaFailure, a Help link and a
// RetryInfo detail whose retryDelay is retryDelay (none if it is not
// positive).
func RateLimited(retryDelay time.Duration) *Reply {
	return &Reply{Err: &APIError{
		Code:    http.StatusTooManyRequests,
		Status:  "RESOURCE_EXHAUSTED",
		Message: RateLimitMessage,
		Details: []map[string]any{
			{"@type": typeQuotaFailure, "violations": []any{map[string]any{
				"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":         "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
				"quotaDimensions": map[string]any{"location": "global", "model": "gemini-2.5-flash"},
				"quotaValue":      "10",
			}}},
			{"@type": typeHelp, "links": []any{map[string]any{
				"description": "Learn more about Gemini API quotas",
				"url":         "https://ai.google.dev/gemini-api/docs/rate-limits",
			}}},
		},
		RetryDelay: retryDelay,
	}}
}

// Finish returns a reply whose only candidate has this finishReason and no
// content, as the API sends MALFORMED_FUNCTION_CALL or SAFETY.
func Finish(reason genai.FinishReason) *Reply {
	return &Reply{Response: &genai.GenerateContentResponse{
		Candidates: []*genai.Candidate{{FinishReason: reason}},
	}}
}

// Empty returns a reply whose only candidate finishes with STOP and has no
// content.
func Empty() *Reply {
	return Finish(genai.FinishReasonStop)
}

// Blocked returns a reply with no candidates and promptFeedback.blockReason
// set to reason: a blocked prompt.
func Blocked(reason genai.BlockedReason) *Reply {
	return &Reply{Response: &genai.GenerateContentResponse{
		PromptFeedback: &genai.GenerateContentResponsePromptFeedback{BlockReason: reason},
	}}
}

// Drop returns a reply that closes the connection before answering.
func Drop() *Reply {
	return &Reply{Fault: FaultDropConnection}
}

// Malformed returns a reply that answers 200 with a body that is not JSON.
func Malformed() *Reply {
	return &Reply{Fault: FaultMalformedBody}
}

// The methods below modify r in place and return it, so they chain:
// fake.Text("hi").WithDelay(time.Second).

// WithDelay sets [Reply.Delay].
func (r *Reply) WithDelay(d time.Duration) *Reply {
	r.Delay = d
	return r
}

// WithIDs sets [Reply.AddIDs].
func (r *Reply) WithIDs() *Reply {
	r.AddIDs = true
	return r
}

// WithSignatures sets [Reply.AddSignatures].
func (r *Reply) WithSignatures() *Reply {
	r.AddSignatures = true
	return r
}

// WithTextChunk sets [Reply.TextChunk].
func (r *Reply) WithTextChunk(n int) *Reply {
	r.TextChunk = n
	return r
}

// WithTrailingSignature sets [Reply.TrailingSignature].
func (r *Reply) WithTrailingSignature() *Reply {
	r.TrailingSignature = true
	return r
}

// WithFault sets [Reply.Fault] to f and [Reply.CutAfter] to after.
func (r *Reply) WithFault(f Fault, after int) *Reply {
	r.Fault, r.CutAfter = f, after
	return r
}

// WithContinuation sets [Reply.Continue]: the reply is a hop of a long
// answer, cut by the API.
func (r *Reply) WithContinuation() *Reply {
	r.Continue = true
	return r
}

// WithContinuationToken sets [Reply.Continue] and [Reply.ContinuationToken].
func (r *Reply) WithContinuationToken(token []byte) *Reply {
	r.Continue, r.ContinuationToken = true, token
	return r
}

// WithCheckpoints sets [Reply.Checkpoints].
func (r *Reply) WithCheckpoints(every int) *Reply {
	r.Checkpoints = every
	return r
}

// WithFinishReason sets the finish reason and message of the reply's first
// candidate, making one if it has none: a turn of function calls that
// finishes with UNEXPECTED_TOOL_CALL, text that finishes with
// TOO_MANY_TOOL_CALLS.
func (r *Reply) WithFinishReason(reason genai.FinishReason, message string) *Reply {
	if r.Response == nil {
		r.Response = &genai.GenerateContentResponse{}
	}
	if len(r.Response.Candidates) == 0 {
		r.Response.Candidates = []*genai.Candidate{{}}
	}
	r.Response.Candidates[0].FinishReason, r.Response.Candidates[0].FinishMessage = reason, message
	return r
}

// Hops returns replies, each but the last made a hop of one long answer
// ([Reply.WithContinuation]): enqueued in order, they answer a request and
// the continuation requests that follow it, each of which must send the
// token of the hop before it with the same request.
func Hops(replies ...*Reply) []*Reply {
	for _, r := range replies[:max(len(replies)-1, 0)] {
		r.Continue = true
	}
	return replies
}

// WithStreamError sets [Reply.StreamErr] to an error of this code and
// message (status derived as [Error] does) sent after the given number of
// events.
func (r *Reply) WithStreamError(after, code int, message string) *Reply {
	r.StreamErr, r.CutAfter = &APIError{Code: code, Message: message}, after
	return r
}
