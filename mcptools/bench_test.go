package mcptools_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// reportCPU reports the CPU time per call since start, as cpu-µs/op: on a
// shared machine, wall time also counts waits for a CPU, which an MCP call,
// with its hand-offs between goroutines (and processes), suffers from more
// than a native call. For stdio, the server's CPU time is not counted.
func reportCPU(b *testing.B, start time.Duration, ok bool) {
	end, ok2 := cpuTime()
	if ok && ok2 && b.N > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N)/float64(time.Microsecond), "cpu-µs/op")
	}
}

// BenchmarkToolCall is one call of the same tool (get_weather of demoSet:
// validation, a typed Run, a struct output), called natively, through MCP
// to a server in this process (in-memory pipe), and through MCP to a server
// in a subprocess (stdio). The difference is what MCP adds to a tool call:
// JSON-RPC encoding both ways, the transport, and the server's validation
// and execution. Allocations count this process only: for stdio, the
// server's are in the other process, as is its CPU time (cpu-µs/op).
func BenchmarkToolCall(b *testing.B) {
	set := demoSet()
	args := map[string]any{"city": "Paris"}
	b.Run("native", func(b *testing.B) {
		tool, _ := set.Lookup("get_weather")
		benchCalls(b, tool)
	})
	b.Run("mcp-inmemory", func(b *testing.B) {
		c := connect(b, mcptools.InMemory(mcptools.NewServer(set, nil)), nil)
		benchCalls(b, lookup(b, c.Tools(), "get_weather"))
	})
	// go-sdk's own client calling the same server: the share of the cost
	// that is the SDK's, without this package.
	b.Run("sdk-client-inmemory", func(b *testing.B) {
		cs := sdkSession(b, mcptools.NewServer(set, nil))
		ctx := context.Background()
		params := &mcp.CallToolParams{Name: "get_weather", Arguments: args}
		b.ReportAllocs()
		start, ok := cpuTime()
		for b.Loop() {
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
		reportCPU(b, start, ok)
	})
	b.Run("mcp-stdio", func(b *testing.B) {
		c := connect(b, serverCommand(b, "toolset"), nil)
		benchCalls(b, lookup(b, c.Tools(), "get_weather"))
	})
}

// BenchmarkToolCallHTTP is the same call over streamable HTTP on
// loopback: to an open server, and to a server that requires OAuth tokens
// (HandlerOptions.Auth, verifying each request's token with the
// authorization server's table) from a client logged in with a Login
// (each request takes its token from the Login). The difference is what
// OAuth costs per call once logged in.
func BenchmarkToolCallHTTP(b *testing.B) {
	b.Run("open", func(b *testing.B) {
		ts := httptest.NewServer(mcptools.HTTPHandler(demoSet(), nil))
		b.Cleanup(ts.Close)
		c := connect(b, mcptools.HTTP(ts.URL, nil), nil)
		benchCalls(b, lookup(b, c.Tools(), "get_weather"))
	})
	b.Run("oauth", func(b *testing.B) {
		_, resource := oauthProtected(b, nil, demoSet(), nil)
		login, err := mcptools.NewLogin(resource, &mcptools.LoginOptions{Open: (&browser{}).open})
		if err != nil {
			b.Fatal(err)
		}
		c := connect(b, mcptools.NewHTTP(resource, &mcptools.HTTPOptions{OAuth: login}), nil)
		benchCalls(b, lookup(b, c.Tools(), "get_weather"))
	})
}

// benchCalls calls tool with get_weather's arguments b.N times, and
// reports allocations and CPU time per call.
func benchCalls(b *testing.B, tool *toolset.Tool) {
	ctx := context.Background()
	args := map[string]any{"city": "Paris"}
	b.ReportAllocs()
	start, ok := cpuTime()
	for b.Loop() {
		if r := tool.Execute(ctx, args); r.IsError {
			b.Fatal(r.Output)
		}
	}
	reportCPU(b, start, ok)
}
