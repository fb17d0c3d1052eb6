package a2aagent_test

// The remote-agent tool, inside agent runs on the fake model of this
// process, calling the tests' A2A server in another process, or servers
// of this process that misbehave.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// caller is an agent of this process whose only tool is a remote agent.
type caller struct {
	t     *testing.T
	model *fake.Server
	agent *agent.Agent
	tool  *toolset.Tool
}

func newCaller(t *testing.T, cardURL string, opts *a2aagent.RemoteOptions, toolTimeout time.Duration) *caller {
	t.Helper()
	tool, err := a2aagent.RemoteTool(context.Background(), cardURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := fake.NewServer()
	t.Cleanup(func() {
		m.Close()
		for _, rj := range m.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
	})
	a, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(tool), ToolTimeout: toolTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return &caller{t: t, model: m, agent: a, tool: tool}
}

// ask scripts the calling model to call the tool once with args, then to
// answer, and returns what the tool answered the model: its result, or
// its error.
func (c *caller) ask(ctx context.Context, conversation string, args map[string]any) (result any, errText string) {
	c.t.Helper()
	c.model.Enqueue(fake.Calls(fake.Call(c.tool.Name, args)), fake.Text("ok"))
	if conversation != "" {
		ctx = agent.WithConversation(ctx, conversation)
	}
	if _, err := c.agent.Run(ctx, genai.Text("go")); err != nil {
		c.t.Fatalf("the calling run: %v", err)
	}
	rs := c.model.LastRequest().LastFunctionResponses(c.tool.Name)
	if len(rs) != 1 {
		c.t.Fatalf("the model got %d responses of %s", len(rs), c.tool.Name)
	}
	if e, ok := rs[0].Response["error"]; ok {
		return nil, fmt.Sprint(e)
	}
	return rs[0].Response["result"], ""
}

// The tool hands the request to the remote agent and returns its answer;
// a conversation of ours is one of the remote agent's, each of ours its
// own.
func TestRemoteToolDelegates(t *testing.T) {
	srv := startServer(t)
	c := newCaller(t, srv.URL, &a2aagent.RemoteOptions{HTTPClient: httpClient("alice")}, 0)
	if c.tool.Name != "weather_desk" || !strings.Contains(c.tool.Description, "Weather Desk") || !strings.Contains(c.tool.Description, "get_weather") {
		t.Errorf("tool %s: %q", c.tool.Name, c.tool.Description)
	}
	ctx := context.Background()
	if got, e := c.ask(ctx, "c1", map[string]any{"request": "weather in Paris"}); got != `Done: get_weather {"result":"sunny in Paris"}` {
		t.Errorf("first answer %v (%s)", got, e)
	}
	if got, e := c.ask(ctx, "c1", map[string]any{"request": "remember?"}); got != "You said 2 things: weather in Paris | remember?." {
		t.Errorf("the follow-up: %v (%s)", got, e)
	}
	if got, e := c.ask(ctx, "c2", map[string]any{"request": "remember?"}); got != "You said 1 things: remember?." {
		t.Errorf("another conversation: %v (%s)", got, e)
	}
	if got, e := c.ask(ctx, "", map[string]any{"request": "remember?"}); got != "You said 1 things: remember?." {
		t.Errorf("no conversation: %v (%s)", got, e)
	}
	// A card's own URL works as well as the agent's base URL.
	if _, err := a2aagent.RemoteTool(ctx, srv.URL+a2aagent.CardPath, nil); err != nil {
		t.Errorf("the card's URL: %v", err)
	}
}

// The remote agent's tool progress is the calling tool's: the caller's
// stream sees it as the remote tool's EventToolProgress, before its result.
func TestRemoteToolProgress(t *testing.T) {
	srv := startServer(t)
	for _, v := range remoteVersions(t, srv) {
		t.Run(v.name, func(t *testing.T) { testRemoteToolProgress(t, v.card) })
	}
}

func testRemoteToolProgress(t *testing.T, card string) {
	c := newCaller(t, card, &a2aagent.RemoteOptions{HTTPClient: httpClient("alice")}, 0)
	c.model.Enqueue(fake.Calls(fake.Call(c.tool.Name, map[string]any{"request": "count to 4"})), fake.Text("ok"))
	var last *toolset.Progress
	for e, err := range c.agent.Stream(context.Background(), genai.Text("go")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case agent.EventToolProgress:
			if e.Tool != c.tool {
				t.Errorf("progress of %v", e.Tool)
			}
			last = e.Progress
		case agent.EventToolResult:
			if last == nil {
				t.Fatal("the result came before any progress")
			}
		}
	}
	if last == nil || last.Done != 4 || last.Total != 4 || last.Message != "count: step 4" {
		t.Errorf("the last progress %+v", last)
	}
}

