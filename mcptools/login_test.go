package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolnexus/toolnexus-go/internal/oauthtest"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"golang.org/x/oauth2"
)

// oauthWorld is an authorization server, an MCP server that admits its
// tokens, and a user's browser.
type oauthWorld struct {
	as       *oauthtest.Server
	resource string // the MCP server's URL
	browser  *browser
	file     string // the logins file
	logs     *syncBuffer
}

// newOAuthWorld starts an authorization server with asOpts and an MCP
// server of whoami and echo that requires its tokens, for the scope
// "tools".
func newOAuthWorld(t *testing.T, asOpts *oauthtest.Options) *oauthWorld {
	t.Helper()
	as, resource := oauthProtected(t, asOpts, toolset.MustNew(whoami, lookup(t, demoSet().Tools(), "echo")), []string{"tools"})
	return &oauthWorld{
		as:       as,
		resource: resource,
		browser:  &browser{},
		file:     filepath.Join(t.TempDir(), "config", "logins.json"),
		logs:     &syncBuffer{},
	}
}

// oauthProtected starts an authorization server with asOpts (nil: the
// defaults) and an MCP server of set that requires its tokens, with
// scopes; it returns the authorization server and the MCP server's URL.
func oauthProtected(tb testing.TB, asOpts *oauthtest.Options, set *toolset.Set, scopes []string) (*oauthtest.Server, string) {
	tb.Helper()
	if asOpts == nil {
		asOpts = &oauthtest.Options{}
	}
	asOpts.Scopes = scopes
	as := oauthtest.NewServer(asOpts)
	tb.Cleanup(as.Close)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	tb.Cleanup(ts.Close)
	authOpts := &mcptools.AuthOptions{Verify: as.Verify, Resource: ts.URL + "/mcp", AuthorizationServers: []string{as.URL()}, Scopes: scopes}
	mux.Handle("/mcp", mcptools.NewHTTPHandler(set, nil, &mcptools.HandlerOptions{Auth: authOpts}))
	mux.Handle(authOpts.MetadataPath(), authOpts.MetadataHandler())
	return as, authOpts.Resource
}

// login makes a Login for the MCP server, kept in the world's file, with
// the world's browser.
func (w *oauthWorld) login(t *testing.T, opts *mcptools.LoginOptions) *mcptools.Login {
	t.Helper()
	if opts == nil {
		opts = &mcptools.LoginOptions{}
	}
	if opts.Open == nil {
		opts.Open = w.browser.open
	}
	opts.Store = mcptools.TokenFile(w.file)
	opts.Logger = slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l, err := mcptools.NewLogin(w.resource, opts)
	if err != nil {
		t.Fatalf("NewLogin() = %v", err)
	}
	return l
}

// connect connects to the MCP server with l.
func (w *oauthWorld) connect(t *testing.T, l *mcptools.Login) (*mcptools.Client, error) {
	t.Helper()
	c, err := mcptools.Connect(t.Context(), mcptools.NewHTTP(w.resource, &mcptools.HTTPOptions{OAuth: l}), nil)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// checkNoTokenShown fails the test when a token the authorization server
// issued is in the logs or in s.
func (w *oauthWorld) checkNoTokenShown(t *testing.T, s ...string) {
	t.Helper()
	shown := w.logs.String() + strings.Join(s, "\n")
	for _, tok := range w.as.Tokens() {
		if strings.Contains(shown, tok) {
			t.Errorf("a token is shown:\n%s", shown)
		}
	}
}

// A browser plays the user: it follows the authorization URL, which the
// authorization server answers with a redirect to the program's loopback
// port, and reads the page the program shows.
type browser struct {
	mu     sync.Mutex
	visits int
	pages  []string
	// before, when set, is called with the authorization URL first.
	before func(authURL string)
}

func (b *browser) open(ctx context.Context, authURL string) error {
	b.mu.Lock()
	b.visits++
	before := b.before
	b.mu.Unlock()
	if before != nil {
		before(authURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	b.mu.Lock()
	b.pages = append(b.pages, string(page))
	b.mu.Unlock()
	return nil
}

func (b *browser) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.visits
}

func (b *browser) lastPage() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pages) == 0 {
		return ""
	}
	return b.pages[len(b.pages)-1]
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The first connection logs the user in through their browser; the login
// is kept in a file only they can read, from which the next run connects
// without asking them.
func TestLogin(t *testing.T) {
	w := newOAuthWorld(t, nil)
	c, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	if r := call(t, c, "whoami", nil); r.IsError || r.Output != "alice tools" {
		t.Errorf("whoami = %+v; want alice with the scope tools", r)
	}
	if n := w.browser.count(); n != 1 {
		t.Errorf("the browser was opened %d times; want 1", n)
	}
	if page := w.browser.lastPage(); !strings.Contains(page, "You are logged in to "+w.resource) {
		t.Errorf("the page after the login = %q", page)
	}
	counts := w.as.Counts()
	if counts.Registrations != 1 || counts.CodeGrants != 1 {
		t.Errorf("authorization server counts = %+v; want one registration and one code grant", counts)
	}
	for _, f := range w.as.TokenRequests() {
		if f.Get("resource") != w.resource || (f.Get("grant_type") == "authorization_code" && f.Get("code_verifier") == "") {
			t.Errorf("token request %v lacks the resource or the PKCE verifier", f)
		}
	}
	for path, want := range map[string]os.FileMode{w.file: 0o600, filepath.Dir(w.file): 0o700} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s has mode %v; want %v", path, info.Mode().Perm(), want)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}

	// The next run.
	c2, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() from the kept login = %v", err)
	}
	if r := call(t, c2, "echo", map[string]any{"text": "again"}); r.IsError || r.Output != "again" {
		t.Errorf("echo = %+v", r)
	}
	if n := w.browser.count(); n != 1 {
		t.Errorf("the browser was opened %d times; want 1: the kept login should do", n)
	}
	w.checkNoTokenShown(t)
	if !strings.Contains(w.logs.String(), "logged in") {
		t.Errorf("the logs do not say the user logged in:\n%s", w.logs)
	}
}

