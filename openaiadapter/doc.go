// Package openaiadapter translates toolset tools into what the OpenAI API
// takes, on the official SDK (github.com/openai/openai-go/v3), and tool
// calls and results back: the Go port of toolnexus's toOpenAI, for Chat
// Completions and for the Responses API.
//
// It is pure translation: no I/O and no state, and no loop. Define the
// tools once with toolset; give them to Gemini with geminiadapter (or the
// agent package) and to OpenAI with this package, with the same
// validation on every call.
//
//	set := toolset.MustNew(weather, search)
//	tools, err := openaiadapter.ChatTools(set.Tools()...)
//	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o, Messages: msgs, Tools: tools}
//	completion, err := client.Chat.Completions.New(ctx, params)
//
//	// ...the model answers with tool calls...
//	msg := completion.Choices[0].Message
//	params.Messages = append(params.Messages, msg.ToParam())
//	for _, call := range msg.ToolCalls {
//		res := openaiadapter.ExecuteChat(ctx, set, call)
//		params.Messages = append(params.Messages, openaiadapter.ToolMessage(call, res))
//	}
//
// The Responses API is the same with [ResponsesTools], [ExecuteResponses]
// and [FunctionCallOutput], which answers a function_call item by its
// call_id.
//
// # Declarations
//
// Each tool becomes one function tool, in the order given: Name and
// Description as they are, InputSchema as "parameters" (renamed, as in the
// seed). Unlike Gemini's single group, the result is a plain list, and no
// tools give an empty one ([ChatTools]() has length 0), which also leaves
// "tools" out of the request: OpenAI answers "tools": [] with 400
// empty_array. OpenAI takes at most 128 tools in one request ("array too
// long"); that limit is the API's to enforce.
//
// # JSON Schema, as OpenAI takes it
//
// What OpenAI refuses, what this package rewrites, and what it passes
// through; the sources are OpenAI's API reference and its function calling
// and Structured Outputs guides (developers.openai.com/api/docs/guides/
// function-calling, .../structured-outputs#supported-schemas), and the
// API's own error messages where the guides are silent.
//
//   - Names: "a-z, A-Z, 0-9, or underscores and dashes, with a maximum
//     length of 64" (FunctionDefinition.name). toolset also allows '.'
//     and ':' (Gemini does): such a tool is an error here, wrapping
//     [toolset.ErrInvalidTool], rather than a 400 on every request.
//   - Without strict mode (the default) the schema is sent as it is, every
//     keyword, property order kept; the model reads it as a description
//     and [toolset.Tool.Execute] enforces all of it. One rewrite: OpenAI
//     refuses an array schema without "items" even there ("array schema
//     missing items"), so such an array gets "items": true, which means
//     what the missing keyword meant. A tool without parameters gets
//     {"type": "object", "properties": {}}, as the reference documents.
//   - Chat Completions takes a tool as non-strict when "strict" is left
//     out; the Responses API does not: "If you omit strict ... Responses
//     requests will normalize your schema into strict mode ..., which can
//     make previously optional fields mandatory". So [ResponsesTools]
//     always says "strict", and says false unless the tool is strict.
//   - With [Options.Strict], each tool whose schema fits strict mode's
//     subset is declared strict, rewritten as OpenAI requires: every
//     object has "additionalProperties": false, every property is
//     required, and a property that was optional becomes nullable ("emulate
//     an optional parameter by using a union type with null"); the null
//     the model then writes for it is removed before the call is
//     validated, so the tool sees the property absent, as it was
//     declared. Annotations the API refuses in strict mode ("default",
//     "examples", "$schema", …) are dropped; the tool still applies its
//     defaults.
//   - Strict mode refuses what its subset lacks: oneOf, allOf, not,
//     if/then/else, dependentRequired, dependentSchemas (listed as not
//     supported), and any keyword it does not list (the API answers, for
//     instance, "'default' is not permitted", "'propertyNames' is not
//     permitted", "schema must have a 'type' key"): a typed
//     additionalProperties (a Go map field), patternProperties,
//     uniqueItems, a string format outside date-time, time, date, duration,
//     email, hostname, ipv4, ipv6 and uuid. It refuses an anyOf at the
//     root, and schemas past its limits: 5000 object properties, 10 levels
//     of nesting, 1000 enum values, 120,000 characters of property names,
//     definition names, enum and const values, and 15,000 characters in
//     one string enum of more than 250 values. This package checks all of
//     these itself, and also refuses an object with optional properties
//     inside an anyOf branch, which it cannot make required faithfully. A
//     tool it refuses is declared without strict mode, unchanged;
//     [StrictParameters] says why.
//
// # Results
//
// A Chat Completions "tool" message and a Responses function_call_output
// carry text and have no error flag: a successful output is sent as it is
// (a string) or as JSON, and a failure as {"error": message}, the shape
// Gemini's functionResponse gets, so the model can tell them apart (a call
// refused rather than run, whose Err wraps toolset.ErrDenied, as
// {"error": message, "denied": true}, as on Gemini).
// Every failure of a call (an unknown tool, arguments that are not a JSON
// object or do not match the schema, an error or panic in the tool) is
// such a result, never a Go error. The Responses API also takes images
// and PDF files in a function call's output: a result's images (PNG, JPEG,
// WebP, GIF) and PDFs go along as input_image and input_file items; other
// media, and all media in Chat Completions, are described in the text.
//
// # Module and versions
//
// This package is a module of its own, github.com/toolnexus/toolnexus-go/openaiadapter
// (go get it beside the core module), so that a program that does not call
// OpenAI never has the SDK, or what the SDK requires, in its module graph.
// It declares go 1.25.0 and requires openai-go v3.74.0, the newest release
// that declares go 1.25.0, so that it builds on both supported Go
// releases; later v3 releases (which declare go 1.26.0; v3.99.0 was
// tried) work too, and a program on Go 1.26 may require one.
package openaiadapter
