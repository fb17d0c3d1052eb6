package a2aagent_test

// The handler in this process, for what needs no second process: the
// JSON-RPC errors of bad requests, the card's options, the parts of a
// message.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// local is the handler of an agent on the fake model, in this process.
type local struct {
	t     *testing.T
	model *fake.Server
	srv   *agentserver.Server
	http  *httptest.Server
	gate  chan struct{} // holds the tool "wait" until closed
}

func newLocal(t *testing.T, opts *a2aagent.Options, tls bool, configs ...func(*agentserver.Config)) *local {
	t.Helper()
	l := &local{t: t, model: fake.NewServer(), gate: make(chan struct{})}
	wait := toolset.MustFunc("wait", "Waits", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-l.gate:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	a, err := agent.New(agent.Config{Models: l.model.Client().Models, Model: model, Tools: toolset.MustNew(wait)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler), MaxBodyBytes: 4096,
		Authenticate: func(r *http.Request) (string, error) {
			if r.Header.Get("Authorization") == "" {
				return "", errors.New("no credentials")
			}
			return "alice", nil
		}}
	for _, c := range configs {
		c(&cfg)
	}
	l.srv, err = agentserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := a2aagent.Handler(l.srv, opts)
	if tls {
		l.http = httptest.NewTLSServer(h)
	} else {
		l.http = httptest.NewServer(h)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l.srv.Close(ctx)
		l.http.Close()
		l.model.Close()
	})
	return l
}

// rpc posts body to the JSON-RPC endpoint and returns the status and the
// response: the body's JSON, or the first event of a stream.
func (l *local) rpc(body, contentType string, auth bool) (int, string, map[string]any) {
	l.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, l.http.URL+a2aagent.DefaultPath, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth {
		req.Header.Set("Authorization", "Bearer alice")
	}
	resp, err := l.http.Client().Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	var raw []byte
	if ct == "text/event-stream" {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(data)
				break
			}
		}
	} else {
		raw, _ = io.ReadAll(resp.Body)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp.StatusCode, ct, m
}