// When the remote agent needs approval, the model reads what it asks;
// its next call decides.
func TestRemoteToolApproval(t *testing.T) {
	srv := startServer(t)
	for _, v := range remoteVersions(t, srv) {
		t.Run(v.name, func(t *testing.T) { testRemoteToolApproval(t, v.card) })
	}
}

func testRemoteToolApproval(t *testing.T, card string) {
	c := newCaller(t, card, &a2aagent.RemoteOptions{HTTPClient: httpClient("alice")}, 0)
	ctx := context.Background()
	got, e := c.ask(ctx, "a1", map[string]any{"request": "email zed"})
	res, _ := got.(map[string]any)
	waits, _ := res["waiting_for"].([]any)
	if res["state"] != "input-required" || !strings.Contains(fmt.Sprint(res["question"]), "send_email") || len(waits) != 1 ||
		jsonOf(waits[0]) != `{"args":{"to":"zed"},"call":"send_email","needs_approval":true}` || !strings.Contains(fmt.Sprint(res["next"]), "approve") {
		t.Fatalf("input-required: %s (%s)", jsonOf(got), e)
	}
	if _, e := c.ask(ctx, "a1", map[string]any{"request": "please"}); !strings.Contains(e, `waits for approval of send_email {"to":"zed"}`) {
		t.Errorf("a follow-up without approve: %q", e)
	}
	if got, e := c.ask(ctx, "a1", map[string]any{"request": "go ahead", "approve": true}); got != `Done: send_email {"result":"sent to zed"}` {
		t.Errorf("approved: %v (%s)", got, e)
	}
	// Refused, with the request as the reason.
	c.ask(ctx, "a2", map[string]any{"request": "email yan"})
	if got, e := c.ask(ctx, "a2", map[string]any{"request": "not yan", "approve": false}); !strings.Contains(fmt.Sprint(got), "not yan") {
		t.Errorf("refused: %v (%s)", got, e)
	}
}

// A typed remote agent's answer is its data.
func TestRemoteToolTyped(t *testing.T) {
	srv := startServer(t)
	c := newCaller(t, srv.URL+"/typed", &a2aagent.RemoteOptions{HTTPClient: httpClient("alice"), Name: "forecast"}, 0)
	if got, e := c.ask(context.Background(), "t1", map[string]any{"request": "forecast for Oslo"}); jsonOf(got) != `{"celsius":21,"city":"Oslo"}` {
		t.Errorf("typed answer %s (%s)", jsonOf(got), e)
	}
}

