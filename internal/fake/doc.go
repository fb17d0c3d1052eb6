// Package fake is an in-process fake of the Gemini API (generativelanguage
// v1beta) and of Gemini on Vertex AI (aiplatform v1beta1), served over HTTP
// on a loopback port so that the real google.golang.org/genai client can
// talk to it. Every integration test of this module, the offline chat and
// the benchmarks run against it; package geminitest is its public face.
//
// It refuses exactly the request shapes the real API refuses, with the real
// status and message, and no more: it serves the real routes of both
// backends, answers in the real JSON and stream shapes, and accepts what
// clients other than genai send (enums by number, the request's model
// field, JSON-array streams, ?key=). Replies come from a script or a reply
// function; every request is recorded; faults are injected on demand.
//
//	srv := fake.NewServer()
//	defer srv.Close()
//	srv.Enqueue(
//		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}),
//			fake.Call("get_weather", map[string]any{"city": "London"})),
//		fake.Text("Sunny in both."),
//	)
//	client := srv.Client() // or srv.VertexClient()
//	resp, err := client.Models.GenerateContent(ctx, "gemini-3-flash-preview", contents, config)
//
// # Routes
//
// The Gemini API: POST /{v1,v1beta,v1alpha}/models/{model}:generateContent
// and :streamGenerateContent. Vertex AI: POST
// /{v1,v1beta1}/projects/{project}/locations/{location}/publishers/google/models/{model}:…
// and, in express mode, /{v1,v1beta1}/publishers/google/models/{model}:….
// A run of slashes in a path counts as one, as it does for the API.
// [Server.ClientConfig] and [Server.VertexClientConfig] configure genai for
// each; one server serves both at once, and [Request.Backend] says which
// one a request used. A stream is server-sent events with alt=sse (what
// genai asks for) and a JSON array without alt or with alt=json (what the
// legacy Go SDK reads). Anything else answers 404 NOT_FOUND in the API's
// error JSON.
//
// The cachedContents resource is served too: POST and GET
// /v1beta/cachedContents, GET, PATCH and DELETE /v1beta/cachedContents/{id}
// on the Gemini API, and the same under
// /v1beta1/projects/{project}/locations/{location}/ on Vertex AI (see
// "Context caching").
//
// # Authentication
//
// The Gemini API takes an API key, in the x-goog-api-key header or the key
// query parameter, or an OAuth bearer token; without either the answer is
// the real 403 PERMISSION_DENIED. Vertex AI takes a bearer token in the
// Authorization header (an API key in express mode); without one the answer
// is the real 401 UNAUTHENTICATED with its ErrorInfo detail. Any non-empty
// key or token is valid.
//
// # Validation
//
// Before replying, the server checks each request with the rules listed in
// the variable rules in validate.go, each with what backs it: verified
// (where the API was seen refusing it, or accepting what the rule lets
// through, recordings of the real API included) or assumed. In short:
// credentials; well-formed JSON without unknown fields at any level (this is
// how the API rejects additionalProperties and other JSON Schema keywords in
// parameters, each backend the fields only the other has, and the Gemini API
// a part's mediaResolution outside v1alpha), where a lone object stands for
// a list of one message, as the API reads it; non-empty contents with valid
// roles (user, model, and the function and tool roles older clients send);
// no part without data (a part with only a thoughtSignature is accepted;
// Vertex AI also refuses an empty text part); no tools:[{}]; no
// functionCallingConfig with tools that declare no function; on Vertex AI a
// temperature in [0, 2.0001); on the Gemini API no presence or frequency
// penalty for Gemini 2.5 models; valid and unique function names; sound
// parameter schemas; function responses that immediately follow the call
// turn, one per call, matching the calls' ids where both have them (Vertex
// AI takes ids too); responses that are JSON objects when present; for
// models whose name starts with "gemini-3", thought signatures on the first
// function call of each step of the current turn; and, with
// [Server.SetInputTokenLimit], a prompt within the token limit. A request
// that names a cache sets no system instruction, tools or tool config,
// names a live cache of its model, and is checked with what the cache
// holds (see "Context caching"). Consecutive
// contents of one side count as one turn, as genai's Chat records a streamed
// answer as one content per chunk.
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
// [Finish], [Empty], [Blocked], [UnexpectedCall]), an API error ([Error],
// [RateLimited], [Overloaded]) or a transport fault ([Drop], [Malformed],
// [Fault]), plus latency ([Reply.Delay]), the shape of the stream
// ([Reply.Chunks], [Reply.TextChunk], [Reply.TrailingSignature],
// [Reply.CutAfter], [Reply.StreamErr]) and of a long answer
// ([Reply.Continue], [Reply.Checkpoints], [Hops]).
//
// # Long answers
//
// The API cuts an answer longer than one request holds: the hop's
// candidate finishes with CONTINUATION and carries a continuationToken,
// and the same request sent again with the token (top level) continues it
// (genai v1.77.0 continuation.go). [Hops] scripts an answer in several hops,
// [Reply.WithContinuation] one cut hop, [Reply.WithContinuationToken] one
// whose token is given (a server that repeats its token). The server
// checks every request that carries a token (the rule
// "continuation-token"): it must be a token the server sent, sent back with
// the request that received it, unchanged. Each hop's usage counts the
// prompt and the answer so far, as the API's do. A stream's checkpoints
// ([Reply.Checkpoints]) are events that carry a token and no finish
// reason; a request that sends a checkpoint's token back gets the rest of
// that stream from the checkpoint on, without taking a queued reply, so
// that a stream cut after one ([Reply.WithFault]) resumes as the API's
// does.
//
// # Built-in tools
//
// Google Search, code execution, URL context, file search and Maps are run
// by the API during the model call. Beside function declarations, the
// Gemini API wants toolConfig.includeServerSideToolInvocations (the rule
// "server-side-tool-invocations" refuses the mix without it, with the
// API's message), and Vertex AI, which has no such field and no toolCall
// or toolResponse parts, refuses the mix for models before Gemini 3 (rule
// "vertex-tool-mix"). Replies script what the model content then holds:
// [ServerToolCall], [ServerToolResponse], [GoogleSearch] and
// [CodeExecution] make the parts, which get ids (the toolResponse its
// call's) and, for gemini-3, thought signatures; [Reply.WithGrounding]
// ([WebGrounding]) and [Reply.WithCitations] add what grounds the answer.
//
// # Auto-fill
//
// Unless [Reply.Raw] is set, responses get what the API always sends, as
// real captures of both backends show it: role "model", the candidate
// index (on the Gemini API), finishReason STOP when a candidate has content
// and no reason, finishMessage "Model generated function call(s)." on a
// Gemini API turn of function calls, modelVersion (the requested model), a
// responseId unique per reply, createTime on Vertex AI (see
// [Server.SetTimeNowFunc]), and a usageMetadata computed from the request
// and the reply (about 4 bytes a token; see usage.go), which grows with the
// history, with Vertex AI's trafficType and the Gemini API's echo of a
// requested serviceTier. For models whose name starts with "gemini-3", as
// the real ones do, every functionCall without an id gets a unique id
// ("fc-N"), on both backends (Vertex AI sends them since mid-2026; see
// fill.go), the first functionCall
// part of the turn gets a thought signature if it has none, and a turn
// without function calls gets one on its last part; [Reply.AddIDs] and
// [Reply.AddSignatures] do the same for other models. Signatures are valid
// padded standard base64 on the wire.
//
// # Streams
//
// Server-sent events are `data: <json>` lines, each followed by a blank line
// ("\r\n\r\n") and flushed, with Content-Type text/event-stream and no
// event:, id: or comment lines; a JSON-array stream sends "[", the elements
// separated by ",\r\n", and "]", and an error, before or during the
// stream, as an {"error": …} element. A Response is split into one event
// per part (text parts further cut by [Reply.TextChunk], function calls
// whole); promptFeedback rides on the first event, finishReason on the last.
// On the Gemini API every event carries the running usage totals, and a
// gemini-3 turn of function calls ends with an event whose only part is
// {"text": ""}; on Vertex AI the events before the last carry only the
// trafficType. Every event carries the model version and the same response
// id. A unary request for a reply with Chunks gets them merged into one
// response.
//
// # Context caching
//
// The server keeps caches (caches.go; the facts and their sources are in
// ../shared/notes/caching.md). A create takes the model, a display name,
// contents, a system instruction, tools, a tool config, and a ttl or an
// expireTime (not both: the resource's oneof); it is refused, with each
// backend's text, when what it holds is smaller than [MinCacheTokens] for
// its model (counted as usage counts a prompt). It answers the name
// (cachedContents/fakecacheN on the Gemini API; on Vertex AI
// projects/…/locations/…/cachedContents/N, a number, as Vertex AI's ids
// are), the model (models/M, or Vertex AI's publisher path), createTime,
// updateTime, expireTime and usageMetadata.totalTokenCount, never the
// contents; get and list (oldest first, in pages of pageSize, 100 by
// default) answer the same. A patch changes the expiration only: a ttl
// (expiry = now + ttl) or an expireTime, with or without an updateMask
// naming it (Vertex AI documents the mask as required, but genai's Update
// sends none). A cache lives [DefaultCacheTTL] when the create sets no
// expiration, and is gone from its expiry on, as after a delete: the
// routes answer 404 NOT_FOUND "Cached content {id} is not found." on Vertex
// AI and 403 PERMISSION_DENIED "CachedContent not found (or permission
// denied)" on the Gemini API. Time is the server's clock
// ([Server.SetTimeNowFunc], [Server.AdvanceTime]); [Server.ExpireCaches]
// ends caches at once and [Server.Caches] lists the live ones. These
// requests are checked by the rules in the variable cacheRules in
// validate.go, each verified or assumed as generateContent's, and a
// refusal is a [Rejection] named after its rule.
//
// A generateContent that names a cache passes three rules (validate.go):
// it sets no systemInstruction, tools or toolConfig, the cache exists, and
// it is of the request's model. The cache's system instruction, tools, tool
// config and contents then make the prompt with the request's contents
// after them, and the rules after these check that whole prompt. The usage
// counts the cache's tokens in promptTokenCount and as
// cachedContentTokenCount, with cacheTokensDetails, on the last event of a
// stream too (on every event on the Gemini API).
//
// Implicit caching is deterministic. The server remembers, per backend and
// model, the prefixes of the prompts it accepted without a cache, each for
// [ImplicitCacheLifetime] after the last request that sent it; a prompt is
// read in whole items: the system instruction, each tools entry, each
// content. A request whose leading items equal, as JSON, those of a
// remembered prompt reports their tokens as cachedContentTokenCount when
// they reach [MinCacheTokens]. The real API promises no hit and has
// reported smaller ones; the fake's rule lets a test count on a hit and on
// a miss. The Interactions API reports a continued conversation's earlier
// interactions as cached, as before.
//
// # Files
//
// The server serves the Gemini API's Files API (files.go), which genai's
// client.Files speaks: the resumable upload of Files.Upload (POST
// /upload/v1beta/files with X-Goog-Upload-Protocol: resumable and
// X-Goog-Upload-Command: start answers the session's URL in
// X-Goog-Upload-URL; the bytes follow in chunks, each with its
// X-Goog-Upload-Offset and the command "upload", the last "upload,
// finalize", answered X-Goog-Upload-Status "active", then "final" with
// the file), GET /v1beta/files/{id}, GET /v1beta/files (pages of 10 by
// default, 100 at most) and DELETE /v1beta/files/{id}. A file gets a
// twelve-character id (or the name its upload asked for), the URI
// https://generativelanguage.googleapis.com/v1beta/files/{id} as the
// API's files have, its size, type, SHA-256, state ACTIVE and an
// expiration time [FileLifetime] (48 hours) after its upload, on the
// server's clock: from then on it is gone, as after a delete. A
// generateContent on the Gemini API may name a file the server holds in
// a fileData part, at the top of a content or in a function response (for
// gemini-3); one it does not hold, deleted or expired, is refused 403
// PERMISSION_DENIED "You do not have permission to access the File {id}
// or it may not exist.", the API's text, and a URI that is neither a
// Files API file nor http(s) nor gs:// (an artifact reference sent
// unresolved) 400 (rule "file-data"). The upload's refusals are the rules
// of fileRules (files.go), each verified or assumed as generateContent's;
// [Server.Files] lists the files held.
//
// Notes, with their sources: genai v1.77.0 files.go:612-660 (the start:
// headers, {"file": {name, displayName, mimeType}}, the session URL read
// from X-Goog-Upload-URL, whose host genai replaces with its base URL's)
// and api_client.go:660-767 (8 MiB chunks; a missing X-Goog-Upload-Status
// is retried; "final" ends the upload and its body's "file" is the
// result); the REST guide ai.google.dev/gemini-api/docs/files (the same
// exchange with X-Goog-Upload-Header-Content-Length, 48 hours, 2 GB a
// file, 20 GB a project); ai.google.dev/gemini-api/docs/file-input-methods
// (inline data up to 100 MB a request since January 2026, 50 MB for PDFs;
// public URLs and gs:// objects read by the API); the 403 text from
// google-gemini/deprecated-generative-ai-js#236, googleapis/python-genai#1218
// and google-gemini/deprecated-generative-ai-python#692 (a chat after the
// files' 48 hours). The real traffic in ../shared/realtraffic holds no
// upload (its projects uploaded outside their recordings), but 19 requests
// naming uploaded files, top level and in gemini-3 function responses,
// answered 200: TestRealTraffic replays them after uploading files of
// their names to the fake. Simplified: files are not scoped to a key,
// the 20 GB a project is not enforced, videos are ACTIVE at once (the API
// processes them first), and the file's bytes are not checked against
// its type.
//
// # Embeddings
//
// The server embeds (embed.go): on the Gemini API POST
// /{v1,v1beta,v1alpha}/models/{model}:batchEmbedContents (what genai's
// Models.EmbedContent sends there, for one content or many) and
// :embedContent; on Vertex AI :predict (genai's choice for
// gemini-embedding-001 and the text-embedding models) and :embedContent
// (for gemini-embedding-2), on the project and express routes. The
// models are [EmbeddingModels]: gemini-embedding-001 (3072 dimensions,
// 2,048 input tokens, on Vertex AI by predict, one instance a request),
// gemini-embedding-2 and -preview (3072, 8,192 tokens; embedContent on
// Vertex AI), Vertex AI's text-embedding-005 and
// text-multilingual-embedding-002 (768, 2,048; predict, 250 instances
// and 20,000 tokens a request). A vector is [Embedding] of the text: a
// sum of pseudo-random vectors, one per word and per character trigram,
// so that texts that share words or parts of words are similar; it has
// length 1 at the model's full size, and outputDimensionality keeps its
// first values without scaling them again, as Gemini's documentation says
// of its models (clients normalize). Vertex AI's predict answers
// statistics (token_count, truncated) and billableCharacterCount, its
// embedContent usageMetadata; a text over the model's tokens is cut.
// Requests are checked by the rules in the variable embedRules, each
// verified or assumed as generateContent's: credentials, the body's
// fields, the model (404 with the API's text for any other, the retired
// embedding-001 and text-embedding-004 among them), the batch's size and
// model, text in every content, the task type, the dimensions, and, on
// Vertex AI with autoTruncate false, the tokens. Replies queued with
// [Server.EnqueueEmbed] inject errors, faults and delays into embedding
// requests only. Embedding requests are recorded with their texts as
// Contents.
//
// # Held against real traffic
//
// TestRealTraffic replays every request of the recordings in
// ../shared/realtraffic beside the repository (httprr traces of the real
// Gemini API and Vertex AI, made by other projects' test suites; set
// TOOLNEXUS_REALTRAFFIC to read them elsewhere) and requires the server to
// answer each as the API did: a request answered 200 is accepted, a refusal
// for what the request says is refused with the same status, message and
// field violations. It skips, saying why, where the recordings are absent,
// and logs how many exchanges it judged and why it judged no others (an
// overloaded server, a key the API did not take, a model that does not
// exist, media or a URL the fake does not read).
//
// # What is faithful and what is simplified
//
// Faithful: the paths and credentials of both backends, the error JSON and
// the statuses for each code, the 429 body with QuotaFailure, Help and
// RetryInfo, both stream framings and their failure modes (cut between or
// inside events, error events, malformed data), the request body read as
// proto JSON reads it (names in camelCase or snake_case, enums by name or
// number, integers as numbers or strings), the fields each backend lacks,
// the response fields each backend sends, empty text parts sent as
// {"text":""}, the 4xx texts of the rules (verbatim where validate.go says
// so).
//
// Simplified: the model does not think. Token counts are approximations;
// avgLogprobs is never sent. Only the request fields, enums and schema
// checks listed in validate.go are validated; parametersJsonSchema, inline
// data and the other tools are accepted as long as their JSON has the right
// field names and types, and the API versions of one backend accept the
// same fields. Model names are not checked against a list, and any
// non-empty key or token is valid. Enums are always answered by name, even
// to a stream that asked for numbers. [RateLimited] sends the Gemini API's
// 429 body, RetryInfo included, on both backends. Floats written as "NaN" or
// "Infinity" are refused. Streams with several candidates are sent as one
// event. A long answer's hops are scripted, not computed: the server does
// not cut an answer at an output limit of its own, and a checkpoint's
// resumption sends the rest of the stream as it was, where the API would
// generate it anew. The refusals of continuation tokens are assumed (see
// the rule). Caches are not scoped to a key or token: any credentials of
// their backend (and on Vertex AI, their project and location) reach them.
// Token counts of caches and implicit hits follow the same 4-byte estimate.
//
// # Interactions
//
// The server also serves Gemini's Interactions API, on both backends: POST
// /{v1beta,v1alpha,v1}/interactions to create one (unary, or streamed with
// "stream": true), GET …/interactions/{id} to read one back (with
// include_input, or as its stream again, from the event after
// last_event_id), DELETE …/interactions/{id}, and POST
// …/interactions/{id}/cancel for a background interaction in progress;
// on Vertex AI the same under /v1beta1/projects/{project}/locations/{location}.
// genai's Interactions client (client.Interactions of a client from
// [Server.ClientConfig] or [Server.VertexClientConfig]) talks to it.
//
// A create takes the next Reply, as generateContent does: one script serves
// both APIs. The reply's model turn, made and auto-filled as for
// generateContent, becomes the interaction's steps (thought, model_output,
// function_call with an id, built-in tool steps; see package
// interactionswire), its status (completed; incomplete for MAX_TOKENS;
// requires_continuation with a continuation_token for CONTINUATION;
// failed, with errors, for the other finish reasons, content_blocked for
// safety) and its usage; a blocked prompt is a 400 content_blocked. For
// models whose name starts with "gemini-3" every thought is signed, and a
// turn without a thought gets a signed one first, as the real models
// answer. A stream sends "event:" and "data:" lines, every event with its
// event_id, and ends with "event: done" and "data: [DONE]"; Reply.CutAfter
// and the faults cut it, StreamErr sends an error event; the interaction
// kept is whole all the same, so that a client can resume it. With
// Reply.Checkpoints, every so many text deltas an interaction.status_update
// event carries a checkpoint's continuation token, and a request that
// continues from it is answered the rest of that stream. Errors are
// the Interactions API's JSON, {"error": {"code": "invalid_request",
// "message": …}}, with a string code (and a RetryInfo detail for
// [RateLimited]); credentials errors keep the google.rpc shape Google's
// front end sends.
//
// Interactions created with store (the default) are kept, for their key
// or token only: a later request may continue one with
// previous_interaction_id, read it or delete it; [Server.ExpireInteractions]
// forgets them as the API's retention does, and [Server.InteractionIDs]
// lists them. Requests are checked by the rules in interactions_rules.go,
// each marked verified or assumed as generateContent's: the fields each
// object takes, a previous interaction that exists, function results that
// answer the pending calls by call_id, signatures where the API checks
// them (a history sent without store), continuation tokens the server
// issued. A [Request] of the Interactions API has the whole conversation
// in Contents (the previous interactions' steps and the input, as
// generateContent's request would carry it), so that a test reads both
// APIs the same way; Input holds what the request itself sent.
//
// # Live
//
// The server serves Gemini's Live API, the websocket genai's client.Live
// dials (live.go:75-121), on both backends: GET
// /ws/google.ai.generativelanguage.{v1beta,v1alpha}.GenerativeService.BidiGenerateContent
// (and …BidiGenerateContentConstrained, for an ephemeral token sent as
// "Authorization: Token auth_tokens/…") for the Gemini API, and
// /ws/google.cloud.aiplatform.{v1beta1,v1}.LlmBidiService/BidiGenerateContent
// for Vertex AI. genai dials ws:// only when the base URL says so:
// [Server.LiveClientConfig] and [Server.LiveVertexClientConfig] configure
// it (the latter puts the bearer token in HTTPOptions.Headers, the headers
// the Live client sends). Credentials are checked before the upgrade, as
// for generateContent (rule "live-auth"), with its HTTP errors.
//
// The client's first message is its setup; the server answers
// setupComplete (with a sessionId on Vertex AI), or what the function set
// with [Server.SetLiveSetupFunc] answers instead (nothing, for a setup
// that never completes; [LiveSetupComplete] and a close frame, for a
// resumed session that fails at once), then reads the client's
// messages one at a time, in order, and answers each before it reads the
// next. Server messages are JSON in binary frames, as the service sends
// them. A message that ends a user turn takes the next [LiveReply] queued
// with [Server.EnqueueLive]: a clientContent with turnComplete, a
// realtimeInput of text, activityEnd or audioStreamEnd (the server has no
// voice activity detection: audio chunks alone end no turn), and a
// toolResponse that answers the last pending BLOCKING call, or a
// NON_BLOCKING one with a scheduling other than SILENT. Every other
// accepted message, and a turn's end when the queue is empty, goes to the
// function set with [Server.SetLiveReplyFunc], whose reply, if not nil, is
// sent. A turn's end that neither answers closes the connection with 1011
// "fake: no reply scripted for live message #N". A reply is a list of
// server messages ([LiveTurn], [LiveText], [LiveAudio], [LiveCalls],
// [LiveMessages], built from [LiveModelText], [LiveModelAudio],
// [LiveInputTranscription], [LiveOutputTranscription], [LiveToolCall],
// [LiveCancellation], [LiveInterrupted], [LiveGenerationComplete],
// [LiveTurnComplete], [LiveGoAway], [LiveResumptionUpdate], [LiveUsage]),
// optionally followed by a close frame ([LiveReply.WithClose]), sent at
// once, with no pacing.
//
// The server completes what it sends and keeps the session's state: a
// function call without an id gets one ("fc-N"), unless its reply says
// [LiveReply.WithoutCallIDs] (Vertex AI's 2.5 native-audio models send
// calls without ids: a response without an id then answers the earliest
// unanswered id-less call of its name), and is pending until a
// toolResponse answers it (whether it blocks is read from the setup's
// declarations: behavior unset means BLOCKING, but NON_BLOCKING on
// gemini-3.8-live models; a NON_BLOCKING call answered with willContinue
// stays pending); a cancellation without ids cancels every pending call,
// and a late response to a cancelled call is accepted and ignored; a
// resumable sessionResumptionUpdate without a handle gets one. A setup
// that sends such a handle resumes the session, pending calls included,
// on the new connection; handles are kept until the server closes. On
// Vertex AI usageMetadata counts the answer in candidatesTokenCount, as
// that backend does.
//
// Each message is checked by the rules in live_rules.go (the variable
// liveRules), marked verified or assumed as generateContent's: one known
// top-level field; the setup first and only once; a Live model (a name with
// "live" or "native-audio" in it) in the backend's form, else 1008 with
// the service's not-found text; a resumption handle the server issued,
// else 1008 "BidiGenerateContent session not found"; no TEXT responses
// from a native-audio model; no deprecated mediaChunks for Gemini 3 models;
// audio in as audio/pcm with a positive integer rate or none (the service
// resamples other rates); tool responses for pending (or cancelled) call
// ids only. A refused message closes the connection with the rule's close
// code and reason (1007 or 1008, cut at 123 bytes as the service cuts
// them), which genai returns as a *websocket.CloseError.
// [Server.LiveMessages] records every client message, decoded, with its
// session, connection, credentials and [LiveRejection];
// [Server.LiveRejections] lists the refused ones.
//
// Simplified: the server keeps no conversation and no clock, so there is
// no voice activity detection, no session or connection time limit, no
// context window compression and no goAway unless scripted; the setup's
// other fields (speech, transcription, VAD, compression) are recorded, not
// acted on. Fields below a message's top level are read leniently.
//
// # Concurrency
//
// A Server is safe for concurrent use: requests are served concurrently and
// every method may be called while requests are in flight. Values returned
// by [Server.Requests] and passed to the reply function are copies that the
// caller owns. The reply function is called concurrently from handler
// goroutines. [Server.Close] waits for requests in flight after aborting
// their delays and streams, and closes every Live connection, waiting for
// its goroutine to end.
package fake
