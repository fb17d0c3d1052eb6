package mcptools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// hints is what a tool says of its effects.
type hints struct{ ReadOnly, Idempotent bool }

// The tools of a go-sdk server carry its readOnlyHint and idempotentHint
// into ReadOnly and Idempotent; a tool without annotations, or with only
// others, says neither.
func TestClientHintsFromAnnotations(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hints", Version: "v1"}, nil)
	empty := &jsonschema.Schema{Type: "object"}
	no := false
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	for _, tool := range []*mcp.Tool{
		{Name: "lookup", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "set_value", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		{Name: "both", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		{Name: "send", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, Title: "Send a message"}},
		{Name: "plain"},
	} {
		tool.InputSchema = empty
		srv.AddTool(tool, noop)
	}
	c := connect(t, mcptools.InMemory(srv), nil)
	got := map[string]hints{}
	for _, tool := range c.Tools() {
		got[tool.Name] = hints{tool.ReadOnly, tool.Idempotent}
	}
	want := map[string]hints{
		"lookup":    {ReadOnly: true},
		"set_value": {Idempotent: true},
		"both":      {ReadOnly: true, Idempotent: true},
		"send":      {},
		"plain":     {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hints (-want +got):\n%s", diff)
	}
}

// NewServer publishes a tool's hints as annotations, which go-sdk's client
// reads; a tool that says neither has no annotations. Through mcptools'
// own client, the hints come back as they were.
func TestServerPublishesHints(t *testing.T) {
	run := func(context.Context, map[string]any) (any, error) { return "ok", nil }
	set := toolset.MustNew(
		toolset.MustDefine(toolset.Tool{Name: "lookup", Run: run, ReadOnly: true}),
		toolset.MustDefine(toolset.Tool{Name: "set_value", Run: run, Idempotent: true}),
		toolset.MustDefine(toolset.Tool{Name: "send", Run: run}),
	)
	cs := sdkSession(t, mcptools.NewServer(set, nil))
	got := map[string]*mcp.ToolAnnotations{}
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tool.Name] = tool.Annotations
	}
	want := map[string]*mcp.ToolAnnotations{
		"lookup":    {ReadOnlyHint: true},
		"set_value": {IdempotentHint: true},
		"send":      nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations go-sdk's client lists (-want +got):\n%s", diff)
	}

	c := connect(t, mcptools.InMemory(mcptools.NewServer(set, nil)), nil)
	back := map[string]hints{}
	for _, tool := range c.Tools() {
		back[tool.Name] = hints{tool.ReadOnly, tool.Idempotent}
	}
	if diff := cmp.Diff(map[string]hints{"lookup": {ReadOnly: true}, "set_value": {Idempotent: true}, "send": {}}, back); diff != "" {
		t.Errorf("hints through mcptools both ways (-want +got):\n%s", diff)
	}
}

// A caller who does not trust a server's hints clears them on the tool:
// the reconnection reads them there, and no longer calls again a call
// that was in flight when the server died.
func TestSubprocessCrashHintsCleared(t *testing.T) {
	c := connect(t, serverCommand(t, "flaky", t.TempDir()), nil)
	tool := lookup(t, c.Tools(), "crash_idempotent")
	if !tool.Idempotent {
		t.Fatal("crash_idempotent is not Idempotent: the server annotates it")
	}
	tool.Idempotent = false
	r := tool.Execute(t.Context(), nil)
	if !r.IsError || !strings.Contains(r.Output.(string), "crash_idempotent may or may not have run") {
		t.Fatalf("crash_idempotent with its hint cleared = %+v; want an error saying it may not have run", r)
	}
}