// Every failure of the remote agent is an error result the model reads.
func TestRemoteToolFailures(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	t.Run("credentials", func(t *testing.T) {
		c := newCaller(t, srv.URL, nil, 0)
		if _, e := c.ask(ctx, "f1", map[string]any{"request": "weather in Paris"}); !strings.Contains(e, "weather_desk refused our credentials (HTTP 401)") {
			t.Errorf("no credentials: %q", e)
		}
	})
	t.Run("failed task", func(t *testing.T) {
		c := newCaller(t, srv.URL, &a2aagent.RemoteOptions{HTTPClient: httpClient("alice")}, 0)
		if _, e := c.ask(ctx, "f2", map[string]any{"request": "fail"}); e != "weather_desk failed: the model refused the request" {
			t.Errorf("a failed task: %q", e)
		}
	})
	t.Run("no card", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		url := "http://" + ln.Addr().String()
		ln.Close()
		if _, err := a2aagent.RemoteTool(ctx, url, nil); err == nil || !strings.Contains(err.Error(), "agent card") {
			t.Errorf("no agent there: %v", err)
		}
		if _, err := a2aagent.RemoteTool(ctx, "ftp://example.com", nil); err == nil {
			t.Error("an ftp URL was taken")
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		dead := "http://" + ln.Addr().String() + "/a2a"
		ln.Close()
		fs := fakeAgent(t, dead, nil)
		c := newCaller(t, fs.URL, nil, 0)
		if _, e := c.ask(ctx, "", map[string]any{"request": "hi"}); !strings.Contains(e, "could not be reached") {
			t.Errorf("unreachable: %q", e)
		}
	})
	for _, tc := range []struct {
		name string
		body string // the answer's events, each a line of data
		want string
	}{
		{"not json", "data: {not json\n\n", "answered with a malformed response"},
		{"unknown kind", `data: {"jsonrpc":"2.0","id":"x","result":{"kind":"mystery"}}` + "\n\n", "answered with a malformed response"},
		{"another task", task("a") + `data: {"jsonrpc":"2.0","id":"x","result":{"kind":"status-update","taskId":"b","contextId":"c","final":true,"status":{"state":"completed"}}}` + "\n\n",
			"answered with a malformed response"},
		{"error", `data: {"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"invalid params","data":{"error":"no such skill"}}}` + "\n\n",
			"refused the request: invalid params: no such skill"},
		{"no end", task("a"), "its answer ended before its task did"},
		{"html", "<html>hello</html>", "its answer ended before its task did"},
		{"rejected", task("a") + status("a", "rejected", "not today"), "rejected the request: not today"},
		{"too large", task("a") + "data: " + strings.Repeat("x", 5000) + "\n\n", "answered with more than 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := fakeAgent(t, "", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tc.body)
			})
			c := newCaller(t, fs.URL, &a2aagent.RemoteOptions{MaxResponseBytes: 4096}, 0)
			if _, e := c.ask(ctx, "", map[string]any{"request": "hi"}); !strings.Contains(e, tc.want) {
				t.Errorf("error result %q, want %q", e, tc.want)
			}
		})
	}
	t.Run("a refused answer", func(t *testing.T) {
		// The agent asks, then refuses the answer (its task expired, say):
		// the next call starts a new task.
		var mu sync.Mutex
		var taskIDs []string
		fs := fakeAgent(t, "", func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Params struct{ Message struct{ TaskID string } }
			}
			json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			taskIDs = append(taskIDs, req.Params.Message.TaskID)
			n := len(taskIDs)
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			switch n {
			case 1:
				io.WriteString(w, task("a")+status("a", "input-required", "which city?"))
			case 2:
				io.WriteString(w, `data: {"jsonrpc":"2.0","id":"x","error":{"code":-32004,"message":"task a is canceled"}}`+"\n\n")
			default:
				io.WriteString(w, task("b")+status("b", "completed", "fine"))
			}
		})
		c := newCaller(t, fs.URL, nil, 0)
		if got, _ := c.ask(ctx, "r", map[string]any{"request": "weather?"}); !strings.Contains(jsonOf(got), "which city?") {
			t.Errorf("the question: %s", jsonOf(got))
		}
		if _, e := c.ask(ctx, "r", map[string]any{"request": "Paris"}); !strings.Contains(e, "refused the request") {
			t.Errorf("the refused answer: %q", e)
		}
		if got, _ := c.ask(ctx, "r", map[string]any{"request": "weather in Paris?"}); got != "fine" {
			t.Errorf("the next call: %v", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(taskIDs, ",") != ",a," {
			t.Errorf("the messages named the tasks %q", taskIDs)
		}
	})
	t.Run("dies mid-stream", func(t *testing.T) {
		dying := startServer(t)
		c := newCaller(t, dying.URL, &a2aagent.RemoteOptions{HTTPClient: httpClient("alice")}, 0)
		killed := make(chan struct{})
		go func() {
			defer close(killed)
			dying.next("started d1")
			dying.kill()
		}()
		// The agent may die before its stream's headers reach the
		// caller (the task started, nothing flushed yet): then the
		// request itself failed.
		if _, e := c.ask(ctx, "d", map[string]any{"request": "hold d1"}); !strings.Contains(e, "the connection was cut") &&
			!strings.Contains(e, "ended before its task did") && !strings.Contains(e, "could not be reached") {
			t.Errorf("the agent died: %q", e)
		}
		<-killed
	})
}

