package anthropicadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/anthropicadapter"
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

// The seed's first example, for Anthropic: one tool to Anthropic schema.
// No group: tools[0] is the tool, and InputSchema is renamed input_schema.
func ExampleTools() {
	tools, err := anthropicadapter.Tools(weatherTool())
	if err != nil {
		panic(err)
	}
	fmt.Println(len(tools))
	tool := tools[0].OfTool
	fmt.Println(tool.Name, "-", tool.Description.Value)
	fmt.Println(tool.InputSchema.Required)

	b, _ := json.Marshal(tools[0])
	fmt.Println(string(b))
	fmt.Println("ok:", tool.Name)
	// Output:
	// 1
	// get_weather - Current weather for a city
	// [city]
	// {"input_schema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"get_weather","description":"Current weather for a city"}
	// ok: get_weather
}

// The seed's second example, for Anthropic: the result is already the
// Tools value of a Messages request.
func ExampleTools_request() {
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
	tools, err := anthropicadapter.Tools(search, ping)
	if err != nil {
		panic(err)
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("search for adapters"))},
		Tools:     tools, // already the list: not wrapped again
	}
	// With a client: client.Messages.New(ctx, params)
	var names []string
	for _, t := range params.Tools {
		names = append(names, t.OfTool.Name)
	}
	body, _ := json.Marshal(params)
	fmt.Println(len(params.Tools), len(body) > 0)
	fmt.Println("ok:", strings.Join(names, ", "))
	// Output:
	// 2 true
	// ok: search, ping
}

// The seed's third example, for Anthropic: a tool_use block goes back to
// its tool, and the result becomes a tool_result block of the next user
// message, with is_error when the call failed.
func ExampleExecute() {
	set := toolset.MustNew(weatherTool())
	tools, _ := anthropicadapter.Tools(set.Tools()...)

	// What Claude sends back for that schema, as the API writes it.
	var msg anthropic.Message
	_ = json.Unmarshal([]byte(`{"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
		"stop_reason": "tool_use", "content": [{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9",
		"name": "get_weather", "input": {"city": "Chennai"}}]}`), &msg)
	block := msg.Content[0].AsToolUse()

	_, ok := set.Lookup(block.Name)
	fmt.Println("resolves:", ok)
	res := anthropicadapter.Execute(context.Background(), set, block)
	fmt.Println(res.Output, res.IsError)

	// The next request: the assistant's message, then the user's results.
	messages := []anthropic.MessageParam{msg.ToParam(), anthropic.NewUserMessage(anthropicadapter.ToolResult(block, res))}
	b, _ := json.Marshal(messages[1])
	fmt.Println(string(b))

	// A failed call is a result too, flagged is_error.
	bad := block
	bad.Input = json.RawMessage(`{"town": "Chennai"}`)
	b, _ = json.Marshal(anthropicadapter.ToolResult(bad, anthropicadapter.Execute(context.Background(), set, bad)))
	fmt.Println(string(b))

	// No tools: an empty list, not Gemini's empty group.
	none, _ := anthropicadapter.Tools()
	fmt.Println(len(none))

	fmt.Println("ok:", tools[0].OfTool.Name, "->", res.Output)
	// Output:
	// resolves: true
	// sunny in Chennai false
	// {"content":[{"tool_use_id":"toolu_01A09q90qw90lq917835lq9","content":[{"text":"sunny in Chennai","type":"text"}],"type":"tool_result"}],"role":"user"}
	// {"tool_use_id":"toolu_01A09q90qw90lq917835lq9","is_error":true,"content":[{"text":"invalid arguments for get_weather: required: missing properties: [\"city\"]","type":"text"}],"type":"tool_result"}
	// 0
	// ok: get_weather -> sunny in Chennai
}
