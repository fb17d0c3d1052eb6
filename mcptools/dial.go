package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Dial returns a fresh transport to the server each time it is called: a
// transport connects once, so [Connect] calls Dial for the first connection
// and again for every reconnection. For a command, each transport starts a
// new process.
type Dial func() mcp.Transport

// Command dials a local server: the program name with args, started as a
// subprocess, spoken to over its standard input and output. The process
// inherits this process's environment and working directory; its standard
// error is discarded. For other settings, write a Dial that returns a
// &mcp.CommandTransport{Command: cmd} with a new exec.Cmd each time.
//
// Closing the connection closes the server's standard input, waits up to 5
// seconds for it to exit, then sends SIGTERM, and SIGKILL 5 seconds later.
func Command(name string, args ...string) Dial {
	return func() mcp.Transport {
		return &mcp.CommandTransport{Command: exec.Command(name, args...)}
	}
}

// HTTP dials a server over MCP's streamable HTTP transport at url. client
// carries whatever the server needs to let us in (a RoundTripper that adds
// an Authorization header, mTLS…); nil means http.DefaultClient. It is
// NewHTTP(url, &HTTPOptions{Client: client}); for a server that asks its
// users to log in with OAuth, see [NewHTTP] and [Login].
func HTTP(url string, client *http.Client) Dial {
	return NewHTTP(url, &HTTPOptions{Client: client})
}

// HTTPOptions configure [NewHTTP]. The zero value is ready to use.
type HTTPOptions struct {
	// Client carries the requests: its transport, mTLS, proxies, or an
	// Authorization header for a server with a fixed token. Nil means
	// http.DefaultClient.
	Client *http.Client

	// OAuth, when set, authorizes the requests with OAuth: it gives each
	// request its access token, and when the server answers 401 (or 403
	// for a missing scope), it is asked to log in, once, and the request
	// is made again. A [*Login] logs the program's user in through their
	// browser; any go-sdk auth.OAuthHandler will do. The same one serves
	// every reconnection, so that a reconnection needs no new login. With
	// a Login, Client's transport is wrapped so that a request the server
	// refuses with the token just issued at a login fails with
	// [ErrTokenRefused] rather than asking the user again.
	OAuth auth.OAuthHandler
}

// NewHTTP dials a server over MCP's streamable HTTP transport at url, as
// opts say; opts may be nil. With a [Login] in opts.OAuth, a server that
// asks for OAuth (GitHub's, Linear's, Notion's, Sentry's, Atlassian's
// remote servers…) is logged in to:
//
//	login, err := mcptools.NewLogin(url, &mcptools.LoginOptions{
//		Open:  func(_ context.Context, u string) error { fmt.Println("Log in at", u); return nil },
//		Store: mcptools.TokenFile(filepath.Join(configDir, "mcp-logins.json")),
//	})
//	if err != nil { ... }
//	c, err := mcptools.Connect(ctx, mcptools.NewHTTP(url, &mcptools.HTTPOptions{OAuth: login}), nil)
func NewHTTP(url string, opts *HTTPOptions) Dial {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if l, ok := o.OAuth.(*Login); ok && l != nil {
		client := http.Client{}
		if o.Client != nil {
			client = *o.Client
		}
		client.Transport = l.transport(client.Transport)
		o.Client = &client
	}
	return func() mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: o.Client, OAuthHandler: o.OAuth}
	}
}

// InMemory dials srv inside this process, over an in-memory pipe: each
// connection is a new session of srv. It is how a program or a test talks
// to an MCP server it runs itself, with the protocol but without a process
// or a socket.
func InMemory(srv *mcp.Server) Dial {
	return func() mcp.Transport { return inMemory{srv} }
}

// inMemory connects a new session of a server to the client: the server
// side first, as the client initializes the session while connecting.
type inMemory struct{ srv *mcp.Server }

func (t inMemory) Connect(ctx context.Context) (mcp.Connection, error) {
	if t.srv == nil {
		return nil, errors.New("mcptools: InMemory: the server is nil")
	}
	serverSide, clientSide := mcp.NewInMemoryTransports()
	if _, err := t.srv.Connect(ctx, serverSide, nil); err != nil {
		return nil, fmt.Errorf("mcptools: connecting the in-memory server: %w", err)
	}
	return clientSide.Connect(ctx)
}
