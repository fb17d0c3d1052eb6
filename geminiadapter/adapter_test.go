package geminiadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func run(context.Context, map[string]any) (any, error) { return "ok", nil }

func TestDeclaration(t *testing.T) {
	type mapIn struct {
		Labels map[string]string `json:"labels"`
	}
	mapTool := toolset.MustFunc("label", "Set labels", func(context.Context, mapIn) (string, error) { return "", nil })
	noArgs := toolset.MustFunc("now", "The time", func(context.Context, struct{}) (string, error) { return "", nil })
	weather := toolset.MustDefine(toolset.Tool{Name: "get_weather", Description: "Current weather", Run: run,
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}}, Required: []string{"city"}}})
	for _, tc := range []struct {
		name       string
		opts       geminiadapter.Options
		tool       *toolset.Tool
		wantParams bool // Parameters set
		wantJSON   bool // ParametersJsonSchema set
	}{
		{"convertible schema", geminiadapter.Options{}, weather, true, false},
		{"forced JSON Schema", geminiadapter.Options{ForceJSONSchema: true}, weather, false, true},
		{"map field falls back", geminiadapter.Options{}, mapTool, false, true},
		{"no parameters (nil schema)", geminiadapter.Options{}, toolset.MustDefine(toolset.Tool{Name: "ping", Run: run}), false, false},
		{"no parameters (struct{})", geminiadapter.Options{}, noArgs, false, false},
		{"no parameters (empty properties)", geminiadapter.Options{}, toolset.MustDefine(toolset.Tool{Name: "ping", Run: run,
			InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}}), false, false},
		{"no parameters, forced", geminiadapter.Options{ForceJSONSchema: true}, toolset.MustDefine(toolset.Tool{Name: "ping", Run: run}), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.opts.Declaration(tc.tool)
			if err != nil {
				t.Fatalf("Declaration() = %v", err)
			}
			if d.Name != tc.tool.Name || d.Description != tc.tool.Description {
				t.Errorf("Declaration() = %q %q, want the tool's name and description", d.Name, d.Description)
			}
			if (d.Parameters != nil) != tc.wantParams || (d.ParametersJsonSchema != nil) != tc.wantJSON {
				t.Errorf("Parameters set = %v, ParametersJsonSchema set = %v; want %v, %v",
					d.Parameters != nil, d.ParametersJsonSchema != nil, tc.wantParams, tc.wantJSON)
			}
			if tc.wantJSON && d.ParametersJsonSchema != tc.tool.InputSchema {
				t.Errorf("ParametersJsonSchema = %v, want the tool's schema unchanged", d.ParametersJsonSchema)
			}
		})
	}
}

func TestDeclarationErrors(t *testing.T) {
	if _, err := geminiadapter.Declaration(nil); err == nil {
		t.Error("Declaration(nil) = nil error")
	}
	_, err := geminiadapter.Declaration(&toolset.Tool{Name: "bad name", Run: run})
	if !errors.Is(err, toolset.ErrInvalidTool) {
		t.Errorf("Declaration(invalid literal) = %v, want ErrInvalidTool", err)
	}
}

