package openaiadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/openaiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// Strict mode is faithful: whatever arguments the strict schema lets the
// model write, the tool accepts once the nulls of optional properties are
// dropped. And no schema or arguments make the adapter panic.
func FuzzStrictParameters(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}`,
			`{"city": "Oslo", "days": null}`},
		{`{"type": "object", "properties": {"u": {"type": "string", "enum": ["C", "F"]}, "r": {"$ref": "#/$defs/r"}},
		   "$defs": {"r": {"type": "object", "properties": {"x": {"type": "number"}}}}}`,
			`{"u": null, "r": {"x": null}}`},
		{`{"type": "object", "properties": {"v": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "null"}]}}}`,
			`{"v": {"x": null}}`},
		{`{"type": "object", "properties": {"s": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": ["null", "string"]}}, "required": ["b"]}}}}`,
			`{"s": [{"a": null, "b": null}, {"a": true, "b": "x"}]}`},
		{`{"type": "object", "properties": {"label": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}, "required": ["label"]}`,
			`{"label": "a", "children": [{"label": "b", "children": null}]}`},
		{`{"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}}`, `{"m": {"k": "v"}}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		var s jsonschema.Schema
		if json.Unmarshal([]byte(schema), &s) != nil {
			return
		}
		tool, err := toolset.Define(toolset.Tool{Name: "t", InputSchema: &s,
			Run: func(context.Context, map[string]any) (any, error) { return "ok", nil }})
		if err != nil {
			return
		}
		if _, err := openaiadapter.Parameters(tool); err != nil {
			t.Fatalf("Parameters() = %v", err)
		}
		strict := openaiadapter.Options{Strict: true}
		set := toolset.MustNew(tool)
		res := strict.ExecuteResponses(context.Background(), set, responsesCall("t", args))
		p, err := openaiadapter.StrictParameters(tool)
		if err != nil {
			if !errors.Is(err, openaiadapter.ErrNotStrict) {
				t.Fatalf("StrictParameters() = %v, want ErrNotStrict", err)
			}
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("strict parameters do not encode: %v", err)
		}
		var ss jsonschema.Schema
		if err := json.Unmarshal(b, &ss); err != nil {
			t.Fatalf("strict parameters are not a schema: %v\n%s", err, b)
		}
		resolved, err := ss.Resolve(nil)
		if err != nil {
			t.Fatalf("strict schema does not resolve: %v\n%s", err, b)
		}
		var a map[string]any
		if json.Unmarshal([]byte(args), &a) != nil || a == nil {
			return
		}
		if resolved.Validate(a) == nil && errors.Is(res.Err, toolset.ErrInvalidArguments) {
			t.Fatalf("the strict schema takes %s, the tool refuses it: %v\nstrict schema: %s", args, res.Output, b)
		}
	})
}
