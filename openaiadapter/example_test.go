package openaiadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/toolnexus/toolnexus-go/openaiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// weatherTool is the seed's get_weather tool.
func weatherTool() *toolset.Tool {
	return toolset.MustDefine(toolset.Tool{
		Name:        "get_weather",
		Description: "Current weather for a city",
		InputSchema: &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}},
			Required:   []string{"city"},
		},
		Run: func(_ context.Context, args map[string]any) (any, error) {
			return fmt.Sprintf("sunny in %s", args["city"]), nil
		},
	})
}

// The seed's first example, for Chat Completions: one tool to OpenAI
// schema. Unlike Gemini there is no group: tools[0] is the tool, and its
// InputSchema is renamed Parameters.
func ExampleChatTools() {
	tools, err := openaiadapter.ChatTools(weatherTool())
	if err != nil {
		panic(err)
	}

	fmt.Println(len(tools))
	fn := tools[0].OfFunction.Function
	fmt.Println(fn.Name, "-", fn.Description.Value)
	var params struct{ Required []string }
	b, _ := json.Marshal(fn.Parameters)
	_ = json.Unmarshal(b, &params)
	fmt.Println(params.Required)

	b, _ = json.Marshal(tools[0])
	fmt.Println(string(b))
	fmt.Println("ok:", fn.Name)
	// Output:
	// 1
	// get_weather - Current weather for a city
	// [city]
	// {"function":{"name":"get_weather","description":"Current weather for a city","parameters":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}},"type":"function"}
	// ok: get_weather
}

// The seed's second example, for Chat Completions: the result is already
// the Tools value of a request.
func ExampleChatTools_request() {
	type searchIn struct {
		Q string `json:"q"`
	}
	search := toolset.MustFunc("search", "Search the docs", func(_ context.Context, in searchIn) (string, error) {
		return "results for " + in.Q, nil
	})
	ping := toolset.MustDefine(toolset.Tool{
		Name:        "ping",
		Description: "Health check",
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
		Run:         func(context.Context, map[string]any) (any, error) { return "pong", nil },
	})

	tools, err := openaiadapter.ChatTools(search, ping)
	if err != nil {
		panic(err)
	}
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("search for adapters")},
		Tools:    tools, // already the list: not wrapped again
	}
	// With a client: client.Chat.Completions.New(ctx, params)

	var names []string
	for _, t := range params.Tools {
		names = append(names, t.OfFunction.Function.Name)
	}
	body, _ := json.Marshal(params)
	fmt.Println(len(params.Tools), len(body) > 0)
	fmt.Println("ok:", strings.Join(names, ", "))
	// Output:
	// 2 true
	// ok: search, ping
}

// The seed's third example, for Chat Completions: a tool call goes back to
// its tool, and the result becomes the "tool" message of the next request.
// Its arguments arrive as a JSON string, which ExecuteChat decodes and the
// tool validates.
func ExampleExecuteChat() {
	set := toolset.MustNew(weatherTool())
	tools, _ := openaiadapter.ChatTools(set.Tools()...)

	// What a model sends back for that schema, as the API writes it.
	var msg openai.ChatCompletionMessage
	_ = json.Unmarshal([]byte(`{"role": "assistant", "content": null, "tool_calls": [{"id": "call_12345xyz",
		"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Chennai\"}"}}]}`), &msg)
	call := msg.ToolCalls[0]

	_, ok := set.Lookup(call.Function.Name)
	fmt.Println("resolves:", ok)
	res := openaiadapter.ExecuteChat(context.Background(), set, call)
	fmt.Println(res.Output, res.IsError)

	// The next request: the assistant's message, then one tool message per call.
	messages := []openai.ChatCompletionMessageParamUnion{msg.ToParam(), openaiadapter.ToolMessage(call, res)}
	b, _ := json.Marshal(messages[1])
	fmt.Println(string(b))

	// No tools: an empty list, not Gemini's empty group.
	none, _ := openaiadapter.ChatTools()
	fmt.Println(len(none))

	fmt.Println("ok:", tools[0].OfFunction.Function.Name, "->", res.Output)
	// Output:
	// resolves: true
	// sunny in Chennai false
	// {"content":"sunny in Chennai","tool_call_id":"call_12345xyz","role":"tool"}
	// 0
	// ok: get_weather -> sunny in Chennai
}

