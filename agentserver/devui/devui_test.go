package devui

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// model is a Gemini 3 model: the fake gives calls ids and thought
// signatures, and checks that signatures come back.
const model = "gemini-3-flash-preview"

type env struct {
	t     *testing.T
	model *fake.Server
	srv   *agentserver.Server
	rec   *Recorder
	http  *httptest.Server
	// Calls of get_weather wait until both of a turn's calls have started
	// (barrier), so that they surely run at the same time.
	barrier *barrier
}

type envOpts struct {
	agent    func(*agent.Config)
	server   func(*agentserver.Config)
	recorder *RecorderOptions
	noRec    bool
	ui       *Options
}

type barrier struct {
	mu   sync.Mutex
	n    int
	want int
	all  chan struct{}
}

func (b *barrier) arrive(ctx context.Context) error {
	b.mu.Lock()
	b.n++
	if b.n == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type cityIn struct {
	City string `json:"city"`
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{t: t, model: fake.NewServer(), barrier: &barrier{want: 2, all: make(chan struct{})}}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (map[string]any, error) {
		if in.City == "Paris" || in.City == "Tokyo" {
			if err := e.barrier.arrive(ctx); err != nil {
				return nil, err
			}
		}
		return map[string]any{"city": in.City, "sky": "sunny"}, nil
	})
	cfg := agent.Config{Models: e.model.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		Retry: agent.RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, Jitter: -1}}
	if o.agent != nil {
		o.agent(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler), Authenticate: func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no X-User header")
	}}
	if !o.noRec {
		e.rec = NewRecorder(o.recorder)
		scfg.Observer = e.rec
	}
	if o.server != nil {
		o.server(&scfg)
	}
	if e.srv, err = agentserver.New(scfg); err != nil {
		t.Fatal(err)
	}
	e.http = httptest.NewServer(Handler(e.srv, o.ui))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		e.http.Close()
		e.model.Close()
		for _, rj := range e.model.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
	})
	return e
}

// do sends a request as user ("" sends none) and returns the status and
// body.
func (e *env) do(method, path, user, contentType, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-User", user)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// get reads a JSON route as user into v, failing the test unless it
// answers 200.
func (e *env) get(path, user string, v any) {
	e.t.Helper()
	status, body := e.do("GET", path, user, "", "")
	if status != http.StatusOK {
		e.t.Fatalf("GET %s as %s: %d %s", path, user, status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		e.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// chat posts a message on thread as user, as the page does, and returns
// the stream's chunks, up to its end.
func (e *env) chat(user, thread, text string) []map[string]any {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"id": thread, "messages": []any{
		map[string]any{"id": "m-" + text, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}}})
	return e.stream("POST", "/api/chat", user, string(body))
}

// decide approves or denies a call of thread, as the page does.
func (e *env) decide(user, thread, name, callID string, approved bool) []map[string]any {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"id": thread, "messages": []any{
		map[string]any{"id": "d-" + callID, "role": "assistant", "parts": []any{map[string]any{
			"type": "tool-" + name, "toolCallId": callID, "state": "approval-responded",
			"approval": map[string]any{"id": callID, "approved": approved}}}}}})
	return e.stream("POST", "/api/chat", user, string(body))
}

func (e *env) stream(method, path, user, body string) []map[string]any {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	req.Header.Set("X-User", user)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	var chunks []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			e.t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// waitingCall returns the id of the call of run id, user's, that waits
// for a decision (the last one that does).
func (e *env) waitingCall(user, id string) string {
	e.t.Helper()
	var tl timeline
	e.get("/api/runs/"+id, user, &tl)
	call := ""
	for _, s := range tl.Spans {
		if s.Kind == "tool" && s.Wait != nil && s.Wait.To == nil {
			call = s.CallID
		}
	}
	if call == "" {
		e.t.Fatalf("no call of run %s waits for a decision", id)
	}
	return call
}

// runOf returns the run id a stream's start chunk names.
func runOf(t *testing.T, chunks []map[string]any) string {
	t.Helper()
	for _, c := range chunks {
		if c["type"] == "start" {
			return c["messageMetadata"].(map[string]any)["runId"].(string)
		}
	}
	t.Fatalf("no start chunk in %v", chunks)
	return ""
}

// settled waits until the recorder has read run id's log to its end.
func (e *env) settled(id string) {
	e.t.Helper()
	e.rec.mu.Lock()
	rec := e.rec.runs[id]
	e.rec.mu.Unlock()
	if rec == nil {
		e.t.Fatalf("run %s is not recorded", id)
	}
	select {
	case <-rec.followed:
	case <-time.After(10 * time.Second):
		e.t.Fatalf("the recorder did not read run %s's log to its end", id)
	}
}

// openChat starts a run on thread with text, as user, and returns the
// chat's response once its head arrived (the run is in progress then),
// for the test to read and close.
func (e *env) openChat(user, thread, text string) *http.Response {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"id": thread, "messages": []any{
		map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}}})
	req, _ := http.NewRequest("POST", e.http.URL+"/api/chat", strings.NewReader(string(body)))
	req.Header.Set("X-User", user)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) weatherRun(user, thread string) string {
	e.t.Helper()
	e.model.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"})),
		fake.Text("Sunny in both."))
	id := runOf(e.t, e.chat(user, thread, "What is the weather in Paris and Tokyo?"))
	e.settled(id)
	return id
}

