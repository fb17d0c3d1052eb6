package devui

import (
	"net/http"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout/bodytimeouttest"
)

// A client that sends part of a body to the API (which reads none, but
// net/http drains it before answering) and stalls is answered and its
// connection closed, once the server's BodyTimeout has passed.
func TestSlowBody(t *testing.T) {
	e := newEnv(t, envOpts{server: func(c *agentserver.Config) { c.BodyTimeout = 50 * time.Millisecond }})
	resp, body := bodytimeouttest.Stall(t, e.http.Listener.Addr().String(), "POST", "/api/runs/r1/cancel",
		http.Header{"X-User": {"alice"}}, `{"reason":`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("%d %s, want 404 (no such run)", resp.StatusCode, body)
	}
}
