// Package geminitest provides a fake Gemini API server, and Gemini on
// Vertex AI, for testing programs that call Gemini through
// google.golang.org/genai, in the spirit of net/http/httptest: it starts on
// a loopback port, the real genai client talks to it over HTTP, and it
// answers what the test scripts. Nothing touches the network and no key is
// needed.
//
// The server is strict where the real API is strict and lenient where it
// is lenient: it refuses, with the real status and message, the requests
// the real API refuses (a function response that does not follow its call,
// a dropped thought signature, a JSON Schema keyword in parameters…), and
// only those. A test that passes against it sends requests the real API
// accepts.
//
//	func TestForecast(t *testing.T) {
//		srv := geminitest.Start(t) // closed, and protocol violations reported, when t ends
//		srv.Enqueue(
//			geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
//			geminitest.Text("Sunny in Paris."),
//		)
//		got, err := forecast(ctx, srv.Client(), "Paris") // the code under test
//		…
//		srv.AssertComplete(t)
//		answer := srv.LastRequest().LastFunctionResponses("get_weather")[0]
//		…
//	}
//
// # Scripting a conversation
//
// Each request takes the next [Reply] queued with [Server.Enqueue]: [Text]
// for an answer, [Calls] of [Call]s for the model asking for tools, [Parts]
// for thoughts, text and calls mixed. When the queue is empty, the function
// set with [Server.SetReplyFunc] computes a reply from the [Request]. When
// there is neither, the request is unscripted: it is answered 400
// FAILED_PRECONDITION "fake: no reply scripted for request #N", an error
// genai does not retry, so that a runaway loop fails fast and readably.
//
// Models whose name starts with "gemini-3" behave like Gemini 3: the
// server gives function calls ids, gives the first call of a turn a thought
// signature, and checks that the history sent back keeps them.
//
// # Checking what the app sent
//
// [Server.Requests] returns every request, decoded: contents, tools,
// config, headers. A Request's FunctionCalls, FunctionResponses and
// LastFunctionResponses methods return the function calls and responses
// it carries, by name; FunctionDeclaration finds a tool's declaration.
// [Server.Rejections] lists the requests that broke the API's protocol, and
// why; [Server.AssertComplete] checks that every scripted reply was used
// and that nothing was rejected or unscripted; [Start] fails the test on
// any rejection.
//
// # Failures
//
// [Error] answers an API error with its status, [RateLimited] the 429 of an
// exhausted quota with its RetryInfo, [Drop] closes the connection,
// [Malformed] answers a body that is not JSON. On a Reply, WithFault cuts a
// stream ([FaultCutStream] at an event boundary, [FaultCutMidEvent] inside
// an event), WithStreamError sends an error event mid-stream, WithDelay and
// EventDelay add latency, WithTextChunk streams text in pieces.
//
// # Recording real traffic once, replaying it offline
//
// A script says what the test's author expects; a recording says what
// Gemini answered. [Replay] records a test's traffic with the real API
// once, into a file of testdata, and replays it ever after, offline and
// deterministically, through the real genai client:
//
//	func TestForecast(t *testing.T) {
//		client := geminitest.Replay(t, "", nil).Client() // testdata/geminitest/TestForecast.json
//		got, err := forecast(context.Background(), client, "Paris")
//		…
//	}
//
//	GEMINI_API_KEY=… go test -run TestForecast -geminitest.record  # records, once
//	go test ./...                                                  # replays: no key, no network
//
// Replaying, each request takes the recorded response of an unused
// exchange whose request matches it (method, URL, JSON body), in any
// order, so that concurrent requests replay; a request that matches none
// fails the test with a diff against the closest recorded one, and a test
// that makes fewer requests than were recorded fails when it ends. The
// file is JSON meant to be read and reviewed: request bodies indented,
// response bodies byte for byte as the API sent them (a stream as its
// events; bytes that are not UTF-8, such as an uploaded file's, in base64).
// No key, token or request header is written; the responses' headers are,
// but for noise that describes one connection or one moment (Date,
// Server-Timing, hop-by-hop headers…; [Replay] lists them), so that what
// genai reads of them replays too: the tier that served a call, the upload
// URL and status of Files.Upload. ReplayOptions.Scrub removes whatever
// else must not be.
// Recording needs -geminitest.record, or GEMINITEST_RECORD=1 for go test
// ./..., and refuses to run where CI is set.
//
// # Long answers and built-in tools
//
// [Hops] scripts an answer that the API cuts at its per-request output
// limit (finish reason CONTINUATION and a continuation token) and the
// client continues: each hop after the first must come with the token of
// the hop before it and the same request, and its usage counts the answer
// so far, as the API's does. WithCheckpoints makes a stream resumable: a
// stream cut after a checkpoint (WithFault) resumes from it when the
// client sends the checkpoint's token back.
//
// [GoogleSearch], [CodeExecution], [ServerToolCall] and
// [ServerToolResponse] make the parts a model content holds when the API
// runs its built-in tools (Google Search, code execution, URL context,
// file search, Maps), and WithGrounding ([WebGrounding]) and WithCitations
// what grounds the answer. The server refuses built-in tools beside
// function declarations as each backend does: the Gemini API without
// toolConfig.includeServerSideToolInvocations, Vertex AI for models before
// Gemini 3. [UnexpectedCall] is the model calling a function it was not
// given; [Overloaded] the 503 of a model that cannot serve the request
// now.
//
// # Vertex AI
//
// [Server.VertexClient] is a genai client for Vertex AI: it sends the
// project [VertexProject] in [VertexLocation] and the bearer token
// [AccessToken] to the server's Vertex AI routes,
// /v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent
// and :streamGenerateContent. The server checks Vertex AI's rules there: a
// bearer token is required (401 UNAUTHENTICATED without one), fields only
// the Gemini API has are unknown, an empty text part and a temperature
// outside [0, 2.0001) are refused; and it answers as Vertex AI does
// (createTime, trafficType, no candidate index, no finishMessage). One
// server serves both backends at once; [Request].Backend says which one a
// request used.
//
// # The Interactions API
//
// The server serves Gemini's Interactions API too, with the same script:
// the Reply builders and faults above answer a create (POST
// …/interactions) as they answer generateContent, made into the
// interaction's steps, status and usage; a stream is the API's typed events
// with their event ids, ending with the "[DONE]" sentinel, and a GET
// resumes it from any event. genai's Interactions client (client.Interactions)
// talks to it, and so does package geminiinteractions, which runs the
// agent loop on it:
//
//	srv := geminitest.Start(t)
//	srv.Enqueue(geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
//		geminitest.Text("Sunny in Paris."))
//	models := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
//	res, err := agent.Run(ctx, agent.Config{Models: models, Model: "gemini-3-flash-preview", Tools: tools}, contents)
//	…
//	second := srv.Requests()[1] // PreviousInteractionID set, Input: the function results
//
// Interactions created with store are kept, each for the key that created
// it, and checked as the API checks them: a previous_interaction_id must
// name one ([Server.ExpireInteractions] forgets them, as the API's
// retention does), function results must answer its pending calls by
// call_id, a history sent without store must keep its thought signatures.
// A Request of that API has the whole conversation in Contents, so that
// the same assertions read both APIs; Input holds what it sent.
//
// # The Live API
//
// The server speaks the Live API too, the websocket genai's client.Live
// dials, on both backends: a client from [Server.LiveClientConfig] or
// [Server.LiveVertexClientConfig] connects to it. [Server.EnqueueLive]
// scripts the model's side, one [LiveReply] per user turn (a turn's text,
// audio chunks with transcriptions, tool calls, cancellations,
// interruptions, goAway, resumption handles, usage), and
// [Server.SetLiveReplyFunc] reacts to any message the client sends ("when
// it sends this tool response, answer with that"), [Server.SetLiveSetupFunc]
// answers setups (a setup that never completes, a resumed session closed
// at once). The server gives calls ids (or sends them without, as Vertex
// AI's 2.5 native-audio models do: [LiveReply.WithoutCallIDs]), issues
// resumption handles and resumes a session from one, and
// refuses what the service refuses (a message before the setup, a second
// setup, a model the Live API does not serve, an unknown handle, a tool
// response for an unknown id, audio that is not PCM, the deprecated
// mediaChunks on Gemini 3…) by closing the socket with the service's code
// and reason. [Server.LiveMessages] records every message the client sent.
// See Example (Live).
//
// # Embeddings
//
// The server embeds, on both backends, what genai's Models.EmbedContent
// sends: batchEmbedContents (and embedContent) on the Gemini API, predict
// or embedContent on Vertex AI, for gemini-embedding-001,
// gemini-embedding-2 (and -preview), and on Vertex AI text-embedding-005
// and text-multilingual-embedding-002. Vectors are deterministic
// ([Embedding]): texts that share words or parts of words are similar,
// equal texts equal; they have the model's full size (3072, or 768) unless
// outputDimensionality asks for fewer, and length 1 only at full size.
// It refuses what the API refuses (a retired or generating model, more than
// 100 requests in a batch, more than one instance of gemini-embedding-001
// on Vertex AI, too many dimensions, an unknown task type, a text with no
// content, on Vertex AI a text too long with autoTruncate false) and cuts
// a text over the model's input tokens, saying so in Vertex AI's
// statistics. [Server.EnqueueEmbed] injects faults; embedding requests are
// recorded ([Server.EmbedContentRequests]) with their texts as Contents.
//
// # Context caching
//
// The server keeps the caches genai's Caches client makes (Create, Get,
// List, All, Update, Delete), on both backends' routes, and answers a
// request that names one (GenerateContentConfig.CachedContent) as the API
// does: the cache's system instruction, tools and contents come before the
// request's, and the usage reports the cache's tokens as
// cachedContentTokenCount, within promptTokenCount. It refuses, with each
// backend's status and text, what the API refuses: a cache smaller than
// [MinCacheTokens] for its model, a request that names a cache and also
// sets systemInstruction, tools or toolConfig, a cache of another model,
// and a cache that is gone (deleted, expired, never made; 403 on the
// Gemini API, 400 FAILED_PRECONDITION on Vertex AI). Caches expire on the
// server's clock: [Server.AdvanceTime] moves it, [Server.SetTimeNowFunc]
// replaces it, [Server.ExpireCaches] ends caches at once, and
// [Server.Caches] lists what is kept. Each refusal is a rejection, as any
// other (its rule is named in [Rejection]): a test that proves its code
// recovers from a cache that is gone, or that it handles a cache refused
// as too small, starts the server with [NewServer] rather than [Start],
// and checks [Server.Rejections] itself.
//
// Implicit caching is deterministic: a request whose prompt (system
// instruction, then each tool entry, then each content) begins with the
// same items as one the server answered for the same model and backend
// within [ImplicitCacheLifetime] reports the tokens of those items as
// cached, when they reach [MinCacheTokens]. A test can so count on a hit,
// and on a miss where the prefix changed.
//
// # What the server adds
//
// Unless a Reply is Raw, responses get what the API always sends: role
// "model", finishReason STOP, the model version, a response id, usage
// metadata computed from the request and the reply, and each backend's own
// fields. Streams are server-sent events with alt=sse, which genai asks
// for, and a JSON array without it, which other clients read; a response
// is streamed one event per part.
//
// # What is faithful and what is simplified
//
// Faithful: the routes and credentials of both backends; the request body
// read as the API reads it (proto JSON: names in camelCase or snake_case,
// enums by name or number, integers as numbers or strings) with the fields
// each backend has; the rules the API enforces on a conversation (every one
// documented in internal/fake/validate.go as verified, with its source, or
// assumed); the error JSON and status of each code, with Google's texts;
// the 429 with QuotaFailure, Help and RetryInfo; both stream framings and
// how they break; the response fields each backend sends, as real captures
// show them.
//
// Simplified: the model does not think; it says what the script says.
// Token counts approximate 4 bytes a token. Parameter schemas are checked
// for the rules the API states (types, required properties, unknown
// keywords), not for every constraint; parametersJsonSchema, inline data
// and other tools are accepted when their JSON has the right shape. Model
// names are not checked, and any non-empty key or token is valid. Enums are
// answered by name. [RateLimited] sends the Gemini API's 429, RetryInfo
// included, on Vertex AI too. The server never sends continuationToken, so
// genai's automatic continuation never starts.
//
// # Concurrency
//
// A Server is safe for concurrent use: requests are served concurrently
// and every method may be called while requests are in flight. Requests
// returned by [Server.Requests] and passed to the reply function are copies
// the caller owns. [Server.Close] waits for requests in flight after
// aborting their delays and streams.
package geminitest