// TestTimelineBilledSplit: api/runs and api/runs/{id} carry each model
// call's and the run's cached tokens and the input's billed split. The
// second model call repeats the first's long prompt, which the fake
// caches implicitly.
func TestTimelineBilledSplit(t *testing.T) {
	long := strings.Repeat("You answer questions about the weather. ", 4*fake.MinCacheTokens(model)/40+1)
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(long, genai.RoleUser)}
	}})
	id := e.weatherRun("alice", "t1")

	type usage struct {
		Input     int `json:"input"`
		ToolUse   int `json:"toolUse"`
		Cached    int `json:"cached"`
		FullPrice int `json:"fullPrice"`
	}
	var tl struct {
		Usage usage `json:"usage"`
		Spans []struct {
			Kind  string `json:"kind"`
			Usage *usage `json:"usage"`
		} `json:"spans"`
	}
	e.get("/api/runs/"+id, "alice", &tl)
	var calls []usage
	for _, s := range tl.Spans {
		if s.Kind == "model" && s.Usage != nil {
			calls = append(calls, *s.Usage)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("%d model calls with usage; want 2: %+v", len(calls), tl)
	}
	if u := calls[0]; u.Cached != 0 || u.FullPrice != u.Input+u.ToolUse {
		t.Errorf("first call's usage = %+v; want all of its input at full price", u)
	}
	if u := calls[1]; u.Cached < fake.MinCacheTokens(model) || u.FullPrice == 0 || u.FullPrice+u.Cached != u.Input+u.ToolUse {
		t.Errorf("second call's usage = %+v; want the first's prompt (at least %d) cached, the rest at full price", u, fake.MinCacheTokens(model))
	}
	want := usage{Input: calls[0].Input + calls[1].Input, ToolUse: calls[0].ToolUse + calls[1].ToolUse,
		Cached: calls[1].Cached, FullPrice: calls[0].FullPrice + calls[1].FullPrice}
	if tl.Usage != want {
		t.Errorf("the run's usage = %+v; want %+v", tl.Usage, want)
	}
	var runs []struct {
		Usage usage `json:"usage"`
	}
	e.get("/api/runs?thread=t1", "alice", &runs)
	if len(runs) != 1 || runs[0].Usage != want {
		t.Errorf("api/runs' usage = %+v; want %+v", runs, want)
	}
}

func TestTimeline(t *testing.T) {
	e := newEnv(t, envOpts{})
	id := e.weatherRun("alice", "t1")

	var tl struct {
		State      string `json:"state"`
		ModelCalls int    `json:"modelCalls"`
		ToolCalls  int    `json:"toolCalls"`
		Message    string `json:"message"`
		Done       *struct{ Text string }
		Spans      []struct {
			ID, Parent, Turn, Parallel int
			Kind, Name, CallID         string
			Start                      float64
			End, RunStart              *float64
			Usage                      *usageJSON
			Finish                     string `json:"finishReason"`
			Args, Output               json.RawMessage
		}
	}
	e.get("/api/runs/"+id, "alice", &tl)
	if tl.State != "done" || tl.ModelCalls != 2 || tl.ToolCalls != 2 || tl.Message != "What is the weather in Paris and Tokyo?" ||
		tl.Done == nil || tl.Done.Text != "Sunny in both." {
		t.Fatalf("timeline: %+v", tl)
	}
	kinds := ""
	for _, s := range tl.Spans {
		kinds += s.Kind + " "
		if s.End == nil {
			t.Errorf("span %d (%s) has no end", s.ID, s.Kind)
		}
	}
	if kinds != "run model tool tool model " {
		t.Fatalf("spans: %s", kinds)
	}
	m, paris, tokyo := tl.Spans[1], tl.Spans[2], tl.Spans[3]
	if m.Parent != 0 || m.Usage == nil || m.Usage.Input == 0 || m.Usage.Output == 0 || m.Finish != "STOP" {
		t.Errorf("first model call: %+v", m)
	}
	for _, s := range []struct {
		ID, Parent, Turn, Parallel int
		Kind, Name, CallID         string
		Start                      float64
		End, RunStart              *float64
		Usage                      *usageJSON
		Finish                     string `json:"finishReason"`
		Args, Output               json.RawMessage
	}{paris, tokyo} {
		if s.Parent != 0 || s.Name != "get_weather" || s.Parallel != 1 || !strings.HasPrefix(s.CallID, id) ||
			s.RunStart == nil || *s.RunStart > *s.End || !strings.Contains(string(s.Output), `"sky":"sunny"`) {
			t.Errorf("tool span: %+v (args %s, output %s)", s, s.Args, s.Output)
		}
	}
	// Side by side: each began before the other ended.
	if !(*paris.RunStart < *tokyo.End && *tokyo.RunStart < *paris.End) {
		t.Errorf("the calls did not overlap: Paris %v-%v, Tokyo %v-%v", *paris.RunStart, *paris.End, *tokyo.RunStart, *tokyo.End)
	}
	if string(paris.Args) != `{"city":"Paris"}` {
		t.Errorf("Paris's args: %s", paris.Args)
	}

	// The first model call's exact request and response.
	var call struct {
		Request struct {
			Model    string
			Stream   bool
			Contents []map[string]any
			Config   struct {
				Tools []struct {
					FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
				}
			}
		}
		Response json.RawMessage
	}
	e.get("/api/runs/"+id+"/calls/1", "alice", &call)
	if call.Request.Model != model || !call.Request.Stream || len(call.Request.Contents) != 1 ||
		len(call.Request.Config.Tools) != 1 || call.Request.Config.Tools[0].FunctionDeclarations[0].Name != "get_weather" {
		t.Errorf("request: %+v", call.Request)
	}
	resp := string(call.Response)
	if !strings.Contains(resp, `"functionCall":{"args":{"city":"Paris"}`) || !strings.Contains(resp, `"thoughtSignature":"(`) {
		t.Errorf("response: %s", resp)
	}
	// The second sends the signature back: shown as present, never its bytes.
	var second struct {
		Request struct{ Contents json.RawMessage }
	}
	e.get("/api/runs/"+id+"/calls/4", "alice", &second)
	assertNoSignatureBytes(t, e, "t1", string(second.Request.Contents))
	if status, _ := e.do("GET", "/api/runs/"+id+"/calls/2", "alice", "", ""); status != http.StatusNotFound {
		t.Errorf("a tool span as a model call: %d", status)
	}
}

