// Package httpserver holds the http.Server the examples serve with
// (examples/server, examples/chat -web, examples/mcpserver -http): its
// timeouts bound what a client may hold without cutting the event
// streams the handlers answer with.
package httpserver

import (
	"net/http"
	"time"
)

// The timeouts of New's server.
const (
	// ReadHeaderTimeout bounds the reading of a request's headers.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds the reading of a whole request, its body
	// included, until a handler sets a deadline of its own (agentserver's
	// and mcptools' handlers do, 30 s for the body by default). It does
	// not cut a stream: net/http lifts it once the body is read.
	ReadTimeout = 30 * time.Second
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request.
	IdleTimeout = 2 * time.Minute
)

// New returns a server of h with the timeouts above, and no WriteTimeout:
// it bounds a response's whole life, and so would cut every event stream
// at that age (agentserver's streams bound each write themselves).
func New(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout, IdleTimeout: IdleTimeout}
}