// A remote agent that hangs: the call ends at the calling agent's
// ToolTimeout, or when the calling run is cancelled, and then cancels its
// remote task.
func TestRemoteToolHangs(t *testing.T) {
	hang := func(t *testing.T) (url string, canceled chan string) {
		canceled = make(chan string, 1)
		fs := fakeAgent(t, "", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				Method string
				Params struct{ ID string }
			}
			json.Unmarshal(body, &req)
			if req.Method == "tasks/cancel" {
				canceled <- req.Params.ID
				io.WriteString(w, `{"jsonrpc":"2.0","id":"x","result":{"kind":"task","id":"h1","contextId":"c","status":{"state":"canceled"}}}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, task("h1"))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // hangs
		})
		return fs.URL, canceled
	}
	ctx := context.Background()
	t.Run("ToolTimeout", func(t *testing.T) {
		url, _ := hang(t)
		c := newCaller(t, url, nil, 50*time.Millisecond)
		if _, e := c.ask(ctx, "", map[string]any{"request": "hi"}); !strings.Contains(e, "timed out after 50ms") {
			t.Errorf("error result %q", e)
		}
	})
	t.Run("cancelled run", func(t *testing.T) {
		url, canceled := hang(t)
		// The run is cancelled once the tool has read the task and waits
		// for more.
		read := &afterFirstEvent{base: http.DefaultTransport, waiting: make(chan struct{})}
		c := newCaller(t, url, &a2aagent.RemoteOptions{HTTPClient: &http.Client{Transport: read}}, 0)
		c.model.Enqueue(fake.Calls(fake.Call(c.tool.Name, map[string]any{"request": "hi"})))
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() {
			_, err := c.agent.Run(runCtx, genai.Text("go"))
			done <- err
		}()
		<-read.waiting
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the run: %v", err)
		}
		if id := <-canceled; id != "h1" {
			t.Errorf("tasks/cancel of %q", id)
		}
	})
}

// A cancelled calling run cancels the remote task, whose run stops its
// tool, in the other process.
func TestRemoteToolCancelReachesRemoteRun(t *testing.T) {
	srv := startServer(t)
	for i, v := range remoteVersions(t, srv) {
		t.Run(v.name, func(t *testing.T) { testRemoteToolCancel(t, srv, v.card, fmt.Sprint("x", i+1)) })
	}
}

func testRemoteToolCancel(t *testing.T, srv *server, card, key string) {
	read := &afterFirstEvent{base: bearer{"alice", http.DefaultTransport}, waiting: make(chan struct{})}
	c := newCaller(t, card, &a2aagent.RemoteOptions{HTTPClient: &http.Client{Transport: read}}, 0)
	c.model.Enqueue(fake.Calls(fake.Call(c.tool.Name, map[string]any{"request": "hold " + key})))
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.agent.Run(agent.WithConversation(runCtx, "x"), genai.Text("go"))
		done <- err
	}()
	<-read.waiting
	srv.next("started " + key)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the run: %v", err)
	}
	if line := srv.next("stopped " + key); !strings.Contains(line, "context canceled") {
		t.Errorf("the remote tool: %q", line)
	}
}

// afterFirstEvent closes waiting when the reader of a stream asks for
// more after its first event: the reader has taken that event.
type afterFirstEvent struct {
	base    http.RoundTripper
	waiting chan struct{}
}

func (a *afterFirstEvent) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &watchedBody{ReadCloser: resp.Body, waiting: a.waiting}
	}
	return resp, err
}

type watchedBody struct {
	io.ReadCloser
	waiting chan struct{}
	seen    bool // an event's end was read
	once    bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.seen && !b.once {
		b.once = true
		close(b.waiting)
	}
	n, err := b.ReadCloser.Read(p)
	if strings.Contains(string(p[:n]), "\n\n") {
		b.seen = true
	}
	return n, err
}

// fakeAgent serves a card whose url is rpcURL (its own /a2a when empty),
// and answers JSON-RPC with rpc.
func fakeAgent(t *testing.T, rpcURL string, rpc http.HandlerFunc) *httptest.Server {
	t.Helper()
	var fs *httptest.Server
	fs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == a2aagent.CardPath {
			u := rpcURL
			if u == "" {
				u = fs.URL + "/a2a"
			}
			fmt.Fprintf(w, `{"name":"Fake Agent","description":"fakes","url":%q,"version":"1","protocolVersion":"0.3.0","capabilities":{"streaming":true},"skills":[],"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"preferredTransport":"JSONRPC"}`, u)
			return
		}
		rpc(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func task(id string) string {
	return `data: {"jsonrpc":"2.0","id":"x","result":{"kind":"task","id":"` + id + `","contextId":"c","status":{"state":"submitted"}}}` + "\n\n"
}

func status(id, state, text string) string {
	return `data: {"jsonrpc":"2.0","id":"x","result":{"kind":"status-update","taskId":"` + id + `","contextId":"c","final":true,"status":{"state":"` + state +
		`","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"` + text + `"}]}}}}` + "\n\n"
}

// A hostile card cannot make the tool's declaration, which every model
// call of the calling agent sends, as large as itself.
func TestRemoteToolBoundsTheCard(t *testing.T) {
	huge := strings.Repeat("é", 50000)
	card, _ := json.Marshal(map[string]any{"name": "Big " + huge, "description": huge, "url": "http://127.0.0.1:1/a2a", "version": "1",
		"protocolVersion": "0.3.0", "capabilities": map[string]any{"streaming": true}, "defaultInputModes": []string{"text/plain"},
		"defaultOutputModes": []string{"text/plain"}, "preferredTransport": "JSONRPC",
		"skills": []map[string]any{{"id": "a", "name": huge, "description": huge, "tags": []string{}}, {"id": "b", "name": "b", "description": huge, "tags": []string{}}}})
	fs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(card) }))
	defer fs.Close()
	tool, err := a2aagent.RemoteTool(context.Background(), fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := json.Marshal(tool.InputSchema)
	if len(tool.Description) > 4000 || len(schema) > 2000 || len(tool.Name) > 64 {
		t.Errorf("the declaration holds %d bytes of description and %d of schema, the name %d", len(tool.Description), len(schema), len(tool.Name))
	}
	for _, s := range []string{tool.Description, string(schema)} {
		if !utf8.ValidString(s) || !strings.Contains(s, "Big éé") {
			t.Errorf("the declaration is not the card's, cut as UTF-8: %.200q", s)
		}
	}
}

// remoteVersions are the versions RemoteTool speaks, each with the URL of
// a card of the tests' server that makes it choose that version: the
// server's own (1.0 first), or the same without supportedInterfaces
// (0.3, to its url).
func remoteVersions(t *testing.T, srv *server) []struct{ name, card string } {
	t.Helper()
	resp, err := http.Get(srv.URL + a2aagent.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	delete(card, "supportedInterfaces")
	legacy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(card)
	}))
	t.Cleanup(legacy.Close)
	return []struct{ name, card string }{{"1.0", srv.URL}, {"0.3", legacy.URL + "/card.json"}}
}