// assertNoSignatureBytes checks that body notes thought signatures and
// holds none of the stored ones.
func assertNoSignatureBytes(t *testing.T, e *env, thread, body string) {
	t.Helper()
	contents, err := e.srv.History(context.Background(), "alice", thread)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range contents {
		for _, p := range c.Parts {
			if len(p.ThoughtSignature) > 0 {
				n++
				if b64 := base64.StdEncoding.EncodeToString(p.ThoughtSignature); strings.Contains(body, b64) {
					t.Errorf("the signature's bytes are shown: %s", body)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the stored history has no signature: the test tests nothing")
	}
	if !strings.Contains(body, `"thoughtSignature":"(`) || !strings.Contains(body, `bytes, not shown)"`) {
		t.Errorf("no note of a signature in %s", body)
	}
}

func TestThreads(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.weatherRun("alice", "t1")

	var threads agentserver.ThreadPage
	e.get("/api/threads", "alice", &threads)
	if len(threads.Threads) != 1 || threads.Threads[0].ID != "t1" || threads.Threads[0].Len != 4 || threads.Next != "" {
		t.Fatalf("alice's threads: %+v", threads)
	}
	e.get("/api/threads", "bob", &threads)
	if len(threads.Threads) != 0 {
		t.Fatalf("bob's threads: %+v", threads)
	}

	// A page at a time: ?limit=1, then the page's next cursor.
	e.weatherRun("alice", "t2")
	var got []string
	for path := "/api/threads?limit=1"; ; {
		var page agentserver.ThreadPage
		e.get(path, "alice", &page)
		if len(page.Threads) != 1 {
			t.Fatalf("GET %s: %+v; want one thread", path, page)
		}
		got = append(got, page.Threads[0].ID)
		if page.Next == "" {
			break
		}
		path = "/api/threads?limit=1&cursor=" + url.QueryEscape(page.Next)
	}
	if strings.Join(got, ",") != "t2,t1" {
		t.Errorf("alice's threads, a page at a time: %q; want t2, t1", got)
	}

	status, body := e.do("GET", "/api/threads/t1", "alice", "", "")
	if status != http.StatusOK {
		t.Fatal(status, body)
	}
	var th struct {
		Len, From int
		Contents  []struct {
			Role  string
			Parts []map[string]any
		}
	}
	json.Unmarshal([]byte(body), &th)
	if th.Len != 4 || th.From != 0 || len(th.Contents) != 4 || th.Contents[1].Role != "model" ||
		th.Contents[1].Parts[0]["functionCall"] == nil || th.Contents[2].Parts[1]["functionResponse"] == nil {
		t.Fatalf("history: %s", body)
	}
	assertNoSignatureBytes(t, e, "t1", body)

	e.get("/api/threads/t1?from=3", "alice", &th)
	if th.From != 3 || len(th.Contents) != 1 {
		t.Errorf("from=3: %+v", th)
	}
	e.get("/api/threads/t1?from=9", "alice", &th)
	if th.From != 4 || len(th.Contents) != 0 {
		t.Errorf("from=9: %+v", th)
	}
}

// Another user's thread or run answers exactly as one that does not
// exist.
func TestOtherUsersAreNotFound(t *testing.T) {
	e := newEnv(t, envOpts{})
	id := e.weatherRun("alice", "t1")

	for _, path := range []string{"/api/threads/", "/api/runs/", "/api/runs/%s/calls/1"} {
		route := func(name string) string {
			if strings.Contains(path, "%s") {
				return strings.Replace(path, "%s", name, 1)
			}
			return path + name
		}
		target, missing := "t1", "nope"
		if path != "/api/threads/" {
			target, missing = id, "run_NOPE"
		}
		bobStatus, bobBody := e.do("GET", route(target), "bob", "", "")
		noneStatus, noneBody := e.do("GET", route(missing), "alice", "", "")
		if bobStatus != http.StatusNotFound || noneStatus != http.StatusNotFound ||
			bobBody != strings.ReplaceAll(noneBody, missing, target) {
			t.Errorf("%s: bob on alice's: %d %s; alice on none: %d %s", path, bobStatus, bobBody, noneStatus, noneBody)
		}
	}
	// The chat page asks with ?missing=empty: a new thread, and another
	// user's, are the same empty thread, not an error.
	bobStatus, bobBody := e.do("GET", "/api/threads/t1?missing=empty", "bob", "", "")
	noneStatus, noneBody := e.do("GET", "/api/threads/nope?missing=empty", "alice", "", "")
	if bobStatus != http.StatusOK || noneStatus != http.StatusOK || bobBody != strings.ReplaceAll(noneBody, "nope", "t1") ||
		strings.Contains(bobBody, "functionCall") {
		t.Errorf("missing=empty: bob on alice's: %d %s; alice on none: %d %s", bobStatus, bobBody, noneStatus, noneBody)
	}
	var runs []runSummary
	e.get("/api/runs", "bob", &runs)
	if len(runs) != 0 {
		t.Errorf("bob's runs: %+v", runs)
	}
	e.get("/api/runs?thread=t1", "alice", &runs)
	if len(runs) != 1 || runs[0].ID != id || !slices.Equal(runs[0].Tools, []string{"get_weather"}) {
		t.Errorf("alice's runs of t1: %+v", runs)
	}
	bob, _ := e.do("POST", "/api/runs/"+id+"/cancel", "bob", "application/json", "{}")
	none, _ := e.do("POST", "/api/runs/run_NOPE/cancel", "alice", "application/json", "{}")
	if bob != http.StatusNotFound || none != http.StatusNotFound {
		t.Errorf("cancel: bob on alice's %d, alice on none %d", bob, none)
	}
}

func TestRequestsRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	id := e.weatherRun("alice", "t1")
	for _, c := range []struct {
		method, path, user, contentType string
		status                          int
		code                            string
	}{
		{"GET", "/api/info", "", "", 401, "unauthenticated"},
		{"GET", "/api/threads", "", "", 401, "unauthenticated"},
		{"GET", "/api/threads/t1", "", "", 401, "unauthenticated"},
		{"GET", "/api/runs", "", "", 401, "unauthenticated"},
		{"GET", "/api/runs/" + id, "", "", 401, "unauthenticated"},
		{"GET", "/api/runs/" + id + "/calls/1", "", "", 401, "unauthenticated"},
		{"POST", "/api/runs/" + id + "/cancel", "", "application/json", 401, "unauthenticated"},
		{"GET", "/api/threads/" + strings.Repeat("x", 201), "alice", "", 400, "bad_thread"},
		{"GET", "/api/threads/a%01b", "alice", "", 400, "bad_thread"},
		{"GET", "/api/threads?limit=0", "alice", "", 400, "bad_limit"},
		{"GET", "/api/threads?limit=x", "alice", "", 400, "bad_limit"},
		{"GET", "/api/threads?cursor=forged", "alice", "", 400, "bad_cursor"},
		{"GET", "/api/threads/t1?from=-1", "alice", "", 400, "bad_from"},
		{"GET", "/api/threads/t1?from=x", "alice", "", 400, "bad_from"},
		{"GET", "/api/runs?thread=" + strings.Repeat("x", 201), "alice", "", 400, "bad_thread"},
		{"GET", "/api/runs/" + strings.Repeat("r", 101), "alice", "", 400, "bad_run"},
		{"GET", "/api/runs/" + id + "/calls/x", "alice", "", 400, "bad_span"},
		{"GET", "/api/runs/" + id + "/calls/99", "alice", "", 404, "not_found"},
		{"GET", "/api/runs/" + id + "/calls/-1", "alice", "", 404, "not_found"},
		{"POST", "/api/runs/" + id + "/cancel", "alice", "", 415, "bad_content_type"},
		{"POST", "/api/runs/" + id + "/cancel", "alice", "text/plain", 415, "bad_content_type"},
		{"GET", "/api/nothing", "alice", "", 404, "not_found"},
		{"DELETE", "/api/threads/t1", "alice", "", 405, "method_not_allowed"},
		{"POST", "/api/info", "alice", "application/json", 405, "method_not_allowed"},
		{"GET", "/api/runs/" + id + "/cancel", "alice", "", 405, "method_not_allowed"},
	} {
		status, body := e.do(c.method, c.path, c.user, c.contentType, "{}")
		var got struct{ Error struct{ Code string } }
		json.Unmarshal([]byte(body), &got)
		if status != c.status || got.Error.Code != c.code {
			t.Errorf("%s %s as %q: %d %s; want %d %s", c.method, c.path, c.user, status, body, c.status, c.code)
		}
	}
	// A run that is over is left as it is by a cancel.
	if status, body := e.do("POST", "/api/runs/"+id+"/cancel", "alice", "application/json; charset=utf-8", "{}"); status != 200 {
		t.Errorf("cancel of a run that is over: %d %s", status, body)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.barrier.want = 3 // never reached: the calls wait until cancelled
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"})))
	resp := e.openChat("alice", "t1", "weather?")
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var id string
	for id == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var c map[string]any
			json.Unmarshal([]byte(data), &c)
			if c["type"] == "start" {
				id = c["messageMetadata"].(map[string]any)["runId"].(string)
			}
		}
	}
	// The run's message is the recorder's once the model call is made
	// and the run looked up: wait for both.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if rec := e.rec.lookup("alice", id); rec != nil {
			rec.mu.Lock()
			msg := rec.message
			rec.mu.Unlock()
			if msg != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the recorder never saw the run's model call")
		}
	}
	var th struct {
		Run *struct {
			ID      string
			State   string
			Message struct{ Parts []struct{ Text string } }
		}
	}
	e.get("/api/threads/t1", "alice", &th) // nothing stored yet: the run in progress
	if th.Run == nil || th.Run.ID != id || len(th.Run.Message.Parts) != 1 || th.Run.Message.Parts[0].Text != "weather?" {
		t.Fatalf("thread during its first run: %+v", th.Run)
	}
	if status, body := e.do("POST", "/api/runs/"+id+"/cancel", "alice", "application/json", "{}"); status != 200 {
		t.Fatalf("cancel: %d %s", status, body)
	}
	io.Copy(io.Discard, resp.Body)
	e.settled(id)
	var tl timeline
	e.get("/api/runs/"+id, "alice", &tl)
	if tl.State != agentserver.StateCancelled || tl.Done == nil || tl.Done.Error == nil || tl.Done.Error.Code != "cancelled" {
		t.Errorf("the cancelled run: %+v", tl.runSummary)
	}
}

