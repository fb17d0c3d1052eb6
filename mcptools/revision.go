package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// byRevision sends each request to the handler of its protocol revision:
// a request of revision 2026-07-28 or later (its MCP-Protocol-Version
// header says so, or, without the header, its body's _meta, or it is a
// server/discover) to the stateless handler, any other to the handler of
// sessions.
type byRevision struct {
	stateless, sessions http.Handler
	maxBody             int64 // go-sdk's MaxRequestBodyBytes: 0 its default, negative none
}

func (b *byRevision) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		b.route(v >= revisionStateless).ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		b.sessions.ServeHTTP(w, r)
		return
	}
	// Without the header, the body says: read it (within the limit the
	// handlers apply), then hand it on.
	limit := b.maxBody
	if limit == 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	var body []byte
	var err error
	if limit > 0 {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	} else {
		body, err = io.ReadAll(r.Body)
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	b.route(statelessBody(body)).ServeHTTP(w, r)
}

func (b *byRevision) route(stateless bool) http.Handler {
	if stateless {
		return b.stateless
	}
	return b.sessions
}

// statelessBody reports whether a request's body (a message or a batch)
// is of revision 2026-07-28 or later: a server/discover, or a message
// whose _meta names a protocol version.
func statelessBody(body []byte) bool {
	type message struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	var msgs []message
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return false
		}
	} else {
		var m message
		if json.Unmarshal(body, &m) != nil {
			return false
		}
		msgs = []message{m}
	}
	for _, m := range msgs {
		if _, ok := m.Params.Meta[mcp.MetaKeyProtocolVersion]; ok || m.Method == "server/discover" {
			return true
		}
	}
	return false
}