// A token about to expire is refreshed before it is sent, and the rotated
// refresh token is kept: the next run refreshes with it, without a login.
func TestLoginRefresh(t *testing.T) {
	// Tokens that expire in a second are refreshed at each use (oauth2
	// refreshes ten seconds early), whatever the clock says.
	w := newOAuthWorld(t, &oauthtest.Options{ExpiresIn: time.Second})
	c, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	for range 3 {
		if r := call(t, c, "whoami", nil); r.IsError {
			t.Fatalf("whoami = %+v", r)
		}
	}
	if n := w.as.Counts().Refreshes; n < 3 {
		t.Errorf("%d refreshes; want one per call at least", n)
	}
	c.Close()

	// The refresh tokens rotate: only the last one is good, and it is the
	// one kept.
	c2, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() from the kept login = %v", err)
	}
	if r := call(t, c2, "whoami", nil); r.IsError {
		t.Fatalf("whoami = %+v", r)
	}
	if n, refused := w.browser.count(), w.as.Counts().Refused; n != 1 || refused != 0 {
		t.Errorf("browser opened %d times, %d token requests refused; want 1 and 0", n, refused)
	}
	w.checkNoTokenShown(t)
}

// An access token the server refuses (revoked) is refreshed when the
// refresh token is still good; when it is not, the user logs in again,
// and the call goes through either way.
func TestLoginRevoked(t *testing.T) {
	for _, tc := range []struct {
		name        string
		expiresIn   time.Duration // 1 s: refreshed before each use
		revokeAll   bool
		wantBrowser int
	}{
		{"access token revoked", 0, false, 1},
		{"grant revoked", 0, true, 2},
		{"grant revoked, refreshed before use", time.Second, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newOAuthWorld(t, &oauthtest.Options{ExpiresIn: tc.expiresIn})
			c, err := w.connect(t, w.login(t, nil))
			if err != nil {
				t.Fatalf("Connect() = %v", err)
			}
			if tc.revokeAll {
				w.as.RevokeAll()
			} else {
				w.as.RevokeAccess()
			}
			if r := call(t, c, "whoami", nil); r.IsError || r.Output != "alice tools" {
				t.Errorf("whoami after the revocation = %+v", r)
			}
			if n := w.browser.count(); n != tc.wantBrowser {
				t.Errorf("the browser was opened %d times; want %d", n, tc.wantBrowser)
			}
			w.checkNoTokenShown(t)
		})
	}
}

// Calls that are refused at once, after a revocation, share one login.
func TestLoginConcurrent(t *testing.T) {
	w := newOAuthWorld(t, nil)
	c, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	w.as.RevokeAll()
	tool := lookup(t, c.Tools(), "whoami")
	var wg sync.WaitGroup
	results := make([]toolset.Result, 4)
	for i := range results {
		wg.Go(func() { results[i] = tool.Execute(t.Context(), nil) })
	}
	wg.Wait()
	for i, r := range results {
		if r.IsError || r.Output != "alice tools" {
			t.Errorf("call %d = %+v", i, r)
		}
	}
	if n := w.browser.count(); n != 2 {
		t.Errorf("the browser was opened %d times; want 2 (one login for all the calls)", n)
	}
}

