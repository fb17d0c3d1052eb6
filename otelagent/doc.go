// Package otelagent records the runs of an [agent.Agent] as OpenTelemetry
// spans and metrics that follow the GenAI semantic conventions (v1.41.0,
// the last release that holds them): a span per run, per model call and per
// tool call, nested so that what each step does under its context lands
// under it, and the conventions' token-usage and duration histograms.
//
//	client, err := genai.NewClient(ctx, &genai.ClientConfig{
//		HTTPClient: &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport)},
//	})
//	a, err := agent.New(agent.Config{
//		Models:   client.Models,
//		Model:    "gemini-3.5-flash",
//		Tools:    tools,
//		Observer: otelagent.New(otelagent.WithClient(client), otelagent.WithAgentName("support")),
//	})
//
// The package depends on the OpenTelemetry API and its semconv/v1.41.0
// package only: it records through whatever SDK the program installs (the
// global providers by default, see [WithTracerProvider] and
// [WithMeterProvider]), and costs next to nothing when none is.
//
// # Spans
//
// One run is one trace (or a subtree of the caller's, when the run's
// context holds a span):
//
//	invoke_agent {name}                         INTERNAL, one per run
//	├── generate_content {model}                CLIENT, one per model call attempt
//	│   └── HTTP POST                           otelhttp's span, when the client's transport is wrapped
//	├── execute_tool {tool}                     INTERNAL, one per tool call
//	│   └── …                                   spans the tool starts from its context
//	└── generate_content {model}
//
// The run span (invoke_agent {name}, named after the run's agent: its
// Config.Name, the tool's name for an agent run as a tool, or the name
// [WithAgentName] gives; invoke_agent for an agent with no name) has
// gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model and
// gen_ai.agent.name, and when the run ends the run's token totals
// (gen_ai.usage.input_tokens, gen_ai.usage.output_tokens) and the last
// turn's gen_ai.response.finish_reasons. An agent with a context cache
// (agent.Config.Cache) adds an event "cache" to it for each
// agent.EventCache, with toolnexus.cache.action (created, refreshed,
// recreated, deleted, not cacheable, fallback), toolnexus.cache.name,
// toolnexus.cache.tokens for a cache made, and error.type and
// exception.message when caching failed; the conventions name no such
// event.
//
// A model call span (generate_content {model}) starts with what samplers
// read: gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model, server.address and server.port; then
// gen_ai.request.stream for a streamed call and the request settings the
// config sets (temperature, top_p, top_k, max_tokens, stop_sequences, seed,
// choice.count, presence and frequency penalties, gen_ai.output.type json).
// The response adds gen_ai.response.id, gen_ai.response.model,
// gen_ai.response.finish_reasons, gen_ai.usage.input_tokens (the prompt,
// cached tokens and tool-use prompts included),
// gen_ai.usage.output_tokens (the thoughts included, as the conventions
// ask), gen_ai.usage.reasoning.output_tokens,
// gen_ai.usage.cache_read.input_tokens, and, for a streamed call,
// gen_ai.response.time_to_first_chunk. Each attempt has its own span: one
// that fails and is retried ends with its error and an event "retry"
// (error.type, exception.message, toolnexus.retry.attempt and
// toolnexus.retry.delay in seconds); a re-ask of an empty reply is a retry
// with no delay. An answer the API cut and the loop continued (see
// agent.EventHop) has one span per request, each with that request's own
// usage and finish reason (continuation but for the last); those that
// continue it have toolnexus.continuation true and toolnexus.continuation.hop.
// The service tier a request asks for is gcp.gen_ai.request.service_tier,
// and the one that served it gcp.gen_ai.response.service_tier (the
// conventions name none for Gemini; OpenAI's are openai.request.service_tier
// and openai.response.service_tier).
//
// The built-in tools the API ran during a model call (Google Search, code
// execution, URL context, file search, Maps: see agent.Config.BuiltinTools)
// are execute_tool {tool} spans under the model call's span, of
// gen_ai.tool.type extension (datastore for file search), with
// gen_ai.tool.call.id and, when content is captured, their arguments and
// result. The API says what it ran, not when: they start and end with the
// response. In the captured messages they are server_tool_call and
// server_tool_call_response parts.
//
// A tool call span (execute_tool {tool}) has gen_ai.operation.name,
// gen_ai.tool.name, gen_ai.tool.type (function), gen_ai.tool.call.id when
// the model gave one, and gen_ai.tool.description. A call that needs
// approval gets an event "approval_requested". A call whose tool reports
// its progress (agent.EventToolProgress) gets an event "progress" per
// report, with toolnexus.progress.done, toolnexus.progress.total when
// the total is known, and, when content is captured,
// toolnexus.progress.message (a tool may name in it what it works on):
// at most [MaxProgressEvents] (16) per call, the first 15 and the last
// one before the result (with the time it came), the reports in between
// counted in toolnexus.progress.dropped on the span. A call whose result is an
// error (the tool failed, its arguments were invalid, it was unknown,
// denied, timed out or cancelled) ends with error status, its error as the
// description, and error.type. With content capture off (see Content),
// arguments that fail the tool's input schema are described without the
// values the model sent, which the validator quotes: by the argument's
// path in the schema ("invalid arguments: argument \"email\" does not match
// the tool's input schema (values not recorded: content capture is off)");
// so is a typed run's answer that failed its output type, on the run's
// span.
//
// Finish reasons are named as the conventions' output messages name them:
// stop, tool_call (the model called tools), length (MAX_TOKENS),
// content_filter (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII
// and the image ones), error (MALFORMED_FUNCTION_CALL,
// UNEXPECTED_TOOL_CALL), and any other Gemini reason in lower case.
//
// # Nesting
//
// The Observer is an [agent.ContextObserver]: the loop hands each model
// call and each tool call the context the Observer returns, which holds
// the step's span. So the HTTP request a model call makes through a genai
// client whose transport is wrapped with otelhttp is a child of the model
// call's span (otelhttp without a provider of its own uses the one of the
// span in the request's context), and a span a tool starts from its
// context is a child of the tool's span. Runs of one Agent, concurrent or
// not, are traces of their own: what the Observer knows of a run lives in
// the run's context.
//
// # Memory
//
// The Observer is also a memory.Observer: given as a memory service's
// Config.Observer, it records the service's searches, ingests,
// embeddings, extractions and forgetting as spans ("memory search", …),
// each under the span of the context the work was done for: Preload's
// search under the run's span, the search tool's under the tool's. See
// [Observer.ObserveMemory].
//
// # Runs that span processes
//
// The Observer is an [agent.Carrier] too: [Observer.Carry] writes what a
// run's context holds (the run's span context, model and start time; or,
// before a run begins, the caller's span context) as a few strings, and
// [Observer.Resume] puts it back into a context of another process. A
// runtime that runs a run's steps in several processes (temporalagent's
// durable runs) carries the run with them, so that the spans of model and
// tool calls made anywhere nest under the run's span, which nests under
// the caller's, and their metrics name the run's model. Nothing carried is
// content.
//
// The SDK ends a span only in the process that started it. When a run
// ends in another (its EventDone comes with a resumed context), the
// Observer makes the run's span then, with the time the run began, under
// the caller's span; a TracerProvider whose ids come from
// [NewIDGenerator] gives it the span id its children name as their parent,
// so that the trace is the one agent.Run makes; with another ID generator
// it gets a new id, and a link to that one.
//
// # Provider and server
//
// The loop's events do not say where model calls go: an agent's Models may
// be anything. [WithClient] reads it from the genai client the agent calls:
// gen_ai.provider.name gcp.gemini for the Gemini API, gcp.vertex_ai for
// Vertex AI, and server.address and server.port from the client's base
// URL. Without it the provider is gcp.gen_ai ("any Google generative AI
// endpoint") and there are no server attributes. [WithModels] reads them
// from the agent's Models, when it says where it goes; a Models on
// Gemini's Interactions API (package geminiinteractions) makes its model
// calls create_interaction spans ("create_interaction {model}",
// gen_ai.operation.name create_interaction, in the metrics too), with the
// interaction's id as gen_ai.response.id.
//
// # Content
//
// Recording content is off by default: messages hold what users and tools
// said. [WithCaptureContent](true), or, without that option, the
// environment variable OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// set to true, records as JSON strings, in the shapes of the conventions'
// JSON schemas: gen_ai.input.messages and gen_ai.output.messages on each
// model call span (and, on the run span, what the run's first model call
// sent and the last response),
// gen_ai.system_instructions and gen_ai.tool.definitions (type, name and
// description of each tool) on each model call span, and
// gen_ai.tool.call.arguments and gen_ai.tool.call.result on each tool span.
// Gemini's roles become the conventions' (model is assistant, a user turn
// of function responses is tool), thought text becomes reasoning parts,
// inline data blob parts (base64), file data uri parts; parts carrying only
// a thought signature are left out.
//
// The API key appears in nothing recorded: the genai client sends it in a
// header, which neither the loop nor otelhttp records, and [WithClient]
// reads only the backend and the base URL.
//
// # Metrics
//
// gen_ai.client.token.usage (histogram, {token}) records each model call's
// input and output tokens, by gen_ai.token.type; gen_ai.client.operation.duration
// (histogram, s) records each model call attempt, with error.type when it
// failed, and each run (gen_ai.operation.name invoke_agent). Both have the
// bucket boundaries the conventions give, gen_ai.provider.name,
// gen_ai.request.model, and for model calls gen_ai.response.model and the
// server attributes. Tokens of a reply that was asked again (an empty
// reply) are not recorded: the loop reports no response for it.
//
// # Error types
//
// error.type, on spans, retry events and durations, is one of: the HTTP
// status code of an API error ("429", "503"…); canceled and timeout for a
// context done or a tool timeout; stopped when a Stream consumer broke out
// of its loop; prompt_blocked, unsafe, malformed_function_call,
// empty_reply and max_tokens for the loop's [agent.StopError] kinds;
// max_turns; for tool calls denied, unknown_tool, too_many_calls,
// invalid_arguments, output_not_json and panic; the value of an
// ErrorType() string method of an error in the chain; and _OTHER for
// anything else.
//
// # Cost
//
// What a span starts with is built once per model, tool and streaming;
// metric attribute sets once per distinct set. Spans that the sampler
// drops build nothing beyond that, and content is encoded only when
// captured and sampled. With the SDK installed and every span sampled,
// a conversation of two model calls and two tool calls costs about 140 µs
// more in the loop benchmark (1.3× a plain run against an in-process fake
// of the API), nearly all of it the SDK's spans, exemplars and garbage;
// with no SDK installed, 1.08×. See BENCHMARKS.md.
package otelagent
