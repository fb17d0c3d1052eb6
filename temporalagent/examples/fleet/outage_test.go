package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// outageProxy forwards loopback connections to a Temporal frontend, until
// it is cut: then it closes the connections it holds, and those it
// accepts, as a network that no longer reaches the server does.
type outageProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *outageProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			up.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { pipe(up, c) })
		p.wg.Go(func() { pipe(c, up) })
	}
}

// setCut cuts the proxy, or mends it.
func (p *outageProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *outageProxy) close() {
	p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}

// stream is a server-sent event stream read as it comes.
type stream struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func openStream(t *testing.T, in *instance, path string, body any) *stream {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", in.http.URL+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := in.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &stream{resp: resp, sc: sc}
}

// next returns the stream's next event, nil at its end.
func (s *stream) next(t *testing.T) map[string]any {
	t.Helper()
	for s.sc.Scan() {
		data, ok := strings.CutPrefix(s.sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		return e
	}
	return nil
}

// threadID returns the store's id of the thread of a served run, which
// the run's id names (trun_, 16 characters, _, the thread in base64).
func threadID(runID string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(runID[len("trun_")+17:])
	return string(b), err
}

// Temporal goes out of reach of an instance mid-run: the stream that
// follows the run there ends, once its cursor's polls failed for the
// Runner's UnreachableTimeout, with the protocol's error (the AI SDK's
// error chunk) rather than hanging; a cursor whose outage is shorter than
// its bound reads on as if nothing happened; requests meanwhile get 503
// runner_unavailable. The run goes on (on the workers, which reach
// Temporal), and once Temporal is back within reach the instance reads
// every record of it, and it is saved once.
func TestTemporalUnreachableMidRun(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	proxy := newOutageProxy(t, f.ts.GetFrontendHostPort())

	// Instance P serves through the proxy; the run's worker reaches
	// Temporal directly. Its model calls are regular activities: a local
	// one holds the workflow task, and the queries that read the log wait
	// for it (see RunnerConfig.UnreachableTimeout).
	queue := f.queue + "-outage"
	w := worker.New(f.b.c, queue, worker.Options{})
	if err := errors.Join(temporalagent.Register(w, temporalagent.Agent{Name: "mail", Agent: f.agent, RegularModelCalls: true}),
		temporalagent.RegisterStore(w, f.store), w.Start()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	c, err := client.Dial(client.Options{HostPort: proxy.ln.Addr().String(), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger})
	if err != nil {
		t.Fatal(err)
	}
	short, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: queue, Agent: "mail", Store: f.store,
		PollInterval: 10 * time.Millisecond, UnreachableTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	long, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: queue, Agent: "mail", Store: f.store,
		PollInterval: 10 * time.Millisecond, UnreachableTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: f.store, Runner: short})
	if err != nil {
		t.Fatal(err)
	}
	p := &instance{srv: srv, http: httptest.NewServer(routes(srv))}
	t.Cleanup(func() {
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		p.http.Close()
		c.Close()
	})

	// The model's answer after the tool comes late: the run is in
	// progress when Temporal goes out of reach.
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "oz"})), fake.Text("Sent to Oz.").WithDelay(5*time.Second))
	chat := id("chat-outage")
	msgs := []any{userMessage("u1", "Email Oz")}
	r1 := do(t, p, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs})
	ids := approvalIDs(r1)
	if len(ids) != 1 {
		t.Fatalf("on P: %d %v %s", r1.status, r1.types(), r1.body)
	}
	info, err := srv.Current(ctx, "local", chat) // the user of a server without Authenticate
	if err != nil {
		t.Fatal(err)
	}
	thread, err := threadID(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{approvalPart(ids[0], true)}})
	s := openStream(t, p, "/api/chat", map[string]any{"id": chat, "messages": msgs})
	var seen []string
	for e := s.next(t); e != nil; e = s.next(t) {
		seen = append(seen, e["type"].(string))
		if e["type"] == "error" {
			t.Fatalf("the approval's stream: %v", e)
		}
		if e["type"] == "tool-output-available" {
			break
		}
	}
	if !slices.Contains(seen, "tool-output-available") {
		t.Fatalf("the approval's stream: %v", seen)
	}
	cur, err := long.Attach(ctx, info.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	read := readUntil(t, cur, agentserver.KindToolResult)

	proxy.setCut(true)
	var last map[string]any
	for e := s.next(t); e != nil; e = s.next(t) {
		seen = append(seen, e["type"].(string))
		last = e
	}
	if last == nil || last["type"] != "error" || !strings.Contains(last["errorText"].(string), "did not answer") {
		t.Fatalf("the stream after Temporal went out of reach: %v, last %v", seen, last)
	}
	if slices.Contains(seen, "finish") {
		t.Errorf("the stream finished: %v", seen)
	}
	// The other cursor's polls fail too, within its bound: once it read
	// what it had read before the cut, no record, and no error.
	for {
		rec, ok, err := cur.Next(ctx, 500*time.Millisecond)
		if err != nil {
			t.Fatalf("the long cursor during the outage: %v", err)
		}
		if !ok {
			break
		}
		read = append(read, rec)
	}
	resumed := do(t, p, "GET", "/api/chat/"+chat+"/stream", nil)
	if resumed.status != http.StatusServiceUnavailable || resumed.code() != "runner_unavailable" {
		t.Errorf("resume during the outage: %d %s", resumed.status, resumed.body)
	}

	proxy.setCut(false)
	read = append(read, readUntil(t, cur, agentserver.KindDone)...)
	for i, rec := range read {
		if rec.Offset != int64(i) {
			t.Fatalf("record %d has offset %d: %v", i, rec.Offset, kinds(read))
		}
	}
	want := []agentserver.Kind{"start", "step", "tool-call", "pause", "decision", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if !slices.Equal(kinds(read), want) {
		t.Errorf("records %v, want %v", kinds(read), want)
	}
	if d := read[len(read)-1].Done; d.State != agentserver.StateDone || d.Text != "Sent to Oz." {
		t.Errorf("done %+v", d)
	}
	// P answers again, from the store: the thread is saved once, whole.
	saved, err := f.store.Load(ctx, thread)
	if err != nil || len(saved) != 4 {
		t.Fatalf("saved %d contents, %v", len(saved), err)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
	model.Enqueue(fake.Text("Anything else?"))
	msgs = append(msgs, userMessage("u2", "Thanks"))
	r3 := do(t, p, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs})
	if r3.status != http.StatusOK || r3.types()[len(r3.types())-1] != "finish" {
		t.Errorf("the next request on P: %d %v %s", r3.status, r3.types(), r3.body)
	}
}

// A model call made as a local activity (the default) holds the workflow
// task for as long as it lasts, and the log queries wait for it: a cursor
// reading the run sees its polls time out for longer than its
// UnreachableTimeout, but Temporal answers that the workflow runs, so the
// run is busy, not out of reach: the cursor reads on to the run's end.
func TestSlowModelCallKeepsCursor(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	runner, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: f.a.c, TaskQueue: f.queue, Agent: "mail", Store: f.store,
		PollInterval: 10 * time.Millisecond, UnreachableTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	model.Enqueue(fake.Text("A slow answer.").WithDelay(8 * time.Second))
	thread := id("slow-model")
	_, cur, err := runner.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread,
		Message: genai.NewContentFromText("Take your time", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	recs := readUntil(t, cur, agentserver.KindDone)
	if d := recs[len(recs)-1].Done; d.State != agentserver.StateDone || d.Text != "A slow answer." {
		t.Errorf("done %+v", d)
	}
}
