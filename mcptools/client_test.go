package mcptools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// sdkServer is a server written with go-sdk alone: typed tools, tools with
// names Gemini refuses, a tool whose schema cannot be used, and a page size
// of 2 so that listing takes several pages.
func sdkServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "v1"}, &mcp.ServerOptions{PageSize: 2})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_weather", Description: "Current weather for a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, weatherOut, error) {
			return nil, weatherOut{City: in.City, TempC: 21}, nil
		})
	text := func(s string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		}
	}
	empty := &jsonschema.Schema{Type: "object"}
	srv.AddTool(&mcp.Tool{Name: "files/read file", Description: "Read a file", InputSchema: empty}, text("read"))
	srv.AddTool(&mcp.Tool{Name: "2fa", Title: "Second factor", InputSchema: empty}, text("2fa"))
	srv.AddTool(&mcp.Tool{Name: strings.Repeat("very_long_tool_name_", 5) + "one", InputSchema: empty}, text("one"))
	srv.AddTool(&mcp.Tool{Name: strings.Repeat("very_long_tool_name_", 5) + "two", InputSchema: empty}, text("two"))
	// A schema of a draft jsonschema-go does not know: skipped, not a crash.
	srv.AddTool(&mcp.Tool{Name: "draft2019", InputSchema: map[string]any{
		"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object"}}, text("x"))
	srv.AddTool(&mcp.Tool{Name: "fails", InputSchema: empty},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}, nil
		})
	return srv
}

func TestClientAgainstSDKServer(t *testing.T) {
	c := connect(t, mcptools.InMemory(sdkServer()), nil)
	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	long := strings.Repeat("very_long_tool_name_", 5)
	// In the server's order: go-sdk lists tools by name.
	wantNames := []string{"_2fa", "fails", "files_read_file", "get_weather",
		long[:27] + "_" + fnv32(long+"one") + "_" + (long + "one")[len(long)+3-27:],
		long[:27] + "_" + fnv32(long+"two") + "_" + (long + "two")[len(long)+3-27:]}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("tool names mismatch (-want +got):\n%s", diff)
	}
	for _, n := range names {
		if len(n) > toolset.MaxNameLen {
			t.Errorf("name %q is %d characters long", n, len(n))
		}
	}
	skipped := c.Skipped()
	if len(skipped) != 1 || skipped[0].Name != "draft2019" || !errors.Is(skipped[0].Err, toolset.ErrInvalidTool) {
		t.Errorf("Skipped() = %+v; want draft2019, for its schema", skipped)
	}

	tools := c.Tools()
	if d := lookup(t, tools, "_2fa").Description; d != "Second factor" {
		t.Errorf("description of a tool with only a title = %q; want the title", d)
	}
	weather := lookup(t, tools, "get_weather")
	if got := weather.Schema().Properties["city"].Description; got != "the city, e.g. Paris" {
		t.Errorf("city's description = %q; want the server's", got)
	}
	r := weather.Execute(t.Context(), map[string]any{"city": "Oslo"})
	if diff := cmp.Diff(toolset.Result{Output: map[string]any{"city": "Oslo", "temp_c": 21.0}}, r); diff != "" {
		t.Errorf("get_weather mismatch (-want +got):\n%s", diff)
	}
	// Arguments are checked before the server is called, with the message
	// the model reads for any tool.
	r = weather.Execute(t.Context(), map[string]any{"town": "Oslo"})
	if !r.IsError || !errors.Is(r.Err, toolset.ErrInvalidArguments) {
		t.Errorf("get_weather(town) = %+v; want invalid arguments", r)
	}
	// The server is called under the original name.
	if r := call(t, c, "files_read_file", nil); r.Output != "read" {
		t.Errorf("files_read_file = %+v; want the server's files/read file answer", r)
	}
	if r := call(t, c, wantNames[5], nil); r.Output != "two" {
		t.Errorf("%s = %+v; want two", wantNames[5], r)
	}
	r = call(t, c, "fails", nil)
	var te *mcptools.ToolError
	if !r.IsError || r.Output != "disk full" || !errors.As(r.Err, &te) {
		t.Errorf("fails = %+v; want the server's isError text as a ToolError", r)
	}
}

// fnv32 is the hash geminiName puts in shortened names.
func fnv32(s string) string {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return fmt.Sprintf("%08x", h)
}

