package geminitest

import "github.com/toolnexus/toolnexus-go/internal/fake"

// Request is one request the server received, decoded; the server records
// every request before it decides the answer, rejected ones included. Its
// fields:
//
//   - Seq numbers requests from 1; Method is MethodGenerateContent or
//     MethodStreamGenerateContent, or one of the Interactions API's
//     (MethodCreateInteraction…) ("" for an unknown route).
//   - Backend is genai.BackendGeminiAPI or genai.BackendVertexAI; Model,
//     APIVersion, and for Vertex AI Project and Location, come from the
//     path.
//   - Header, Query, APIKey and Token (the bearer token) are what the
//     client sent.
//   - Contents, SystemInstruction, Tools, ToolConfig, GenerationConfig,
//     SafetySettings, Labels, ServiceTier and ContinuationToken are the
//     decoded body (nil when it could not be decoded); Body is the raw
//     body. CachedContent is the cache a generateContent request names,
//     or the one a request to the cachedContents routes reads, updates or
//     deletes; a create of a cache has its model and what it is to hold in
//     Model, Contents, SystemInstruction, Tools and ToolConfig.
//   - On the Interactions API, Contents, SystemInstruction, Tools,
//     ToolConfig and GenerationConfig say the whole conversation as
//     generateContent's request would (the previous interactions' steps
//     and the input), so that a test reads both APIs alike; Input holds the
//     contents the request itself sent; InteractionID is the interaction
//     created (or read, deleted, cancelled); PreviousInteractionID, Store
//     and Stream are the request's.
//   - Rejection says which rule refused the request, and Unscripted that no
//     reply was scripted for it.
//
// Its methods read the conversation: FunctionCalls, FunctionResponses and
// LastFunctionResponses return the function calls and responses it
// carries, all of them or those of one name; FunctionDeclaration finds a
// tool's declaration; Text returns the text of its last content.
//
// Requests returned by [Server.Requests] are copies the caller owns.
type Request = fake.Request

// Rejection records a request that broke the API's protocol: Seq (the
// request's), Rule (the name of the rule it broke, e.g.
// "function-response-count") and Err (the error sent).
type Rejection = fake.Rejection

// Method is the API method a request called.
type Method = fake.Method

// The methods the server serves.
const (
	// MethodGenerateContent is POST …/models/{model}:generateContent.
	MethodGenerateContent = fake.MethodGenerateContent
	// MethodStreamGenerateContent is POST …/models/{model}:streamGenerateContent.
	MethodStreamGenerateContent = fake.MethodStreamGenerateContent

	// MethodCreateInteraction is POST …/interactions, unary or streamed.
	MethodCreateInteraction = fake.MethodCreateInteraction
	// MethodGetInteraction is GET …/interactions/{id}, or its stream.
	MethodGetInteraction = fake.MethodGetInteraction
	// MethodDeleteInteraction is DELETE …/interactions/{id}.
	MethodDeleteInteraction = fake.MethodDeleteInteraction
	// MethodCancelInteraction is POST …/interactions/{id}/cancel.
	MethodCancelInteraction = fake.MethodCancelInteraction
)
