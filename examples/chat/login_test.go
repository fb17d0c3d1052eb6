package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/internal/oauthtest"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// oauthServer starts an authorization server and an MCP server of the
// demo tools that admits only its tokens; it returns both and the MCP
// server's URL.
func oauthServer(t *testing.T) (*oauthtest.Server, string) {
	t.Helper()
	as := oauthtest.NewServer(nil)
	t.Cleanup(as.Close)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	authOpts := &mcptools.AuthOptions{Verify: as.Verify, Resource: ts.URL + "/mcp", AuthorizationServers: []string{as.URL()}}
	mux.Handle("/mcp", mcptools.NewHTTPHandler(demotools.New(fixedClock), nil, &mcptools.HandlerOptions{Auth: authOpts}))
	mux.Handle(authOpts.MetadataPath(), authOpts.MetadataHandler())
	return as, authOpts.Resource
}

// userBrowser plays the user's browser: it follows the authorization URL
// to the chat's loopback port, and counts its visits.
func userBrowser(t *testing.T, visits *int) func(string) error {
	return func(authURL string) error {
		*visits++
		resp, err := http.Get(authURL)
		if err != nil {
			t.Errorf("the browser: %v", err)
			return nil
		}
		defer resp.Body.Close()
		if page, _ := io.ReadAll(resp.Body); !strings.Contains(string(page), "You are logged in") {
			t.Errorf("the page after the login = %q", page)
		}
		return nil
	}
}

// -mcp-http against a server that answers 401: the chat shows the
// authorization URL, opens the browser, receives the redirect, answers
// through the server's tools, and keeps the tokens in a file of the user's
// config directory that only they can read, so that the next run needs no
// login. No token is ever shown.
func TestMCPLogin(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HOME", config) // where macOS keeps its config directory
	as, url := oauthServer(t)
	var visits int
	prompts := &syncBuffer{}
	opts := options{mcpHTTP: []string{"demo=" + url}, loginOut: prompts, browser: userBrowser(t, &visits)}

	out := chatOutput(t, opts, "What is the weather in Paris?\n")
	for _, want := range []string{
		`MCP server "demo=` + url + `": demo_calculate, demo_current_time, demo_get_weather.`,
		"→ demo_get_weather {\"city\":\"Paris\"}",
		"Paris: heavy rain, 3°C",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "toolnexus", loginsFile)
	prompt := prompts.String()
	if !strings.Contains(prompt, `MCP server "demo=`+url+`" asks you to log in (opening it in your browser; waiting 5m0s; the login is kept in `+file+"):\n  "+as.URL()+"/authorize?") {
		t.Errorf("the prompt = %q", prompt)
	}
	if visits != 1 {
		t.Errorf("the browser was opened %d times; want 1", visits)
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v; want 0600", file, info.Mode().Perm())
	}

	// The next run uses the kept login.
	out2 := chatOutput(t, opts, "what is (12+7)*3\n")
	if !strings.Contains(out2, "(12+7)*3 = 57") || visits != 1 {
		t.Errorf("second run: browser opened %d times in all; output:\n%s", visits, out2)
	}
	for _, tok := range as.Tokens() {
		if strings.Contains(out+out2+prompts.String(), tok) {
			t.Errorf("a token is shown:\n%s%s%s", out, out2, prompts)
		}
	}
}

func TestBrowserCommand(t *testing.T) {
	t.Setenv("BROWSER", "/usr/bin/my-browser")
	cmd, err := browserCommand("https://example.com/login?a=1")
	if err != nil || strings.Join(cmd.Args, " ") != "/usr/bin/my-browser https://example.com/login?a=1" {
		t.Errorf("browserCommand() = %v, %v", cmd, err)
	}
	for _, u := range []string{"file:///etc/passwd", "javascript:alert(1)", "://"} {
		if _, err := browserCommand(u); err == nil {
			t.Errorf("browserCommand(%q) would open it", u)
		}
	}
}

// A user who never finishes logging in: the chat stops with a clear
// message once the login's time is up, and no browser opens where there is
// none.
func TestMCPLoginTimeout(t *testing.T) {
	_, url := oauthServer(t)
	t.Setenv("BROWSER", "")
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	prompts := &syncBuffer{}
	opts := options{
		mcpHTTP: []string{url}, clock: fixedClock, loginOut: prompts, loginTimeout: 50 * time.Millisecond,
		loginFile: filepath.Join(t.TempDir(), "logins.json"),
	}
	if _, err := browserCommand("https://example.com"); err == nil {
		t.Skip("this system has a browser the test would open")
	}
	err := run(context.Background(), opts, strings.NewReader("hello\n"), &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), `MCP server "`+url+`"`) || !strings.Contains(err.Error(), "was not completed within 50ms; try again") {
		t.Errorf("run() = %v; want the login's timeout", err)
	}
	if p := prompts.String(); !strings.Contains(p, "asks you to log in (open it in a browser; waiting 50ms;") || strings.Count(p, "asks you to log in") != 1 {
		t.Errorf("the prompt = %q; want one", p)
	}
}

// A logins file that others can read is not used: the chat says so, and
// the user still logs in, for this run.
func TestMCPLoginFileOpenToOthers(t *testing.T) {
	_, url := oauthServer(t)
	file := filepath.Join(t.TempDir(), "logins.json")
	if err := os.WriteFile(file, []byte(`{"logins":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var visits int
	prompts := &syncBuffer{}
	out := chatOutput(t, options{mcpHTTP: []string{url}, loginFile: file, loginOut: prompts, browser: userBrowser(t, &visits)},
		"what is (12+7)*3\n")
	if !strings.Contains(out, "(12+7)*3 = 57") || visits != 1 {
		t.Errorf("browser opened %d times; output:\n%s", visits, out)
	}
	p := prompts.String()
	for _, want := range []string{"logins will not be kept", "chmod 600 " + file, "the login is not kept"} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompts lack %q:\n%s", want, p)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != `{"logins":{}}` {
		t.Errorf("the file was written: %s", b)
	}
}
