package openaiadapter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/toolnexus/toolnexus-go/internal/toolwire/toolwiretest"
	"github.com/toolnexus/toolnexus-go/openaiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func chatCall(name, args string) openai.ChatCompletionMessageToolCallUnion {
	return openai.ChatCompletionMessageToolCallUnion{ID: "call_1", Type: "function",
		Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: name, Arguments: args}}
}

func TestDeclarationErrors(t *testing.T) {
	a := toolset.MustDefine(toolset.Tool{Name: "a", Run: run})
	for _, tc := range []struct {
		name  string
		tools []*toolset.Tool
		is    error
		want  string
	}{
		{"nil", []*toolset.Tool{a, nil}, nil, "tool 1 is nil"},
		{"duplicate", []*toolset.Tool{a, toolset.MustDefine(toolset.Tool{Name: "a", Run: run})}, toolset.ErrDuplicateTool, `"a" is given twice`},
		{"invalid literal", []*toolset.Tool{{Name: "", Run: run}}, toolset.ErrInvalidTool, "name is empty"},
		// Gemini's names may hold '.' and ':'; OpenAI's may not.
		{"dot in name", []*toolset.Tool{toolset.MustDefine(toolset.Tool{Name: "fs.read", Run: run})}, toolset.ErrInvalidTool, `OpenAI takes tool names of letters, digits, '_' and '-' only: "fs.read" has '.'`},
		{"colon in name", []*toolset.Tool{toolset.MustDefine(toolset.Tool{Name: "gh:issues", Run: run})}, toolset.ErrInvalidTool, `has ':'`},
	} {
		for api, f := range map[string]func(...*toolset.Tool) (int, error){
			"ChatTools": func(ts ...*toolset.Tool) (int, error) { r, err := openaiadapter.ChatTools(ts...); return len(r), err },
			"ResponsesTools": func(ts ...*toolset.Tool) (int, error) {
				r, err := openaiadapter.Options{Strict: true}.ResponsesTools(ts...)
				return len(r), err
			},
		} {
			n, err := f(tc.tools...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) || n != 0 {
				t.Errorf("%s(%s) = %d tools, %v; want an error saying %q", api, tc.name, n, err, tc.want)
			}
		}
	}
	if _, err := openaiadapter.Function(nil); err == nil {
		t.Error("Function(nil) = nil error")
	}
}

// Each way a call can fail is a result the model reads, never a panic.
func TestExecuteFailures(t *testing.T) {
	set := wireSet()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call openai.ChatCompletionMessageToolCallUnion
		is   error
		want string
	}{
		{"unknown tool", chatCall("get_wether", `{}`), openaiadapter.ErrUnknownTool, `unknown tool "get_wether"; available tools: get_weather, ping`},
		{"not JSON", chatCall("get_weather", `{"city": "Par`), toolset.ErrInvalidArguments, "invalid arguments for get_weather: they are not valid JSON"},
		{"not an object", chatCall("get_weather", `["Paris"]`), toolset.ErrInvalidArguments, "they must be a JSON object, not an array"},
		{"invalid for the schema", chatCall("get_weather", `{"city": 3}`), toolset.ErrInvalidArguments, `argument "city"`},
		{"missing argument", chatCall("get_weather", ``), toolset.ErrInvalidArguments, `missing properties: ["city"]`},
		{"custom tool call", openai.ChatCompletionMessageToolCallUnion{ID: "c", Type: "custom"}, openaiadapter.ErrUnknownTool, "custom tool calls are not supported"},
	} {
		res := openaiadapter.ExecuteChat(ctx, set, tc.call)
		out, _ := res.Output.(string)
		if !res.IsError || !errors.Is(res.Err, tc.is) || !strings.Contains(out, tc.want) {
			t.Errorf("%s: ExecuteChat() = %+v; want an error result saying %q", tc.name, res, tc.want)
		}
	}
	for _, args := range []string{"", "  ", "null", "{}"} {
		if res := openaiadapter.ExecuteChat(ctx, set, chatCall("ping", args)); res.IsError {
			t.Errorf("ExecuteChat(ping, %q) = %+v; want success", args, res)
		}
	}
	if res := openaiadapter.ExecuteChat(ctx, nil, chatCall("ping", "")); !res.IsError || !strings.Contains(res.Output.(string), "available tools: none") {
		t.Errorf("ExecuteChat(nil set) = %+v", res)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if res := openaiadapter.ExecuteChat(cancelled, set, chatCall("ping", "")); !res.IsError || !errors.Is(res.Err, context.Canceled) {
		t.Errorf("ExecuteChat(cancelled) = %+v", res)
	}
}

