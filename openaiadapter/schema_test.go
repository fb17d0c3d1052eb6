package openaiadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/openai/openai-go/v3/responses"
	"github.com/toolnexus/toolnexus-go/internal/toolwire/toolwiretest"
	"github.com/toolnexus/toolnexus-go/openaiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func run(context.Context, map[string]any) (any, error) { return "ok", nil }

// schemaTool defines a tool whose input schema is the JSON text schema.
func schemaTool(t *testing.T, schema string) *toolset.Tool {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatalf("bad schema in test: %v", err)
	}
	tool, err := toolset.Define(toolset.Tool{Name: "t", Run: run, InputSchema: &s})
	if err != nil {
		t.Fatalf("Define: %v", err)
	}
	return tool
}

// Without strict mode the schema goes as it is, whatever it uses, but for
// arrays without items, which OpenAI refuses.
func TestParameters(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"passed through",
			`{"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
			  "properties": {"a": {"oneOf": [{"type": "string", "format": "uri"}, {"type": "integer", "minimum": 1}]},
			    "b": {"type": "object", "additionalProperties": {"type": "string"}},
			    "c": {"$ref": "#/$defs/c", "default": "x"}},
			  "$defs": {"c": {"type": "string", "enum": ["x", "y"]}},
			  "patternProperties": {"^x-": {"type": "string"}}, "minProperties": 1, "required": ["a"]}`,
			""},
		{"array without items",
			`{"type": "object", "properties": {"tags": {"type": "array"}, "pairs": {"type": "array", "items": {"type": "array"}},
			  "either": {"anyOf": [{"type": ["array", "null"]}, {"type": "string"}]}, "ok": {"type": "array", "items": {"type": "string"}}}}`,
			`{"type": "object", "properties": {"tags": {"type": "array", "items": true}, "pairs": {"type": "array", "items": {"type": "array", "items": true}},
			  "either": {"anyOf": [{"type": ["array", "null"], "items": true}, {"type": "string"}]}, "ok": {"type": "array", "items": {"type": "string"}}}}`},
		{"no parameters", `{"type": "object"}`, `{"type": "object", "properties": {}}`},
		{"empty properties", `{"type": "object", "properties": {}}`, `{"type": "object", "properties": {}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := schemaTool(t, tc.schema)
			before, _ := json.Marshal(tool.InputSchema)
			p, err := openaiadapter.Parameters(tool)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.schema
			}
			if diff := cmp.Diff(toolwiretest.JSON(t, want), toolwiretest.Encode(t, p)); diff != "" {
				t.Errorf("Parameters() (-want +got):\n%s", diff)
			}
			if after, _ := json.Marshal(tool.InputSchema); string(after) != string(before) {
				t.Errorf("Parameters changed the tool's schema:\n%s\n%s", before, after)
			}
		})
	}

	nilSchema := toolset.MustDefine(toolset.Tool{Name: "ping", Run: run})
	p, err := openaiadapter.Parameters(nilSchema)
	if err != nil || !cmp.Equal(toolwiretest.Encode(t, p), toolwiretest.JSON(t, `{"type": "object", "properties": {}}`)) {
		t.Errorf("Parameters(nil schema) = %v, %v", toolwiretest.Encode(t, p), err)
	}
}

// The order of properties is kept (strict mode writes arguments in it).
func TestParametersKeepOrder(t *testing.T) {
	type in struct {
		Zeta  string `json:"zeta"`
		Alpha string `json:"alpha"`
		Mid   int    `json:"mid,omitempty"`
	}
	tool := toolset.MustFunc("order", "", func(context.Context, in) (string, error) { return "", nil })
	for _, strict := range []bool{false, true} {
		f, err := openaiadapter.Options{Strict: strict}.Function(tool)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(f)
		z, a, m := strings.Index(string(b), `"zeta"`), strings.Index(string(b), `"alpha"`), strings.Index(string(b), `"mid"`)
		if z < 0 || !(z < a && a < m) {
			t.Errorf("strict %v: properties out of order: %s", strict, b)
		}
	}
}

// What strict mode rewrites: every object closed, every property
// required, optional ones nullable, refused annotations dropped.
func TestStrictParameters(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"optional becomes nullable",
			`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "description": "how many"}}, "required": ["city"]}`,
			`{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"], "description": "how many"}},
			  "required": ["city", "days"], "additionalProperties": false}`},
		{"optional enum, const and $ref go through anyOf",
			`{"type": "object", "properties": {"u": {"type": "string", "enum": ["C", "F"]}, "k": {"const": "x", "type": "string"},
			  "r": {"$ref": "#/$defs/r"}},
			  "$defs": {"r": {"type": "object", "properties": {"x": {"type": "number"}}}}}`,
			`{"type": "object", "properties": {
			    "k": {"anyOf": [{"const": "x", "type": "string"}, {"type": "null"}]},
			    "r": {"anyOf": [{"$ref": "#/$defs/r"}, {"type": "null"}]},
			    "u": {"anyOf": [{"type": "string", "enum": ["C", "F"]}, {"type": "null"}]}},
			  "$defs": {"r": {"type": "object", "properties": {"x": {"type": ["number", "null"]}}, "required": ["x"], "additionalProperties": false}},
			  "required": ["k", "r", "u"], "additionalProperties": false}`},
		{"already nullable stays as it is",
			`{"type": "object", "properties": {"p": {"type": ["null", "string"]}, "q": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}}`,
			`{"type": "object", "properties": {"p": {"type": ["null", "string"]}, "q": {"anyOf": [{"type": "null"}, {"type": "integer"}]}},
			  "required": ["p", "q"], "additionalProperties": false}`},
		{"nested objects and arrays of objects",
			`{"type": "object", "properties": {"addr": {"type": "object", "properties": {"zip": {"type": "string"}, "city": {"type": "string"}}, "required": ["city"]},
			  "stops": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}}},
			  "required": ["addr", "stops"]}`,
			`{"type": "object", "properties": {
			    "addr": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}},
			      "required": ["city", "zip"], "additionalProperties": false},
			    "stops": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {"at": {"type": ["string", "null"], "format": "date-time"}},
			      "required": ["at"], "additionalProperties": false}}},
			  "required": ["addr", "stops"], "additionalProperties": false}`},
		{"refused annotations dropped, supported keywords kept",
			`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$comment": "c", "type": "object", "title": "T",
			  "properties": {"n": {"type": "number", "default": 3, "examples": [1], "deprecated": true, "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.5},
			    "s": {"type": "string", "pattern": "^a", "minLength": 1, "maxLength": 9, "readOnly": true}}, "required": ["n", "s"]}`,
			`{"type": "object", "title": "T",
			  "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.5},
			    "s": {"type": "string", "pattern": "^a", "minLength": 1, "maxLength": 9}}, "required": ["n", "s"], "additionalProperties": false}`},
		{"anyOf with null: optional properties inside are made nullable too",
			`{"type": "object", "properties": {"v": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "null"}]}}, "required": ["v"]}`,
			`{"type": "object", "properties": {"v": {"anyOf": [{"type": "object", "properties": {"x": {"type": ["string", "null"]}}, "required": ["x"], "additionalProperties": false}, {"type": "null"}]}},
			  "required": ["v"], "additionalProperties": false}`},
		{"root recursion",
			`{"type": "object", "properties": {"label": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}, "required": ["label", "children"]}`,
			`{"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}, "label": {"type": "string"}},
			  "required": ["children", "label"], "additionalProperties": false}`},
		{"no parameters", `{"type": "object"}`, `{"type": "object", "properties": {}, "additionalProperties": false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := schemaTool(t, tc.schema)
			before, _ := json.Marshal(tool.InputSchema)
			p, err := openaiadapter.StrictParameters(tool)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(toolwiretest.JSON(t, tc.want), toolwiretest.Encode(t, p)); diff != "" {
				t.Errorf("StrictParameters() (-want +got):\n%s", diff)
			}
			if after, _ := json.Marshal(tool.InputSchema); string(after) != string(before) {
				t.Errorf("StrictParameters changed the tool's schema:\n%s\n%s", before, after)
			}
			f, err := openaiadapter.Options{Strict: true}.Function(tool)
			if err != nil || !f.Strict.Value {
				t.Errorf("strict Function() = strict %v, %v; want strict", f.Strict, err)
			}
		})
	}
}

