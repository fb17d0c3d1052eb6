package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"

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
// an Authorization header, mTLS…); nil means http.DefaultClient.
func HTTP(url string, client *http.Client) Dial {
	return func() mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}
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
