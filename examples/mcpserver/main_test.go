package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.uber.org/goleak"
)

// serveArg, as the test binary's first argument, makes it run serve on
// stdio, as the command does: the tests start it as a real subprocess.
const serveArg = "mcpserver-test-serve"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		if err := serve(context.Background(), "", ""); err != nil {
			os.Exit(1)
		}
		return
	}
	goleak.VerifyTestMain(m)
}

// checkTools checks that c offers the demo tools, and that they answer as
// the tools themselves do.
func checkTools(t *testing.T, c *mcptools.Client) {
	t.Helper()
	set := toolset.MustNew(c.Tools()...)
	native := demotools.Set()
	names, want := set.Names(), native.Names()
	slices.Sort(names)
	slices.Sort(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get_weather", map[string]any{"city": "Paris"}},
		{"calculate", map[string]any{"expression": "(12+7)*3"}},
		{"calculate", map[string]any{"expression": "1/0"}},
		{"current_time", map[string]any{"timezone": "Atlantis/Capital"}},
	} {
		remote, _ := set.Lookup(tc.tool)
		local, _ := native.Lookup(tc.tool)
		got, want := remote.Execute(t.Context(), tc.args), local.Execute(t.Context(), tc.args)
		if !want.IsError { // structured outputs come back decoded from JSON
			b, _ := json.Marshal(want.Output)
			json.Unmarshal(b, &want.Output)
		}
		if got.IsError != want.IsError || !cmp.Equal(got.Output, want.Output) {
			t.Errorf("%s(%v) over MCP = %v (error %t), want %v (error %t)", tc.tool, tc.args, got.Output, got.IsError, want.Output, want.IsError)
		}
	}
}

func TestStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcptools.Connect(t.Context(), mcptools.Command(exe, serveArg), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, c)
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}

func TestHTTP(t *testing.T) {
	base := startHTTP(t, "")
	c, err := mcptools.Connect(t.Context(), mcptools.HTTP(base+"/mcp", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, c)
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}

// startHTTP runs serveHTTP with token on a loopback port until the test
// ends, and returns its base URL; serveHTTP must then return
// context.Canceled.
func startHTTP(t *testing.T, token string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveHTTP(ctx, ln, demotools.Set(), token) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != context.Canceled {
			t.Errorf("serveHTTP() = %v; want context.Canceled", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// With a token, only the clients that send it are served; the others are
// told where the server's metadata is.
func TestHTTPToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	const token = "0123456789abcdef0123456789abcdef"
	if err := os.WriteFile(file, []byte(token+"\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readToken(file)
	if err != nil || got != token {
		t.Fatalf("readToken() = %q, %v", got, err)
	}
	os.WriteFile(file, []byte("short\n"), 0o600)
	if _, err := readToken(file); err == nil || !strings.Contains(err.Error(), "at least 16 characters") {
		t.Errorf("readToken() of a short token = %v", err)
	}

	base := startHTTP(t, token)

	for _, sent := range []string{"", token + "x"} {
		c, err := mcptools.Connect(t.Context(), mcptools.HTTP(base+"/mcp", &http.Client{Transport: bearer(sent)}), nil)
		if err == nil {
			c.Close()
			t.Errorf("Connect() with token %q succeeded", sent)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/mcp", strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	metadata := base + "/.well-known/oauth-protected-resource/mcp"
	if want := `Bearer resource_metadata="` + metadata + `"`; resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("without a token: %d, WWW-Authenticate %q; want 401, %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	resp, err = http.Get(metadata)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Resource string }
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta.Resource != base+"/mcp" {
		t.Errorf("the metadata's resource = %q; want %q", meta.Resource, base+"/mcp")
	}

	c, err := mcptools.Connect(t.Context(), mcptools.HTTP(base+"/mcp", &http.Client{Transport: bearer(token)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, c)
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}

// bearer sends its token, when not "", in each request's Authorization
// header.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}