// What a tool message and a function_call_output say for each kind of
// result, media included.
func TestResultMessages(t *testing.T) {
	png := toolset.Media{MIMEType: "image/png", Data: []byte("\x89PNG")}
	pdf := toolset.Media{MIMEType: "application/pdf", Data: []byte("%PDF")}
	wav := toolset.Media{MIMEType: "audio/wav", Data: []byte("RIFF")}
	for _, tc := range []struct {
		name            string
		r               toolset.Result
		chat, responses string // the JSON of the message / item
	}{
		{"string", toolset.Result{Output: "sunny"},
			`{"role": "tool", "tool_call_id": "call_1", "content": "sunny"}`,
			`{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}`},
		{"object", toolset.Result{Output: map[string]any{"temp": 21}},
			`{"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\":21}"}`,
			`{"type": "function_call_output", "call_id": "call_1", "output": "{\"temp\":21}"}`},
		{"error", toolset.Result{Output: "unknown city", IsError: true, Err: errors.New("x")},
			`{"role": "tool", "tool_call_id": "call_1", "content": "{\"error\":\"unknown city\"}"}`,
			`{"type": "function_call_output", "call_id": "call_1", "output": "{\"error\":\"unknown city\"}"}`},
		{"denied", toolset.Result{Output: "the user said no", IsError: true, Err: fmt.Errorf("agent: %w", toolset.ErrDenied)},
			`{"role": "tool", "tool_call_id": "call_1", "content": "{\"error\":\"the user said no\",\"denied\":true}"}`,
			`{"type": "function_call_output", "call_id": "call_1", "output": "{\"error\":\"the user said no\",\"denied\":true}"}`},
		{"media", toolset.Result{Output: "the chart", Media: []toolset.Media{png, wav, pdf}},
			`{"role": "tool", "tool_call_id": "call_1", "content": "the chart\n[media not shown, Chat Completions takes no media from tools: image/png, 4 bytes; audio/wav, 4 bytes; application/pdf, 4 bytes]"}`,
			`{"type": "function_call_output", "call_id": "call_1", "output": [
			  {"type": "input_text", "text": "the chart\n[media not shown, the Responses API takes only images and PDF files from tools: audio/wav, 4 bytes]"},
			  {"type": "input_image", "image_url": "data:image/png;base64,iVBORw=="},
			  {"type": "input_file", "file_data": "data:application/pdf;base64,JVBERg==", "filename": "plot-2.pdf"}]}`},
		{"media only", toolset.Result{Media: []toolset.Media{png}},
			`{"role": "tool", "tool_call_id": "call_1", "content": "[media not shown, Chat Completions takes no media from tools: image/png, 4 bytes]"}`,
			`{"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_image", "image_url": "data:image/png;base64,iVBORw=="}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chat := openaiadapter.ToolMessage(chatCall("plot", "{}"), tc.r)
			if diff := cmp.Diff(toolwiretest.JSON(t, tc.chat), toolwiretest.Encode(t, chat)); diff != "" {
				t.Errorf("ToolMessage (-want +got):\n%s", diff)
			}
			item := openaiadapter.FunctionCallOutput(responsesCall("plot", "{}"), tc.r)
			if diff := cmp.Diff(toolwiretest.JSON(t, tc.responses), toolwiretest.Encode(t, item)); diff != "" {
				t.Errorf("FunctionCallOutput (-want +got):\n%s", diff)
			}
		})
	}
}
