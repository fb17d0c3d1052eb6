package main

import (
	"context"
	"os"
	"testing"

	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"go.uber.org/goleak"
)

// mcpServerArg, as the test binary's first argument, makes it serve the
// demo tools over MCP on stdio instead of running the tests, so that the
// tests can give -mcp a real subprocess server.
const mcpServerArg = "chat-test-mcp-server"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == mcpServerArg {
		if err := mcptools.ServeStdio(context.Background(), demotools.New(fixedClock), nil); err != nil {
			os.Exit(1)
		}
		return
	}
	// genai's dependencies start opencensus's stats worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
