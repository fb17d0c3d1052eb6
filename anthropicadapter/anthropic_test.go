package anthropicadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/anthropicadapter"
	"github.com/toolnexus/toolnexus-go/internal/toolwire/toolwiretest"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func run(context.Context, map[string]any) (any, error) { return "ok", nil }

func wireSet() *toolset.Set {
	ping := toolset.MustDefine(toolset.Tool{Name: "ping", Description: "Health check",
		Run: func(context.Context, map[string]any) (any, error) { return map[string]any{"ok": true}, nil }})
	return toolset.MustNew(weatherTool(), ping)
}

func toolUse(name, input string) anthropic.ToolUseBlock {
	return anthropic.ToolUseBlock{ID: "toolu_1", Name: name, Input: json.RawMessage(input)}
}

// A whole tool round trip as the official client sends it, in the shapes
// Anthropic documents (tool use guide: tools [{name, description,
// input_schema}]; the answer a user message of tool_result blocks with
// tool_use_id, content and is_error).
func TestMessagesOnTheWire(t *testing.T) {
	rec := toolwiretest.Start(t,
		`{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "stop_reason": "tool_use",
		  "content": [{"type": "text", "text": "Checking."},
		    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
		    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}},
		    {"type": "tool_use", "id": "toolu_3", "name": "ping", "input": {}}],
		  "usage": {"input_tokens": 10, "output_tokens": 5}}`,
		`{"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "stop_reason": "end_turn",
		  "content": [{"type": "text", "text": "Sunny."}], "usage": {"input_tokens": 20, "output_tokens": 2}}`,
		`{"id": "msg_3", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "stop_reason": "end_turn",
		  "content": [{"type": "text", "text": "Hi."}], "usage": {"input_tokens": 1, "output_tokens": 1}}`)
	c := anthropic.NewClient(option.WithBaseURL(rec.URL), option.WithAPIKey("sk-ant-test"), option.WithMaxRetries(0))
	ctx := context.Background()
	set := wireSet()
	tools, err := anthropicadapter.Tools(set.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	params := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024, Tools: tools,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))}}
	first, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	path, body := rec.Request(t, 0)
	if path != "/v1/messages" {
		t.Errorf("path = %s", path)
	}
	wantTools := toolwiretest.JSON(t, `[
		{"name": "get_weather", "description": "Current weather for a city",
		  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
		{"name": "ping", "description": "Health check", "input_schema": {"type": "object", "properties": {}}}]`)
	if diff := cmp.Diff(wantTools, body["tools"]); diff != "" {
		t.Errorf("tools sent (-documented +sent):\n%s", diff)
	}

	var results []anthropic.ContentBlockParamUnion
	for _, block := range first.Content {
		if block.Type == "tool_use" {
			use := block.AsToolUse()
			results = append(results, anthropicadapter.ToolResult(use, anthropicadapter.Execute(ctx, set, use)))
		}
	}
	params.Messages = append(params.Messages, first.ToParam(), anthropic.NewUserMessage(results...))
	if _, err := c.Messages.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	_, body = rec.Request(t, 1)
	wantMessages := toolwiretest.JSON(t, `[
		{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
		{"role": "assistant", "content": [{"type": "text", "text": "Checking."},
		  {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
		  {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}},
		  {"type": "tool_use", "id": "toolu_3", "name": "ping", "input": {}}]},
		{"role": "user", "content": [
		  {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny in Paris"}]},
		  {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
		    "content": [{"type": "text", "text": "invalid arguments for get_weather: required: missing properties: [\"city\"]"}]},
		  {"type": "tool_result", "tool_use_id": "toolu_3", "content": [{"type": "text", "text": "{\"ok\":true}"}]}]}]`)
	if diff := cmp.Diff(wantMessages, body["messages"]); diff != "" {
		t.Errorf("messages sent (-documented +sent):\n%s", diff)
	}

	none, err := anthropicadapter.Tools()
	if err != nil || len(none) != 0 {
		t.Fatalf("Tools() = %v, %v; want an empty list", none, err)
	}
	params = anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 16, Tools: none,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))}}
	if _, err := c.Messages.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	if _, body := rec.Request(t, 2); body["tools"] != nil {
		t.Errorf("a request without tools sent tools = %v", body["tools"])
	}
}

// input_schema carries the tool's schema as it is: every keyword, in the
// order properties were declared.
func TestToolSchemaPassedThrough(t *testing.T) {
	const schema = `{"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
		"properties": {"zeta": {"oneOf": [{"type": "string", "format": "uri"}, {"type": "integer", "minimum": 1}]},
		  "alpha": {"type": "object", "additionalProperties": {"type": "string"}},
		  "ref": {"$ref": "#/$defs/c", "default": "x"}, "tags": {"type": "array"}},
		"$defs": {"c": {"type": "string", "enum": ["x", "y"]}},
		"additionalProperties": false, "minProperties": 1, "required": ["zeta"]}`
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	s.PropertyOrder = []string{"zeta", "alpha", "ref", "tags"}
	tool := toolset.MustDefine(toolset.Tool{Name: "t", Run: run, InputSchema: &s})
	tp, err := anthropicadapter.Tool(tool)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(toolwiretest.JSON(t, schema), toolwiretest.Encode(t, tp.InputSchema)); diff != "" {
		t.Errorf("input_schema (-tool's schema +sent):\n%s", diff)
	}
	b, _ := json.Marshal(tp.InputSchema)
	z, a, r := strings.Index(string(b), `"zeta"`), strings.Index(string(b), `"alpha"`), strings.Index(string(b), `"ref"`)
	if !(z < a && a < r) {
		t.Errorf("properties out of order: %s", b)
	}
}

