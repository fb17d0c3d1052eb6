package mcptools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// What a page of another site can make a browser send without a
// preflight (a form's POST, a POST of text or of no body, a GET; the
// user's cookies with it) changes nothing on the HTTP handler (issue 43's
// audit of bodiless and simple requests): a POST must be
// application/json (415 otherwise, in both revisions), a session's DELETE
// and GET need an Mcp-Session-Id header, which only a preflighted
// request carries. No tool runs and no session opens.
func TestCrossSiteSimpleRequests(t *testing.T) {
	var ran atomic.Int32
	touch := toolset.MustFunc("touch", "Changes something", func(context.Context, struct{}) (string, error) {
		ran.Add(1)
		return "touched", nil
	})
	srv := httptest.NewServer(mcptools.NewHTTPHandler(toolset.MustNew(touch), nil, nil))
	defer srv.Close()
	call := func(meta bool) string {
		params := map[string]any{"name": "touch", "arguments": map[string]any{}}
		if meta {
			params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28",
				mcp.MetaKeyClientCapabilities: map[string]any{}, mcp.MetaKeyClientInfo: map[string]any{"name": "evil", "version": "1"}}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		return string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}`
	for _, r := range []struct{ method, contentType, body string }{
		{"POST", "text/plain", call(true)}, // 2026-07-28, stateless
		{"POST", "text/plain", call(false)},
		{"POST", "application/x-www-form-urlencoded", call(true)},
		{"POST", "multipart/form-data; boundary=x", call(true)},
		{"POST", "text/plain", initialize},
		{"POST", "", ""},
		{"DELETE", "", ""},
		{"GET", "", ""},
	} {
		req, _ := http.NewRequest(r.method, srv.URL, strings.NewReader(r.body))
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Cookie", "session=alice")
		if r.contentType != "" {
			req.Header.Set("Content-Type", r.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s (%q) of another site: %d %v %s, want refused", r.method, r.contentType, resp.StatusCode, resp.Header, b)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
}
