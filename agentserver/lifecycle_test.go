package agentserver_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// smallBuffers makes the server's sockets send little at a time, so that
// a client that does not read stalls the server's writes soon.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// A client that stops reading is dropped once a write stalls for
// Config.WriteTimeout; its run goes on and is saved, and other clients
// are served meanwhile.
func TestSlowClient(t *testing.T) {
	h := newHarness(t, harnessOpts{
		config:   func(c *agentserver.Config) { c.WriteTimeout = 100 * time.Millisecond },
		listener: func(s *httptest.Server) { s.Listener = smallBuffers{s.Listener} },
	})
	big := strings.Repeat("All work and no play makes Jack a dull boy. ", 10000) // 440 KB
	h.model.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		if strings.Contains(requestText(req)[0], "long") {
			return fake.Text(big).WithTextChunk(1000)
		}
		return fake.Text("Short answer.")
	})
	// A client that sends its request and never reads a byte.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", h.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"thread":"t1","text":"a long answer please"}`
	fmt.Fprintf(conn, "POST /run HTTP/1.1\r\nHost: x\r\nX-User: alice\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)

	info := h.await("alice", "t1", func(agentserver.RunInfo) bool { return true })
	// Bob is served while alice's client stalls.
	if resp := h.post(bg, "bob", testRequest{Thread: "b", Text: "hi"}); resp.last().Done.Text != "Short answer." {
		t.Errorf("bob: %v", resp.kinds())
	}
	info = h.awaitRun("alice", info.ID, over)
	if info.State != agentserver.StateDone || len(info.Done.Text) != len(big) {
		t.Errorf("alice's run ended %v with %d bytes of text", info.State, len(info.Done.Text))
	}
	if n := len(h.stored("alice", "t1")); n != 2 {
		t.Errorf("%d contents stored, want 2", n)
	}
	// Close returns once every stream has ended: the stalled one was
	// dropped by its write deadline.
	ctx, cancel := context.WithTimeout(bg, 10*time.Second) // a hang guard only
	defer cancel()
	if err := h.srv.Close(ctx); err != nil {
		t.Errorf("Close: %v (the stalled stream was not dropped)", err)
	}
}

// Close cancels what it cannot wait for: the stream in progress ends with
// the run's end, the run is saved, its tool is stopped, and new requests
// are refused.
func TestCloseMidStream(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Gate")))
	got := make(chan *response)
	go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather at the gate?"}) }()
	<-h.started
	ctx, cancel := context.WithCancel(bg)
	cancel() // no time to wait: Close cancels at once
	if err := h.srv.Close(ctx); err != context.Canceled {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	if err := <-h.toolCtxErr; err == nil {
		t.Error("the tool was not stopped")
	}
	resp := <-got
	last := resp.last()
	switch {
	case last.Kind == "abort":
	case last.Kind == agentserver.KindDone && last.Done.State == agentserver.StateCancelled && last.Done.Error.Code == "server_closing":
	default:
		t.Errorf("the stream ended with %+v (%v), status %d, body %q", last, resp.kinds(), resp.status, resp.body)
	}
	stored := h.stored("alice", "t1")
	if len(stored) != 3 || stored[2].Parts[0].FunctionResponse == nil {
		t.Errorf("stored %d contents, want the question, the call and its response", len(stored))
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "t2", Text: "hi"}); resp.status != 503 || resp.errorCode() != "closing" {
		t.Errorf("a request after Close: %d %s", resp.status, resp.body)
	}
}

