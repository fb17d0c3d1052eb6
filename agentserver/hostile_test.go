package agentserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
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
	// An HTTP/1.0 client may name no host at all: no page of a browser.
	conn, err := net.Dial("tcp", h.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"thread":"t-none","text":"Weather in Paris?"}`
	fmt.Fprintf(conn, "POST /run HTTP/1.0\r\nX-Nothing: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a request naming no host: %d, want the run", resp.StatusCode)
	}
}

// One run takes agentserver.MaxReaders readers at a time: a user cannot
// open streams on it without bound, each of which every record wakes.
func TestMaxReaders(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Done."))
	got := make(chan *response)
	go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "gate?"}) }()
	<-h.started
	info := h.await("alice", "t1", func(agentserver.RunInfo) bool { return true })
	var open []agentserver.Cursor
	var refused error
	for range agentserver.MaxReaders + 1 {
		c, err := h.srv.Attach(bg, "alice", info.ID, 0)
		if err != nil {
			refused = err
			break
		}
		open = append(open, c)
	}
	// The stream of the request that started the run reads it too.
	if len(open) != agentserver.MaxReaders-1 || !errors.Is(refused, agentserver.ErrTooManyReaders) {
		t.Fatalf("%d readers attached, then %v; want %d, then ErrTooManyReaders", len(open), refused, agentserver.MaxReaders-1)
	}
	if r := h.do(bg, "alice", "GET", "/replay?thread=t1", "", nil); r.status != 429 || r.errorCode() != "too_many_readers" {
		t.Errorf("a stream over the bound: %d %s", r.status, r.body)
	}
	open[0].Close()
	c, err := h.srv.Attach(bg, "alice", info.ID, 0)
	if err != nil {
		t.Fatalf("once a reader closed: %v", err)
	}
	open[0] = c
	close(h.gate)
	if resp := <-got; resp.last().Done == nil || resp.last().Done.Text != "Done." {
		t.Errorf("the run: %v %s", resp.kinds(), resp.body)
	}
	for _, c := range open {
		c.Close()
	}
}