// The seed's first example, for the Responses API: the function tool is
// flat (no "function" wrapper), and always says whether it is strict.
func ExampleResponsesTools() {
	tools, err := openaiadapter.ResponsesTools(weatherTool())
	if err != nil {
		panic(err)
	}
	fn := tools[0].OfFunction
	fmt.Println(len(tools), fn.Name, "-", fn.Description.Value)
	b, _ := json.Marshal(tools[0])
	fmt.Println(string(b))
	// Output:
	// 1 get_weather - Current weather for a city
	// {"strict":false,"parameters":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"get_weather","description":"Current weather for a city","type":"function"}
}

// The seed's second example, for the Responses API.
func ExampleResponsesTools_request() {
	ping := toolset.MustDefine(toolset.Tool{Name: "ping", Description: "Health check",
		Run: func(context.Context, map[string]any) (any, error) { return "pong", nil }})
	tools, err := openaiadapter.ResponsesTools(weatherTool(), ping)
	if err != nil {
		panic(err)
	}
	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT4o,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Paris?")},
		Tools: tools,
	}
	// With a client: client.Responses.New(ctx, params)
	var names []string
	for _, t := range params.Tools {
		names = append(names, t.OfFunction.Name)
	}
	fmt.Println("ok:", strings.Join(names, ", "))
	// Output:
	// ok: get_weather, ping
}

// The seed's third example, for the Responses API: the function_call item
// is answered by a function_call_output item with the same call_id.
func ExampleExecuteResponses() {
	set := toolset.MustNew(weatherTool())

	var item responses.ResponseOutputItemUnion
	_ = json.Unmarshal([]byte(`{"type": "function_call", "id": "fc_12345xyz", "call_id": "call_12345xyz",
		"name": "get_weather", "arguments": "{\"city\":\"Chennai\"}"}`), &item)
	call := item.AsFunctionCall()

	res := openaiadapter.ExecuteResponses(context.Background(), set, call)
	fmt.Println(res.Output, res.IsError)

	// The next input: the call as it came, then its output.
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
		openaiadapter.FunctionCallOutput(call, res),
	}
	b, _ := json.Marshal(input[1])
	fmt.Println(string(b))

	none, _ := openaiadapter.ResponsesTools()
	fmt.Println(len(none))
	// Output:
	// sunny in Chennai false
	// {"output":"sunny in Chennai","call_id":"call_12345xyz","type":"function_call_output"}
	// 0
}

// Strict mode: optional properties become required and nullable, every
// object closes, and the null the model then writes for a property it
// leaves out is dropped before the tool validates the call.
func ExampleOptions_strict() {
	type forecastIn struct {
		City string `json:"city"`
		Days int    `json:"days,omitempty" jsonschema:"how many days, 1 by default"`
	}
	forecast := toolset.MustFunc("forecast", "Weather forecast",
		func(_ context.Context, in forecastIn) (string, error) {
			return fmt.Sprintf("%s: %d day(s)", in.City, max(in.Days, 1)), nil
		})
	strict := openaiadapter.Options{Strict: true}
	tools, err := strict.ChatTools(forecast)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(tools[0].OfFunction.Function)
	fmt.Println(string(b))

	var call openai.ChatCompletionMessageToolCallUnion
	_ = json.Unmarshal([]byte(`{"id": "call_1", "type": "function",
		"function": {"name": "forecast", "arguments": "{\"city\":\"Oslo\",\"days\":null}"}}`), &call)
	fmt.Println(strict.ExecuteChat(context.Background(), toolset.MustNew(forecast), call).Output)
	// Output:
	// {"name":"forecast","strict":true,"description":"Weather forecast","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"},"days":{"type":["integer","null"],"description":"how many days, 1 by default"}},"required":["city","days"],"type":"object"}}
	// Oslo: 1 day(s)
}
