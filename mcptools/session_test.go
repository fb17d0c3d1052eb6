package mcptools_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// pipeListener is a network in memory for HTTP inside a synctest bubble,
// where a socket would keep the fake clock from advancing: each dial is a
// net.Pipe whose other end Accept returns.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// mcpServer serves handler on a pipeListener until the test ends.
type mcpServer struct {
	t   *testing.T
	ln  *pipeListener
	srv *http.Server
}

func serveMCP(t *testing.T, handler http.Handler) *mcpServer {
	s := &mcpServer{t: t, ln: newPipeListener(), srv: &http.Server{Handler: handler}}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.srv.Serve(s.ln)
	}()
	t.Cleanup(func() {
		_ = s.srv.Close()
		<-served
	})
	return s
}

// client returns a new HTTP client, with its own connections, and the
// function that drops them.
func (s *mcpServer) client() (*http.Client, func()) {
	tr := &http.Transport{DialContext: s.ln.dial}
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

// post sends one JSON-RPC message on session (none for initialize) and
// returns the response, its body read.
func (s *mcpServer) post(client *http.Client, session, body string) (*http.Response, string) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://mcp.test/mcp", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"vanishing","version":"v1"}}}`

// abandon has n clients initialize a session each and vanish, as a killed
// process does: no DELETE, their connections dropped. It returns the
// sessions' IDs and the last initialize response.
func (s *mcpServer) abandon(n int) ([]string, *http.Response) {
	s.t.Helper()
	var ids []string
	var last *http.Response
	for range n {
		client, vanish := s.client()
		resp, body := s.post(client, "", initialize)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" || !strings.Contains(body, `"serverInfo"`) {
			s.t.Fatalf("initialize = %s, session %q: %s", resp.Status, id, body)
		}
		ids = append(ids, id)
		last = resp
		vanish()
	}
	return ids, last
}

// statuses returns how many of the sessions answer a ping with each
// status.
func (s *mcpServer) statuses(ids []string) map[int]int {
	s.t.Helper()
	client, done := s.client()
	defer done()
	got := map[int]int{}
	for _, id := range ids {
		resp, _ := s.post(client, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		got[resp.StatusCode]++
	}
	return got
}

const abandoned = 200

// bubbled returns the stacks of the goroutines in the synctest bubble: the
// goroutines of the test's clients and server, and of no other test.
func bubbled() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var stacks []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "synctest bubble") {
			stacks = append(stacks, g)
		}
	}
	return stacks
}

// HTTPHandler reclaims the sessions of clients that initialize and vanish
// once they have been idle for DefaultSessionTimeout: their goroutines
// end, and their IDs are unknown from then on. The clock is synctest's.
func TestHTTPHandlerReclaimsAbandonedSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := serveMCP(t, mcptools.HTTPHandler(demoSet(), nil))
		synctest.Wait()
		before := len(bubbled())
		ids, _ := s.abandon(abandoned)
		synctest.Wait()
		if during := len(bubbled()); during < before+abandoned {
			t.Fatalf("%d goroutines with %d sessions open, %d before: the test sees no sessions", during, abandoned, before)
		}

		time.Sleep(mcptools.DefaultSessionTimeout - time.Second)
		synctest.Wait()
		if during := len(bubbled()); during < before+abandoned {
			t.Errorf("%d goroutines a second before the timeout, %d before the sessions: closed too early", during, before)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if after := bubbled(); len(after) != before {
			t.Errorf("%d goroutines after the idle timeout, %d before %d clients initialized and vanished:\n%s",
				len(after), before, abandoned, strings.Join(after, "\n\n"))
		}
		if got := s.statuses(ids); got[http.StatusNotFound] != abandoned {
			t.Errorf("the abandoned sessions answer %v; want %d × 404", got, abandoned)
		}
	})
}

// NewHTTPHandler passes the SDK's StreamableHTTPOptions through: here a
// JSON response, and a session timeout of one minute.
func TestNewHTTPHandlerOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := serveMCP(t, mcptools.NewHTTPHandler(demoSet(), nil, &mcptools.HandlerOptions{
			Streamable: &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute, JSONResponse: true},
		}))
		ids, last := s.abandon(3)
		if ct := last.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("initialize answered with Content-Type %q; want application/json (JSONResponse)", ct)
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if got := s.statuses(ids); got[http.StatusNotFound] != len(ids) {
			t.Errorf("sessions idle for a minute answer %v; want %d × 404", got, len(ids))
		}
	})
}

// A negative SessionTimeout keeps idle sessions until their client ends
// them, as the SDK's zero does.
func TestNewHTTPHandlerNoTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := serveMCP(t, mcptools.NewHTTPHandler(demoSet(), nil, &mcptools.HandlerOptions{
			Streamable: &mcp.StreamableHTTPOptions{SessionTimeout: -1},
		}))
		ids, _ := s.abandon(3)
		time.Sleep(10 * mcptools.DefaultSessionTimeout)
		synctest.Wait()
		if got := s.statuses(ids); got[http.StatusOK] != len(ids) {
			t.Errorf("sessions without a timeout answer %v; want %d × 200", got, len(ids))
		}
		client, done := s.client()
		defer done()
		for _, id := range ids {
			req, _ := http.NewRequest(http.MethodDelete, "http://mcp.test/mcp", nil)
			req.Header.Set("Mcp-Session-Id", id)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if got := s.statuses(ids); got[http.StatusNotFound] != len(ids) {
			t.Errorf("deleted sessions answer %v; want %d × 404", got, len(ids))
		}
	})
}