// A run accepted before Close whose stream begins after it (Close ran
// out of time while the request was between the two) is not answered as
// refused: its stream says what became of it, the run cancelled and
// saved.
func TestStreamBeginsAfterClose(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Gate")))
	att, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: genai.NewContentFromText("Weather at the gate?", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	<-h.started
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := h.srv.Close(ctx); err != context.Canceled {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	w := httptest.NewRecorder()
	h.srv.ServeEvents(w, httptest.NewRequest(http.MethodGet, "/run", nil), att.Cursor, &recordEncoder{run: att.Run.ID})
	_, events, err := readEvents(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusOK || len(events) < 2 {
		t.Fatalf("status %d, events %+v", w.Code, events)
	}
	last := events[len(events)-1]
	if last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateCancelled || last.Done.Error.Code != "server_closing" {
		t.Errorf("the stream ended with %+v", last)
	}
}

// With time to wait, Close lets a run finish, and its stream ends
// normally; a run that waits for decisions, parked in the store, stays
// there as it is, for the next server.
func TestCloseWaits(t *testing.T) {
	h := newHarness(t, harnessOpts{agent: func(c *agent.Config) {
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] == "Paris" }
	}})
	h.model.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		last := requestText(req)[len(req.Contents)-1]
		switch {
		case strings.Contains(last, "response"):
			return fake.Text("Done.")
		case strings.Contains(last, "gate"):
			return fake.Calls(call("Gate"))
		}
		return fake.Calls(call("Paris"))
	})
	waiter := h.post(bg, "alice", testRequest{Thread: "w", Text: "Paris?"})
	if waiter.last().Kind != agentserver.KindPause {
		t.Fatalf("the first run does not wait: %v", waiter.kinds())
	}
	got := make(chan *response)
	go func() { got <- h.post(bg, "alice", testRequest{Thread: "g", Text: "the gate?"}) }()
	<-h.started
	closed := make(chan error)
	ctx, cancel := context.WithTimeout(bg, 20*time.Second) // a hang guard only
	defer cancel()
	go func() { closed <- h.srv.Close(ctx) }()
	until(t, "Close to begin", func() bool {
		return h.post(bg, "alice", testRequest{Thread: "x", Text: "hi"}).errorCode() == "closing"
	})
	if info, err := h.srv.Run(bg, "alice", waiter.run()); err != nil || info.State != agentserver.StateWaiting {
		t.Errorf("the waiting run during Close: %+v, %v; want it waiting, in the store", info, err)
	}
	if j, err := h.store.LoadRun(bg, "agentserver/alice/w"); err != nil || j.Len != 3 {
		t.Errorf("the waiting run's journal: %+v, %v; want it as it was: the run, its turn, its pause", j, err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while a run was in flight", err)
	default:
	}
	close(h.gate)
	if err := <-closed; err != nil {
		t.Errorf("Close = %v", err)
	}
	if resp := <-got; resp.last().Done == nil || resp.last().Done.State != agentserver.StateDone {
		t.Errorf("the run in flight ended %v", resp.kinds())
	}
}

// Cancel stops a run and its tools; the run is saved, and ends cancelled.
func TestCancel(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Gate")))
	got := make(chan *response)
	go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather at the gate?"}) }()
	<-h.started
	info := h.await("alice", "t1", func(agentserver.RunInfo) bool { return true })
	if err := h.srv.Cancel(bg, "alice", info.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-h.toolCtxErr; err == nil {
		t.Error("the tool was not stopped")
	}
	resp := <-got
	if d := resp.last().Done; d == nil || d.State != agentserver.StateCancelled || d.Error.Code != "cancelled" {
		t.Errorf("the stream ended %v %+v", resp.kinds(), d)
	}
	if n := len(h.stored("alice", "t1")); n != 3 {
		t.Errorf("%d contents stored, want 3", n)
	}
}

// An idle stream gets keep-alive comments.
func TestKeepAlive(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.KeepAlive = 5 * time.Millisecond }})
	h.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Done."))
	req, _ := http.NewRequest("POST", h.http.URL+"/run", strings.NewReader(`{"thread":"t1","text":"gate?"}`))
	req.Header.Set("X-User", "alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended without a keep-alive: %v", err)
		}
		if strings.Contains(line, "\r") {
			t.Fatalf("a line framed with CR: %q", line)
		}
		if line == ": keep-alive\n" {
			break
		}
	}
	close(h.gate)
	rest, _, _ := readEvents(br)
	if !strings.Contains(rest, `"kind":"done"`) {
		t.Errorf("the stream did not end with the run: %q", rest)
	}
}

