package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// askingSDKServer is a go-sdk server with one tool, "ask", that asks its
// client's user for a name through the result (input_required) and
// answers with it; ttl is its tools/list ttlMs, and lists counts the
// listings.
func askingSDKServer(ttl int, lists *atomic.Int32) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "v1"}, &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			if _, ok := req.(*mcp.ListToolsRequest); ok {
				lists.Add(1)
				c.TTLMs = ttl
			}
		},
	})
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + r.Content["name"].(string)}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "Name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}}}, nil
		})
	return srv
}

// Our client speaks 2026-07-28 to a go-sdk server that serves it
// (stateless) and falls back to a session with one that does not
// (stateful); either way the server's questions reach the program's
// ElicitationHandler, in the result or as a request of the server.
func TestClientAgainstSDKServers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		want      string
	}{
		{"stateless", true, "2026-07-28"},
		{"stateful", false, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lists atomic.Int32
			srv := askingSDKServer(0, &lists)
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: tc.stateless}))
			t.Cleanup(ts.Close)
			var asked atomic.Int32
			c := connect(t, mcptools.HTTP(ts.URL, nil), askingClient("", &asked))
			if got := c.ProtocolVersion(); got != tc.want {
				t.Errorf("ProtocolVersion() = %q, want %q", got, tc.want)
			}
			if r := call(t, c, "ask", nil); r.IsError || r.Output != "hi Ada" || asked.Load() != 1 {
				t.Errorf("ask = %+v (asked %d times), want hi Ada, asked once", r, asked.Load())
			}
		})
	}
}

// A stateless server's tool list is fresh for its ttlMs: within it,
// Tools does not list again; with ttlMs 0, every Tools call does, and
// sees a tool added since.
func TestClientToolListTTL(t *testing.T) {
	for _, tc := range []struct {
		ttl       int
		wantLists int32
	}{
		{3_600_000, 1},
		{0, 3},
	} {
		var lists atomic.Int32
		srv := askingSDKServer(tc.ttl, &lists)
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true}))
		c := connect(t, mcptools.HTTP(ts.URL, nil), nil)
		c.Tools()
		srv.AddTool(&mcp.Tool{Name: "added", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		n := len(c.Tools())
		if got := lists.Load(); got != tc.wantLists {
			t.Errorf("ttlMs %d: %d listings, want %d", tc.ttl, got, tc.wantLists)
		}
		if wantTools := map[bool]int{true: 1, false: 2}[tc.ttl > 0]; n != wantTools {
			t.Errorf("ttlMs %d: %d tools after one was added, want %d", tc.ttl, n, wantTools)
		}
		c.Close()
		ts.Close()
	}
}
