package agentserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

const (
	devOrigin   = "http://localhost:5173" // a Vite dev server
	otherOrigin = "https://evil.example"
)

// corsServer serves the tests' protocol wrapped in the server's CORS
// handler, allowing origins.
func corsServer(t *testing.T, origins ...string) (*harness, *httptest.Server) {
	t.Helper()
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.AllowedOrigins = origins }})
	hs := httptest.NewServer(h.srv.CORS(handler(h.srv)))
	t.Cleanup(hs.Close)
	return h, hs
}

// send sends a request from a page of origin (none when "") and returns
// the response, its body read.
func send(t *testing.T, method, url, origin string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// preflight is what a browser sends before useChat's or HttpAgent's POST.
func preflight(t *testing.T, url, origin string) *http.Response {
	t.Helper()
	resp, _ := send(t, http.MethodOptions, url, origin, map[string]string{
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "authorization,content-type",
	}, "")
	return resp
}

func varies(resp *http.Response, name string) bool {
	return slices.ContainsFunc(resp.Header.Values("Vary"), func(v string) bool { return strings.EqualFold(v, name) })
}

func TestCORSPreflight(t *testing.T) {
	_, hs := corsServer(t, devOrigin)
	resp := preflight(t, hs.URL+"/run", devOrigin)
	hd := resp.Header
	if resp.StatusCode != http.StatusNoContent ||
		hd.Get("Access-Control-Allow-Origin") != devOrigin ||
		hd.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(hd.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(hd.Get("Access-Control-Allow-Methods"), "DELETE") ||
		hd.Get("Access-Control-Allow-Headers") != "authorization,content-type" ||
		hd.Get("Access-Control-Max-Age") == "" || !varies(resp, "Origin") {
		t.Errorf("preflight = %d %v, want 204 allowing %s with credentials, POST and its headers", resp.StatusCode, hd, devOrigin)
	}
}

// A request of an allowed origin runs, and its answer is the page's to
// read; the user comes from the request as always.
func TestCORSRequest(t *testing.T) {
	h, hs := corsServer(t, devOrigin)
	h.model.Enqueue(fake.Text("hello"))
	resp, body := send(t, http.MethodPost, hs.URL+"/run", devOrigin,
		map[string]string{"Content-Type": "application/json", "X-User": "ann"}, `{"thread":"t","text":"hi"}`)
	hd := resp.Header
	if resp.StatusCode != 200 || !strings.Contains(body, "hello") ||
		hd.Get("Access-Control-Allow-Origin") != devOrigin || hd.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(hd.Get("Access-Control-Expose-Headers"), "Retry-After") || !varies(resp, "Origin") {
		t.Errorf("POST from %s = %d %v\n%s", devOrigin, resp.StatusCode, hd, body)
	}
	// A request without Origin (same origin, curl) is served as before.
	h.model.Enqueue(fake.Text("again"))
	resp, body = send(t, http.MethodPost, hs.URL+"/run", "",
		map[string]string{"Content-Type": "application/json", "X-User": "ann"}, `{"thread":"t","text":"hi"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, "again") || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("POST without Origin = %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
}

// An origin that is not allowed gets no CORS header: its preflight is
// refused, and what needs none (a form, a body of text) is refused
// before anything runs (403 cross_origin), for the browser to hide.
func TestCORSDisallowedOrigin(t *testing.T) {
	h, hs := corsServer(t, devOrigin)
	for _, origin := range []string{otherOrigin, "http://localhost:5174", "null"} {
		resp := preflight(t, hs.URL+"/run", origin)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" ||
			resp.Header.Get("Access-Control-Allow-Credentials") != "" || resp.Header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("preflight of %s = %d %v, want 403 without CORS headers", origin, resp.StatusCode, resp.Header)
		}
		resp, _ = send(t, http.MethodPost, hs.URL+"/run", origin,
			map[string]string{"Content-Type": "text/plain", "X-User": "ann"}, `{"thread":"t","text":"hi"}`)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("simple POST of %s = %d %v, want 403 without CORS headers", origin, resp.StatusCode, resp.Header)
		}
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}

// "*" allows every origin, never with credentials, and only a server that
// authenticates its users.
func TestCORSAnyOrigin(t *testing.T) {
	_, hs := corsServer(t, "*", devOrigin)
	resp := preflight(t, hs.URL+"/run", otherOrigin)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight of %s = %d %v, want 204, origin *, no credentials", otherOrigin, resp.StatusCode, resp.Header)
	}
	// A listed origin still gets its own, with credentials.
	resp = preflight(t, hs.URL+"/run", devOrigin)
	if resp.Header.Get("Access-Control-Allow-Origin") != devOrigin || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight of %s = %v", devOrigin, resp.Header)
	}
}

func TestCORSConfig(t *testing.T) {
	a := newHarness(t, harnessOpts{}).srv.Agent()
	for _, tc := range []struct {
		origins []string
		auth    bool
		wantErr string
	}{
		{origins: []string{"*"}, wantErr: "needs Config.Authenticate"},
		{origins: []string{"localhost:5173"}, auth: true, wantErr: "not an origin"},
		{origins: []string{"http://localhost:5173/app"}, auth: true, wantErr: "not an origin"},
		{origins: []string{"null"}, auth: true, wantErr: "not an origin"},
		{origins: []string{"ftp://host"}, auth: true, wantErr: "not an origin"},
		{origins: []string{"http://localhost:5173", "https://app.example/"}},
		{origins: []string{"*"}, auth: true},
	} {
		cfg := agentserver.Config{Agent: a, AllowedOrigins: tc.origins}
		if tc.auth {
			cfg.Authenticate = func(*http.Request) (string, error) { return "u", nil }
		}
		srv, err := agentserver.New(cfg)
		if err == nil {
			srv.Close(bg)
		}
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("New(AllowedOrigins %q, auth %v) = %v, want %q", tc.origins, tc.auth, err, tc.wantErr)
		}
	}
	// Wrapped twice (an application's mux around a protocol's handler),
	// the answer is the same.
	h2, _ := corsServer(t, devOrigin)
	twice := httptest.NewServer(h2.srv.CORS(h2.srv.CORS(handler(h2.srv))))
	defer twice.Close()
	resp := preflight(t, twice.URL+"/run", devOrigin)
	if resp.StatusCode != http.StatusNoContent || len(resp.Header.Values("Vary")) != 3 || len(resp.Header.Values("Access-Control-Allow-Origin")) != 1 {
		t.Errorf("preflight through two CORS handlers = %d %v", resp.StatusCode, resp.Header)
	}
	h2.model.Enqueue(fake.Text("hello"))
	resp, _ = send(t, http.MethodPost, twice.URL+"/run", devOrigin,
		map[string]string{"Content-Type": "application/json", "X-User": "ann"}, `{"thread":"t","text":"hi"}`)
	if resp.StatusCode != http.StatusOK || len(resp.Header.Values("Vary")) != 1 {
		t.Errorf("POST through two CORS handlers = %d %v", resp.StatusCode, resp.Header)
	}
	// Without AllowedOrigins, CORS writes no CORS header and leaves
	// preflights to the handler; it still refuses what a page of another
	// origin sends that changes something.
	h := newHarness(t, harnessOpts{})
	plain := httptest.NewServer(h.srv.CORS(handler(h.srv)))
	defer plain.Close()
	if resp := preflight(t, plain.URL+"/run", devOrigin); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Vary") != "" {
		t.Errorf("preflight without AllowedOrigins = %d %v, want the handler's 405", resp.StatusCode, resp.Header)
	}
	if resp, body := send(t, http.MethodPost, plain.URL+"/run", devOrigin,
		map[string]string{"Content-Type": "application/json", "X-User": "ann"}, `{"thread":"t","text":"hi"}`); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, "cross_origin") || resp.Header.Get("Vary") != "" {
		t.Errorf("POST of another origin without AllowedOrigins = %d %v %s, want 403 cross_origin", resp.StatusCode, resp.Header, body)
	}
}
