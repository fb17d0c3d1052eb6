package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func schemaOf(t testing.TB, src string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func echo(_ context.Context, args map[string]any) (any, error) { return args, nil }

// TestDefineRefusesExpandingSchema is issue 32's attack on Define: a few
// kilobytes of $defs, each referring to the one before twice. Define used
// to take every one of them; validating an argument against the anyOf
// chain then followed 2^levels paths (16 levels: about a second, and an
// error message of 15 MB).
func TestDefineRefusesExpandingSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
	}{
		{"doubling 14", schematest.Doubling(14)},
		{"doubling 16", schematest.Doubling(16)},
		{"doubling 40", schematest.Doubling(40)},
		{"anyOf 14", schematest.DoublingAnyOf(14)},
		{"anyOf 16", schematest.DoublingAnyOf(16)},
		{"anyOf 60", schematest.DoublingAnyOf(60)},
		{"large as written", `{"type":"object","description":"` + strings.Repeat("x", toolset.MaxSchemaSize) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolset.Define(toolset.Tool{Name: "t", Run: echo, InputSchema: schemaOf(t, tc.src)})
			if !errors.Is(err, toolset.ErrSchemaTooLarge) || !errors.Is(err, toolset.ErrInvalidTool) {
				t.Fatalf("Define(%d bytes of schema) = %v; want ErrSchemaTooLarge and ErrInvalidTool", len(tc.src), err)
			}
			if !strings.Contains(err.Error(), `invalid tool "t": input schema too large`) {
				t.Errorf("error = %q; want it to say the input schema is too large", err)
			}
			_, err = toolset.MeasureSchema(schemaOf(t, tc.src))
			if !errors.Is(err, toolset.ErrSchemaTooLarge) {
				t.Errorf("MeasureSchema = %v; want ErrSchemaTooLarge", err)
			}
		})
	}
}

// TestDefineRefusesInPlaceLoop: a definition that is its own anyOf, with
// a default, made jsonschema-go's Resolve (ValidateDefaults) recurse until
// the goroutine's stack overflowed, a fatal error no recover catches: one
// browser tool of one request ended the server's process.
func TestDefineRefusesInPlaceLoop(t *testing.T) {
	for _, src := range []string{
		`{"type":"object","$defs":{"d":{"anyOf":[{"$ref":"#/$defs/d"}],"default":1}},"properties":{"x":{"$ref":"#/$defs/d"}}}`,
		`{"type":"object","properties":{"x":{"allOf":[{"$ref":"#/properties/x"}]}}}`,
		`{"type":"object","allOf":[{"$ref":"#"}]}`,
	} {
		_, err := toolset.Define(toolset.Tool{Name: "t", Run: echo, InputSchema: schemaOf(t, src)})
		if !errors.Is(err, toolset.ErrInvalidTool) || !strings.Contains(err.Error(), "loops back to itself") {
			t.Errorf("Define(%s) = %v; want ErrInvalidTool saying it loops", src, err)
		}
	}
}

// TestDefineRefusesExpensiveDefaults: defaults are validated when a tool
// is defined; definitions that are never used but carry defaults must not
// make that the attack.
func TestDefineRefusesExpensiveDefaults(t *testing.T) {
	s := schemaOf(t, schematest.DoublingAnyOf(12))
	for i := range 64 {
		s.Defs["e"+string(rune('a'+i%26))+string(rune('a'+i/26))] = &jsonschema.Schema{Ref: "#/$defs/d12", Default: json.RawMessage(`"x"`)}
	}
	s.Properties = nil // no use of d12 but through defaults
	_, err := toolset.Define(toolset.Tool{Name: "t", Run: echo, InputSchema: s})
	if !errors.Is(err, toolset.ErrSchemaTooLarge) {
		t.Fatalf("Define = %v; want ErrSchemaTooLarge", err)
	}
}

// TestSharedDefinitionsWork: a legitimate schema that shares its
// definitions, and a recursive one, are defined and validate as before.
func TestSharedDefinitionsWork(t *testing.T) {
	shared := toolset.MustDefine(toolset.Tool{Name: "deliver", Run: echo, InputSchema: schemaOf(t, schematest.Shared(20))})
	r := shared.Execute(t.Context(), map[string]any{"stop0": map[string]any{"street": "Rue de Rivoli", "city": "Paris"}})
	if r.IsError {
		t.Errorf("Execute(valid stop) = %v", r.Output)
	}
	r = shared.Execute(t.Context(), map[string]any{"stop3": map[string]any{"street": "Rue de Rivoli"}})
	if !r.IsError || !errors.Is(r.Err, toolset.ErrInvalidArguments) {
		t.Errorf("Execute(stop without a city) = %+v; want invalid arguments", r)
	}
	size, err := toolset.MeasureSchema(shared.Schema())
	if err != nil || size.Recursive || size.Expanded < 5*size.Bytes {
		t.Errorf("MeasureSchema(shared by 20) = %+v, %v; want an expansion over 5 times its size", size, err)
	}

	tree := toolset.MustDefine(toolset.Tool{Name: "tree", Run: echo, InputSchema: schemaOf(t,
		`{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object",
		"properties":{"label":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["label"]}}}`)})
	deep := map[string]any{"label": "leaf"}
	for range 500 {
		deep = map[string]any{"label": "n", "children": []any{deep}}
	}
	if r := tree.Execute(t.Context(), map[string]any{"root": deep}); r.IsError {
		t.Errorf("Execute(a tree 500 levels deep) = %v", r.Output)
	}
	if size, err := toolset.MeasureSchema(tree.Schema()); err != nil || !size.Recursive {
		t.Errorf("MeasureSchema(tree) = %+v, %v; want Recursive", size, err)
	}
}

