package agentserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// A server without Config.Authenticate, on localhost, takes requests for
// localhost only: a page of another site whose name it rebound to
// 127.0.0.1 (DNS rebinding) is the server's origin for the browser, and
// would otherwise start runs and read them as the anonymous user.
func TestAnonymousRefusesAnotherHost(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Authenticate = nil }})
	post := func(host string) (int, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"thread": "t-" + host, "text": "Weather in Paris?"})
		req, _ := http.NewRequestWithContext(bg, "POST", h.http.URL+"/run", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		resp, err := h.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"evil.example", "evil.example:80", "attacker.test:" + strings.Split(h.http.URL, ":")[2], "10.0.0.1"} {
		if status, body := post(host); status != http.StatusForbidden || !strings.Contains(body, `"bad_host"`) {
			t.Errorf("Host %s: %d %s, want 403 bad_host", host, status, body)
		}
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
	for _, host := range []string{"", "localhost", "LOCALHOST:1234", "app.localhost", "[::1]:80", "127.0.0.2"} {
		if status, body := post(host); status != http.StatusOK {
			t.Errorf("Host %q: %d %s, want the run", host, status, body)
		}
	}
}
