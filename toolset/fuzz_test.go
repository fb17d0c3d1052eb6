package toolset_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/toolset"
)

type fuzzIn struct {
	Name   string            `json:"name"`
	Count  int               `json:"count,omitempty"`
	Small  int8              `json:"small,omitempty"`
	Ratio  float64           `json:"ratio,omitempty"`
	Flags  []bool            `json:"flags,omitempty"`
	Nested *struct{ A uint } `json:"nested,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
}

// FuzzExecute feeds arbitrary JSON arguments, decoded as Gemini's client
// decodes them, to a typed Func tool and to a hand-written schema: Execute
// never panics, a failure is always a message for the model, and a success
// of the typed tool always carries its typed output. The seed corpus is in
// testdata/fuzz/FuzzExecute.
func FuzzExecute(f *testing.F) {
	f.Add(`{"name":"x","count":3.0,"flags":[true],"nested":{"A":2}}`)
	f.Add(`{"name":"x","count":1e300}`)
	typed := toolset.MustFunc("typed", "", func(_ context.Context, in fuzzIn) (fuzzIn, error) { return in, nil })
	literal := toolset.MustDefine(toolset.Tool{Name: "literal", Run: func(_ context.Context, a map[string]any) (any, error) { return a, nil },
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"q"}, Properties: map[string]*jsonschema.Schema{
			"q":    {Type: "string", MinLength: jsonschema.Ptr(1), Pattern: "^[a-z]+$"},
			"n":    {Type: "integer", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(10.0), Default: json.RawMessage("5")},
			"list": {Type: "array", Items: &jsonschema.Schema{Type: "number"}, MaxItems: jsonschema.Ptr(3)},
			"mode": {Enum: []any{"a", "b"}},
		}}})
	f.Fuzz(func(t *testing.T, src string) {
		var args map[string]any
		if err := json.Unmarshal([]byte(src), &args); err != nil {
			return
		}
		for _, tool := range []*toolset.Tool{typed, literal} {
			r := tool.Execute(context.Background(), args)
			if r.IsError {
				if msg, ok := r.Output.(string); !ok || msg == "" || r.Err == nil {
					t.Fatalf("%s: error result %+v lacks a message or an Err", tool.Name, r)
				}
				continue
			}
			if tool == typed {
				if _, ok := r.Output.(fuzzIn); !ok {
					t.Fatalf("typed: success with output %T", r.Output)
				}
			}
			if _, err := json.Marshal(map[string]any{"result": r.Output}); err != nil {
				t.Fatalf("%s: success output does not marshal: %v", tool.Name, err)
			}
		}
	})
}
