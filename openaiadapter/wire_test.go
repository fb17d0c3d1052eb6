package openaiadapter_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/toolnexus/toolnexus-go/internal/toolwire/toolwiretest"
	"github.com/toolnexus/toolnexus-go/openaiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// The tools of the wire tests: the seed's weather tool and a tool without
// parameters.
func wireSet() *toolset.Set {
	ping := toolset.MustDefine(toolset.Tool{Name: "ping", Description: "Health check",
		Run: func(context.Context, map[string]any) (any, error) { return map[string]any{"ok": true}, nil }})
	return toolset.MustNew(weatherTool(), ping)
}

// client is the official client, talking to rec over loopback.
func client(rec *toolwiretest.Recorder) openai.Client {
	return openai.NewClient(option.WithBaseURL(rec.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

// A whole Chat Completions tool round trip, as the SDK sends it: the
// tools, then the assistant's tool calls answered by "tool" messages, in
// the shapes OpenAI documents (function calling guide: tools
// [{"type": "function", "function": {name, description, parameters}}];
// answers {"role": "tool", "tool_call_id": ..., "content": ...}).
func TestChatOnTheWire(t *testing.T) {
	rec := toolwiretest.Start(t,
		`{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
		  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
		    "tool_calls": [
		      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
		      {"id": "call_2", "type": "function", "function": {"name": "get_wether", "arguments": "{}"}},
		      {"id": "call_3", "type": "function", "function": {"name": "ping", "arguments": ""}}]}}]}`,
		`{"id": "chatcmpl-2", "object": "chat.completion", "created": 2, "model": "gpt-4o",
		  "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sunny."}}]}`,
		`{"id": "chatcmpl-3", "object": "chat.completion", "created": 3, "model": "gpt-4o",
		  "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi."}}]}`)
	c := client(rec)
	ctx := context.Background()
	set := wireSet()
	tools, err := openaiadapter.ChatTools(set.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o, Tools: tools,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
	first, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	path, body := rec.Request(t, 0)
	if path != "/chat/completions" {
		t.Errorf("path = %s", path)
	}
	wantTools := toolwiretest.JSON(t, `[
		{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
		  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
		{"type": "function", "function": {"name": "ping", "description": "Health check",
		  "parameters": {"type": "object", "properties": {}}}}]`)
	if diff := cmp.Diff(wantTools, body["tools"]); diff != "" {
		t.Errorf("tools sent (-documented +sent):\n%s", diff)
	}

	msg := first.Choices[0].Message
	params.Messages = append(params.Messages, msg.ToParam())
	for _, call := range msg.ToolCalls {
		params.Messages = append(params.Messages, openaiadapter.ToolMessage(call, openaiadapter.ExecuteChat(ctx, set, call)))
	}
	if _, err := c.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	_, body = rec.Request(t, 1)
	wantMessages := toolwiretest.JSON(t, `[
		{"role": "user", "content": "Weather in Paris?"},
		{"role": "assistant", "tool_calls": [
		  {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
		  {"id": "call_2", "type": "function", "function": {"name": "get_wether", "arguments": "{}"}},
		  {"id": "call_3", "type": "function", "function": {"name": "ping", "arguments": ""}}]},
		{"role": "tool", "tool_call_id": "call_1", "content": "sunny in Paris"},
		{"role": "tool", "tool_call_id": "call_2", "content": "{\"error\":\"unknown tool \\\"get_wether\\\"; available tools: get_weather, ping\"}"},
		{"role": "tool", "tool_call_id": "call_3", "content": "{\"ok\":true}"}]`)
	if diff := cmp.Diff(wantMessages, body["messages"]); diff != "" {
		t.Errorf("messages sent (-documented +sent):\n%s", diff)
	}

	// No tools: the list is empty, and the request has no "tools" (OpenAI
	// answers an empty one with 400 empty_array).
	none, err := openaiadapter.ChatTools()
	if err != nil || len(none) != 0 {
		t.Fatalf("ChatTools() = %v, %v; want an empty list", none, err)
	}
	if _, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o, Tools: none,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}}); err != nil {
		t.Fatal(err)
	}
	if _, body := rec.Request(t, 2); body["tools"] != nil {
		t.Errorf("a request without tools sent tools = %v", body["tools"])
	}
}

// The same round trip on the Responses API: flat function tools with
// "strict" always said, and function_call_output items answering the
// function_call items by call_id.
func TestResponsesOnTheWire(t *testing.T) {
	rec := toolwiretest.Start(t,
		`{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4o", "status": "completed",
		  "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
		    "arguments": "{\"city\":\"Paris\"}", "status": "completed"}]}`,
		`{"id": "resp_2", "object": "response", "created_at": 2, "model": "gpt-4o", "status": "completed",
		  "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
		    "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]}]}`)
	c := client(rec)
	ctx := context.Background()
	set := wireSet()
	for _, strict := range []bool{false, true} {
		tools, err := openaiadapter.Options{Strict: strict}.ResponsesTools(set.Tools()...)
		if err != nil {
			t.Fatal(err)
		}
		if !strict {
			continue
		}
		// Strict: the schemas closed; both tools can be strict.
		for _, tool := range tools {
			if !tool.OfFunction.Strict.Value {
				t.Errorf("%s: strict = false, want true", tool.OfFunction.Name)
			}
		}
	}
	tools, err := openaiadapter.ResponsesTools(set.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser)}
	params := responses.ResponseNewParams{Model: openai.ChatModelGPT4o, Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}}
	first, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	path, body := rec.Request(t, 0)
	if path != "/responses" {
		t.Errorf("path = %s", path)
	}
	wantTools := toolwiretest.JSON(t, `[
		{"type": "function", "name": "get_weather", "description": "Current weather for a city", "strict": false,
		  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
		{"type": "function", "name": "ping", "description": "Health check", "strict": false,
		  "parameters": {"type": "object", "properties": {}}}]`)
	if diff := cmp.Diff(wantTools, body["tools"]); diff != "" {
		t.Errorf("tools sent (-documented +sent):\n%s", diff)
	}

	for _, item := range first.Output {
		if item.Type != "function_call" {
			continue
		}
		call := item.AsFunctionCall()
		input = append(input, responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
			openaiadapter.FunctionCallOutput(call, openaiadapter.ExecuteResponses(ctx, set, call)))
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	if _, err := c.Responses.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	_, body = rec.Request(t, 1)
	wantInput := toolwiretest.JSON(t, `[
		{"role": "user", "content": "Weather in Paris?"},
		{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
		{"type": "function_call_output", "call_id": "call_1", "output": "sunny in Paris"}]`)
	if diff := cmp.Diff(wantInput, body["input"]); diff != "" {
		t.Errorf("input sent (-documented +sent):\n%s", diff)
	}
}
