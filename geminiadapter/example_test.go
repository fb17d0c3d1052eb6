package geminiadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The seed's first example: one tool to Gemini schema. Note the extra level:
// tools[0].FunctionDeclarations[0] is the tool, not tools[0].
func ExampleTools() {
	weather := toolset.MustDefine(toolset.Tool{
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

	tools, err := geminiadapter.Tools(weather)
	if err != nil {
		panic(err)
	}

	// Always exactly ONE group, however many tools you pass.
	fmt.Println(len(tools), len(tools[0].FunctionDeclarations))
	decl := tools[0].FunctionDeclarations[0]
	fmt.Println(decl.Name, "-", decl.Description)
	// Renamed: InputSchema -> Parameters.
	fmt.Println(decl.Parameters.Required)

	b, _ := json.Marshal(decl)
	fmt.Println(string(b))
	fmt.Println("ok:", decl.Name)
	// Output:
	// 1 1
	// get_weather - Current weather for a city
	// [city]
	// {"description":"Current weather for a city","name":"get_weather","parameters":{"properties":{"city":{"type":"STRING"}},"required":["city"],"type":"OBJECT"}}
	// ok: get_weather
}

// The seed's second example: the result is already the outer Tools value of
// a generateContent request. Do not wrap it in another slice.
func ExampleTools_generateContentConfig() {
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

	tools, err := geminiadapter.Tools(search, ping)
	if err != nil {
		panic(err)
	}
	config := &genai.GenerateContentConfig{Tools: tools}
	contents := genai.Text("search for adapters")
	// With a client: client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, config)

	var names []string
	for _, d := range config.Tools[0].FunctionDeclarations {
		names = append(names, d.Name)
	}
	body, _ := json.Marshal(map[string]any{"contents": contents, "tools": config.Tools})
	fmt.Println(len(config.Tools), len(body) > 0)
	fmt.Println("ok:", strings.Join(names, ", "))
	// Output:
	// 1 true
	// ok: search, ping
}

// The seed's third example: a functionCall part goes back to the tool, and
// the tool's result becomes the functionResponse part of the next turn,
// whose response is an object, not a bare string.
func ExampleResponse() {
	weather := toolset.MustDefine(toolset.Tool{
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
	set := toolset.MustNew(weather)
	tools, _ := geminiadapter.Tools(set.Tools()...)

	// What a model sends back for that declaration: args already decoded.
	part := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Chennai"}}}

	called, ok := set.Lookup(part.FunctionCall.Name)
	fmt.Println("resolves:", ok)
	res := called.Execute(context.Background(), part.FunctionCall.Args)
	fmt.Println(res.Output, res.IsError)

	responsePart := geminiadapter.Response(part.FunctionCall, res)
	b, _ := json.Marshal(responsePart)
	fmt.Println(string(b))

	// An empty tool list still yields the group, with zero declarations.
	empty, _ := geminiadapter.Tools()
	fmt.Println(len(empty), empty[0].FunctionDeclarations != nil, len(empty[0].FunctionDeclarations))

	fmt.Println("ok:", tools[0].FunctionDeclarations[0].Name, "->", res.Output)
	// Output:
	// resolves: true
	// sunny in Chennai false
	// {"functionResponse":{"name":"get_weather","response":{"result":"sunny in Chennai"}}}
	// 1 true 0
	// ok: get_weather -> sunny in Chennai
}

// A schema that genai.Schema cannot express goes out unchanged as
// ParametersJsonSchema; nothing is converted lossily.
func ExampleDeclaration_fallback() {
	type in struct {
		Labels map[string]string `json:"labels"` // a typed additionalProperties
	}
	tool := toolset.MustFunc("label", "Set labels", func(context.Context, in) (string, error) { return "done", nil })
	d, _ := geminiadapter.Declaration(tool)
	fmt.Println(d.Parameters == nil, d.ParametersJsonSchema != nil)

	_, err := geminiadapter.Schema(tool.InputSchema)
	fmt.Println(err)
	// Output:
	// true true
	// geminiadapter: schema at /properties/labels: keyword "additionalProperties": cannot be expressed as a Gemini Schema
}

func ExampleSchema() {
	s := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"tags": {Types: []string{"null", "array"}, Items: &jsonschema.Schema{Type: "string"}},
		},
	}
	gs, err := geminiadapter.Schema(s)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(gs)
	fmt.Println(string(b))
	// Output:
	// {"properties":{"tags":{"items":{"type":"STRING"},"nullable":true,"type":"ARRAY"}},"type":"OBJECT"}
}

// A tool's media reach a Gemini 3 model inside the function response; an
// older model is told what it cannot see.
func ExampleDescribeMedia() {
	res := toolset.Result{Output: "the chart", Media: []toolset.Media{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n")}}}
	call := &genai.FunctionCall{Name: "plot"}
	for _, model := range []string{"gemini-3-flash-preview", "gemini-2.5-flash"} {
		r := res
		if !geminiadapter.MediaInResponses(model) {
			r = geminiadapter.DescribeMedia(r)
		}
		b, _ := json.Marshal(geminiadapter.Response(call, r))
		fmt.Printf("%s: %s\n", model, b)
	}
	// Output:
	// gemini-3-flash-preview: {"functionResponse":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0K"}}],"name":"plot","response":{"result":"the chart"}}}
	// gemini-2.5-flash: {"functionResponse":{"name":"plot","response":{"result":"the chart\n[media not shown, this model cannot receive media from tools: image/png, 6 bytes]"}}}
}