func TestApprovalWait(t *testing.T) {
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return true }
	}})
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})), fake.Text("Sunny in Oslo."))
	chunks := e.chat("alice", "t1", "Weather in Oslo?")
	id := runOf(t, chunks)
	var tl timeline
	e.get("/api/runs/"+id, "alice", &tl)
	call := tl.Spans[len(tl.Spans)-1]
	if call.Kind != "tool" || call.Wait == nil || call.Wait.Kind != agentserver.WaitApproval || call.Wait.To != nil || call.End != nil {
		t.Fatalf("the call waiting: %+v (wait %+v)", call, call.Wait)
	}
	// The run says it waits, and for what, as the server does.
	var runs []runSummary
	e.get("/api/runs", "alice", &runs)
	if tl.State != agentserver.StateWaiting || tl.WaitingFor != agentserver.WaitApproval ||
		len(runs) != 1 || runs[0].State != agentserver.StateWaiting || runs[0].WaitingFor != agentserver.WaitApproval {
		t.Errorf("the waiting run: %s for %q; listed: %+v", tl.State, tl.WaitingFor, runs)
	}
	e.decide("alice", "t1", "get_weather", call.CallID, true)
	e.settled(id)
	tl = timeline{}
	e.get("/api/runs/"+id, "alice", &tl)
	if tl.State != agentserver.StateDone || tl.WaitingFor != "" {
		t.Errorf("the run after the approval: %s for %q", tl.State, tl.WaitingFor)
	}
	call = tl.Spans[2]
	if call.Wait == nil || call.Wait.To == nil || !call.Wait.Approved || call.RunStart == nil || *call.RunStart < *call.Wait.To ||
		call.End == nil || *call.End < *call.RunStart {
		t.Fatalf("the call approved: %+v (wait %+v)", call, call.Wait)
	}
}

