package geminiadapter

import (
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/internal/toolwire"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Options changes how tools are declared. The zero Options is what the
// package-level functions use.
type Options struct {
	// ForceJSONSchema declares every tool with ParametersJsonSchema, its
	// JSON Schema as it is, instead of a converted Parameters.
	ForceJSONSchema bool
}

// Tools returns the value of GenerateContentConfig.Tools for tools: exactly
// one [genai.Tool] whose FunctionDeclarations holds one declaration per
// tool, in the order given. It is already the outer list: assign it, do not
// wrap it again. With no tools it is still one group, holding a non-nil empty
// slice (the seed's [{functionDeclarations: []}]); the API refuses that group
// in a request, so leave Tools unset when there are no tools.
//
// A nil tool, an invalid tool or two tools with the same name are an error.
func Tools(tools ...*toolset.Tool) ([]*genai.Tool, error) {
	return Options{}.Tools(tools...)
}

// Declaration returns the function declaration for one tool. See
// [Options.Declaration].
func Declaration(t *toolset.Tool) (*genai.FunctionDeclaration, error) {
	return Options{}.Declaration(t)
}

// Tools is [Tools] with these options.
func (o Options) Tools(tools ...*toolset.Tool) ([]*genai.Tool, error) {
	decls := make([]*genai.FunctionDeclaration, 0, len(tools))
	err := toolwire.EachTool("geminiadapter", tools, func(t *toolset.Tool) error {
		d, err := o.Declaration(t)
		if err == nil {
			decls = append(decls, d)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}, nil
}

// Declaration returns the function declaration for one tool: its Name,
// Description and, renamed as in the seed, its InputSchema as Parameters.
//
// Parameters is the [Schema] conversion when it succeeds. When the schema
// holds something a [genai.Schema] cannot express faithfully, when
// inlining its shared definitions ($defs and $ref) would make it more than
// [MaxInlineFactor] times larger, or when ForceJSONSchema is set, the
// declaration carries the JSON Schema unchanged in ParametersJsonSchema
// instead, $defs kept; never both. A tool without parameters (a
// nil InputSchema, or an object schema with no properties and nothing else
// to say) gets neither.
func (o Options) Declaration(t *toolset.Tool) (*genai.FunctionDeclaration, error) {
	if t == nil {
		return nil, fmt.Errorf("geminiadapter: tool is nil")
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
	if t.InputSchema == nil {
		return d, nil
	}
	if !o.ForceJSONSchema && inlines(t.InputSchema) {
		params, err := Schema(t.InputSchema)
		if err == nil {
			if !noParameters(params) {
				d.Parameters = params
			}
			return d, nil
		}
	}
	d.ParametersJsonSchema = t.InputSchema
	return d, nil
}

// MaxInlineFactor is how much larger than the JSON Schema as written (its
// $defs counted once) a converted Parameters may be: a schema whose
// shared definitions would expand more than that when inlined is declared
// with ParametersJsonSchema, $defs kept, instead.
const MaxInlineFactor = 2

// inlines reports whether the schema, which toolset checked, may be
// inlined into a Parameters: it is not recursive, and its expansion is at
// most MaxInlineFactor times its size.
func inlines(s *jsonschema.Schema) bool {
	size, err := toolset.MeasureSchema(s)
	return err == nil && !size.Recursive && size.Expanded <= MaxInlineFactor*size.Bytes
}

// noParameters reports whether a converted object schema says nothing the
// model needs: no properties and no other keyword. The API refuses an OBJECT
// with empty properties, so such a tool is declared without parameters.
func noParameters(s *genai.Schema) bool {
	return len(s.Properties) == 0 && s.AnyOf == nil && s.Description == "" && s.Title == "" &&
		s.MinProperties == nil && s.MaxProperties == nil && s.Nullable == nil && s.Example == nil && s.Default == nil
}

// Response returns the part that answers call with r: a functionResponse
// carrying the call's Name and ID, and response {"result": output} on
// success or {"error": message} when r.IsError. A call refused rather
// than run (r.Err wraps [toolset.ErrDenied]: a person denied it, or its
// approval never came) is answered {"error": message, "denied": true}:
// the model reads the message, as for any error, and a stored history
// tells the denial from a tool's failure ([Denied] reads it back). The
// response is always a JSON object, as the API requires.
//
// Each of r.Media becomes an inlineData part of the function response
// (FunctionResponse.Parts), in order, which Gemini 3 models see as media;
// a medium named by a URI rather than carried becomes a fileData part.
// Other models refuse such parts: give them [DescribeMedia](r) instead (see
// [MediaInResponses]).
func Response(call *genai.FunctionCall, r toolset.Result) *genai.Part {
	fr := &genai.FunctionResponse{}
	if call != nil {
		fr.ID, fr.Name = call.ID, call.Name
	}
	switch {
	case r.IsError && errors.Is(r.Err, toolset.ErrDenied):
		fr.Response = map[string]any{"error": r.Output, DeniedKey: true}
	case r.IsError:
		fr.Response = map[string]any{"error": r.Output}
	default:
		fr.Response = map[string]any{"result": r.Output}
	}
	fr.Parts = mediaParts(r.Media)
	return &genai.Part{FunctionResponse: fr}
}

// DeniedKey is the key [Response] sets to true, beside "error", in the
// answer to a call that was refused rather than run.
const DeniedKey = "denied"

// Denied reports whether fr answers a call that was refused rather than
// run, as [Response] marks it: {"error": reason, "denied": true}. reason
// is the message the model read. A nil fr, a success, or an error
// without the mark (a tool's failure, or a history written before the
// mark existed) is not a denial.
func Denied(fr *genai.FunctionResponse) (reason string, ok bool) {
	if fr == nil {
		return "", false
	}
	msg, failed := fr.Response["error"]
	if denied, _ := fr.Response[DeniedKey].(bool); !failed || !denied {
		return "", false
	}
	if s, isString := msg.(string); isString {
		return s, true
	}
	return fmt.Sprint(msg), true
}
