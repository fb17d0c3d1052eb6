package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// Func defines a tool from a typed Go function. The input schema is inferred
// from In with [jsonschema.For]: In should be a struct, whose exported
// fields become the properties (named by their json tags; fields without
// omitempty or omitzero are required, and unknown properties are refused).
// A `jsonschema:"..."` struct tag becomes the property's description, which
// the model reads: write it as a prompt.
//
// On each call the arguments are validated against the schema, then decoded
// into In (a whole float64 such as 3.0 decodes into an int field), and fn's
// Out becomes the result's Output.
//
// The tool is neither ReadOnly nor Idempotent: set those fields of the
// returned Tool, before it is used, when fn is.
func Func[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("toolset: %w %q: function is nil", ErrInvalidTool, name)
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("toolset: %w %q: cannot infer the input schema: %v", ErrInvalidTool, name, err)
	}
	var dec *decoder // nil: In decodes through JSON
	t, err := Define(Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		Run: func(ctx context.Context, args map[string]any) (any, error) {
			var in In
			if dec == nil || dec.decode(args, reflect.ValueOf(&in).Elem()) != decoded {
				in = *new(In) // the fast path may have filled part of it
				if err := decodeArgs(args, &in); err != nil {
					return nil, fmt.Errorf("%w for %s: %v", ErrInvalidArguments, name, err)
				}
			}
			return fn(ctx, in)
		},
	})
	if err != nil {
		return nil, err
	}
	// Planned once the schema, which follows In, is known to be within
	// the budget.
	dec = newDecoder(reflect.TypeFor[In]())
	return t, nil
}

// MustFunc is like [Func] but panics if the tool is invalid.
func MustFunc[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) *Tool {
	t, err := Func(name, description, fn)
	if err != nil {
		panic(err)
	}
	return t
}

// decodeArgs decodes validated arguments into *in through their JSON
// encoding, so that json tags, custom unmarshalers and number conversion
// behave exactly as for any JSON input. It is the reference for the plans
// of decode.go, and what Func falls back to without one.
func decodeArgs(args map[string]any, in any) error {
	data, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, in)
}