// A call approved before its sibling waits for the sibling's decision
// before it runs (a pause is resolved whole): its timeline says it was
// decided, then waited for the other decision, then ran, and its running
// time starts when the other call was decided, not when it was.
func TestApprovedBeforeSibling(t *testing.T) {
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return true }
	}})
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"}), fake.Call("get_weather", map[string]any{"city": "Rome"})),
		fake.Text("Sunny in Oslo and Rome."))
	id := runOf(t, e.chat("alice", "t1", "Weather in Oslo and Rome?"))
	calls := func() (oslo, rome spanJSON) {
		t.Helper()
		var tl timeline
		e.get("/api/runs/"+id, "alice", &tl)
		for _, s := range tl.Spans {
			if s.Kind == "tool" && s.Index == 0 {
				oslo = s
			} else if s.Kind == "tool" {
				rome = s
			}
		}
		if oslo.Wait == nil || rome.Wait == nil {
			t.Fatalf("the calls do not wait: %+v, %+v", oslo, rome)
		}
		return oslo, rome
	}
	oslo, rome := calls()
	e.decide("alice", "t1", "get_weather", oslo.CallID, true)
	// Oslo is approved; Rome still waits, and so does Oslo, for Rome's
	// decision: it does not run.
	oslo, rome = calls()
	if oslo.Wait.To == nil || !oslo.Wait.Approved || oslo.Wait.Resumed != nil || oslo.RunStart != nil || oslo.End != nil || oslo.Parallel != 0 {
		t.Errorf("Oslo, approved while Rome waits: run start %v, end %v (wait %+v)", oslo.RunStart, oslo.End, *oslo.Wait)
	}
	if rome.Wait.To != nil {
		t.Errorf("Rome, not decided: %+v", *rome.Wait)
	}
	e.decide("alice", "t1", "get_weather", rome.CallID, true)
	e.settled(id)
	oslo, rome = calls()
	for _, s := range []spanJSON{oslo, rome} {
		if s.Wait.To == nil || s.Wait.Resumed == nil || s.RunStart == nil || s.End == nil {
			t.Fatalf("call %d after both decisions: run start %v, end %v (wait %+v)", s.Index, s.RunStart, s.End, *s.Wait)
		}
	}
	// Oslo ran from the moment Rome was decided: its running time, and
	// its parallelism with Rome, count from there.
	if *oslo.Wait.Resumed != *rome.Wait.To || *oslo.Wait.Resumed <= *oslo.Wait.To || *oslo.RunStart < *rome.Wait.To || oslo.Parallel != 1 {
		t.Errorf("Oslo decided at %v, resumed at %v, ran from %v (parallel %d); Rome decided at %v",
			*oslo.Wait.To, *oslo.Wait.Resumed, *oslo.RunStart, oslo.Parallel, *rome.Wait.To)
	}
	if *rome.Wait.Resumed != *rome.Wait.To || *rome.RunStart < *rome.Wait.To {
		t.Errorf("Rome decided at %v, resumed at %v, ran from %v", *rome.Wait.To, *rome.Wait.Resumed, *rome.RunStart)
	}
}

