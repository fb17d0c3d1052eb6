package mcptools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"go.uber.org/goleak"
)

// serverArg, as the test binary's first argument, makes it run as the MCP
// server named by the second (a key of testServers) instead of the tests:
// the tests start real subprocess servers by running themselves, the trick
// go-sdk's cmd_test.go uses.
const serverArg = "mcptools-test-server"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == serverArg {
		run, ok := testServers[os.Args[2]]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown test server %q\n", os.Args[2])
			os.Exit(2)
		}
		if err := run(context.Background(), os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	// genai's dependencies start opencensus's stats worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// testServers are what the test binary can run in place of the tests:
// MCP servers over stdio, and a process that saves logins.
var testServers = map[string]func(ctx context.Context, args []string) error{
	// savelogins: a process that keeps logins in the TokenFile at
	// args[0] at the same time as others (see saveLogins).
	"savelogins": func(_ context.Context, args []string) error {
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		return saveLogins(args[0], args[1], n, filepath.Join(filepath.Dir(args[0]), "go"))
	},
	// toolset: the demo set, served by NewServer.
	"toolset": func(ctx context.Context, _ []string) error {
		return mcptools.ServeStdio(ctx, demoSet(), &mcp.Implementation{Name: "demo", Version: "v1"})
	},
	// progress: a toolset, served by NewServer, whose tool reports its
	// progress (see progressSet).
	"progress": func(ctx context.Context, _ []string) error {
		return mcptools.ServeStdio(ctx, progressSet(), &mcp.Implementation{Name: "progress", Version: "v1"})
	},
	// flaky: a go-sdk server whose tools report the process's pid, and
	// crash it in the middle of their first call (marked by a file in the
	// directory given as argument).
	"flaky": func(ctx context.Context, args []string) error {
		return flakyServer(args[0]).Run(ctx, &mcp.StdioTransport{})
	},
	// slowstart: a server that hangs at start-up, as `npx -y` does while
	// it installs, or a wedged binary: it announces its pid in the
	// directory given as argument (a file PID.pid), then neither reads
	// its standard input nor answers until a file "release" appears
	// there, and is the flaky server from then on. Only a signal ends it
	// before.
	"slowstart": func(ctx context.Context, args []string) error {
		dir := args[0]
		if err := announce(dir); err != nil {
			return err
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return flakyServer(dir).Run(ctx, &mcp.StdioTransport{})
	},
}

// announce writes this process's pid file in dir, whole or not at all.
func announce(dir string) error {
	name := filepath.Join(dir, fmt.Sprintf("%d.pid", os.Getpid()))
	if err := os.WriteFile(name+".tmp", nil, 0o600); err != nil {
		return err
	}
	return os.Rename(name+".tmp", name)
}

// serverCommand dials the test binary run as the named test server.
func serverCommand(t testing.TB, name string, args ...string) mcptools.Dial {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcptools.Command(exe, append([]string{serverArg, name}, args...)...)
}

// flakyServer is the "flaky" test server.
func flakyServer(dir string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "v1"}, nil)
	type none struct{}
	pid := func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
	}
	// crashOnce exits the process, without answering, on the first call of
	// the tool named name; later calls answer with the pid.
	crashOnce := func(name string) mcp.ToolHandlerFor[none, any] {
		return func(ctx context.Context, req *mcp.CallToolRequest, in none) (*mcp.CallToolResult, any, error) {
			marker := filepath.Join(dir, name)
			if _, err := os.Stat(marker); err != nil {
				if err := os.WriteFile(marker, nil, 0o600); err != nil {
					return nil, nil, err
				}
				os.Exit(3)
			}
			return pid(ctx, req, in)
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "pid", Description: "this server's process id",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, pid)
	mcp.AddTool(srv, &mcp.Tool{Name: "crash_idempotent", Description: "crashes on its first call",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, crashOnce("crash_idempotent"))
	mcp.AddTool(srv, &mcp.Tool{Name: "crash_write", Description: "crashes on its first call"}, crashOnce("crash_write"))
	return srv
}