func TestClientOptions(t *testing.T) {
	var mapped []string
	c := connect(t, mcptools.InMemory(sdkServer()), &mcptools.Options{
		Prefix: "my tools/",
		Filter: func(tool *mcp.Tool) bool { return tool.Name == "get_weather" || tool.Name == "fails" },
		MapResult: func(_ context.Context, tool *mcp.Tool, res *mcp.CallToolResult) (any, error) {
			mapped = append(mapped, tool.Name)
			if res.IsError {
				return "failure hidden", nil
			}
			return mcptools.Output(res)
		},
	})
	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"my_tools_fails", "my_tools_get_weather"}, names); diff != "" {
		t.Errorf("names mismatch (-want +got):\n%s", diff)
	}
	if r := call(t, c, "my_tools_fails", nil); r.IsError || r.Output != "failure hidden" {
		t.Errorf("fails = %+v; want MapResult's answer", r)
	}
	if r := call(t, c, "my_tools_get_weather", map[string]any{"city": "Rome"}); r.IsError {
		t.Errorf("get_weather = %+v", r)
	}
	if diff := cmp.Diff([]string{"fails", "get_weather"}, mapped); diff != "" {
		t.Errorf("MapResult saw (-want +got):\n%s", diff)
	}
}

func TestClientNameCollision(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "clash", Version: "v1"}, nil)
	empty := &jsonschema.Schema{Type: "object"}
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "read file", InputSchema: empty}, noop)
	srv.AddTool(&mcp.Tool{Name: "read_file", InputSchema: empty}, noop)
	_, err := mcptools.Connect(t.Context(), mcptools.InMemory(srv), nil)
	if !errors.Is(err, mcptools.ErrNameCollision) || !strings.Contains(err.Error(), `"read file" and "read_file" would both be called "read_file"`) {
		t.Fatalf("Connect() = %v; want a collision naming both tools", err)
	}
	// Filtering one out is the way around it.
	c := connect(t, mcptools.InMemory(srv), &mcptools.Options{Filter: func(t *mcp.Tool) bool { return t.Name != "read file" }})
	if n := len(c.Tools()); n != 1 {
		t.Errorf("%d tools; want 1", n)
	}
}

// A protocol error (a tool the server no longer has) is an error the model
// reads, and the session stays up.
func TestClientRefusedCall(t *testing.T) {
	srv := sdkServer()
	c := connect(t, mcptools.InMemory(srv), nil)
	weather := lookup(t, c.Tools(), "get_weather")
	srv.RemoveTools("get_weather")
	r := weather.Execute(t.Context(), map[string]any{"city": "Oslo"})
	if !r.IsError || r.Output != `the MCP server refused the call of get_weather: unknown tool "get_weather"` {
		t.Errorf("a removed tool = %+v; want the server's refusal", r)
	}
	if r := call(t, c, "fails", nil); r.Output != "disk full" {
		t.Errorf("the next call = %+v; want the session still up", r)
	}
}

// The server's tool-list-changed notification refreshes the list for the
// next Tools call.
func TestClientToolListChanged(t *testing.T) {
	srv := sdkServer()
	c := connect(t, mcptools.InMemory(srv), nil)
	srv.AddTool(&mcp.Tool{Name: "added", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
		})
	srv.RemoveTools("fails")
	deadline := time.Now().Add(10 * time.Second)
	for {
		names := map[string]bool{}
		for _, tool := range c.Tools() {
			names[tool.Name] = true
		}
		if names["added"] && !names["fails"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Tools() never showed the change: %v", names)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r := call(t, c, "added", nil); r.Output != "new" {
		t.Errorf("added = %+v", r)
	}
}

func TestConnectErrors(t *testing.T) {
	if _, err := mcptools.Connect(t.Context(), nil, nil); err == nil {
		t.Error("Connect(nil dial) succeeded")
	}
	if _, err := mcptools.Connect(t.Context(), func() mcp.Transport { return nil }, nil); err == nil {
		t.Error("Connect(dial returning nil) succeeded")
	}
	if _, err := mcptools.Connect(t.Context(), mcptools.InMemory(nil), nil); err == nil || !strings.Contains(err.Error(), "server is nil") {
		t.Errorf("Connect(InMemory(nil)) = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := mcptools.Connect(ctx, mcptools.InMemory(sdkServer()), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect(cancelled) = %v; want context.Canceled", err)
	}
}

// Options.ClientOptions reach go-sdk's client: the server sees the
// capabilities its handlers offer, and the caller's list-changed handler
// runs after the client has marked its tools for listing again.
func TestClientSDKOptions(t *testing.T) {
	srv := sdkServer()
	srv.AddTool(&mcp.Tool{Name: "caps", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caps := req.ClientCapabilities()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("elicitation %t", caps != nil && caps.Elicitation != nil)}}}, nil
		})
	changed := make(chan struct{}, 1)
	c := connect(t, mcptools.InMemory(srv), &mcptools.Options{ClientOptions: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}})
	if r := call(t, c, "caps", nil); r.Output != "elicitation true" {
		t.Errorf("caps = %+v; want the elicitation capability offered", r)
	}
	srv.AddTool(&mcp.Tool{Name: "added", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
		})
	<-changed
	if r := call(t, c, "added", nil); r.Output != "new" {
		t.Errorf("added = %+v", r)
	}
}