// Config.Observer sees every run's events, with the run's id and thread
// in its contexts.
func TestObserver(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	obs := agent.ObserverFunc(func(ctx context.Context, e *agent.Event) {
		if e.Kind == agent.EventRunStart {
			mu.Lock()
			seen[agentserver.RunID(ctx)] = agent.Conversation(ctx)
			mu.Unlock()
		}
	})
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Observer = obs }})
	h.model.Enqueue(fake.Text("One."), fake.Text("Two."))
	a := h.post(bg, "alice", testRequest{Thread: "t1", Text: "hi"})
	b := h.post(bg, "bob", testRequest{Thread: "t2", Text: "hi"})
	mu.Lock()
	defer mu.Unlock()
	if seen[a.run()] != "t1" || seen[b.run()] != "t2" || len(seen) != 2 {
		t.Errorf("observed runs %v; want %s on t1, %s on t2", seen, a.run(), b.run())
	}
	if agentserver.RunID(bg) != "" {
		t.Error("RunID of a plain context")
	}
}

// A failure reaches the client as a short safe message: never the
// model's error body.
func TestFailuresAreSafe(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Error(400, "API key sk-live-SECRET is invalid for project p-123"))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "hi"})
	d := resp.last().Done
	if d == nil || d.State != agentserver.StateFailed || d.Error.Code != "model_rejected" {
		t.Fatalf("the run ended %v %+v", resp.kinds(), d)
	}
	if strings.Contains(resp.raw, "SECRET") || strings.Contains(resp.raw, "p-123") {
		t.Errorf("the stream shows the model's error: %s", resp.raw)
	}
}

// Config.MaxRuns bounds the runs in flight.
func TestMaxRuns(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.MaxRuns = 1 }})
	h.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Done."), fake.Text("Later."))
	got := make(chan *response)
	go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "gate?"}) }()
	<-h.started
	if resp := h.post(bg, "alice", testRequest{Thread: "t2", Text: "hi"}); resp.status != 503 || resp.errorCode() != "too_many_runs" {
		t.Errorf("a run over the limit: %d %s", resp.status, resp.body)
	}
	close(h.gate)
	<-got
	if resp := h.post(bg, "alice", testRequest{Thread: "t2", Text: "hi"}); resp.last().Done.Text != "Later." {
		t.Errorf("after the first run ended: %v %s", resp.kinds(), resp.body)
	}
}

// Config.MaxRunsPerUser bounds one user's runs in flight, so that one
// user cannot take every run Config.MaxRuns allows.
func TestMaxRunsPerUser(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.MaxRuns, c.MaxRunsPerUser = 2, 1 }})
	h.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Bob's."), fake.Text("Done."), fake.Text("Later."))
	got := make(chan *response)
	go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "gate?"}) }()
	<-h.started
	if resp := h.post(bg, "alice", testRequest{Thread: "t2", Text: "hi"}); resp.status != 429 || resp.errorCode() != "too_many_runs" {
		t.Errorf("alice's second run: %d %s", resp.status, resp.body)
	}
	if resp := h.post(bg, "bob", testRequest{Thread: "t1", Text: "hi"}); resp.last().Done.Text != "Bob's." {
		t.Errorf("bob's run, while alice's goes on: %d %v %s", resp.status, resp.kinds(), resp.body)
	}
	close(h.gate)
	<-got
	if resp := h.post(bg, "alice", testRequest{Thread: "t2", Text: "hi"}); resp.last().Done.Text != "Later." {
		t.Errorf("after alice's first run ended: %v %s", resp.kinds(), resp.body)
	}
}

type plan struct {
	City string `json:"city"`
	Days int    `json:"days"`
}

// A typed agent's answer is in the run's end, as JSON.
func TestTypedOutput(t *testing.T) {
	var typed *agent.Agent
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) {
		var err error
		if typed, err = agent.Typed[plan](c.Agent); err != nil {
			t.Fatal(err)
		}
		c.Agent = typed
	}})
	h.model.Enqueue(fake.Text(`{"city":"Lisbon","days":3}`))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Plan a trip"})
	d := resp.last().Done
	if d == nil || string(d.Output) != `{"city":"Lisbon","days":3}` {
		t.Errorf("done %+v (%v)", d, resp.kinds())
	}
}