// TestRecursiveSchemaDoublingPerLevel: a recursive schema whose every
// level applies the next one twice costs 2^depth to validate a value depth
// levels deep. Such a schema is small and defined; arguments too deep to
// be checked within the budget are refused.
func TestRecursiveSchemaDoublingPerLevel(t *testing.T) {
	tool := toolset.MustDefine(toolset.Tool{Name: "t", Run: echo, InputSchema: schemaOf(t,
		`{"type":"object","properties":{"c":{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}}}`)})
	args := map[string]any{}
	for range 4 {
		args = map[string]any{"c": args}
	}
	if r := tool.Execute(t.Context(), args); r.IsError {
		t.Errorf("Execute(4 levels) = %v", r.Output)
	}
	for range 40 {
		args = map[string]any{"c": args}
	}
	r := tool.Execute(t.Context(), args)
	if !r.IsError || !errors.Is(r.Err, toolset.ErrInvalidArguments) || !errors.Is(r.Err, toolset.ErrSchemaTooLarge) {
		t.Fatalf("Execute(44 levels) = %+v; want invalid arguments, schema too large", r)
	}
	if msg := r.Output.(string); !strings.Contains(msg, "nest too deep") {
		t.Errorf("message = %q", msg)
	}
}

func TestMeasureSchema(t *testing.T) {
	plain := `{"type":"object","properties":{"city":{"type":"string","description":"a city"},"days":{"type":"integer","minimum":1}},"required":["city"]}`
	size, err := toolset.MeasureSchema(schemaOf(t, plain))
	if err != nil || size.Expanded != size.Bytes || size.Recursive {
		t.Errorf("MeasureSchema(no refs) = %+v, %v; want Expanded == Bytes", size, err)
	}
	// The measure is about the JSON's length.
	if n := len(plain); size.Bytes < n/2 || size.Bytes > 2*n {
		t.Errorf("MeasureSchema(%d bytes).Bytes = %d", n, size.Bytes)
	}
	for _, tc := range []struct{ src, want string }{
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, "does not point inside the schema"},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, "does not point to a schema"},
		{`{"type":"object","properties":{"a":{"$dynamicRef":"#x"}}}`, "$dynamicRef"},
		{`{"type":"object","properties":{"a":{"$id":"https://x/a","$ref":"#/properties/b"},"b":{}}}`, "$id"},
	} {
		if _, err := toolset.MeasureSchema(schemaOf(t, tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MeasureSchema(%s) = %v; want %q", tc.src, err, tc.want)
		}
	}
	// References the way jsonschema-go follows them: pointers, escaped
	// names, anchors.
	for _, src := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/properties/b"},"b":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a~1b"}},"$defs":{"a/b":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a%20b"}},"$defs":{"a b":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#addr"}},"$defs":{"x":{"$anchor":"addr","type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/anyOf/1"}},"anyOf":[{},{"type":"object"}]}`,
		`{"$id":"https://example.com/s.json","type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
	} {
		if _, err := toolset.MeasureSchema(schemaOf(t, src)); err != nil {
			t.Errorf("MeasureSchema(%s) = %v", src, err)
		}
		if _, err := toolset.Define(toolset.Tool{Name: "t", Run: echo, InputSchema: schemaOf(t, src)}); err != nil {
			t.Errorf("Define(%s) = %v", src, err)
		}
	}
}

// BenchmarkDefineExpandingSchema measures what Define costs on issue 32's
// attack: refusing it is about as cheap as reading it.
func BenchmarkDefineExpandingSchema(b *testing.B) {
	for _, levels := range []int{14, 16} {
		src := schematest.Doubling(levels)
		b.Run(fmt.Sprint("levels=", levels), func(b *testing.B) {
			s := schemaOf(b, src)
			b.ReportAllocs()
			for b.Loop() {
				toolset.Define(toolset.Tool{Name: "t", Run: echo, InputSchema: s})
			}
		})
	}
}
