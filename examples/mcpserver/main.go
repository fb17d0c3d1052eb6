// The mcpserver command serves the chat's demo tools, get_weather
// (made-up weather), current_time and calculate, as an MCP server over
// standard input and output, for any MCP client: the chat, Gemini CLI,
// Claude Desktop, an IDE.
//
// Usage:
//
//	go run ./examples/mcpserver
//
// It is meant to be started by its client, which speaks to it over the
// pipes; it exits when the client closes its standard input. With the chat:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat -mcp "go run ./examples/mcpserver"
//
// With -http it serves the same tools over streamable HTTP instead, at
// http://ADDR/mcp:
//
//	go run ./examples/mcpserver -http localhost:8080 &
//	go run ./examples/chat -mcp-http http://localhost:8080/mcp
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// implementation names the server to its clients.
var implementation = &mcp.Implementation{Name: "toolnexus-demo", Title: "toolnexus demo tools", Version: "v1"}

func main() {
	addr := flag.String("http", "", "serve over streamable HTTP on `addr` (e.g. localhost:8080) instead of stdio")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mcpserver [-http addr]\n\n"+
			"Serves the demo tools (get_weather, current_time, calculate) over MCP: on stdio, or on http://addr/mcp.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetFlags(0)
	log.SetPrefix("mcpserver: ")
	// Standard output carries the protocol: logs go to standard error.
	log.SetOutput(os.Stderr)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := serve(ctx, *addr); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// serve serves the demo tools until ctx is done or, on stdio, the client
// leaves.
func serve(ctx context.Context, addr string) error {
	tools := demotools.Set()
	if addr == "" {
		return mcptools.ServeStdio(ctx, tools, implementation)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("serving %v on http://%s/mcp", tools.Names(), ln.Addr())
	return serveHTTP(ctx, ln, tools)
}

// serveHTTP serves tools on ln, at /mcp, until ctx is done.
func serveHTTP(ctx context.Context, ln net.Listener, tools *toolset.Set) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptools.HTTPHandler(tools, implementation))
	srv := &http.Server{Handler: mux}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		srv.Close()
	}()
	err := srv.Serve(ln)
	<-stopped
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}
