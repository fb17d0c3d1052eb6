package mcptools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// endlessServer is a go-sdk server with one tool whose tools/list answers
// every request with its first page and the cursor next(n) for the n-th
// request: a server whose pagination never ends.
func endlessServer(next func(n int) string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "endless", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "again", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	n := 0
	srv.AddReceivingMiddleware(func(h mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return h(ctx, method, req)
			}
			req.GetParams().(*mcp.ListToolsParams).Cursor = "" // every page is the first
			res, err := h(ctx, method, req)
			if err == nil {
				n++
				res.(*mcp.ListToolsResult).NextCursor = next(n)
			}
			return res, err
		}
	})
	return srv
}

// A server whose tools/list hands out a cursor it gave before fails
// Connect with an error saying so, instead of listing the same tools until
// the context ends.
func TestRepeatedCursor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		next   func(n int) string
		cursor string
	}{
		{"same", func(int) string { return "again" }, `"again"`},
		{"cycle", func(n int) string { return []string{"a", "b", "c"}[n%3] }, `"b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard
			defer cancel()
			_, err := mcptools.Connect(ctx, mcptools.InMemory(endlessServer(tc.next)), nil)
			if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave the cursor "+tc.cursor+" again") {
				t.Fatalf("Connect() = %v; want an error naming the repeated cursor %s", err, tc.cursor)
			}
		})
	}
}

// A server whose cursors are all new but never end is listed up to a
// bound, then Connect fails.
func TestEndlessPages(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard
	defer cancel()
	_, err := mcptools.Connect(ctx, mcptools.InMemory(endlessServer(func(n int) string { return fmt.Sprint(n) })), nil)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "more than 1000 pages") {
		t.Fatalf("Connect() = %v; want an error saying the list goes past 1000 pages", err)
	}
}
