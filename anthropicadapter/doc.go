// Package anthropicadapter translates toolset tools into what the Anthropic
// Messages API takes, on the official SDK
// (github.com/anthropics/anthropic-sdk-go/v2), and tool_use blocks and
// results back: the Go port of toolnexus's toAnthropic.
//
// It is pure translation: no I/O and no state, and no loop. Define the
// tools once with toolset; give them to Gemini with geminiadapter (or the
// agent package) and to Claude with this package, with the same validation
// on every call.
//
//	set := toolset.MustNew(weather, search)
//	tools, err := anthropicadapter.Tools(set.Tools()...)
//	params := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
//		Messages: msgs, Tools: tools}
//	msg, err := client.Messages.New(ctx, params)
//
//	// ...Claude answers with tool_use blocks...
//	var results []anthropic.ContentBlockParamUnion
//	for _, block := range msg.Content {
//		if block.Type == "tool_use" {
//			use := block.AsToolUse()
//			results = append(results, anthropicadapter.ToolResult(use, anthropicadapter.Execute(ctx, set, use)))
//		}
//	}
//	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
//
// # Declarations
//
// Each tool becomes one tool definition, in the order given: Name and
// Description as they are, InputSchema as "input_schema" (renamed, as in
// the seed). The result is a plain list, and no tools give an empty one
// ([Tools]() has length 0), which also leaves "tools" out of the request.
//
// # JSON Schema, as Anthropic takes it
//
// input_schema is a JSON Schema (draft 2020-12) of type object, which
// every toolset tool has. What Anthropic refuses, and what this package
// does about it; the sources are Anthropic's tool use documentation
// (platform.claude.com/docs/en/agents-and-tools/tool-use) and the API's
// own error messages where it is silent:
//
//   - Names must match ^[a-zA-Z0-9_-]{1,128}$ ("tools.N.custom.name:
//     String should match pattern"). toolset caps names at 64 characters
//     but also allows '.' and ':' (Gemini does): such a tool is an error
//     here, wrapping [toolset.ErrInvalidTool], rather than a 400 on every
//     request.
//   - oneOf, allOf and anyOf at the top level of input_schema are refused
//     ("input_schema does not support oneOf, allOf, or anyOf at the top
//     level"): such a tool is an error wrapping [ErrUnsupportedSchema].
//     They are accepted anywhere below it.
//   - Everything else is passed through as it is, every keyword, property
//     order kept: Claude reads the schema as a description, and
//     [toolset.Tool.Execute] enforces all of it. Nothing is rewritten.
//
// Anthropic's strict tool use (strict: true) constrains Claude to a
// narrower subset of JSON Schema (its structured outputs' "JSON Schema
// limitations": no numeric or string length constraints, no recursive
// schemas, additionalProperties false on every object…). Tool leaves
// Strict unset; a caller whose schema fits that subset may set it on the
// returned definition. Execute validates every call either way.
//
// # Results
//
// A tool_result block carries the output as text (a string as it is,
// anything else as JSON) and is_error when the call failed, with the
// message as the text: every failure of a call (an unknown tool, input
// that is not a JSON object or does not match the schema, an error or
// panic in the tool) is such a result, never a Go error. A result's images
// (JPEG, PNG, GIF, WebP) and PDF documents follow the text as image and
// document blocks, which tool results may hold; other media are described
// in the text.
//
// # Module
//
// This package is a module of its own, github.com/toolnexus/toolnexus-go/anthropicadapter
// (go get it beside the core module), so that a program that does not call
// Anthropic never has the SDK, or what it requires, in its module graph:
// anthropic-sdk-go v2.15.0 requires github.com/invopop/jsonschema v0.14.0,
// whose ordered maps changed type, which breaks Genkit's dotprompt. It
// declares go 1.25.0, as the SDK does.
package anthropicadapter