func TestToolErrors(t *testing.T) {
	a := toolset.MustDefine(toolset.Tool{Name: "a", Run: run})
	rootUnion := func(kw string) *toolset.Tool {
		s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": {Type: "string"}, "y": {Type: "string"}}}
		branches := []*jsonschema.Schema{{Required: []string{"x"}}, {Required: []string{"y"}}}
		switch kw {
		case "anyOf":
			s.AnyOf = branches
		case "oneOf":
			s.OneOf = branches
		case "allOf":
			s.AllOf = branches
		}
		return toolset.MustDefine(toolset.Tool{Name: "update", Run: run, InputSchema: s})
	}
	for _, tc := range []struct {
		name  string
		tools []*toolset.Tool
		is    error
		want  string
	}{
		{"nil", []*toolset.Tool{a, nil}, nil, "tool 1 is nil"},
		{"duplicate", []*toolset.Tool{a, toolset.MustDefine(toolset.Tool{Name: "a", Run: run})}, toolset.ErrDuplicateTool, `"a" is given twice`},
		{"invalid literal", []*toolset.Tool{{Name: "", Run: run}}, toolset.ErrInvalidTool, "name is empty"},
		{"dot in name", []*toolset.Tool{toolset.MustDefine(toolset.Tool{Name: "fs.read", Run: run})}, toolset.ErrInvalidTool, `Anthropic takes tool names of letters, digits, '_' and '-' only: "fs.read" has '.'`},
		{"root anyOf", []*toolset.Tool{rootUnion("anyOf")}, anthropicadapter.ErrUnsupportedSchema, `tool update: input schema not supported by Anthropic: "anyOf" at the top level`},
		{"root oneOf", []*toolset.Tool{rootUnion("oneOf")}, anthropicadapter.ErrUnsupportedSchema, `"oneOf" at the top level`},
		{"root allOf", []*toolset.Tool{rootUnion("allOf")}, anthropicadapter.ErrUnsupportedSchema, `"allOf" at the top level`},
	} {
		tools, err := anthropicadapter.Tools(tc.tools...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) || tools != nil {
			t.Errorf("Tools(%s) = %d tools, %v; want an error saying %q", tc.name, len(tools), err, tc.want)
		}
	}
	// Below the top level a union is fine.
	nested := toolset.MustDefine(toolset.Tool{Name: "n", Run: run, InputSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"v": {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}}}})
	if _, err := anthropicadapter.Tool(nested); err != nil {
		t.Errorf("Tool(nested anyOf) = %v", err)
	}
	if _, err := anthropicadapter.Tool(nil); err == nil {
		t.Error("Tool(nil) = nil error")
	}
}

func TestExecuteFailures(t *testing.T) {
	set := wireSet()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		block anthropic.ToolUseBlock
		is    error
		want  string
	}{
		{"unknown tool", toolUse("get_wether", `{}`), anthropicadapter.ErrUnknownTool, `unknown tool "get_wether"; available tools: get_weather, ping`},
		{"not an object", toolUse("get_weather", `"Paris"`), toolset.ErrInvalidArguments, "they must be a JSON object, not a string"},
		{"invalid for the schema", toolUse("get_weather", `{"city": true}`), toolset.ErrInvalidArguments, `argument "city"`},
	} {
		res := anthropicadapter.Execute(ctx, set, tc.block)
		out, _ := res.Output.(string)
		if !res.IsError || !errors.Is(res.Err, tc.is) || !strings.Contains(out, tc.want) {
			t.Errorf("%s: Execute() = %+v; want an error result saying %q", tc.name, res, tc.want)
		}
	}
	if res := anthropicadapter.Execute(ctx, set, anthropic.ToolUseBlock{ID: "t", Name: "ping"}); res.IsError {
		t.Errorf("Execute(ping, no input) = %+v", res)
	}
}

func TestToolResult(t *testing.T) {
	png := toolset.Media{MIMEType: "image/png", Data: []byte("\x89PNG")}
	pdf := toolset.Media{MIMEType: "application/pdf", Data: []byte("%PDF")}
	wav := toolset.Media{MIMEType: "audio/wav", Data: []byte("RIFF")}
	for _, tc := range []struct {
		name string
		r    toolset.Result
		want string
	}{
		{"object", toolset.Result{Output: map[string]any{"temp": 21}},
			`{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "{\"temp\":21}"}]}`},
		{"error", toolset.Result{Output: "unknown city", IsError: true},
			`{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "unknown city"}]}`},
		{"nothing", toolset.Result{},
			`{"type": "tool_result", "tool_use_id": "toolu_1"}`},
		{"media", toolset.Result{Output: "the chart", Media: []toolset.Media{png, wav, pdf}},
			`{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
			  {"type": "text", "text": "the chart\n[media not shown, Claude takes only images and PDF documents from tools: audio/wav, 4 bytes]"},
			  {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="}},
			  {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="}}]}`},
	} {
		got := anthropicadapter.ToolResult(toolUse("plot", "{}"), tc.r)
		if diff := cmp.Diff(toolwiretest.JSON(t, tc.want), toolwiretest.Encode(t, got)); diff != "" {
			t.Errorf("%s: ToolResult (-want +got):\n%s", tc.name, diff)
		}
	}
}
