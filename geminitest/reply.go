package geminitest

import (
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// Reply is one scripted answer to one request, unary or streaming: a model
// response, an API error or a transport fault, with latency and the shape
// of the stream. Build one with [Text], [Parts], [Calls], [Finish],
// [Empty], [Blocked], [Error], [RateLimited], [Drop] or [Malformed], and
// shape it with its With methods, which modify it and return it:
//
//	geminitest.Text("Sunny.").WithTextChunk(4).WithDelay(10*time.Millisecond)
//
// Its fields, all optional:
//
//   - Response: the model's answer; auto-filled unless Raw (see the package
//     documentation, section "What the server adds").
//   - Err: an API error sent with its HTTP status.
//   - Fault: a transport fault ([FaultDropConnection], [FaultMalformedBody],
//     [FaultCutStream], [FaultCutMidEvent]).
//   - Delay: the latency before anything is written.
//   - Body: a raw body sent as it is.
//   - Raw: send Response without auto-fill.
//   - AddIDs, AddSignatures: give function calls ids and the turn thought
//     signatures, as gemini-3 models do.
//   - Chunks: explicit stream events.
//   - TextChunk: split text parts into pieces of at most this many bytes.
//   - TrailingSignature: move the last text part's signature into a
//     trailing event of its own.
//   - EventDelay: the pause before each stream event after the first.
//   - CutAfter, StreamErr: where a cut fault strikes; an error event sent
//     after CutAfter events.
//
// The server never modifies a Reply, so one may be enqueued several times.
type Reply = fake.Reply

// Fault is a transport-level fault injected instead of, or in the middle
// of, a normal answer.
type Fault = fake.Fault

// The faults a [Reply] can inject.
const (
	// FaultNone sends the answer normally.
	FaultNone = fake.FaultNone
	// FaultDropConnection closes the connection before any byte of the
	// response is written; the client sees EOF.
	FaultDropConnection = fake.FaultDropConnection
	// FaultMalformedBody answers 200 with a body that is not JSON. Streams
	// send CutAfter good events and then a malformed one.
	FaultMalformedBody = fake.FaultMalformedBody
	// FaultCutStream aborts the connection at an event boundary after
	// CutAfter events (0: before the first one); the client sees
	// "unexpected EOF". Unary bodies are cut in the middle.
	FaultCutStream = fake.FaultCutStream
	// FaultCutMidEvent writes half of event CutAfter+1 and then aborts the
	// connection; the client fails to parse the partial event.
	FaultCutMidEvent = fake.FaultCutMidEvent
)

// APIError is an error the server sends in the API's error JSON,
// {"error":{"code","message","status","details"}}, with HTTP status Code:
// the genai client returns it as a genai.APIError with the same fields. Its
// fields are Code, Status (derived from Code when empty), Message, Details
// and RetryDelay (a google.rpc.RetryInfo detail when positive).
type APIError = fake.APIError

// RateLimitMessage is the message of the 429 that [RateLimited] sends, as
// the Gemini API words it.
const RateLimitMessage = fake.RateLimitMessage

// Text returns a reply whose model turn is one text part.
func Text(text string) *Reply { return fake.Text(text) }

// Parts returns a reply whose model turn holds these parts, in order:
// thoughts, text and function calls mixed, for instance.
func Parts(parts ...*genai.Part) *Reply { return fake.Parts(parts...) }

// Calls returns a reply whose model turn is one functionCall part per
// call, in order: parallel function calls.
func Calls(calls ...*genai.FunctionCall) *Reply { return fake.Calls(calls...) }

// Call returns a function call with this name and these arguments, and no
// id: models whose name starts with "gemini-3" get one from the server, as
// the real ones do on both backends; older models send none.
func Call(name string, args map[string]any) *genai.FunctionCall { return fake.Call(name, args) }

// Error returns a reply that answers with an API error of this HTTP code and
// message, and the status the API uses for that code: 400
// INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404
// NOT_FOUND, 408 and 504 DEADLINE_EXCEEDED, 429 RESOURCE_EXHAUSTED, 499
// CANCELLED, 500 INTERNAL, 502 and 503 UNAVAILABLE.
func Error(code int, message string) *Reply { return fake.Error(code, message) }

// RateLimited returns a reply that answers 429 RESOURCE_EXHAUSTED the way
// the Gemini API does when a quota runs out: a QuotaFailure, a Help link and
// a RetryInfo detail whose retryDelay is retryDelay (none if it is not
// positive). genai does not read RetryInfo; callers find it in
// genai.APIError.Details.
func RateLimited(retryDelay time.Duration) *Reply { return fake.RateLimited(retryDelay) }

// Finish returns a reply whose only candidate has this finishReason and no
// content, as the API sends MALFORMED_FUNCTION_CALL or SAFETY.
func Finish(reason genai.FinishReason) *Reply { return fake.Finish(reason) }

// Empty returns a reply whose only candidate finishes with STOP and has no
// content.
func Empty() *Reply { return fake.Empty() }

// Blocked returns a reply with no candidates and promptFeedback.blockReason
// set to reason: a blocked prompt.
func Blocked(reason genai.BlockedReason) *Reply { return fake.Blocked(reason) }

// Drop returns a reply that closes the connection before answering.
func Drop() *Reply { return fake.Drop() }

// Malformed returns a reply that answers 200 with a body that is not JSON.
func Malformed() *Reply { return fake.Malformed() }

// Hops returns replies, each but the last made a hop of one long answer
// that the API cut (finish reason CONTINUATION and a continuation token):
// enqueued in order, they answer a request and the continuation requests
// that follow it, each of which must send the token of the hop before it
// with the same request, or the server refuses it (rule
// "continuation-token"). On a Reply, WithContinuation makes one such hop,
// WithContinuationToken one with a given token (a server that repeats
// itself), WithCheckpoints makes a stream's events checkpoints that a
// stream cut after one resumes from, and WithFinishReason ends it for any
// reason.
func Hops(replies ...*Reply) []*Reply { return fake.Hops(replies...) }

// ServerToolCall returns a model part in which the API runs one of its
// built-in tools (toolCall{toolType, args}), as the Gemini API sends it
// with toolConfig.includeServerSideToolInvocations; the server gives it an
// id, and gemini-3 models a thought signature.
func ServerToolCall(toolType genai.ToolType, args map[string]any) *genai.Part {
	return fake.ServerToolCall(toolType, args)
}

// ServerToolResponse returns the model part holding what a built-in tool
// returned (toolResponse{toolType, response}); without an id, it takes the
// id of its call.
func ServerToolResponse(toolType genai.ToolType, response map[string]any) *genai.Part {
	return fake.ServerToolResponse(toolType, response)
}

// GoogleSearch returns the two parts of a Google Search the API ran for
// the model: the toolCall with the queries and the toolResponse with the
// rendered search suggestions.
func GoogleSearch(queries ...string) []*genai.Part { return fake.GoogleSearch(queries...) }

// CodeExecution returns the two parts of code the API ran for the model:
// executableCode and its codeExecutionResult.
func CodeExecution(code, output string) []*genai.Part { return fake.CodeExecution(code, output) }

// WebGrounding returns the grounding metadata of an answer that the web
// pages at uris support, text being the answer's text: give it to a
// Reply's WithGrounding. WithCitations adds the sources an answer recites.
func WebGrounding(text string, uris ...string) *genai.GroundingMetadata {
	return fake.WebGrounding(text, uris...)
}

// UnexpectedCall returns a reply in which the model calls a function it
// was not given and the API stops it: the call, finish reason
// UNEXPECTED_TOOL_CALL and the message Vertex AI sends.
func UnexpectedCall(name string, args map[string]any) *Reply { return fake.UnexpectedCall(name, args) }

// OverloadedMessage is the message of the 503 that [Overloaded] sends.
const OverloadedMessage = fake.OverloadedMessage

// Overloaded returns a reply that answers 503 UNAVAILABLE as the API does
// when it cannot serve the request now (as it sheds flex requests,
// assumed).
func Overloaded() *Reply { return fake.Overloaded() }