// Bad JSON-RPC gets the spec's error codes, with the request's id when
// it could be read.
func TestJSONRPCErrors(t *testing.T) {
	l := newLocal(t, nil, false)
	send := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":` + params + `}`
	}
	for _, tc := range []struct {
		name, body string
		status     int
		code       float64
		id         any // the id answered; nil for null
		stream     bool
	}{
		{"not json", `{"jsonrpc":`, 200, -32700, nil, false},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`, 200, -32600, nil, false},
		{"not an object", `"hi"`, 200, -32600, nil, false},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"tasks/get","params":{"id":"x"}}`, 200, -32600, 7.0, false},
		{"an object id", `{"jsonrpc":"2.0","id":{},"method":"tasks/get"}`, 200, -32600, nil, false},
		// Every event of a stream repeats the id: it is bounded.
		{"a string id too long", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","method":"message/stream","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, 200, -32600, nil, false},
		{"an id of invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"tasks/get\",\"params\":{\"id\":\"x\"}}", 200, -32600, nil, false},
		{"a number id too long", `{"jsonrpc":"2.0","id":` + strings.Repeat("9", 300) + `,"method":"tasks/get","params":{"id":"x"}}`, 200, -32600, nil, false},
		{"a number method", `{"jsonrpc":"2.0","id":"r","method":5}`, 200, -32600, "r", false},
		{"no method", `{"jsonrpc":"2.0","id":"r"}`, 200, -32600, "r", false},
		{"unknown method", `{"jsonrpc":"2.0","id":"a","method":"tasks/list","params":{}}`, 200, -32601, "a", false},
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"message/send"}`, 200, -32602, 1.0, false},
		{"no message", send(`{}`), 200, -32602, 1.0, false},
		{"unknown part", send(`{"message":{"messageId":"m","role":"user","parts":[{"kind":"weird"}]}}`), 200, -32602, 1.0, false},
		{"agent role", send(`{"message":{"messageId":"m","role":"agent","parts":[{"kind":"text","text":"hi"}]}}`), 200, -32602, 1.0, false},
		{"no parts", send(`{"message":{"messageId":"m","role":"user","parts":[]}}`), 200, -32602, 1.0, false},
		{"empty text", send(`{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":""}]}}`), 200, -32602, 1.0, false},
		{"a bad context id", send(`{"message":{"messageId":"m","role":"user","contextId":"a\u0001b","parts":[{"kind":"text","text":"hi"}]}}`), 200, -32602, 1.0, false},
		{"a decision without its task", send(`{"message":{"messageId":"m","role":"user","parts":[{"kind":"data","data":{"id":"c"},"metadata":{"adk_type":"function_response"}}]}}`), 200, -32602, 1.0, false},
		{"a file without a type", send(`{"message":{"messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"aGk="}}]}}`), 200, -32602, 1.0, false},
		{"an unknown task", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"run_nope"}}`, 200, -32001, 2.0, false},
		{"no task id", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{}}`, 200, -32602, 2.0, false},
		{"a message to an unknown task", send(`{"message":{"messageId":"m","role":"user","taskId":"run_nope","parts":[{"kind":"text","text":"hi"}]}}`), 200, -32001, 1.0, false},
		{"cancel an unknown task", `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"run_nope"}}`, 200, -32001, 2.0, false},
		{"push notifications of no task", `{"jsonrpc":"2.0","id":3,"method":"tasks/pushNotificationConfig/set","params":{}}`, 200, -32602, 3.0, false},
		{"push notifications of an unknown task", `{"jsonrpc":"2.0","id":3,"method":"tasks/pushNotificationConfig/list","params":{"id":"run_nope"}}`, 200, -32001, 3.0, false},
		{"extended card", `{"jsonrpc":"2.0","id":3,"method":"agent/getAuthenticatedExtendedCard"}`, 200, -32007, 3.0, false},
		{"a stream of bad params", `{"jsonrpc":"2.0","id":4,"method":"message/stream","params":{"message":{"role":"user","parts":[]}}}`, 200, -32602, 4.0, true},
		{"resubscribe to an unknown task", `{"jsonrpc":"2.0","id":5,"method":"tasks/resubscribe","params":{"id":"run_nope"}}`, 200, -32001, 5.0, true},
		{"too large", `{"jsonrpc":"2.0","id":6,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"` + strings.Repeat("x", 5000) + `"}]}}}`, 413, -32600, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, ct, m := l.rpc(tc.body, "application/json", true)
			e, _ := m["error"].(map[string]any)
			if status != tc.status || e["code"] != tc.code || m["id"] != tc.id || m["jsonrpc"] != "2.0" || (ct == "text/event-stream") != tc.stream {
				t.Errorf("status %d, %s: %s; want %d, code %v, id %v", status, ct, jsonOf(m), tc.status, tc.code, tc.id)
			}
			if msg, _ := e["message"].(string); msg == "" || e["data"].(map[string]any)["error"] != msg {
				t.Errorf("error %s: its message, and data.error, say what is wrong", jsonOf(e))
			}
		})
	}
	if status, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, "text/plain", true); status != 415 || m["error"] == nil {
		t.Errorf("text/plain: %d %s", status, jsonOf(m))
	}
	// What a page of another site may post without asking the browser.
	if status, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, "", true); status != 415 || m["error"] == nil {
		t.Errorf("no Content-Type: %d %s", status, jsonOf(m))
	}
	if status, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, "application/json", false); status != 401 || m["error"] == nil {
		t.Errorf("no credentials: %d %s", status, jsonOf(m))
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", a2aagent.DefaultPath, 405}, {"POST", a2aagent.CardPath, 405}, {"GET", "/elsewhere", 404}, {"HEAD", a2aagent.CardPath, 200}} {
		req, _ := http.NewRequest(tc.method, l.http.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
}

// A context takes one task at a time: a message while its task works is
// refused, and says what to do.
func TestBusyContext(t *testing.T) {
	l := newLocal(t, nil, false)
	l.model.Enqueue(fake.Calls(fake.Call("wait", nil)), fake.Text("waited"))
	first := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"configuration":{"blocking":false},"message":{"messageId":"m1","role":"user","contextId":"ctx","parts":[{"kind":"text","text":"wait"}]}}}`
	_, _, m := l.rpc(first, "application/json", true)
	task, _ := m["result"].(map[string]any)
	if task["kind"] != "task" || task["contextId"] != "ctx" {
		t.Fatalf("a non-blocking message/send: %s", jsonOf(m))
	}
	second := strings.Replace(first, `"m1"`, `"m2"`, 1)
	_, _, m = l.rpc(second, "application/json", true)
	if e, _ := m["error"].(map[string]any); e["code"] != -32004.0 || !strings.Contains(e["message"].(string), "one task at a time") {
		t.Errorf("a second message in a busy context: %s", jsonOf(m))
	}
	close(l.gate)
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"` + task["id"].(string) + `"}}`
	deadline := time.Now().Add(time.Minute) // a hang guard only
	for {
		_, _, m = l.rpc(get, "application/json", true)
		if st, _ := m["result"].(map[string]any)["status"].(map[string]any); st["state"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task never completed: %s", jsonOf(m))
		}
		time.Sleep(time.Millisecond)
	}
}

