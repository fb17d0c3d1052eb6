package geminiadapter_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// FuzzSchema checks that converting any JSON Schema never panics, that a
// converted schema always marshals to JSON, and that a declaration carries
// Parameters or ParametersJsonSchema, never both. The seed corpus is in
// testdata/fuzz/FuzzSchema.
func FuzzSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	f.Add(`{"type":["null","array"],"items":{"$ref":"#/$defs/x"},"$defs":{"x":{"enum":["a"]}}}`)
	// Issue 32: definitions that double at each level, and one that loops
	// in place.
	f.Add(schematest.Doubling(16))
	f.Add(schematest.DoublingAnyOf(16))
	f.Add(schematest.Shared(20))
	f.Add(`{"type":"object","$defs":{"d":{"anyOf":[{"$ref":"#/$defs/d"}],"default":1}},"properties":{"x":{"$ref":"#/$defs/d"}}}`)
	f.Fuzz(func(t *testing.T, src string) {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			return
		}
		gs, err := geminiadapter.Schema(&s)
		if err == nil {
			if _, err := json.Marshal(gs); err != nil {
				t.Fatalf("Schema(%s) = %+v, which does not marshal: %v", src, gs, err)
			}
		}
		if s.Type != "object" {
			return
		}
		tool := &toolset.Tool{Name: "f", InputSchema: &s, Run: func(context.Context, map[string]any) (any, error) { return nil, nil }}
		if tool.Check() != nil {
			return
		}
		for _, o := range []geminiadapter.Options{{}, {ForceJSONSchema: true}} {
			d, err := o.Declaration(tool)
			if err != nil {
				t.Fatalf("Declaration(%s) = %v for a valid tool", src, err)
			}
			if d.Parameters != nil && d.ParametersJsonSchema != nil {
				t.Fatalf("Declaration(%s) sets both Parameters and ParametersJsonSchema", src)
			}
			if _, err := json.Marshal(d); err != nil {
				t.Fatalf("Declaration(%s) does not marshal: %v", src, err)
			}
		}
	})
}