func TestTools(t *testing.T) {
	a := toolset.MustDefine(toolset.Tool{Name: "a", Run: run})
	b := toolset.MustDefine(toolset.Tool{Name: "b", Run: run})
	tools, err := geminiadapter.Tools(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || len(tools[0].FunctionDeclarations) != 2 ||
		tools[0].FunctionDeclarations[0].Name != "b" || tools[0].FunctionDeclarations[1].Name != "a" {
		t.Errorf("Tools(b, a) = %+v, want one group [b a]", tools)
	}

	empty, err := geminiadapter.Tools()
	if err != nil || len(empty) != 1 || empty[0].FunctionDeclarations == nil || len(empty[0].FunctionDeclarations) != 0 {
		t.Errorf("Tools() = %+v, %v; want one group with a non-nil empty slice", empty, err)
	}

	for _, tc := range []struct {
		name  string
		tools []*toolset.Tool
		want  string
	}{
		{"duplicate", []*toolset.Tool{a, toolset.MustDefine(toolset.Tool{Name: "a", Run: run})}, `duplicate tool name: "a" is given twice`},
		{"nil", []*toolset.Tool{a, nil}, "tool 1 is nil"},
		{"invalid", []*toolset.Tool{{Name: "", Run: run}}, "name is empty"},
	} {
		if _, err := geminiadapter.Tools(tc.tools...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Tools(%s) = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestResponse(t *testing.T) {
	call := &genai.FunctionCall{ID: "fc-1", Name: "get_weather", Args: map[string]any{"city": "Paris"}}
	ok := geminiadapter.Response(call, toolset.Result{Output: map[string]any{"temp": 21.0}})
	want := &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "fc-1", Name: "get_weather",
		Response: map[string]any{"result": map[string]any{"temp": 21.0}}}}
	if diff := cmp.Diff(want, ok); diff != "" {
		t.Errorf("Response(ok) mismatch (-want +got):\n%s", diff)
	}

	failed := geminiadapter.Response(&genai.FunctionCall{Name: "get_weather"}, toolset.Result{Output: "unknown city", IsError: true, Err: errors.New("x")})
	want = &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "get_weather", Response: map[string]any{"error": "unknown city"}}}
	if diff := cmp.Diff(want, failed); diff != "" {
		t.Errorf("Response(error) mismatch (-want +got):\n%s", diff)
	}

	if reason, denied := geminiadapter.Denied(failed.FunctionResponse); denied {
		t.Errorf("Denied(a tool's failure) = %q, true; want false", reason)
	}

	// A refused call is marked, however its Err wraps the denial; the
	// model still reads the reason as the error.
	refused := geminiadapter.Response(call, toolset.Result{Output: "the user said no", IsError: true,
		Err: fmt.Errorf("approvals: %w", toolset.ErrDenied)})
	want = &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "fc-1", Name: "get_weather",
		Response: map[string]any{"error": "the user said no", "denied": true}}}
	if diff := cmp.Diff(want, refused); diff != "" {
		t.Errorf("Response(denied) mismatch (-want +got):\n%s", diff)
	}
	if reason, denied := geminiadapter.Denied(refused.FunctionResponse); !denied || reason != "the user said no" {
		t.Errorf("Denied(a denial) = %q, %v; want the reason, true", reason, denied)
	}
	// Stored and read back as JSON, the mark survives.
	b, err := json.Marshal(refused)
	var back genai.Part
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if _, denied := geminiadapter.Denied(back.FunctionResponse); err != nil || !denied {
		t.Errorf("a denial through JSON (%s, %v) is not a denial", b, err)
	}
	for _, fr := range []*genai.FunctionResponse{
		nil,
		{Response: map[string]any{"result": "fine", "denied": true}},
		{Response: map[string]any{"error": "x", "denied": "yes"}},
		{Response: map[string]any{"error": "x", "denied": false}},
	} {
		if _, denied := geminiadapter.Denied(fr); denied {
			t.Errorf("Denied(%+v) = true; want false", fr)
		}
	}
	if reason, denied := geminiadapter.Denied(&genai.FunctionResponse{Response: map[string]any{"error": 42.0, "denied": true}}); !denied || reason != "42" {
		t.Errorf("Denied(a non-text reason) = %q, %v; want 42, true", reason, denied)
	}

	// Whatever the output, the response is a JSON object.
	for _, out := range []any{nil, "text", 3.5, []any{1, 2}, true} {
		b, err := json.Marshal(geminiadapter.Response(call, toolset.Result{Output: out}).FunctionResponse.Response)
		if err != nil || !strings.HasPrefix(string(b), `{"result":`) {
			t.Errorf("Response(%v) marshals to %s, %v; want an object", out, b, err)
		}
	}
}

// The tools value marshals to exactly the JSON the Gemini API expects.
func TestToolsGoldenJSON(t *testing.T) {
	type searchIn struct {
		Query string   `json:"query" jsonschema:"what to search for"`
		Limit int      `json:"limit,omitempty" jsonschema:"at most this many results"`
		Langs []string `json:"langs,omitempty"`
	}
	type labelIn struct {
		Labels map[string]string `json:"labels" jsonschema:"labels to set"`
	}
	weather := toolset.MustDefine(toolset.Tool{
		Name: "get_weather", Description: "Current weather for a city", Run: run,
		InputSchema: &jsonschema.Schema{Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"city":  {Type: "string", Description: "City name"},
				"units": {Type: "string", Enum: []any{"C", "F"}},
				"days":  {Type: "integer", Minimum: genai.Ptr(1.0), Maximum: genai.Ptr(7.0)},
			},
			Required: []string{"city"}},
	})
	tools, err := geminiadapter.Tools(
		weather,
		toolset.MustFunc("search", "Search the docs", func(context.Context, searchIn) (string, error) { return "", nil }),
		toolset.MustFunc("label", "Label a thing", func(context.Context, labelIn) (string, error) { return "", nil }),
		toolset.MustDefine(toolset.Tool{Name: "ping", Description: "Health check", Run: run}),
	)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(map[string]any{"tools": tools}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(strings.TrimSpace(string(want)), string(got)); diff != "" {
		t.Errorf("tools JSON mismatch (-want +got):\n%s", diff)
	}
}