// A denied call's answer is marked in the stored history, {error,
// denied: true}, which the thread route gives the page as it is: a
// server restarted on the same store, its recorder new, still tells the
// denial from a result (and from a failure, which has no mark).
func TestDeniedCalls(t *testing.T) {
	store := session.NewMemory()
	opts := envOpts{
		agent: func(c *agent.Config) {
			c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] == "Oslo" }
		},
		server: func(c *agentserver.Config) { c.Store = store },
	}
	e := newEnv(t, opts)
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"}), fake.Call("get_weather", map[string]any{"city": "Rome"}),
		fake.Call("no_such_tool", nil)), fake.Text("Rome is sunny; Oslo I may not say."))
	id := runOf(t, e.chat("alice", "t1", "Weather in Oslo and Rome?"))
	e.decide("alice", "t1", "get_weather", e.waitingCall("alice", id), false)
	e.settled(id)

	restarted := newEnv(t, opts)
	var th threadJSON
	restarted.get("/api/threads/t1", "alice", &th)
	var answers []map[string]any
	for _, raw := range th.Contents {
		var c struct {
			Parts []struct {
				FunctionResponse *struct{ Response map[string]any }
			}
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				answers = append(answers, p.FunctionResponse.Response)
			}
		}
	}
	want := []map[string]any{
		{"error": "the user denied this call", "denied": true},
		{"result": map[string]any{"city": "Rome", "sky": "sunny"}},
		{"error": `unknown tool "no_such_tool"; available tools: get_weather`},
	}
	if diff := cmp.Diff(want, answers); diff != "" {
		t.Errorf("the answers after a restart (-want +got):\n%s", diff)
	}
}

func TestRetries(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.model.Enqueue(fake.Error(503, "overloaded"), fake.Text("Hello."))
	id := runOf(t, e.chat("alice", "t1", "hi"))
	e.settled(id)
	var tl timeline
	e.get("/api/runs/"+id, "alice", &tl)
	if len(tl.Spans) != 3 {
		t.Fatalf("spans: %+v", tl.Spans)
	}
	failed, ok := tl.Spans[1], tl.Spans[2]
	if !failed.Retried || failed.Failed != "503 UNAVAILABLE" || failed.Reason != "the model's service is unavailable" ||
		failed.BackoffMs <= 0 || failed.Attempt != 1 || ok.Attempt != 2 || ok.Retried || ok.Usage == nil {
		t.Errorf("attempts: %+v, %+v", failed, ok)
	}
	var call modelCallJSON
	e.get("/api/runs/"+id+"/calls/1", "alice", &call)
	if call.Response != nil || len(call.Request.Contents) == 0 {
		t.Errorf("the failed call: %+v", call)
	}
}

// A run of an agent called as a tool nests under its call, its own model
// call under it.
func TestAgentAsTool(t *testing.T) {
	var sub *agent.Agent
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		var err error
		sub, err = agent.New(agent.Config{Name: "researcher", Models: c.Models, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		tool, err := agent.AsTool(sub, "research", "Research a question")
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = toolset.MustNew(tool)
	}})
	e.model.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		if r.FunctionDeclaration("research") == nil {
			return fake.Text("Found it.") // the researcher
		}
		if len(r.LastFunctionResponses("research")) > 0 {
			return fake.Text("Done.")
		}
		return fake.Calls(fake.Call("research", map[string]any{"request": "why?"}))
	})
	id := runOf(t, e.chat("alice", "t1", "research this"))
	e.settled(id)
	var tl timeline
	e.get("/api/runs/"+id, "alice", &tl)
	got := ""
	for _, s := range tl.Spans {
		got += s.Kind + ":" + s.Name + "<" + string(rune('0'+s.Parent)) + " "
	}
	if want := "run:agent<" + string(rune('0'-1)) + " model:" + model + "<0 tool:research<0 agent:research<2 model:" + model + "<3 model:" + model + "<0 "; got != want {
		t.Errorf("spans:\n got %s\nwant %s", got, want)
	}
}

