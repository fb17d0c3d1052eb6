package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// resultOpts compares CallToolResults on their content: not on unexported
// fields, nor on the _meta go-sdk adds.
var resultOpts = cmp.Options{cmpopts.IgnoreUnexported(mcp.CallToolResult{}), cmpopts.IgnoreFields(mcp.CallToolResult{}, "Meta")}

// sdkSession connects go-sdk's own client to srv, in memory.
func sdkSession(t testing.TB, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk-client", Version: "v1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// NewServer as go-sdk's client sees it: the set's tools and schemas, and
// results in MCP's shapes.
func TestServerWithSDKClient(t *testing.T) {
	set := demoSet()
	cs := sdkSession(t, mcptools.NewServer(set, nil))
	if got := cs.InitializeResult().ServerInfo.Name; got != "toolnexus-go" {
		t.Errorf("server name = %q; want the default", got)
	}
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		want, _ := set.Lookup(tool.Name)
		b, _ := json.Marshal(want.Schema())
		var wantSchema any
		json.Unmarshal(b, &wantSchema)
		if diff := cmp.Diff(wantSchema, tool.InputSchema); diff != "" {
			t.Errorf("%s's schema mismatch (-want +got):\n%s", tool.Name, diff)
		}
		if tool.Description != want.Description {
			t.Errorf("%s's description = %q, want %q", tool.Name, tool.Description, want.Description)
		}
	}
	if diff := cmp.Diff([]string{"draw", "echo", "get_weather"}, names); diff != "" {
		t.Errorf("names mismatch (-want +got):\n%s", diff)
	}

	callTool := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("CallTool(%s) = %v", name, err)
		}
		return res
	}
	res := callTool("get_weather", map[string]any{"city": "Lima"})
	if diff := cmp.Diff(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{"city":"Lima","temp_c":14}`}},
		StructuredContent: map[string]any{"city": "Lima", "temp_c": 14.0},
	}, res, resultOpts); diff != "" {
		t.Errorf("get_weather mismatch (-want +got):\n%s", diff)
	}
	res = callTool("echo", map[string]any{"text": "plain text"})
	if diff := cmp.Diff(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain text"}}}, res, resultOpts); diff != "" {
		t.Errorf("echo mismatch (-want +got):\n%s", diff)
	}

	// Failures are isError results carrying the message the model would
	// read from the agent: the tool's own, and Execute's for bad arguments.
	weather, _ := set.Lookup("get_weather")
	for _, args := range []map[string]any{{"city": "Atlantis"}, {"city": 3.0}, {}, {"city": "x", "extra": true}} {
		res := callTool("get_weather", args)
		want := weather.Execute(context.Background(), args)
		if !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want.Output {
			t.Errorf("get_weather(%v) = %+v; want isError with %q", args, res, want.Output)
		}
	}
	res = callTool("echo", []any{"not", "an", "object"})
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != "invalid arguments for echo: they must be a JSON object" {
		t.Errorf("echo(array) = %+v", res)
	}

	res = callTool("draw", nil)
	want := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a red dot"},
		&mcp.ImageContent{MIMEType: "image/png", Data: pngData},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: wavData},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "media:3", MIMEType: "application/pdf", Blob: pdfData}},
	}}
	if diff := cmp.Diff(want, res, resultOpts); diff != "" {
		t.Errorf("draw mismatch (-want +got):\n%s", diff)
	}

	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Errorf("CallTool(nope) = %v; want an unknown tool error", err)
	}
}

// Our client against our server: what a tool returns comes back as it
// was, media included, whichever transport.
func TestClientServerRoundTrip(t *testing.T) {
	set := demoSet()
	c := connect(t, mcptools.InMemory(mcptools.NewServer(set, nil)), nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get_weather", map[string]any{"city": "Lima"}},
		{"get_weather", map[string]any{"city": "Atlantis"}},
		{"get_weather", map[string]any{"town": "Lima"}},
		{"echo", map[string]any{"text": ""}},
		{"echo", map[string]any{"text": "multi\nline"}},
		{"draw", nil},
	} {
		native, _ := set.Lookup(tc.tool)
		want := native.Execute(t.Context(), tc.args)
		// Structured outputs come back decoded from JSON.
		b, _ := json.Marshal(want.Output)
		if _, isString := want.Output.(string); !isString {
			json.Unmarshal(b, &want.Output)
		}
		got := lookup(t, c.Tools(), tc.tool).Execute(t.Context(), tc.args)
		want.Err, got.Err = nil, nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s(%v) through MCP mismatch (-native +MCP):\n%s", tc.tool, tc.args, diff)
		}
	}
}

// A set whose schemas say "object" as a list, as jsonschema.For writes
// some, is served as go-sdk requires, without changing the tools.
func TestServerObjectTypes(t *testing.T) {
	tool := toolset.MustDefine(toolset.Tool{Name: "t", InputSchema: &jsonschema.Schema{Types: []string{"object"}},
		Run: func(context.Context, map[string]any) (any, error) { return "ok", nil }})
	cs := sdkSession(t, mcptools.NewServer(toolset.MustNew(tool), nil))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "t"})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	if tool.InputSchema.Type != "" {
		t.Error("NewServer modified the tool's schema")
	}
}

// A tool reaches the rest of MCP through Request: it asks the client's
// user, and a text medium is sent as text. Outside MCP, Request is nil
// and the tool still runs.
func TestServerRequest(t *testing.T) {
	ask := toolset.MustDefine(toolset.Tool{Name: "ask", Description: "Ask the user their name",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			req := mcptools.Request(ctx)
			if req == nil {
				return "no MCP client to ask", nil
			}
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: &jsonschema.Schema{
				Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
			if err != nil {
				return nil, err
			}
			return toolset.MediaOutput{Output: "the user said", Media: []toolset.Media{
				{MIMEType: "text/plain", Data: []byte(res.Content["name"].(string))}}}, nil
		}})
	if r := ask.Execute(t.Context(), nil); r.Output != "no MCP client to ask" {
		t.Errorf("ask outside MCP = %+v", r)
	}
	srv := mcptools.NewServer(toolset.MustNew(ask), nil)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	// The 2025-11-25 protocol: go-sdk's default, 2026-07-28 (SEP-2575),
	// has the server ask through the result (SEP-2322) instead.
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	want := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "the user said"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "media:1", MIMEType: "text/plain", Text: "Ada"}},
	}}
	if diff := cmp.Diff(want, res, resultOpts); diff != "" {
		t.Errorf("ask mismatch (-want +got):\n%s", diff)
	}
}
