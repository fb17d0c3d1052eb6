package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.uber.org/goleak"
)

// serveArg, as the test binary's first argument, makes it run serve on
// stdio, as the command does: the tests start it as a real subprocess.
const serveArg = "mcpserver-test-serve"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		if err := serve(context.Background(), ""); err != nil {
			os.Exit(1)
		}
		return
	}
	goleak.VerifyTestMain(m)
}

// checkTools checks that c offers the demo tools, and that they answer as
// the tools themselves do.
func checkTools(t *testing.T, c *mcptools.Client) {
	t.Helper()
	set := toolset.MustNew(c.Tools()...)
	native := demotools.Set()
	names, want := set.Names(), native.Names()
	slices.Sort(names)
	slices.Sort(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get_weather", map[string]any{"city": "Paris"}},
		{"calculate", map[string]any{"expression": "(12+7)*3"}},
		{"calculate", map[string]any{"expression": "1/0"}},
		{"current_time", map[string]any{"timezone": "Atlantis/Capital"}},
	} {
		remote, _ := set.Lookup(tc.tool)
		local, _ := native.Lookup(tc.tool)
		got, want := remote.Execute(t.Context(), tc.args), local.Execute(t.Context(), tc.args)
		if !want.IsError { // structured outputs come back decoded from JSON
			b, _ := json.Marshal(want.Output)
			json.Unmarshal(b, &want.Output)
		}
		if got.IsError != want.IsError || !cmp.Equal(got.Output, want.Output) {
			t.Errorf("%s(%v) over MCP = %v (error %t), want %v (error %t)", tc.tool, tc.args, got.Output, got.IsError, want.Output, want.IsError)
		}
	}
}

func TestStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcptools.Connect(t.Context(), mcptools.Command(exe, serveArg), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, c)
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}

func TestHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- serveHTTP(ctx, ln, demotools.Set()) }()
	c, err := mcptools.Connect(t.Context(), mcptools.HTTP("http://"+ln.Addr().String()+"/mcp", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, c)
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	cancel()
	if err := <-served; err != context.Canceled {
		t.Errorf("serveHTTP() = %v; want context.Canceled", err)
	}
}