func TestRecorderBounds(t *testing.T) {
	e := newEnv(t, envOpts{recorder: &RecorderOptions{KeepRuns: 2, KeepUsers: 2}})
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		e.model.Enqueue(fake.Text("ok"))
		id := runOf(t, e.chat("alice", "t-"+text, text))
		e.settled(id)
		ids = append(ids, id)
	}
	var runs []runSummary
	e.get("/api/runs", "alice", &runs)
	if len(runs) != 2 || runs[0].ID != ids[2] || runs[1].ID != ids[1] {
		t.Fatalf("alice's runs: %+v; want %v then %v", runs, ids[2], ids[1])
	}
	if status, _ := e.do("GET", "/api/runs/"+ids[0], "alice", "", ""); status != http.StatusNotFound {
		t.Errorf("the forgotten run: %d", status)
	}
	for _, u := range []string{"bob", "carol"} {
		e.model.Enqueue(fake.Text("ok"))
		e.settled(runOf(t, e.chat(u, "t", "hi")))
	}
	e.get("/api/runs", "alice", &runs)
	if len(runs) != 0 {
		t.Errorf("alice, the user whose runs are the oldest, is still kept: %+v", runs)
	}
	e.get("/api/runs", "carol", &runs)
	if len(runs) != 1 {
		t.Errorf("carol's runs: %+v", runs)
	}
}

func TestMaxSpans(t *testing.T) {
	e := newEnv(t, envOpts{recorder: &RecorderOptions{MaxSpans: 3}})
	id := e.weatherRun("alice", "t1")
	var tl timeline
	e.get("/api/runs/"+id, "alice", &tl)
	if len(tl.Spans) != 3 || !tl.Truncated || tl.State != "done" {
		t.Errorf("a run over MaxSpans: %d spans, truncated %v, state %s", len(tl.Spans), tl.Truncated, tl.State)
	}
}

func TestInfo(t *testing.T) {
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		c.Name = "weatherman"
		c.MaxTurns = 7
		c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
	}, ui: &Options{Title: "mine", Thread: "start", BrowserTools: []agentserver.ToolDecl{{Name: "get_location", Description: "Where the user is"}}}})
	var info struct {
		Title, User, Thread string
		Recording           bool
		Agent               struct {
			Name, Model string
			Config      struct {
				SystemInstruction struct{ Parts []struct{ Text string } }
				Tools             any
			}
			Tools []struct {
				Name        string
				Declaration struct {
					Name       string
					Parameters struct {
						Type       string
						Properties map[string]struct{ Type string }
					}
				}
			}
			Limits struct{ MaxTurns, MaxParallel int }
		}
		Server       struct{ MaxBodyBytes int64 }
		BrowserTools []agentserver.ToolDecl
	}
	e.get("/api/info", "alice", &info)
	a := info.Agent
	if info.Title != "mine" || info.User != "alice" || info.Thread != "start" || !info.Recording || a.Name != "weatherman" || a.Model != model ||
		a.Config.SystemInstruction.Parts[0].Text != "Be brief." || a.Config.Tools != nil || a.Limits.MaxTurns != 7 || a.Limits.MaxParallel != 8 ||
		info.Server.MaxBodyBytes != agentserver.DefaultMaxBodyBytes || len(info.BrowserTools) != 1 {
		t.Errorf("info: %+v", info)
	}
	if len(a.Tools) != 1 || a.Tools[0].Declaration.Name != "get_weather" || a.Tools[0].Declaration.Parameters.Type != "OBJECT" ||
		a.Tools[0].Declaration.Parameters.Properties["city"].Type != "STRING" {
		t.Errorf("tools, as Gemini receives them: %+v", a.Tools)
	}
}

func TestNoRecorder(t *testing.T) {
	e := newEnv(t, envOpts{noRec: true})
	e.model.Enqueue(fake.Text("ok"))
	id := runOf(t, e.chat("alice", "t1", "hi"))
	var info infoJSON
	e.get("/api/info", "alice", &info)
	var runs []runSummary
	e.get("/api/runs", "alice", &runs)
	status, body := e.do("GET", "/api/runs/"+id, "alice", "", "")
	if info.Recording || len(runs) != 0 || status != http.StatusNotFound || !strings.Contains(body, "devui.Recorder") {
		t.Errorf("without a recorder: recording %v, runs %v, run %d %s", info.Recording, runs, status, body)
	}
}