// A server whose metadata is for another server is not logged in to: the
// user is never asked, and the authorization server never hears of it.
func TestLoginWrongResource(t *testing.T) {
	as := oauthtest.NewServer(nil)
	defer as.Close()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	metadataURL := ts.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: ts.URL + "/other", AuthorizationServers: []string{as.URL()},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(as.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL})(
		mcptools.HTTPHandler(demoSet(), nil)))
	b := &browser{}
	l, err := mcptools.NewLogin(ts.URL+"/mcp", &mcptools.LoginOptions{Open: b.open})
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcptools.Connect(t.Context(), mcptools.NewHTTP(ts.URL+"/mcp", &mcptools.HTTPOptions{OAuth: l}), nil)
	if !errors.Is(err, mcptools.ErrWrongResource) || !strings.Contains(err.Error(), "its tokens are for "+ts.URL+"/other; refusing to log in") {
		t.Errorf("Connect() = %v; want ErrWrongResource", err)
	}
	if n, counts := b.count(), as.Counts(); n != 0 || counts.Registrations != 0 {
		t.Errorf("browser opened %d times, authorization server counts %+v; want none", n, counts)
	}
}

// Tokens the authorization server issues for another audience are refused
// by the server, and the connection fails after one login, saying why,
// rather than asking the user again and again.
func TestLoginWrongAudience(t *testing.T) {
	w := newOAuthWorld(t, &oauthtest.Options{Audience: func(string) string { return "https://other.example/mcp" }})
	l := w.login(t, nil)
	for range 2 {
		_, err := w.connect(t, l)
		if !errors.Is(err, mcptools.ErrTokenRefused) || !strings.Contains(err.Error(), "issued for another audience than "+w.resource) {
			t.Fatalf("Connect() = %v; want ErrTokenRefused with the server's reason", err)
		}
		t.Log(err)
		w.checkNoTokenShown(t, err.Error())
	}
	if n := w.browser.count(); n != 1 {
		t.Errorf("the browser was opened %d times; want 1", n)
	}
}

// A user who never finishes logging in: the login ends after its timeout,
// with a clear error, and its loopback port is closed.
func TestLoginTimeout(t *testing.T) {
	w := newOAuthWorld(t, nil)
	var redirect string
	var asked int
	l := w.login(t, &mcptools.LoginOptions{
		Timeout: 50 * time.Millisecond,
		Open: func(_ context.Context, authURL string) error {
			asked++
			u, _ := url.Parse(authURL)
			redirect = u.Query().Get("redirect_uri") // the user looks, and goes away
			return nil
		},
	})
	_, err := w.connect(t, l)
	if !errors.Is(err, mcptools.ErrLoginTimeout) || !strings.Contains(err.Error(), "the login page at "+strings.TrimPrefix(w.as.URL(), "http://")+" was not completed within 50ms; try again") {
		t.Fatalf("Connect() = %v; want ErrLoginTimeout, saying where and how long", err)
	}
	if asked != 1 {
		t.Errorf("the user was asked %d times; want once", asked)
	}
	u, err := url.Parse(redirect)
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("redirect URI %q is not on 127.0.0.1", redirect)
	}
	if conn, err := net.Dial("tcp", u.Host); err == nil {
		conn.Close()
		t.Errorf("the login's port %s still accepts connections", u.Host)
	}
}

// The user refusing, and a visit that is not the login's, at the loopback
// port.
func TestLoginRefused(t *testing.T) {
	w := newOAuthWorld(t, &oauthtest.Options{Deny: true})
	var stray int
	w.browser.before = func(authURL string) {
		u, _ := url.Parse(authURL)
		resp, err := http.Get(u.Query().Get("redirect_uri") + "?code=planted&state=guessed")
		if err == nil {
			stray = resp.StatusCode
			resp.Body.Close()
		}
	}
	_, err := w.connect(t, w.login(t, nil))
	if err == nil || !strings.Contains(err.Error(), `the authorization server refused the login: "access_denied": "the user refused"`) {
		t.Errorf("Connect() = %v; want the refusal", err)
	}
	if n := w.browser.count(); n != 1 {
		t.Errorf("the user was asked %d times; want once", n)
	}
	if stray != http.StatusBadRequest {
		t.Errorf("a visit with another state got %d; want 400", stray)
	}
	if page := w.browser.lastPage(); !strings.Contains(page, "The login was refused") {
		t.Errorf("the page = %q", page)
	}
}