// What strict mode refuses; such a tool is declared without strict mode.
func TestStrictParametersRefused(t *testing.T) {
	many := func(n int, each func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = each(i)
		}
		return strings.Join(parts, ",")
	}
	nest := func(levels int) string {
		s := `{"type": "string"}`
		for range levels {
			s = `{"type": "object", "properties": {"x": ` + s + `}, "required": ["x"]}`
		}
		return s
	}
	if _, err := openaiadapter.StrictParameters(schemaTool(t, nest(10))); err != nil {
		t.Errorf("10 levels of objects: %v", err)
	}
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"oneOf", `{"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}`, `at /properties/a: keyword "oneOf"`},
		{"allOf", `{"type": "object", "properties": {"a": {"type": "string", "allOf": [{"minLength": 1}]}}}`, `"allOf"`},
		{"not", `{"type": "object", "properties": {"a": {"type": "string", "not": {"const": "x"}}}}`, `"not"`},
		{"if", `{"type": "object", "properties": {"a": {"type": "string"}}, "if": {"required": ["a"]}, "then": {}}`, `"if"`},
		{"dependentRequired", `{"type": "object", "properties": {"a": {"type": "string"}}, "dependentRequired": {"a": ["b"]}}`, `"dependentRequired"`},
		{"patternProperties", `{"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x": {"type": "string"}}}`, `"patternProperties"`},
		{"typed additionalProperties", `{"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}}`, `at /properties/m: strict mode needs "additionalProperties": false`},
		{"additionalProperties true", `{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}`, `needs "additionalProperties": false`},
		{"unlisted format", `{"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}`, `format "uri"`},
		{"no type", `{"type": "object", "properties": {"v": {"description": "anything"}}}`, `at /properties/v: strict mode needs a type`},
		{"uniqueItems", `{"type": "object", "properties": {"v": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}`, `"uniqueItems"`},
		{"unknown keyword", `{"type": "object", "properties": {"v": {"type": "string", "x-order": 1}}}`, `"x-order"`},
		{"$ref to a non-definition", `{"type": "object", "properties": {"a": {"type": "string"}, "v": {"$ref": "#/properties/a"}}}`, `does not name a definition`},
		{"required but not a property", `{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}`, `required property "b"`},
		{"optional property inside anyOf", `{"type": "object", "properties": {"v": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "string"}]}}, "required": ["v"]}`, `optional property "x" inside anyOf`},
		{"$ref with optional properties inside anyOf", `{"type": "object", "properties": {"v": {"anyOf": [{"$ref": "#/$defs/o"}, {"type": "string"}]}}, "required": ["v"],
			"$defs": {"o": {"type": "object", "properties": {"x": {"type": "string"}}}}}`, `$ref "#/$defs/o" inside anyOf has optional properties`},
		{"root anyOf", `{"type": "object", "anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}`, `must be an object, not anyOf`},
		{"nested object without properties", `{"type": "object", "properties": {"o": {"type": "object", "additionalProperties": false}}, "required": ["o"]}`, `needs an object's properties`},
		{"nesting deeper than 10", nest(11), `objects nest more than 10 levels deep`},
		{"more than 5000 properties", `{"type": "object", "properties": {` + many(5001, func(i int) string { return fmt.Sprintf(`"p%d": {"type": "string"}`, i) }) + `}}`, `5001 object properties`},
		{"more than 1000 enum values", `{"type": "object", "properties": {"a": {"type": "integer", "enum": [` + many(600, func(i int) string { return fmt.Sprint(i) }) + `]},
			"b": {"type": "integer", "enum": [` + many(401, func(i int) string { return fmt.Sprint(i) }) + `]}}}`, `1001 enum values`},
		{"big enum too long", `{"type": "object", "properties": {"a": {"type": "string", "enum": [` + many(251, func(i int) string { return fmt.Sprintf(`"%060d"`, i) }) + `]}}}`, `an enum of 251 values has 15060 characters`},
		{"strings too long", `{"type": "object", "properties": {` + many(201, func(i int) string { return fmt.Sprintf(`"%0600d": {"type": "string"}`, i) }) + `}}`, `120600 characters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := schemaTool(t, tc.schema)
			_, err := openaiadapter.StrictParameters(tool)
			if !errors.Is(err, openaiadapter.ErrNotStrict) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("StrictParameters() = %v, want ErrNotStrict saying %q", err, tc.want)
			}
			// Declared all the same, as it is, without strict mode.
			f, err := openaiadapter.Options{Strict: true}.Function(tool)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := openaiadapter.Parameters(tool)
			if f.Strict.Valid() || !cmp.Equal(toolwiretest.Encode(t, f.Parameters), toolwiretest.Encode(t, want)) {
				t.Errorf("strict Function() = strict %v, parameters %v; want the plain declaration", f.Strict, toolwiretest.Encode(t, f.Parameters))
			}
			rt, err := openaiadapter.Options{Strict: true}.ResponsesTools(tool)
			if err != nil || rt[0].OfFunction.Strict.Value || !rt[0].OfFunction.Strict.Valid() {
				t.Errorf("strict ResponsesTools() = %v, %v; want strict: false said", rt, err)
			}
		})
	}
}

// In strict mode the model writes null for what it leaves out; the call
// runs as if it had left it out, at any depth, and a null the schema
// allows stays.
func TestStrictExecuteDropsNulls(t *testing.T) {
	type stop struct {
		Place string `json:"place"`
		Hours int    `json:"hours,omitempty"`
	}
	type in struct {
		City  string  `json:"city"`
		Days  int     `json:"days,omitempty"`
		Note  *string `json:"note"` // required, and nullable
		Stops []stop  `json:"stops,omitempty"`
	}
	var got in
	tool := toolset.MustFunc("trip", "", func(_ context.Context, v in) (string, error) { got = v; return "ok", nil })
	set := toolset.MustNew(tool)
	strict := openaiadapter.Options{Strict: true}
	if f, _ := strict.Function(tool); !f.Strict.Value {
		t.Fatalf("the tool is not strict: %v", toolwiretest.Encode(t, f.Parameters))
	}
	args := `{"city": "Oslo", "days": null, "note": null, "stops": [{"place": "Bergen", "hours": null}, {"place": "Voss", "hours": 2}]}`
	res := strict.ExecuteResponses(context.Background(), set, responsesCall("trip", args))
	if res.IsError {
		t.Fatalf("strict call failed: %v", res.Output)
	}
	want := in{City: "Oslo", Stops: []stop{{Place: "Bergen"}, {Place: "Voss", Hours: 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool got (-want +got):\n%s", diff)
	}
	// Without strict mode a null is what the model wrote, and it is invalid.
	if res := openaiadapter.ExecuteResponses(context.Background(), set, responsesCall("trip", args)); !res.IsError ||
		!errors.Is(res.Err, toolset.ErrInvalidArguments) {
		t.Errorf("non-strict call = %+v, want invalid arguments", res)
	}

	// Through $defs too.
	refTool := schemaTool(t, `{"type": "object", "properties": {"r": {"$ref": "#/$defs/r"}}, "required": ["r"],
		"$defs": {"r": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["y"]}}}`)
	var seen map[string]any
	refTool = toolset.MustDefine(toolset.Tool{Name: "ref", InputSchema: refTool.InputSchema,
		Run: func(_ context.Context, a map[string]any) (any, error) { seen = a; return "ok", nil }})
	res = strict.ExecuteResponses(context.Background(), toolset.MustNew(refTool), responsesCall("ref", `{"r": {"x": null, "y": 1}}`))
	if res.IsError || !cmp.Equal(seen, map[string]any{"r": map[string]any{"y": 1.0}}) {
		t.Errorf("strict call through $ref = %+v, tool saw %v", res, seen)
	}

	// And through anyOf [T, null].
	orNull := schemaTool(t, `{"type": "object", "properties": {"v": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "null"}]}}, "required": ["v"]}`)
	orNull = toolset.MustDefine(toolset.Tool{Name: "ornull", InputSchema: orNull.InputSchema,
		Run: func(_ context.Context, a map[string]any) (any, error) { seen = a; return "ok", nil }})
	for args, want := range map[string]map[string]any{
		`{"v": {"x": null}}`: {"v": map[string]any{}},
		`{"v": null}`:        {"v": nil},
	} {
		res = strict.ExecuteResponses(context.Background(), toolset.MustNew(orNull), responsesCall("ornull", args))
		if res.IsError || !cmp.Equal(seen, want) {
			t.Errorf("strict call %s through anyOf = %+v, tool saw %v", args, res, seen)
		}
	}
}

func responsesCall(name, args string) responses.ResponseFunctionToolCall {
	return responses.ResponseFunctionToolCall{CallID: "call_1", Name: name, Arguments: args}
}
