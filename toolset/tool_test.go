package toolset_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func noop(context.Context, map[string]any) (any, error) { return "ok", nil }

func TestDefineName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wantErr string // substring; "" means valid
	}{
		{"get_weather", ""},
		{"_private", ""},
		{"a", ""},
		{"ns.tool:v1-beta", ""},
		{"Tool9", ""},
		{strings.Repeat("a", 64), ""},
		{"", "name is empty"},
		{strings.Repeat("a", 65), "name is 65 characters long; at most 64 are allowed"},
		{"9lives", `name must start with a letter or an underscore, not '9'`},
		{"-dash", `name must start with a letter or an underscore, not '-'`},
		{"get weather", `name contains ' '; only letters, digits and _ . : - are allowed`},
		{"get/weather", `name contains '/'`},
		{"météo", `name contains 'é'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolset.Define(toolset.Tool{Name: tc.name, Run: noop})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Define(%q) = %v, want nil", tc.name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Define(%q) = %v, want error containing %q", tc.name, err, tc.wantErr)
			}
			if !errors.Is(err, toolset.ErrInvalidTool) {
				t.Errorf("errors.Is(%v, ErrInvalidTool) = false", err)
			}
			if !strings.Contains(err.Error(), `"`+tc.name+`"`) {
				t.Errorf("error %q does not name the tool", err)
			}
		})
	}
}

func TestDefineSchema(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tool    toolset.Tool
		wantErr string
	}{
		{"nil schema means no parameters", toolset.Tool{Name: "t", Run: noop}, ""},
		{"object", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{Type: "object"}}, ""},
		{"object in Types", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{Types: []string{"object"}}}, ""},
		{"nil Run", toolset.Tool{Name: "t"}, `invalid tool "t": Run is nil`},
		{"string schema", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{Type: "string"}},
			`invalid tool "t": input schema must have "type": "object", not "string"`},
		{"no type", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{}},
			`invalid tool "t": input schema must have "type": "object"`},
		{"nullable object", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{Types: []string{"null", "object"}}},
			`input schema must have "type": "object", not "[null object]"`},
		{"dangling ref", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Ref: "#/$defs/missing"}}}},
			`invalid tool "t": input schema does not resolve`},
		{"invalid default", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer", Default: []byte(`"x"`)}}}},
			`invalid tool "t": input schema does not resolve`},
		{"bad pattern", toolset.Tool{Name: "t", Run: noop, InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"s": {Type: "string", Pattern: "("}}}},
			`invalid tool "t": input schema does not resolve`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := toolset.Define(tc.tool)
			if tc.wantErr == "" {
				if err != nil || tool == nil {
					t.Fatalf("Define() = %v, %v; want a tool", tool, err)
				}
				if tool.Schema() == nil || tool.Schema().Type == "" && len(tool.Schema().Types) == 0 {
					t.Errorf("Schema() = %v, want an object schema", tool.Schema())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, toolset.ErrInvalidTool) {
				t.Fatalf("Define() = %v, want ErrInvalidTool containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestMustDefinePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("MustDefine(invalid) did not panic")
		}
	}()
	toolset.MustDefine(toolset.Tool{Name: "bad name", Run: noop})
}

func TestLiteralToolIsCheckedOnUse(t *testing.T) {
	bad := &toolset.Tool{Name: "bad name", Run: noop}
	if err := bad.Check(); err == nil {
		t.Fatal("Check() = nil for an invalid literal")
	}
	r := bad.Execute(context.Background(), nil)
	if !r.IsError || !strings.Contains(r.Output.(string), "cannot be used") {
		t.Fatalf("Execute on invalid literal = %+v, want error result", r)
	}

	good := &toolset.Tool{Name: "echo", Run: func(_ context.Context, a map[string]any) (any, error) { return a["s"], nil },
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"s": {Type: "string"}}, Required: []string{"s"}}}
	if r := good.Execute(context.Background(), map[string]any{"s": "hi"}); r.IsError || r.Output != "hi" {
		t.Fatalf("Execute(literal) = %+v, want hi", r)
	}
	if r := good.Execute(context.Background(), map[string]any{"s": 1.0}); !r.IsError {
		t.Fatalf("Execute(literal, bad args) = %+v, want validation error", r)
	}
}

// A tool says whether a call of it may be made again when nobody knows
// whether it ran: Define keeps the hints, and the zero value says no.
func TestSafeToRepeat(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		readOnly, idempotent bool
		want                 bool
	}{
		{"neither", false, false, false},
		{"read-only", true, false, true},
		{"idempotent", false, true, true},
		{"both", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := toolset.Define(toolset.Tool{Name: "t", Run: noop, ReadOnly: tc.readOnly, Idempotent: tc.idempotent})
			if err != nil {
				t.Fatal(err)
			}
			if tool.ReadOnly != tc.readOnly || tool.Idempotent != tc.idempotent {
				t.Errorf("Define kept ReadOnly %v, Idempotent %v; want %v, %v", tool.ReadOnly, tool.Idempotent, tc.readOnly, tc.idempotent)
			}
			if got := tool.SafeToRepeat(); got != tc.want {
				t.Errorf("SafeToRepeat() = %v, want %v", got, tc.want)
			}
			literal := &toolset.Tool{Name: "t", Run: noop, ReadOnly: tc.readOnly, Idempotent: tc.idempotent}
			if got := literal.SafeToRepeat(); got != tc.want {
				t.Errorf("SafeToRepeat() of a literal = %v, want %v", got, tc.want)
			}
		})
	}
	if (*toolset.Tool)(nil).SafeToRepeat() {
		t.Error("SafeToRepeat() of a nil *Tool = true, want false")
	}
}