func TestNewLoginErrors(t *testing.T) {
	open := func(context.Context, string) error { return nil }
	for _, tc := range []struct {
		name string
		opts *mcptools.LoginOptions
		want string
	}{
		{"nil options", nil, "LoginOptions.Open is required"},
		{"no Open", &mcptools.LoginOptions{}, "LoginOptions.Open is required"},
		{"redirect not on loopback", &mcptools.LoginOptions{Open: open, RedirectURL: "http://example.com:8080/cb"}, "is not http://127.0.0.1:PORT/PATH"},
		{"redirect without a port", &mcptools.LoginOptions{Open: open, RedirectURL: "http://127.0.0.1/cb"}, "is not http://127.0.0.1:PORT/PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := mcptools.NewLogin("https://mcp.example.com/mcp", tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewLogin() = %v; want %q", err, tc.want)
			}
		})
	}
}

// A fixed redirect URL is listened on as given.
func TestLoginRedirectURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // free again, for the login
	w := newOAuthWorld(t, nil)
	var got string
	w.browser.before = func(authURL string) {
		u, _ := url.Parse(authURL)
		got = u.Query().Get("redirect_uri")
	}
	c, err := w.connect(t, w.login(t, &mcptools.LoginOptions{RedirectURL: "http://" + addr + "/oauth/done"}))
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	c.Close()
	if want := "http://" + addr + "/oauth/done"; got != want {
		t.Errorf("redirect_uri = %q; want %q", got, want)
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "logins.json")
	f := mcptools.TokenFile(path)
	if data, err := f.LoadLogin("https://a.example/mcp"); data != nil || err != nil {
		t.Fatalf("LoadLogin() from no file = %q, %v", data, err)
	}
	for _, s := range []string{"https://a.example/mcp", "https://b.example/mcp"} {
		if err := f.SaveLogin(s, []byte(`{"for":"`+s+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveLogin("https://a.example/mcp", nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := mcptools.TokenFile(path).LoadLogin("https://b.example/mcp"); string(data) != `{"for":"https://b.example/mcp"}` {
		t.Errorf("LoadLogin(b) = %s", data)
	}
	if data, _ := f.LoadLogin("https://a.example/mcp"); data != nil {
		t.Errorf("LoadLogin(a) after forgetting = %s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != "logins.json" && e.Name() != "logins.json.lock" {
			t.Errorf("the directory holds %s; want only the logins file and its lock", e.Name())
		}
	}

	// A file others can read is refused, saying how to fix it.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.LoadLogin("https://b.example/mcp"); err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Errorf("LoadLogin() of a readable file = %v", err)
	}
	if err := f.SaveLogin("https://b.example/mcp", []byte(`{}`)); err == nil {
		t.Errorf("SaveLogin() into a readable file succeeded")
	}
	os.Chmod(path, 0o600)

	// A file that cannot be read is replaced.
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := f.LoadLogin("x"); err == nil {
		t.Errorf("LoadLogin() of a broken file succeeded")
	}
	if err := f.SaveLogin("https://c.example/mcp", []byte(`{"c":1}`)); err != nil {
		t.Fatalf("SaveLogin() over a broken file = %v", err)
	}
	b, _ := os.ReadFile(path)
	var d struct{ Logins map[string]json.RawMessage }
	if err := json.Unmarshal(b, &d); err != nil || len(d.Logins) != 1 {
		t.Errorf("the file after replacing = %s (%v)", b, err)
	}
}

// A server that refuses the token it was just given, and repeats it in
// its reason: the error says why without showing the token.
func TestLoginRefusedTokenNotShown(t *testing.T) {
	as := oauthtest.NewServer(nil)
	defer as.Close()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	resource := ts.URL + "/mcp"
	metadata := &mcptools.AuthOptions{Resource: resource, AuthorizationServers: []string{as.URL()}}
	mux.Handle(metadata.MetadataPath(), metadata.MetadataHandler())
	echoing := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return nil, fmt.Errorf("%w: %s is not welcome here", auth.ErrInvalidToken, token)
	}
	mux.Handle("/mcp", auth.RequireBearerToken(echoing, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadata.MetadataURL()})(
		mcptools.HTTPHandler(demoSet(), nil)))
	b := &browser{}
	l, err := mcptools.NewLogin(resource, &mcptools.LoginOptions{Open: b.open})
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcptools.Connect(t.Context(), mcptools.NewHTTP(resource, &mcptools.HTTPOptions{OAuth: l}), nil)
	if !errors.Is(err, mcptools.ErrTokenRefused) || !strings.Contains(err.Error(), "[the token] is not welcome here") {
		t.Fatalf("Connect() = %v; want ErrTokenRefused with the reason", err)
	}
	for _, tok := range as.Tokens() {
		if strings.Contains(err.Error(), tok) {
			t.Errorf("the error shows a token: %v", err)
		}
	}
}

