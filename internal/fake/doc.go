// Package fake is an in-process fake of the Gemini API (generativelanguage
// v1beta), served over HTTP on a loopback port so that the real
// google.golang.org/genai client can talk to it. Every integration test of
// this module, the offline chat and the benchmarks run against it.
//
// It is as strict as the real API where the client can tell the difference:
// it serves the real routes, answers in the real JSON and SSE shapes, and
// rejects with the real status and message the request shapes the real API
// rejects. Replies come from a script or a reply function; every request is
// recorded; faults are injected on demand.
//
//	srv := fake.NewServer()
//	defer srv.Close()
//	srv.Enqueue(
//		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}),
//			fake.Call("get_weather", map[string]any{"city": "London"})),
//		fake.Text("Sunny in both."),
//	)
//	client := srv.Client()
//	resp, err := client.Models.GenerateContent(ctx, "gemini-3-flash-preview", contents, config)
//
// # Routes
//
// POST /{v1,v1beta,v1alpha}/models/{model}:generateContent and
// :streamGenerateContent?alt=sse. The API key must come in the
// x-goog-api-key header (any non-empty key); without it the answer is the
// real 403 PERMISSION_DENIED. A stream without alt=sse answers 400;
// anything else answers 404 NOT_FOUND in the API's error JSON.
//
// # Validation
//
// Before replying, the server checks each request with the rules listed,
// each with the text it answers, in the variable rules in validate.go. In
// short: well-formed JSON without unknown fields at any level (this is how
// the API rejects additionalProperties and other JSON Schema keywords in
// parameters), non-empty contents with valid roles, no part without data
// (a part with only a thoughtSignature is accepted), no tools:[{}], no
// functionCallingConfig without declarations, valid and unique function
// names, sound parameter schemas, function responses that immediately follow
// the call turn, one per call, echoing the calls' ids, responses that are
// JSON objects, and, for models whose name starts with "gemini-3", thought
// signatures on the first function call of each step of the current turn,
// and, with [Server.SetInputTokenLimit], a prompt within the token limit.
// Consecutive contents of one role count as one turn, as genai's Chat
// records a streamed answer as one content per chunk.
// A rejected request gets the rule's 4xx error and takes no reply from the
// queue; [Server.Rejections] lists the rejections so a test can assert that
// a client never broke the protocol.
//
// # Scripting
//
// Each request takes the next [Reply] queued with [Server.Enqueue]. When the
// queue is empty, the reply function set with [Server.SetReplyFunc] computes
// one. When there is neither, or the function returns nil, the request is
// unscripted: it is answered 400 FAILED_PRECONDITION with the message
// "fake: no reply scripted for request #N", an error the client does not
// retry, so that a runaway loop fails fast and readably;
// [Server.Unscripted] counts these.
//
// A Reply holds a response (see the builders [Text], [Parts], [Calls],
// [Finish], [Empty], [Blocked]), an API error ([Error], [RateLimited]) or a
// transport fault ([Drop], [Malformed], [Fault]), plus latency
// ([Reply.Delay]) and the shape of the stream ([Reply.Chunks],
// [Reply.TextChunk], [Reply.TrailingSignature], [Reply.CutAfter],
// [Reply.StreamErr]).
//
// # Auto-fill
//
// Unless [Reply.Raw] is set, responses get what the API always sends:
// role "model", the candidate index, finishReason STOP when a candidate has
// content and no reason, modelVersion (the requested model), a responseId
// unique per reply, and a usageMetadata computed from the request and the
// reply (about 4 bytes a token; see usage.go), which grows with the
// history. For models whose name starts with "gemini-3", as the real ones
// do, every functionCall without an id gets a unique id ("fc-N"), the first
// functionCall part of the turn gets a thought signature if it has none,
// and a turn without function calls gets one on its last part;
// [Reply.AddIDs] and [Reply.AddSignatures] do the same for other models.
// Signatures are valid padded standard base64 on the wire.
//
// # Streams
//
// A stream is `data: <json>` events, each followed by a blank line
// ("\r\n\r\n") and flushed, with Content-Type text/event-stream and no
// event:, id: or comment lines. A Response is split into one event per part
// (text parts further cut by [Reply.TextChunk], function calls whole);
// promptFeedback rides on the first event, finishReason on the last, and
// every event carries the running usage totals, the model version and the
// same response id. A unary request for a reply with Chunks gets them
// merged into one response.
//
// # What is faithful and what is simplified
//
// Faithful: paths, headers read, the error JSON and the statuses for each
// code, the 429 body with QuotaFailure, Help and RetryInfo, SSE framing and
// its failure modes (cut between or inside events, error events, malformed
// data), empty text parts sent as {"text":"","thoughtSignature":…}, the 400
// texts of the rules (verbatim where known, as marked in validate.go).
//
// Simplified: the model does not think. Token counts are approximations.
// Only the request fields, enums and schema checks listed in validate.go
// are validated; parametersJsonSchema, inline data and the other tools are
// accepted as long as their JSON has the right field names and types.
// Model names are not checked against a list, and any non-empty API key is
// valid. The "?key=" query parameter is not accepted (the SDK never sends
// it), and roles other than user and model are rejected although the API
// once accepted "function". Numbers in int64 fields must be JSON numbers,
// not strings. Streams with several candidates are sent as one event.
// continuationToken is never sent, so the SDK's automatic continuation
// never triggers.
//
// # Concurrency
//
// A Server is safe for concurrent use: requests are served concurrently and
// every method may be called while requests are in flight. Values returned
// by [Server.Requests] and passed to the reply function are copies that the
// caller owns. The reply function is called concurrently from handler
// goroutines. [Server.Close] waits for requests in flight after aborting
// their delays and streams.
package fake
