package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// tokens is a verifier over a fixed table of tokens.
type tokens map[string]*auth.TokenInfo

func (ts tokens) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	info, ok := ts[token]
	if !ok {
		return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
	}
	return info, nil
}

// whoami is a tool that answers with the verified user of its call.
var whoami = toolset.MustDefine(toolset.Tool{Name: "whoami", Description: "Who is calling",
	Run: func(ctx context.Context, _ map[string]any) (any, error) {
		info := mcptools.TokenInfo(ctx)
		if info == nil {
			return "nobody", nil
		}
		return info.UserID + " " + strings.Join(info.Scopes, ","), nil
	}})

// protectedServer serves whoami and echo at /mcp, admitting the tokens of
// table for the resource it returns, and its metadata.
func protectedServer(t *testing.T, table func(resource string) tokens) (resource string, opts *mcptools.AuthOptions) {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	resource = ts.URL + "/mcp"
	opts = &mcptools.AuthOptions{
		Verify:               table(resource).verify,
		Resource:             resource,
		AuthorizationServers: []string{"https://login.example.com"},
		Scopes:               []string{"tools"},
		ResourceName:         "the test tools",
	}
	set := toolset.MustNew(whoami, lookup(t, demoSet().Tools(), "echo"))
	mux.Handle("/mcp", mcptools.NewHTTPHandler(set, nil, &mcptools.HandlerOptions{Auth: opts}))
	mux.Handle(opts.MetadataPath(), opts.MetadataHandler())
	return resource, opts
}

func userTokens(resource string) tokens {
	later := time.Now().Add(time.Hour)
	return tokens{
		"alice-token": {UserID: "alice", Scopes: []string{"tools"}, Expiration: later, Extra: map[string]any{"aud": resource}},
		"bob-token":   {UserID: "bob", Scopes: []string{"tools", "admin"}, Expiration: later, Extra: map[string]any{"aud": []any{"https://other.example/mcp", resource}}},
		"elsewhere":   {UserID: "alice", Scopes: []string{"tools"}, Expiration: later, Extra: map[string]any{"aud": "https://other.example/mcp"}},
		"no-scope":    {UserID: "alice", Expiration: later, Extra: map[string]any{"aud": resource}},
		"expired":     {UserID: "alice", Scopes: []string{"tools"}, Expiration: time.Now().Add(-time.Hour), Extra: map[string]any{"aud": resource}},
		"no-audience": {UserID: "alice", Scopes: []string{"tools"}, Expiration: later},
		"no-user":     {Scopes: []string{"tools"}, Expiration: later, Extra: map[string]any{"aud": resource}},
	}
}

// post sends an initialize request to url with token (none when empty)
// and returns the response, its body read.
func post(t *testing.T, url, token, session string) (*http.Response, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	if session != "" {
		body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A request without a valid token for this server is refused, with the
// challenge that tells a client where to log in; the metadata says it.
func TestAuthRefuses(t *testing.T) {
	resource, opts := protectedServer(t, userTokens)
	challenge := fmt.Sprintf(`Bearer resource_metadata=%q, scope="tools"`, opts.MetadataURL())
	for _, tc := range []struct {
		name, token string
		status      int
		body        string
	}{
		{"no token", "", http.StatusUnauthorized, "no bearer token"},
		{"unknown token", "forged", http.StatusUnauthorized, "invalid token"},
		{"another audience", "elsewhere", http.StatusUnauthorized, "issued for another audience than " + resource},
		{"expired", "expired", http.StatusUnauthorized, "token expired"},
		{"missing scope", "no-scope", http.StatusForbidden, "insufficient scope"},
		{"verifier gives no audience", "no-audience", http.StatusInternalServerError, "reported no audience"},
		{"verifier gives no user", "no-user", http.StatusInternalServerError, "reported no user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, resource, tc.token, "")
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.body) {
				t.Errorf("status %d, body %q; want %d with %q", resp.StatusCode, body, tc.status, tc.body)
			}
			if tc.status == http.StatusUnauthorized || tc.status == http.StatusForbidden {
				if got := resp.Header.Get("WWW-Authenticate"); got != challenge {
					t.Errorf("WWW-Authenticate = %q; want %q", got, challenge)
				}
			}
		})
	}

	if want := strings.TrimSuffix(resource, "/mcp") + "/.well-known/oauth-protected-resource/mcp"; opts.MetadataURL() != want {
		t.Errorf("MetadataURL() = %q; want %q", opts.MetadataURL(), want)
	}
	resp, err := http.Get(opts.MetadataURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"resource": resource, "authorization_servers": []any{"https://login.example.com"}, "scopes_supported": []any{"tools"},
		"resource_name": "the test tools", "bearer_methods_supported": []any{"header"},
	}
	for k, v := range want {
		if fmt.Sprint(meta[k]) != fmt.Sprint(v) {
			t.Errorf("metadata %s = %v; want %v", k, meta[k], v)
		}
	}
}

