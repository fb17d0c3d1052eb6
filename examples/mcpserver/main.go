// The mcpserver command serves the chat's demo tools, get_weather
// (made-up weather), current_time, calculate and count_primes (which
// reports its progress to a client that asks), as an MCP server over
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
//
// That serves whoever reaches the port. With -token-file, only the
// clients that send the token the file holds (its first line) as a bearer
// token are served, for local use; the others are answered 401, with the
// WWW-Authenticate header that points MCP clients to the server's
// protected resource metadata (RFC 9728), at
// http://ADDR/.well-known/oauth-protected-resource/mcp:
//
//	(umask 077; openssl rand -hex 32 > ~/.mcpserver-token)
//	go run ./examples/mcpserver -http localhost:8080 -token-file ~/.mcpserver-token &
//	curl -i -X POST http://localhost:8080/mcp    # 401, WWW-Authenticate: Bearer resource_metadata="…"
//
// A client then sends the header "Authorization: Bearer TOKEN" (in Gemini
// CLI, the server's "headers" setting).
//
// A server for other users verifies tokens its authorization server issues
// instead: see mcptools.AuthOptions.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/examples/internal/httpserver"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// implementation names the server to its clients.
var implementation = &mcp.Implementation{Name: "toolnexus-demo", Title: "toolnexus demo tools", Version: "v1"}

func main() {
	addr := flag.String("http", "", "serve over streamable HTTP on `addr` (e.g. localhost:8080) instead of stdio")
	tokenFile := flag.String("token-file", "", "with -http, serve only clients that send the token in `file` (its first line) as a bearer token")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mcpserver [-http addr [-token-file file]]\n\n"+
			"Serves the demo tools (get_weather, current_time, calculate, count_primes) over MCP: on stdio, or on http://addr/mcp.\n\n")
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

	if *tokenFile != "" && *addr == "" {
		log.Fatal("-token-file needs -http")
	}
	var token string
	if *tokenFile != "" {
		var err error
		if token, err = readToken(*tokenFile); err != nil {
			log.Fatal(err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := serve(ctx, *addr, token); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// readToken reads the token in the first line of file.
func readToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	token, _, _ := strings.Cut(string(b), "\n")
	token = strings.TrimSpace(token)
	if len(token) < 16 {
		return "", fmt.Errorf("-token-file %s: the token (its first line) must have at least 16 characters", file)
	}
	return token, nil
}

// serve serves the demo tools until ctx is done or, on stdio, the client
// leaves. Over HTTP, a token other than "" is required of every client.
func serve(ctx context.Context, addr, token string) error {
	tools := demotools.Set()
	if addr == "" {
		return mcptools.ServeStdio(ctx, tools, implementation)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	how := ""
	if token != "" {
		how = ", to clients with the token"
	}
	log.Printf("serving %v on http://%s/mcp%s", tools.Names(), ln.Addr(), how)
	return serveHTTP(ctx, ln, tools, token)
}

// serveHTTP serves tools on ln, at /mcp, until ctx is done; with a token
// other than "", only to the clients that send it.
func serveHTTP(ctx context.Context, ln net.Listener, tools *toolset.Set, token string) error {
	mux := http.NewServeMux()
	opts := &mcptools.HandlerOptions{}
	if token != "" {
		opts.Auth = staticToken(token, "http://"+ln.Addr().String()+"/mcp")
		mux.Handle(opts.Auth.MetadataPath(), opts.Auth.MetadataHandler())
	}
	mux.Handle("/mcp", mcptools.NewHTTPHandler(tools, implementation, opts))
	srv := httpserver.New(mux)
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

// staticToken admits the clients of the server at resource that send
// token: all of them are one local user.
func staticToken(token, resource string) *mcptools.AuthOptions {
	want := sha256.Sum256([]byte(token))
	return &mcptools.AuthOptions{
		Resource:               resource,
		ResourceName:           implementation.Title,
		AllowMissingExpiration: true, // the token lasts as long as the file
		Verify: func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
			// Hashes of equal length, compared in constant time: how long
			// the comparison takes says nothing of the token.
			h := sha256.Sum256([]byte(got))
			if subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
				return nil, fmt.Errorf("%w: not the token of -token-file", auth.ErrInvalidToken)
			}
			return &auth.TokenInfo{UserID: "local", Extra: map[string]any{"aud": resource}}, nil
		},
	}
}
