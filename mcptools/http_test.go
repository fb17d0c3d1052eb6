package mcptools_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// bearer adds an Authorization header to every request, as a caller's
// http.Client would.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// restartable serves the current server, which a test replaces to
// simulate a restart: the new server knows none of the old sessions.
type restartable struct {
	current atomic.Pointer[mcp.Server]
	old     []*mcp.Server
	handler http.Handler
}

func newRestartable() *restartable {
	s := &restartable{}
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.current.Load() }, nil)
	s.current.Store(mcptools.NewServer(demoSet(), nil))
	return s
}

// restart replaces the server. With endSessions, the old server's sessions
// end, as when a process dies; without, they linger until closeOld, and
// the client learns of the restart only from its next call.
func (s *restartable) restart(endSessions bool) {
	old := s.current.Swap(mcptools.NewServer(demoSet(), nil))
	s.old = append(s.old, old)
	if endSessions {
		s.closeOld()
	}
}

func (s *restartable) closeOld() {
	for _, srv := range s.old {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}
}

func (s *restartable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer secret" {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// TestHTTP runs in both eras: 2026-07-28 (stateless, the default) and
// 2025-11-25 (sessions).
func TestHTTP(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			srv := newRestartable()
			ts := httptest.NewServer(srv)
			defer ts.Close()
			client := &http.Client{Transport: bearer{"secret"}}
			defer client.CloseIdleConnections()

			if _, err := mcptools.Connect(t.Context(), mcptools.HTTP(ts.URL, nil), nil); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
				t.Fatalf("Connect() without the token = %v; want unauthorized", err)
			}

			c := connect(t, mcptools.HTTP(ts.URL, client), &mcptools.Options{Prefix: "remote.", ProtocolVersion: version})
			if r := call(t, c, "remote.echo", map[string]any{"text": "over HTTP"}); r.IsError || r.Output != "over HTTP" {
				t.Fatalf("echo = %+v", r)
			}
			// Whether the client learns of the restart from its event stream or
			// from the call (which the server refuses with "session not found"
			// before running it), the call is made on a new session, even for a
			// tool without annotations.
			for _, endSessions := range []bool{true, false} {
				srv.restart(endSessions)
				if r := call(t, c, "remote.echo", map[string]any{"text": "after a restart"}); r.IsError || r.Output != "after a restart" {
					t.Fatalf("echo after a restart (sessions ended: %t) = %+v", endSessions, r)
				}
			}
			if got := c.ProtocolVersion(); version != "" && got != version {
				t.Errorf("ProtocolVersion() = %q, want %q", got, version)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close() = %v", err)
			}
			srv.closeOld()
		})
	}
}

// HTTPHandler serves a set to a client that dials it with HTTP.
func TestHTTPHandler(t *testing.T) {
	ts := httptest.NewServer(mcptools.HTTPHandler(demoSet(), nil))
	defer ts.Close()
	c := connect(t, mcptools.HTTP(ts.URL, nil), nil)
	r := call(t, c, "get_weather", map[string]any{"city": "Quito"})
	if r.IsError || r.Output.(map[string]any)["temp_c"] != 15.0 {
		t.Errorf("get_weather = %+v", r)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}