// The card says what Options say, and its url follows the request when
// Options.URL is a path.
func TestCardOptions(t *testing.T) {
	card := func(l *local) *a2a.AgentCard {
		t.Helper()
		resp, err := l.http.Client().Get(l.http.URL + a2aagent.CardPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c a2a.AgentCard
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("card: %v, %s", err, resp.Header.Get("Content-Type"))
		}
		return &c
	}
	l := newLocal(t, nil, true)
	if c := card(l); c.URL != l.http.URL+"/a2a" || !strings.HasPrefix(c.URL, "https://") || c.Name != "agent" || c.Version != "1.0.0" ||
		len(c.Skills) != 2 || c.Skills[1].Name != "wait" || c.Skills[1].Description != "Waits" {
		t.Errorf("derived card %s", jsonOf(c))
	}
	l = newLocal(t, &a2aagent.Options{
		URL: "https://agents.example.com/rpc", Name: "Waiter", Description: "Waits for you.", Version: "2.1",
		Skills: []a2a.AgentSkill{{ID: "w", Name: "waiting", Description: "It waits.", Tags: []string{"patience"}}},
		Card:   func(c *a2a.AgentCard) { c.Provider = &a2a.AgentProvider{Org: "Example", URL: "https://example.com"} },
	}, false)
	c := card(l)
	if c.URL != "https://agents.example.com/rpc" || c.Name != "Waiter" || c.Description != "Waits for you." || c.Version != "2.1" ||
		len(c.Skills) != 1 || c.Skills[0].ID != "w" || c.Provider == nil || c.Provider.Org != "Example" {
		t.Errorf("card with options %s", jsonOf(c))
	}
	// JSON-RPC is served at the URL's path.
	if status, _, _ := l.rpc(`{}`, "application/json", true); status != 404 {
		t.Errorf("the default path answered %d", status)
	}
	defer func() {
		if recover() == nil {
			t.Error("Handler took a URL that is no URL")
		}
	}()
	a2aagent.Handler(l.srv, &a2aagent.Options{URL: "https:///no-host"})
}

// ownFiles lets each user give the model the files under
// gs://files/{user}/ by URI, and no other.
func ownFiles(c *agentserver.Config) {
	c.AllowFileURI = func(_ context.Context, user, uri string) error {
		if strings.HasPrefix(uri, "gs://files/"+user+"/") {
			return nil
		}
		return errors.New("not a file of " + user)
	}
}

