// Package geminiadapter translates toolset tools into what the Gemini API
// takes, and tool results back into what it expects.
//
// It is a pure translation layer, the Go port of toolnexus's toGemini: no
// I/O and no state. [Tools] turns tools into the value of
// GenerateContentConfig.Tools: exactly one [genai.Tool] group holding every
// declaration (Gemini takes a list of groups, not a list of tools). [Schema]
// converts a JSON Schema into a [genai.Schema]. [Response] turns a
// [toolset.Result] into the functionResponse part that answers a call.
//
//	tools, err := geminiadapter.Tools(weather, search)
//	config := &genai.GenerateContentConfig{Tools: tools} // not []*genai.Tool{tools...} again
//
//	// ...the model answers with a functionCall part...
//	call := resp.FunctionCalls()[0]
//	tool, _ := set.Lookup(call.Name)
//	part := geminiadapter.Response(call, tool.Execute(ctx, call.Args))
//
// # Faithful or not at all
//
// A declaration's Parameters is the converted schema when [Schema] can say
// everything the JSON Schema says. When it cannot (a Go map field, oneOf,
// const, a string format Gemini refuses…) that one declaration carries the
// JSON Schema unchanged in ParametersJsonSchema instead, which the API also
// accepts: the model sees exactly what the tool validates. Only keywords
// that restrict or identify and that Execute enforces anyway
// (additionalProperties: false, $schema, $id, $comment) are dropped.
// [Options.ForceJSONSchema] sends every tool as JSON Schema.
//
// # Shared definitions
//
// A [genai.Schema] has no $ref: converting inlines each reference. Where
// definitions are shared, inlining multiplies them: a declaration whose
// inlined Parameters would be more than [MaxInlineFactor] times larger
// than its JSON Schema is sent as ParametersJsonSchema, $defs and $ref
// kept, as the Gemini API takes them (recorded requests with $defs, and
// with recursive references, answered 200). A schema larger than
// [toolset.MaxSchemaSize], as written or expanded, never gets this far:
// toolset refuses the tool, and [Schema] refuses it with an error wrapping
// [toolset.ErrSchemaTooLarge] before doing work in proportion to it.
//
// # Media
//
// A [toolset.Result] may carry media (images, audio, documents) besides its
// output. [Response] puts them inside the function response, as the
// inlineData parts (FunctionResponse.Parts) that Gemini 3 models read as
// media. Older models refuse such a request, so for them [DescribeMedia]
// replaces the media with a short description of what was left out;
// [MediaInResponses] tells the two kinds of model apart by name.
package geminiadapter