func TestPage(t *testing.T) {
	e := newEnv(t, envOpts{})
	resp, err := http.Get(e.http.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(string(page), `src="static/app.js"`) {
		t.Fatalf("page: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ := http.NewRequest("GET", e.http.URL+"/static/app.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	for _, c := range []struct {
		path   string
		status int
		etag   string
	}{{"/static/app.js", 200, ""}, {"/static/app.css", 200, ""}, {"/static/index.html", 404, ""}, {"/static/nope.js", 404, ""}, {"/nope", 404, ""}} {
		resp, err := http.Get(e.http.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d", c.path, resp.StatusCode)
		}
		if c.status == 200 {
			req, _ := http.NewRequest("GET", e.http.URL+c.path, nil)
			req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
			again, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			again.Body.Close()
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("%s again with its ETag: %d", c.path, again.StatusCode)
			}
		}
	}
	// Small: the whole page, every file of it, under 150 KB.
	total := 0
	fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(static, p)
			total += len(b)
		}
		return nil
	})
	if total > 150_000 {
		t.Errorf("the page is %d bytes", total)
	}
	t.Logf("the page: %d bytes", total)
}

func TestBindTwice(t *testing.T) {
	e := newEnv(t, envOpts{})
	other, err := agentserver.New(agentserver.Config{Agent: e.srv.Agent(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	defer func() {
		if recover() == nil {
			t.Error("a recorder bound to a second server: no panic")
		}
	}()
	Handler(other, &Options{Recorder: e.rec})
}

func TestRedacted(t *testing.T) {
	c := &genai.Content{Role: "model", Parts: []*genai.Part{
		{Text: "hi", ThoughtSignature: []byte("0123456789")},
		{InlineData: &genai.Blob{MIMEType: "image/png", Data: make([]byte, 2048)}},
		{FunctionResponse: &genai.FunctionResponse{Name: "f", Response: map[string]any{"result": 1},
			Parts: []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte("png")}}}}},
	}}
	b, err := redacted(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"parts":[{"text":"hi","thoughtSignature":"(10 bytes, not shown)"},{"inlineData":{"data":"(2048 bytes, not shown)","mimeType":"image/png"}},` +
		`{"functionResponse":{"name":"f","parts":[{"inlineData":{"data":"(3 bytes, not shown)","mimeType":"image/png"}}],"response":{"result":1}}}],"role":"model"}`
	if string(b) != want {
		t.Errorf("redacted:\n got %s\nwant %s", b, want)
	}
}

// A page of another site cannot drive the UI's routes that change
// something, whatever it sends: the browser says where a request comes
// from (Sec-Fetch-Site, Origin), and the UI's own page is same-origin.
func TestCrossSiteRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	chat := `{"id":"t9","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}`
	post := func(path, body string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.http.URL+path, strings.NewReader(body))
		req.Header.Set("X-User", "alice")
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	id := e.weatherRun("alice", "t1")
	before := len(e.model.Requests())
	for _, hd := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://other.localhost"},
		{"Origin": "https://evil.example"}, // a browser that sends no Sec-Fetch-Site
	} {
		for _, path := range []string{"/api/chat", "/api/runs/" + id + "/cancel"} {
			if status, body := post(path, chat, hd); status != http.StatusForbidden || !strings.Contains(body, `"cross_origin"`) {
				t.Errorf("POST %s with %v: %d %s, want 403 cross_origin", path, hd, status, body)
			}
		}
	}
	if n := len(e.model.Requests()); n != before {
		t.Errorf("%d requests of another site reached the model", n-before)
	}
	// The page's own requests, and those of programs (no browser headers).
	u, _ := url.Parse(e.http.URL)
	for _, hd := range []map[string]string{{"Sec-Fetch-Site": "same-origin", "Origin": e.http.URL}, {"Origin": "http://" + u.Host}, nil} {
		if status, body := post("/api/runs/"+id+"/cancel", "{}", hd); status != http.StatusOK {
			t.Errorf("POST cancel with %v: %d %s", hd, status, body)
		}
	}
}

// A page reloaded while a run goes on shows the run's question, without
// a Recorder too: the thread route takes it from the server's run.
func TestThreadRunMessageWithoutRecorder(t *testing.T) {
	e := newEnv(t, envOpts{noRec: true})
	e.barrier.want = 3 // never reached: the calls wait until cancelled
	e.model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"})))
	resp := e.openChat("alice", "t1", "weather?")
	defer resp.Body.Close()
	var th struct {
		Run *struct {
			ID      string
			Message struct{ Parts []struct{ Text string } }
		}
	}
	e.get("/api/threads/t1", "alice", &th) // the run answered with its start: it is in progress
	if th.Run == nil || th.Run.ID == "" || len(th.Run.Message.Parts) != 1 || th.Run.Message.Parts[0].Text != "weather?" {
		t.Fatalf("the thread during its run: %+v", th.Run)
	}
	// Another user's thread of the same name shows nothing of it.
	if status, b := e.do("GET", "/api/threads/t1", "bob", "", ""); status != http.StatusNotFound {
		t.Errorf("bob: %d %s", status, b)
	}
	if status, b := e.do("POST", "/api/runs/"+th.Run.ID+"/cancel", "alice", "application/json", "{}"); status != 200 {
		t.Fatalf("cancel: %d %s", status, b)
	}
	io.Copy(io.Discard, resp.Body)
}