// With a valid token, the tools run, and each call sees its caller's
// token; a session is its user's alone.
func TestAuthAdmits(t *testing.T) {
	resource, _ := protectedServer(t, userTokens)
	for _, user := range []string{"alice", "bob"} {
		client := &http.Client{Transport: bearer{user + "-token"}}
		c := connect(t, mcptools.HTTP(resource, client), nil)
		r := call(t, c, "whoami", nil)
		want := map[string]string{"alice": "alice tools", "bob": "bob tools,admin"}[user]
		if r.IsError || r.Output != want {
			t.Errorf("whoami as %s = %+v; want %q", user, r, want)
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	}

	// Alice's session, named by its id, is not Bob's to use.
	resp, body := post(t, resource, "alice-token", "")
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize as alice: status %d, session %q, body %q", resp.StatusCode, session, body)
	}
	if resp, body := post(t, resource, "bob-token", session); resp.StatusCode != http.StatusForbidden || strings.Contains(body, "alice") {
		t.Errorf("bob calling in alice's session: status %d, body %q; want 403", resp.StatusCode, body)
	}
	if status := endSession(t, resource, "bob-token", session); status != http.StatusForbidden {
		t.Errorf("bob ending alice's session: status %d; want 403", status)
	}
	if status := endSession(t, resource, "alice-token", session); status != http.StatusNoContent {
		t.Errorf("alice ending her session: status %d; want 204", status)
	}
}