// A message's files and data reach the model: bytes inline, a URI the
// server allows as a file, data as its JSON.
func TestMessageParts(t *testing.T) {
	l := newLocal(t, nil, false, ownFiles)
	l.model.Enqueue(fake.Text("seen"))
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[` +
		`{"kind":"text","text":"look"},{"kind":"file","file":{"bytes":"aGk=","mimeType":"image/png","name":"a.png"}},` +
		`{"kind":"file","file":{"uri":"gs://files/alice/b.pdf","mimeType":"application/pdf"}},{"kind":"data","data":{"n":1}}]}}}`
	_, _, m := l.rpc(body, "application/json", true)
	if m["result"].(map[string]any)["status"].(map[string]any)["state"] != "completed" {
		t.Fatalf("message/send %s", jsonOf(m))
	}
	parts := l.model.LastRequest().Contents[0].Parts
	if len(parts) != 4 || parts[0].Text != "look" || string(parts[1].InlineData.Data) != "hi" || parts[1].InlineData.MIMEType != "image/png" ||
		parts[2].FileData.FileURI != "gs://files/alice/b.pdf" || parts[3].Text != `{"n":1}` {
		t.Errorf("the model got %s", jsonOf(parts))
	}
}

// events posts body to the JSON-RPC endpoint and returns the results of
// the stream's events.
func (l *local) events(body string) []map[string]any {
	l.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, l.http.URL+a2aagent.DefaultPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := l.http.Client().Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil || m["result"] == nil {
				l.t.Fatalf("event %s: %v", data, err)
			}
			out = append(out, m["result"].(map[string]any))
		}
	}
	return out
}

// A task is looked up for as long as its run is kept, whole, though its
// stream and message/send read its end (agentserver cuts the logs of
// other runs then): each turn's artifact, its text one part. A run that
// another protocol started, whose log was cut to its end, is the task of
// its answer.
func TestTaskAfterItsEnd(t *testing.T) {
	l := newLocal(t, nil, false)
	l.model.Enqueue(fake.Calls(fake.Call("wait", nil)), fake.Text("Waited, as you asked.").WithTextChunk(3))
	close(l.gate)
	events := l.events(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"messageId":"m1","role":"user","parts":[{"kind":"text","text":"wait"}]}}}`)
	id, _ := events[0]["id"].(string)
	if id == "" || events[len(events)-1]["status"].(map[string]any)["state"] != "completed" {
		t.Fatalf("the stream %s", jsonOf(events))
	}
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"` + id + `"}}`
	_, _, m := l.rpc(get, "application/json", true)
	want := `[{"artifactId":"ID-t0","parts":[{"data":{"args":{},"id":"ID-c0-0","name":"wait"},"kind":"data","metadata":{"adk_is_long_running":false,"adk_type":"function_call"}},` +
		`{"data":{"id":"ID-c0-0","name":"wait","response":{"result":"done"}},"kind":"data","metadata":{"adk_type":"function_response"}}]},` +
		`{"artifactId":"ID-t1","parts":[{"kind":"text","text":"Waited, as you asked."}]}]`
	if got := jsonOf(m["result"].(map[string]any)["artifacts"]); got != strings.ReplaceAll(want, "ID", id) {
		t.Errorf("tasks/get's artifacts %s\nwant %s", got, strings.ReplaceAll(want, "ID", id))
	}
	// Resubscribed, the task that is over: the task, whole, then its end.
	again := l.events(`{"jsonrpc":"2.0","id":3,"method":"tasks/resubscribe","params":{"id":"` + id + `"}}`)
	if len(again) != 2 || again[0]["kind"] != "task" || jsonOf(again[0]["artifacts"]) != strings.ReplaceAll(want, "ID", id) ||
		again[1]["status"].(map[string]any)["state"] != "completed" || again[1]["final"] != true {
		t.Errorf("resubscribed %s", jsonOf(again))
	}

	// A run of another protocol's, read to its end: its log is cut.
	l.model.Enqueue(fake.Text("Elsewhere."))
	att, err := l.srv.Submit(context.Background(), "alice", agentserver.Request{Thread: "other", Message: genai.NewContentFromText("hi", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := att.Cursor.Next(context.Background(), time.Minute); err != nil {
			break
		}
	}
	att.Cursor.Close()
	_, _, m = l.rpc(`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"id":"`+att.Run.ID+`"}}`, "application/json", true)
	task := m["result"].(map[string]any)
	if arts := jsonOf(task["artifacts"]); arts != `[{"artifactId":"`+att.Run.ID+`-t0","parts":[{"kind":"text","text":"Elsewhere."}]}]` ||
		task["status"].(map[string]any)["state"] != "completed" || task["contextId"] != "other" {
		t.Errorf("the task of a cut log %s", jsonOf(task))
	}
	again = l.events(`{"jsonrpc":"2.0","id":5,"method":"tasks/resubscribe","params":{"id":"` + att.Run.ID + `"}}`)
	if len(again) != 3 || again[0]["kind"] != "task" || again[1]["kind"] != "artifact-update" || again[2]["status"].(map[string]any)["state"] != "completed" {
		t.Errorf("resubscribed to the task of a cut log %s", jsonOf(again))
	}
}
