// Package geminiinteractions runs the agent loop on Gemini's Interactions
// API, the API Google names the default way to use Gemini since June 2026:
// a [Models] is an agent.Models, so an agent whose Config.Models is one runs
// the same loop, unary and streamed, with its tools, approvals, typed
// answers, sessions, trimming, traces and durable runs, on that API.
//
//	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key})
//	…
//	a, err := agent.New(agent.Config{
//		Models: geminiinteractions.New(client, geminiinteractions.Config{}),
//		Model:  "gemini-3.5-flash",
//		Tools:  toolset.MustNew(weather),
//	})
//
// It makes its calls with genai's own Interactions client
// (client.Interactions), on the Gemini API or on Vertex AI as the client
// is configured, with that client's retries and automatic continuation
// off: the loop owns both, as it does for generateContent.
//
// # What a call sends
//
// The loop hands each call the whole history, as for generateContent. With
// store, the API's default, the server keeps each interaction; when the
// contents extend exactly the history of an interaction this Models created
// (its request's contents and the answer it returned), the call sends that
// interaction's id as previous_interaction_id and only the contents after
// it: the function results, a new message. Tools, the system instruction
// and the generation config go with every call, as the API requires.
// Otherwise the call sends the whole history: the first call of a
// conversation; one whose history this Models did not create (after a
// restart, in another process or on another worker, for a conversation
// stored before); one whose history a HistoryFunc changed (a trim, a
// summary: see package history), which only a whole history can say.
//
// The interactions it creates are remembered, to know the chains: up to
// Config.MaxInteractions of them (4096), holding up to
// Config.MaxRememberedBytes (64 MiB, counted as that field says), the
// least recently used forgotten first; a history that extends none of
// the interactions remembered is sent whole. Each keeps only the contents it added to the history
// it continued (its request's new contents and its answer), and knows
// that history by its length and a running fingerprint (SHA-256 over its
// contents' fingerprints, in order): what a remembered interaction holds
// is its own, never the conversation before it, and a conversation whose
// older interactions were forgotten still continues from its newest. A
// call checks its history against an interaction it may continue with one
// comparison, never walking the chain; it still looks at each content of
// its history once, to fold its fingerprint into the running one.
//
// Contents become steps as the API takes them: a user content user_input
// and function_result steps (a function's response as its JSON text); a
// model content thought steps (each run of thought parts up to a
// signature), model_output steps (each run of text and media), function
// calls, and the built-in steps it came with. Contents are recognized by
// what they say to the API (their steps' canonical JSON), so a history
// read back from a session store continues
// the server's chain; and by address first (a content a remembered
// interaction keeps), so that the common case computes the steps of the
// new contents only. A content changed in place after a run used it,
// keeping its address, is taken as unchanged: agent's rule already forbids
// it; a changed content must be a new one.
//
// Correctness never depends on the server still holding an interaction:
// when a call's previous_interaction_id is unknown (expired, deleted), the
// call is sent again, once, with the whole history. With Config.Stateless,
// or a request whose GenerateContentConfig.Store is false, every call sends
// store: false and the whole history, thoughts and their signatures
// included, and nothing stays at Google. [Models.Stats] counts what was
// sent which way.
//
// # What comes back
//
// An interaction's steps become one model content, as generateContent's
// answer: thoughts with their signatures (a signature is the string's
// bytes), text, function calls with
// their ids, and built-in tool steps (Google Search, code execution, URL
// context, file search, Google Maps…) as toolCall, toolResponse,
// executableCode and codeExecutionResult parts that keep the step in their
// PartMetadata and go back exactly as they came. Typed answers go by
// response_format. Usage is generateContent's: input, output, thought,
// cached and tool-use tokens; a chained call's history counts as input, as
// the model reads it. The interaction's id is the response id.
//
// Its status is the finish reason: completed (and requires_action) STOP;
// incomplete MAX_TOKENS, a cut answer the loop reports as such;
// requires_continuation CONTINUATION with a continuation token, which the
// loop continues, the next hop sending the interaction that issued it as
// previous_interaction_id and no input (the whole input again without
// store), from any process, as the token names that interaction; failed
// with an error whose code is one of generateContent's finish reasons
// (content_blocked for SAFETY) that finish reason, so that the loop asks
// again or stops as it would; failed otherwise, cancelled or
// budget_exceeded an [*InteractionError], which is not retried. A prompt
// refused for its content (400 content_blocked) is a blocked prompt.
//
// # Caching
//
// The Interactions API caches implicitly only: a call whose prompt starts
// as a recent one's did (same model, at least the model's minimum) reads
// that prefix from the cache, billed at the cached price, and its usage
// says how many tokens (CachedContentTokenCount, from
// usage.total_cached_tokens), chained calls and stateless ones alike. It
// takes no explicit cache: [Models.ExplicitCaching] says so, agent.New
// refuses an agent on a Models whose Config.Cache is set, and a call whose
// GenerateContentConfig.CachedContent is set fails before anything is
// sent (the API's cached_content field is deprecated, to be removed, and
// is never sent).
//
// # Errors and retries
//
// An error of the API becomes a genai.APIError, as generateContent's are:
// its HTTP status, its string code in Status, its message and details, a
// Retry-After header as the RetryInfo detail the loop honours; the loop's
// retry policy then classifies it as it classifies generateContent's (429
// and 5xx retried, waiting at least the delay asked, 4xx not). The errors
// of Google's front end (credentials), which come in the google.rpc shape
// genai's Interactions SDK cannot decode, are read all the same.
//
// # Streams
//
// [Models.GenerateContentStream] yields text and thought summaries as they
// arrive, and each function call, signature and built-in step once whole,
// in chunks the loop merges into what GenerateContent returns. What
// genai's SDK gets wrong is mended: a stream that ends after its
// interaction completed but before the "[DONE]" sentinel is whole; an error
// event ends the stream with the API's error; a stream whose connection
// breaks is resumed from its last event, without generating again what
// was received (Config.StreamResumes, with store only). A stream's
// checkpoints (interaction.status_update events with a continuation
// token) are chunks that carry the token: when a stream cannot be resumed
// so (without store), the loop continues a stream cut right after one
// from it, as it does on generateContent.
//
// genai's SDK logs a warning, once per process, the first time an answer
// it does not continue needs continuing: the loop continues it.
package geminiinteractions
