// Package toolset defines the tools a model can call and runs them safely.
//
// A [Tool] is a name, a description for the model, a JSON Schema for its
// input and a run function. Write one as a struct and check it with [Define],
// or let [Func] infer the schema from a typed Go function:
//
//	type WeatherIn struct {
//		City string `json:"city" jsonschema:"the city, e.g. Paris"`
//		Days int    `json:"days,omitempty" jsonschema:"how many days of forecast"`
//	}
//
//	weather, err := toolset.Func("get_weather", "Current weather for a city",
//		func(ctx context.Context, in WeatherIn) (string, error) {
//			return "sunny in " + in.City, nil
//		})
//
// A [Set] is a named collection of tools, looked up by the name the model
// calls back with.
//
// # Two error channels
//
// Mistakes in a tool's definition are the program's bug: [Define], [Func] and
// [New] return them as Go errors (wrapping [ErrInvalidTool] or
// [ErrDuplicateTool]), and the Must variants panic, so that they surface when
// the program starts rather than when a model first calls the tool.
//
// Failures while running a tool are the model's business: [Tool.Execute] never
// panics and never returns a Go error. Arguments that do not match the schema,
// an error returned by Run, a panic in Run, a cancelled context and an output
// that cannot be encoded as JSON all come back as a [Result] with IsError set
// and a message the model can act on, because a model that is told what went
// wrong can correct itself. The Go error behind such a result stays in
// [Result.Err] for logs and hooks; it is never sent to the model.
//
// # Validation
//
// Input schemas use [github.com/google/jsonschema-go/jsonschema]. A schema is
// resolved once, when the tool is defined, and every call's arguments are
// validated against it before Run sees them: Run may rely on required
// properties being present and of the declared type. Defaults declared on
// optional properties are filled in first.
//
// # Schema budget
//
// A schema's $defs can refer to each other so that a few kilobytes stand
// for gigabytes once every $ref is followed, and validating against it
// follows each reference as often as it is reached. [Define] measures
// the schema first ([MeasureSchema]: its own work is linear in the schema
// as written) and refuses, with an error wrapping [ErrSchemaTooLarge], a
// schema that expands to more than [MaxSchemaSize] (256 KiB of JSON), or
// whose defaults would cost more than that to validate. It also refuses
// a $ref that leads back to itself through allOf, anyOf, oneOf, not,
// if/then/else or dependentSchemas without going into the value, which
// jsonschema-go would follow until the process's stack overflows, and,
// because it cannot measure them, a $dynamicRef, a $ref outside the
// schema ("#…" references are followed: JSON pointers and anchors) and a
// $id below the root of a schema with references. Within the budget,
// validating one argument value costs at most about MaxSchemaSize. A
// recursive schema (a tree of nodes, say) has no end when expanded:
// arguments that nest so deep that the schema, expanded to their depth,
// exceeds the budget fail as invalid arguments wrapping ErrSchemaTooLarge.
//
// Gemini sends every JSON number as a float64; the schema's "integer" type
// accepts any float64 with no fractional part, and [Func] decodes such values
// into Go integer fields.
//
// # Performance
//
// Validation and decoding take a compiled fast path for common schemas and
// types, made once when the tool is defined. Schemas that use only the
// usual keywords (type, enum, const, the numeric, string, array and object
// bounds, properties, required, additionalProperties, items, allOf, anyOf,
// oneOf, not) are checked without allocating, and jsonschema-go is asked
// only about arguments the fast path does not find valid, which it rejects
// with its own message. [Func] fills In straight from the arguments when In
// is built of structs, strings, numbers, bools, pointers, slices, arrays,
// string-keyed maps and empty interfaces, and goes through encoding/json
// otherwise (a time.Time field, say, or any custom UnmarshalJSON). Any
// other schema or type, and any argument the fast path is not sure of,
// takes the general path. jsonschema-go and encoding/json are the
// reference: the fast paths are fuzzed against them and give the same
// verdicts and values.
//
// # Media
//
// A tool can hand back images, audio or other binary content besides its
// output: its Run returns a [MediaOutput], and [Tool.Execute] puts the
// output in [Result.Output] and the media in [Result.Media]. How they reach
// the model is the adapter's business: Gemini 3 models receive them as media
// inside the function response, older ones a short description.
//
// # Progress
//
// A tool that takes a while says how far it is with [ReportProgress]:
// done of total units, and a message for a person. The runtime that runs
// the tool listens through the context it gives Run ([WithProgress]): the
// agent loop hands the reports out as events, an MCP server built with
// mcptools sends them to its client as progress notifications, a durable
// run's activity records them in its heartbeat. Where nobody listens a
// report does nothing, and costs a context lookup; [ProgressPacer] paces
// and coalesces reports for a listener that must not be flooded.
//
// # Safe to repeat
//
// A runtime can lose track of a call: its process died while the call
// ran, or the connection dropped before the answer came. It then does not
// know whether the call took effect. [Tool.ReadOnly] and
// [Tool.Idempotent], MCP's readOnlyHint and idempotentHint, say when
// calling again is harmless ([Tool.SafeToRepeat]): a tool that changes
// nothing, or one whose second call with the same arguments changes
// nothing more than the first (setting a value, not adding to it). Both
// are false unless set, the safe side: a lookup should say ReadOnly, and
// a tool that sends a message or moves money says neither. Set them in
// the Tool given to [Define], or on the Tool [Func] returns, before it is
// used:
//
//	weather := toolset.MustFunc("get_weather", "Current weather for a city", getWeather)
//	weather.ReadOnly = true
//
// They are hints to runtimes, never sent to the model: a tool's Gemini
// declaration is the same with or without them. A runtime that resumes
// a run after a crash reads them to decide whether a call that was
// running is made again or answered as interrupted, and mcptools to
// decide whether a call whose connection dropped is made again; mcptools
// also takes them from an MCP server's tool annotations, and publishes
// them in its own.
//
// # Concurrency
//
// A defined [Tool] and a [Set] are immutable and safe for concurrent use:
// Execute may run the same tool from many goroutines at once, provided its Run
// function is safe for that.
package toolset