// A store that cannot be read is an error of NewLogin, not a silent
// logout.
func TestNewLoginStoreError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logins.json")
	if err := os.WriteFile(path, []byte(`{"logins":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := mcptools.NewLogin("https://mcp.example.com/mcp", &mcptools.LoginOptions{
		Open: func(context.Context, string) error { return nil }, Store: mcptools.TokenFile(path)})
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("NewLogin() with a file others can read = %v", err)
	}
}

// keptLogin returns the login the world's file keeps for its server, as
// JSON values.
func (w *oauthWorld) keptLogin(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(w.file)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Logins map[string]map[string]any }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d.Logins[w.resource]
}

// expireKeptLogin makes the access token the world's file keeps have
// expired an hour ago, as it has when the program runs again a day later.
func (w *oauthWorld) expireKeptLogin(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(w.file)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	tok, _ := d["logins"][w.resource]["token"].(map[string]any)
	if tok == nil {
		t.Fatalf("no token kept in %s", b)
	}
	tok["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	if b, err = json.Marshal(d); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// keptToken returns the token the world's file keeps.
func (w *oauthWorld) keptToken(t *testing.T) map[string]any {
	t.Helper()
	tok, _ := w.keptLogin(t)["token"].(map[string]any)
	if tok == nil {
		t.Fatalf("no login kept for %s", w.resource)
	}
	return tok
}

// A kept login whose access token expired, from an authorization server
// that gives no refresh tokens, is gone: the next run logs the user in
// again and keeps the new login, rather than fail every request.
func TestLoginExpiredWithoutRefreshToken(t *testing.T) {
	w := newOAuthWorld(t, &oauthtest.Options{NoRefreshTokens: true})
	c, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	if r := call(t, c, "whoami", nil); r.IsError {
		t.Fatalf("whoami = %+v", r)
	}
	c.Close()
	if tok := w.keptToken(t); tok["refresh_token"] != nil {
		t.Fatalf("the kept token has a refresh token: the test needs none")
	}
	w.expireKeptLogin(t)

	c2, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() with an expired login and no refresh token = %v; want a new login", err)
	}
	if r := call(t, c2, "whoami", nil); r.IsError || r.Output != "alice tools" {
		t.Errorf("whoami = %+v", r)
	}
	if n := w.browser.count(); n != 2 {
		t.Errorf("the browser was opened %d times; want 2", n)
	}
	if expiry, err := time.Parse(time.RFC3339, fmt.Sprint(w.keptToken(t)["expiry"])); err != nil || !expiry.After(time.Now()) {
		t.Errorf("the kept token expires at %v (%v); want the new login's", expiry, err)
	}
	w.checkNoTokenShown(t)
}

// The authorization server failing for a while (503 temporarily
// unavailable, a connection closed) is not a refusal: the request fails
// with an error saying to try again, the login and its refresh token are
// kept, and the next request refreshes and goes through without asking
// the user.
func TestLoginTokenEndpointDown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault oauthtest.TokenFault
		// refused: the server refused the access token (revoked), else it
		// expired.
		refused bool
	}{
		{"expired, 503", oauthtest.TokenFault{Status: http.StatusServiceUnavailable, Error: "temporarily_unavailable"}, false},
		{"expired, connection closed", oauthtest.TokenFault{}, false},
		{"expired, 500 without a code", oauthtest.TokenFault{Status: http.StatusInternalServerError}, false},
		{"refused, 503", oauthtest.TokenFault{Status: http.StatusServiceUnavailable, Error: "temporarily_unavailable"}, true},
		{"refused, connection closed", oauthtest.TokenFault{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &oauthtest.Options{}
			if !tc.refused {
				opts.ExpiresIn = time.Second // refreshed at each use
			}
			w := newOAuthWorld(t, opts)
			c, err := w.connect(t, w.login(t, nil))
			if err != nil {
				t.Fatalf("Connect() = %v", err)
			}
			if tc.refused {
				w.as.RevokeAccess()
			}
			kept := w.keptToken(t)["refresh_token"]
			w.as.FailTokenRequests(1, tc.fault)
			r := call(t, c, "whoami", nil)
			if !r.IsError || !strings.Contains(fmt.Sprint(r.Output), "whoami was not run") || !strings.Contains(fmt.Sprint(r.Output), "try again") {
				t.Errorf("whoami while the authorization server fails = %+v; want an error saying to try again", r)
			}
			t.Log(r.Output)
			if got := w.keptToken(t)["refresh_token"]; got != kept || got == nil {
				t.Errorf("the refresh token kept after the failure = %v; want it kept", got)
			}
			if r := call(t, c, "whoami", nil); r.IsError || r.Output != "alice tools" {
				t.Errorf("whoami once the authorization server is back = %+v", r)
			}
			if n, counts := w.browser.count(), w.as.Counts(); n != 1 || counts.Failed != 1 || counts.Refused != 0 {
				t.Errorf("the browser was opened %d times, authorization server counts %+v; want once, 1 failed, 0 refused", n, counts)
			}
			w.checkNoTokenShown(t, fmt.Sprint(r.Output))
		})
	}
}

// An authorization server that rejects the client itself at a refresh
// (invalid_client: a registration it forgot, a wrong secret) is not a
// failure that may pass: the request fails at once with an error wrapping
// ErrClientRejected and not ErrRefreshFailed, no browser is opened, and
// the login is kept for once the client is fixed.
func TestLoginClientRejectedAtRefresh(t *testing.T) {
	for _, code := range []string{"invalid_client", "unauthorized_client"} {
		t.Run(code, func(t *testing.T) {
			w := newOAuthWorld(t, nil)
			w.keptExpiredLogin(t, oauthtest.TokenFault{Status: http.StatusUnauthorized, Error: code})
			kept := w.keptToken(t)["refresh_token"]
			_, err := w.connect(t, w.login(t, nil))
			var cause *oauth2.RetrieveError
			if !errors.Is(err, mcptools.ErrClientRejected) || errors.Is(err, mcptools.ErrRefreshFailed) || !errors.As(err, &cause) || cause.ErrorCode != code {
				t.Fatalf("Connect() with the client rejected = %v; want ErrClientRejected (not ErrRefreshFailed), with its cause", err)
			}
			t.Log(err)
			if got := w.keptToken(t)["refresh_token"]; got != kept || got == nil {
				t.Errorf("the refresh token kept after the rejection = %v; want it kept", got)
			}
			if n := w.browser.count(); n != 1 {
				t.Errorf("the browser was opened %d times; want once (the first login)", n)
			}
		})
	}
}

// keptExpiredLogin logs in once, leaves a kept login whose access token
// expired, and makes the authorization server answer the refreshes to
// come with fault.
func (w *oauthWorld) keptExpiredLogin(t *testing.T, fault oauthtest.TokenFault) {
	t.Helper()
	c, err := w.connect(t, w.login(t, nil))
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	c.Close()
	w.expireKeptLogin(t)
	w.as.FailTokenRequests(100, fault)
}

// A kept login whose refresh fails at the start of the next run, the
// authorization server being down, fails the connection with an error
// wrapping ErrRefreshFailed, and is kept for the next try.
func TestLoginTokenEndpointDownAtConnect(t *testing.T) {
	w := newOAuthWorld(t, nil)
	w.keptExpiredLogin(t, oauthtest.TokenFault{Status: http.StatusServiceUnavailable, Error: "temporarily_unavailable"})
	l := w.login(t, nil)
	_, err := w.connect(t, l)
	var cause *oauth2.RetrieveError
	if !errors.Is(err, mcptools.ErrRefreshFailed) || !errors.As(err, &cause) || !strings.Contains(err.Error(), "503 Service Unavailable: temporarily_unavailable") {
		t.Fatalf("Connect() while the authorization server fails = %v; want ErrRefreshFailed, with its cause", err)
	}
	t.Log(err)
	if w.keptToken(t)["refresh_token"] == nil {
		t.Errorf("the login is not kept after the failure")
	}
	w.as.FailTokenRequests(0, oauthtest.TokenFault{})
	if _, err := w.connect(t, l); err != nil {
		t.Fatalf("Connect() once it is back = %v", err)
	}
	if n := w.browser.count(); n != 1 {
		t.Errorf("the browser was opened %d times; want 1", n)
	}
}
