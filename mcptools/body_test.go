package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/bodytimeout/bodytimeouttest"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

const bodyTimeout = 50 * time.Millisecond

// A client that sends part of its body and stalls is refused and its
// connection closed, once HandlerOptions.BodyTimeout has passed; a call
// whose answer (an event stream) lasts longer than that is not cut.
func TestHTTPHandlerSlowBody(t *testing.T) {
	slow := toolset.MustFunc("slow", "Takes its time", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-time.After(4 * bodyTimeout): // the answer outlives the body's deadline
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	ts := httptest.NewServer(mcptools.NewHTTPHandler(toolset.MustNew(slow), nil, &mcptools.HandlerOptions{BodyTimeout: bodyTimeout}))
	t.Cleanup(ts.Close) // after the client's Close, which connect registers

	resp, body := bodytimeouttest.Stall(t, ts.Listener.Addr().String(), "POST", "/",
		http.Header{"Accept": {"application/json, text/event-stream"}}, `{"jsonrpc":"2.0","id":1,"method":"initialize",`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "failed to read body") {
		t.Errorf("%d %s, want go-sdk's 400", resp.StatusCode, body)
	}

	c := connect(t, mcptools.HTTP(ts.URL, nil), nil)
	if r := call(t, c, "slow", map[string]any{}); r.IsError || r.Output != "done" {
		t.Errorf("the call whose answer outlived the body's deadline: %+v", r)
	}
}