// endSession deletes session with token, and returns the status.
func endSession(t *testing.T, url, token, session string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Without Auth, or outside HTTP, a tool sees no token.
func TestTokenInfoWithoutAuth(t *testing.T) {
	ts := httptest.NewServer(mcptools.HTTPHandler(toolset.MustNew(whoami), nil))
	t.Cleanup(ts.Close) // after the client's Close
	c := connect(t, mcptools.HTTP(ts.URL, nil), nil)
	if r := call(t, c, "whoami", nil); r.Output != "nobody" {
		t.Errorf("whoami = %+v; want nobody", r)
	}
	if info := mcptools.TokenInfo(context.Background()); info != nil {
		t.Errorf("TokenInfo(Background) = %+v", info)
	}
}

// A guard that cannot protect the server is refused at once, rather than
// leave the server open.
func TestAuthMisconfigured(t *testing.T) {
	verify := tokens{}.verify
	for _, tc := range []struct {
		name string
		opts mcptools.AuthOptions
		want string
	}{
		{"no verifier", mcptools.AuthOptions{Resource: "https://mcp.example.com/mcp"}, "Verify is nil"},
		{"no resource", mcptools.AuthOptions{Verify: verify}, `Resource "" is not an absolute http(s) URL`},
		{"relative resource", mcptools.AuthOptions{Verify: verify, Resource: "/mcp"}, `Resource "/mcp" is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("NewHTTPHandler panicked with %v; want %q", r, tc.want)
				}
			}()
			mcptools.NewHTTPHandler(toolset.MustNew(whoami), nil, &mcptools.HandlerOptions{Auth: &tc.opts})
		})
	}
	// A resource at the root has its metadata at the well-known path.
	root := mcptools.AuthOptions{Resource: "https://mcp.example.com"}
	if got := root.MetadataURL(); got != "https://mcp.example.com/.well-known/oauth-protected-resource" {
		t.Errorf("MetadataURL() at the root = %q", got)
	}
	if got := root.MetadataPath(); got != "/.well-known/oauth-protected-resource" {
		t.Errorf("MetadataPath() at the root = %q", got)
	}
}

// The handler keeps a bounded number of sessions, and one user cannot
// take them all: a client that opens sessions without end is refused,
// and its place is given back when a session ends.
func TestSessionLimits(t *testing.T) {
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	resource := ts.URL + "/mcp"
	set := toolset.MustNew(whoami)
	auth := &mcptools.AuthOptions{Verify: userTokens(resource).verify, Resource: resource, AuthorizationServers: []string{"https://login.example.com"}}
	mux.Handle("/mcp", mcptools.NewHTTPHandler(set, nil, &mcptools.HandlerOptions{Auth: auth, MaxSessions: 3, MaxSessionsPerUser: 2}))
	mux.Handle("/open", mcptools.NewHTTPHandler(set, nil, &mcptools.HandlerOptions{MaxSessions: 2}))

	type session struct{ url, token, id string }
	var sessions []session
	defer func() { // no session outlives the test
		for _, s := range sessions {
			endSession(t, s.url, s.token, s.id)
		}
	}()
	open := func(url, token string, want int) string {
		t.Helper()
		resp, body := post(t, url, token, "")
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			sessions = append(sessions, session{url, token, id})
		}
		if resp.StatusCode != want {
			t.Fatalf("initialize (%s): status %d %q; want %d", token, resp.StatusCode, body, want)
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	a1 := open(resource, "alice-token", 200)
	open(resource, "alice-token", 200)
	open(resource, "alice-token", http.StatusTooManyRequests)
	open(resource, "bob-token", 200)
	open(resource, "bob-token", http.StatusServiceUnavailable) // the handler's 3
	if status := endSession(t, resource, "alice-token", a1); status != http.StatusNoContent {
		t.Fatalf("alice ending her session: %d", status)
	}
	reopen := func(url, token string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second) // a hang guard only
		for {
			resp, body := post(t, url, token, "")
			if resp.StatusCode == 200 {
				sessions = append(sessions, session{url, token, resp.Header.Get("Mcp-Session-Id")})
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("initialize (%s) once a session ended: status %d %q", token, resp.StatusCode, body)
			}
			time.Sleep(time.Millisecond)
		}
	}
	reopen(resource, "alice-token")

	// Without Auth, the handler's bound alone.
	o1 := open(ts.URL+"/open", "", 200)
	open(ts.URL+"/open", "", 200)
	open(ts.URL+"/open", "", http.StatusServiceUnavailable)
	if status := endSession(t, ts.URL+"/open", "", o1); status != http.StatusNoContent {
		t.Fatalf("ending a session: %d", status)
	}
	reopen(ts.URL+"/open", "")
}

// Initializes that arrive together are counted as they are admitted, not
// once their sessions are open: of 40 at once, exactly the limit open a
// session, for one user's bound and for the handler's.
func TestSessionLimitsConcurrent(t *testing.T) {
	const clients = 40
	for _, tc := range []struct {
		name        string
		opts        mcptools.HandlerOptions
		token       string
		limit       int
		refusedWith int
	}{
		{"per user", mcptools.HandlerOptions{MaxSessions: 100, MaxSessionsPerUser: 2}, "alice-token", 2, http.StatusTooManyRequests},
		{"per handler", mcptools.HandlerOptions{MaxSessions: 3}, "", 3, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			ts := httptest.NewServer(mux)
			defer ts.Close()
			resource := ts.URL + "/mcp"
			opts := tc.opts
			if tc.token != "" {
				opts.Auth = &mcptools.AuthOptions{Verify: userTokens(resource).verify, Resource: resource, AuthorizationServers: []string{"https://login.example.com"}}
			}
			// The initializes wait for one another before the handler
			// sees them, so that all of them are in flight at once.
			arrived, all := make(chan struct{}, clients), make(chan struct{})
			h := mcptools.NewHTTPHandler(toolset.MustNew(whoami), nil, &opts)
			mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
					arrived <- struct{}{}
					<-all
				}
				h.ServeHTTP(w, r)
			}))
			type answer struct {
				status int
				id     string
				err    error
			}
			answers := make(chan answer, clients)
			for range clients {
				go func() {
					req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(initialize))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if tc.token != "" {
						req.Header.Set("Authorization", "Bearer "+tc.token)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						answers <- answer{err: err}
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					answers <- answer{status: resp.StatusCode, id: resp.Header.Get("Mcp-Session-Id")}
				}()
			}
			for range clients {
				select {
				case <-arrived:
				case <-time.After(time.Minute): // a hang guard only
					close(all)
					t.Fatal("the initializes did not all arrive")
				}
			}
			close(all)
			statuses := map[int]int{}
			for range clients {
				a := <-answers
				if a.err != nil {
					t.Fatal(a.err)
				}
				statuses[a.status]++
				if a.id != "" {
					defer endSession(t, resource, tc.token, a.id) // no session outlives the test
				}
			}
			if want := map[int]int{http.StatusOK: tc.limit, tc.refusedWith: clients - tc.limit}; fmt.Sprint(statuses) != fmt.Sprint(want) {
				t.Errorf("%d initializes at once answered %v; want %v", clients, statuses, want)
			}
		})
	}
}
