package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHostileToolSchemaSkipped is issue 32's attack by an MCP server: tools
// whose input schemas' $defs each refer twice to the one before (14 and 16
// levels). The client converted them for Gemini as any other, inlining
// every $ref (16 levels: seconds and hundreds of megabytes, for a schema
// of 1.6 KB). They are now skipped and reported, as a schema that cannot
// be used is, and the server's other tools work, shared definitions kept.
func TestHostileToolSchemaSkipped(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "v1"}, nil)
	text := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
	for _, levels := range []int{14, 16} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(schematest.Doubling(levels)), &schema); err != nil {
			t.Fatal(err)
		}
		srv.AddTool(&mcp.Tool{Name: fmt.Sprint("grow", levels), InputSchema: schema}, text)
	}
	var shared map[string]any
	if err := json.Unmarshal([]byte(schematest.Shared(20)), &shared); err != nil {
		t.Fatal(err)
	}
	srv.AddTool(&mcp.Tool{Name: "deliver", Description: "Plans a delivery", InputSchema: shared}, text)

	var logs lockedBuffer
	c := connect(t, mcptools.InMemory(srv), &mcptools.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	skipped := c.Skipped()
	if len(skipped) != 2 {
		t.Fatalf("Skipped() = %+v; want grow14 and grow16", skipped)
	}
	for i, s := range skipped {
		if want := fmt.Sprint("grow", 14+2*i); s.Name != want || !errors.Is(s.Err, toolset.ErrSchemaTooLarge) {
			t.Errorf("Skipped()[%d] = %+v; want %s, wrapping ErrSchemaTooLarge", i, s, want)
		}
	}
	if got := logs.String(); strings.Count(got, "skipping a tool that cannot be used") != 2 || !strings.Contains(got, "tool=grow16") {
		t.Errorf("logs = %q; want both tools' skipping", got)
	}

	tools := c.Tools()
	if len(tools) != 1 {
		t.Fatalf("Tools() = %d tools; want deliver", len(tools))
	}
	d, err := geminiadapter.Declaration(tools[0])
	if err != nil || d.Parameters != nil || d.ParametersJsonSchema == nil {
		t.Fatalf("Declaration(deliver) = %+v, %v; want ParametersJsonSchema", d, err)
	}
	if b, _ := json.Marshal(d.ParametersJsonSchema); !bytes.Contains(b, []byte(`"$defs":{"address":`)) {
		t.Errorf("deliver's declaration lost its $defs: %s", b)
	}
	r := tools[0].Execute(t.Context(), map[string]any{"stop0": map[string]any{"street": "Main St", "city": "Springfield"}})
	if r.IsError {
		t.Errorf("deliver: %v", r.Output)
	}
}
