package agent

import (
	"context"
	"iter"
	"testing"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// noModels satisfies Models for agents that are never run.
type noModels struct{}

func (noModels) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	panic("not called")
}

func (noModels) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	panic("not called")
}

// TestStrategy checks the default strategy against what is known of each
// backend and model (see OutputAuto).
func TestStrategy(t *testing.T) {
	tools := toolset.MustNew(toolset.MustDefine(toolset.Tool{Name: "f", Run: func(context.Context, map[string]any) (any, error) { return nil, nil }}))
	search := &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}
	for _, tc := range []struct {
		backend genai.Backend
		model   string
		tools   *toolset.Set
		config  *genai.GenerateContentConfig
		force   OutputStrategy
		want    OutputStrategy
	}{
		{genai.BackendUnspecified, "gemini-2.5-flash", tools, nil, OutputAuto, OutputTool},
		{genai.BackendGeminiAPI, "models/gemini-2.0-flash-001", tools, nil, OutputAuto, OutputTool},
		{genai.BackendGeminiAPI, "gemini-1.5-pro", tools, nil, OutputAuto, OutputTool},
		{genai.BackendGeminiAPI, "gemini-3-flash-preview", tools, nil, OutputAuto, OutputNative},
		{genai.BackendGeminiAPI, "gemini-3.5-flash", tools, nil, OutputAuto, OutputNative},
		{genai.BackendGeminiAPI, "gemini-10-ultra", tools, nil, OutputAuto, OutputNative},
		{genai.BackendGeminiAPI, "gemini-flash-latest", tools, nil, OutputAuto, OutputTool},
		{genai.BackendGeminiAPI, "tunedModels/mine", tools, nil, OutputAuto, OutputTool},
		{genai.BackendVertexAI, "gemini-2.5-flash", tools, nil, OutputAuto, OutputNative},
		{genai.BackendVertexAI, "projects/p/locations/us/publishers/google/models/gemini-2.0-flash", tools, nil, OutputAuto, OutputNative},
		{genai.BackendVertexAI, "gemini-1.5-pro", tools, nil, OutputAuto, OutputTool},
		{genai.BackendGeminiAPI, "gemini-2.5-flash", nil, nil, OutputAuto, OutputNative},     // no tools at all
		{genai.BackendGeminiAPI, "gemini-2.5-flash", nil, search, OutputAuto, OutputTool},    // a built-in tool is a tool
		{genai.BackendGeminiAPI, "gemini-2.5-flash", tools, nil, OutputNative, OutputNative}, // forced
		{genai.BackendGeminiAPI, "gemini-3-pro-preview", tools, nil, OutputTool, OutputTool}, // forced
	} {
		a, err := New(Config{Models: noModels{}, Model: tc.model, Backend: tc.backend, Tools: tc.tools, GenerateConfig: tc.config,
			Output: OutputConfig{Strategy: tc.force}})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.strategy(); got != tc.want {
			t.Errorf("strategy(%v, %q, %d tools, forced %v) = %v; want %v", tc.backend, tc.model, tc.tools.Len(), tc.force, got, tc.want)
		}
	}
}

func TestOutputConfig(t *testing.T) {
	var c OutputConfig
	if c.maxReasks() != DefaultMaxOutputReasks || c.toolName() != DefaultOutputToolName {
		t.Errorf("zero OutputConfig: %d re-asks, tool %q", c.maxReasks(), c.toolName())
	}
	c = c.with(OutputConfig{MaxReasks: -1, ToolName: "answer"}).with(OutputConfig{Strategy: OutputNative})
	if c.maxReasks() != 0 || c.toolName() != "answer" || c.Strategy != OutputNative {
		t.Errorf("after with: %+v", c)
	}
	for s, want := range map[OutputStrategy]string{OutputAuto: "auto", OutputNative: "native", OutputTool: "tool", 9: "OutputStrategy(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q; want %q", s, s.String(), want)
		}
	}
}
