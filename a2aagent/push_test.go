package a2aagent_test

// Push notifications: a2a-go's 0.3 client and a2a-go/v2's 1.0 client
// set webhooks of tasks of the tests' server, in another process, which
// notifies a receiver in this one, on loopback (the desk allows it);
// bad configs and addresses the handler refuses, in this process.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// A notification a receiver got.
type notification struct {
	header http.Header
	body   map[string]any
}

// receiver is a webhook: it answers 503 (or status) to its first
// failures requests, then takes each notification.
type receiver struct {
	*httptest.Server
	got      chan notification
	failures atomic.Int32
	failed   atomic.Int32
	status   atomic.Int32
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan notification, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc.failures.Add(-1) >= 0 {
			rc.failed.Add(1)
			http.Error(w, "not now", cmp.Or(int(rc.status.Load()), http.StatusServiceUnavailable))
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("a notification: %s %s %q: %v", r.Method, r.Header.Get("Content-Type"), b, err)
		}
		rc.got <- notification{r.Header.Clone(), m}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// next returns the next notification.
func (rc *receiver) next(t *testing.T) notification {
	t.Helper()
	select {
	case n := <-rc.got:
		return n
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("no notification came")
		return notification{}
	}
}

// path returns the value at the keys' path in m.
func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, _ := v.(map[string]any)
		v = o[k]
	}
	return v
}

// A 0.3 client sets a webhook of a working task: it gets the task,
// working, with the config's token and credentials (after a 503, tried
// again), then the task completed with its answer. The config is read
// back, listed and deleted; another user's calls find no task.
func TestPushV0(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	rc := newReceiver(t)
	rc.failures.Store(1)
	c, card := a2aClient(t, srv.URL, "alice")
	if !card.Capabilities.PushNotifications {
		t.Error("the card does not say the agent sends push notifications")
	}
	no := false
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: userText("hold push0"), Config: &a2a.MessageSendConfig{Blocking: &no}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	want := &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{ID: "hook", URL: rc.URL + "/hook", Token: "tok-0",
		Auth: &a2a.PushAuthInfo{Schemes: []string{"bearer"}, Credentials: "secret-0"}}}
	set, err := c.SetTaskPushConfig(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	want.Config.Auth.Schemes = []string{"Bearer"}
	if jsonOf(set) != jsonOf(want) {
		t.Errorf("set %s, want %s", jsonOf(set), jsonOf(want))
	}

	n := rc.next(t)
	if path(n.body, "kind") != "task" || path(n.body, "id") != string(task.ID) || path(n.body, "status", "state") != "working" {
		t.Errorf("first notification %s, want the task, working", jsonOf(n.body))
	}
	if n.header.Get("X-A2A-Notification-Token") != "tok-0" || n.header.Get("A2A-Notification-Token") != "tok-0" || n.header.Get("Authorization") != "Bearer secret-0" {
		t.Errorf("headers %v", n.header)
	}
	if rc.failed.Load() != 1 {
		t.Errorf("%d attempts failed before, want 1 (the receiver's 503)", rc.failed.Load())
	}

	got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "hook"})
	if err != nil || jsonOf(got) != jsonOf(want) {
		t.Errorf("get: %s, %v", jsonOf(got), err)
	}
	list, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID})
	if err != nil || len(list) != 1 || jsonOf(list[0]) != jsonOf(want) {
		t.Errorf("list: %s, %v", jsonOf(list), err)
	}
	if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "nope"}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), `no push notification config "nope"`) {
		t.Errorf("get an unknown config: %v", err)
	}

	bob, _ := a2aClient(t, srv.URL, "bob")
	if _, err := bob.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "hook"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's get: %v", err)
	}
	if _, err := bob.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's list: %v", err)
	}
	if _, err := bob.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{URL: rc.URL + "/bob"}}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's set: %v", err)
	}
	if err := bob.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "hook"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's delete: %v", err)
	}

	srv.release("push0")
	n = rc.next(t)
	arts, _ := n.body["artifacts"].([]any)
	if path(n.body, "status", "state") != "completed" || len(arts) == 0 || !strings.Contains(jsonOf(arts[len(arts)-1]), "released push0") {
		t.Errorf("second notification %s, want the task completed, with its answer", jsonOf(n.body))
	}

	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "hook"}); err != nil {
		t.Fatal(err)
	}
	if list, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID}); err != nil || len(list) != 0 {
		t.Errorf("list after delete: %s, %v", jsonOf(list), err)
	}
	select {
	case n := <-rc.got:
		t.Errorf("a notification after the end: %s", jsonOf(n.body))
	default:
	}
}

// A 1.0 client sets a webhook in the message that starts a task, over
// each binding: it gets StreamResponses holding the task, working then
// completed, with the token and credentials; a second config created for
// the task is notified too, read back and deleted; an approval's
// input-required and the decision's working come in order; another
// user's calls find no task.
func TestPushV1(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	for _, binding := range v1Bindings {
		t.Run(string(binding), func(t *testing.T) {
			rc, rc2 := newReceiver(t), newReceiver(t)
			c, _ := v1Client(t, srv.URL, "alice", binding)
			res, err := c.SendMessage(ctx, &a2av1.SendMessageRequest{Message: v1Text("email carol"), Config: &a2av1.SendMessageConfig{ReturnImmediately: true,
				PushConfig: &a2av1.PushConfig{URL: rc.URL, Token: "tok-1", Auth: &a2av1.PushAuthInfo{Scheme: "Basic", Credentials: "YTpi"}}}})
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2av1.Task)
			states := func(rc *receiver, want ...string) (n notification) {
				t.Helper()
				for _, w := range want {
					n = rc.next(t)
					if path(n.body, "task", "id") != string(task.ID) || path(n.body, "task", "status", "state") != w {
						t.Fatalf("notification %s, want the task, %s", jsonOf(n.body), w)
					}
					auth, token := "Basic YTpi", "tok-1"
					if rc == rc2 {
						auth, token = "", ""
					}
					if n.header.Get("A2A-Notification-Token") != token || n.header.Get("Authorization") != auth {
						t.Errorf("headers %v", n.header)
					}
				}
				return n
			}
			asked := states(rc, "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED")

			list, err := c.ListTaskPushConfigs(ctx, &a2av1.ListTaskPushConfigRequest{TaskID: task.ID})
			if err != nil || len(list) != 1 || list[0].URL != rc.URL || list[0].ID == "" || list[0].Token != "tok-1" || list[0].Auth == nil || list[0].Auth.Scheme != "Basic" {
				t.Fatalf("list: %s, %v", jsonOf(list), err)
			}
			second := &a2av1.PushConfig{TaskID: task.ID, ID: "second", URL: rc2.URL + "/2"}
			if got, err := c.CreateTaskPushConfig(ctx, second); err != nil || jsonOf(got) != jsonOf(second) {
				t.Fatalf("create: %s, %v", jsonOf(got), err)
			}
			states(rc2, "TASK_STATE_INPUT_REQUIRED")
			if got, err := c.GetTaskPushConfig(ctx, &a2av1.GetTaskPushConfigRequest{TaskID: task.ID, ID: "second"}); err != nil || jsonOf(got) != jsonOf(second) {
				t.Errorf("get: %s, %v", jsonOf(got), err)
			}

			bob, _ := v1Client(t, srv.URL, "bob", binding)
			if _, err := bob.GetTaskPushConfig(ctx, &a2av1.GetTaskPushConfigRequest{TaskID: task.ID, ID: "second"}); !errors.Is(err, a2av1.ErrTaskNotFound) {
				t.Errorf("bob's get: %v", err)
			}
			if _, err := bob.ListTaskPushConfigs(ctx, &a2av1.ListTaskPushConfigRequest{TaskID: task.ID}); !errors.Is(err, a2av1.ErrTaskNotFound) {
				t.Errorf("bob's list: %v", err)
			}
			if _, err := bob.CreateTaskPushConfig(ctx, &a2av1.PushConfig{TaskID: task.ID, URL: rc.URL}); !errors.Is(err, a2av1.ErrTaskNotFound) {
				t.Errorf("bob's create: %v", err)
			}
			if err := bob.DeleteTaskPushConfig(ctx, &a2av1.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "second"}); !errors.Is(err, a2av1.ErrTaskNotFound) {
				t.Errorf("bob's delete: %v", err)
			}
			if err := c.DeleteTaskPushConfig(ctx, &a2av1.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "second"}); err != nil {
				t.Fatal(err)
			}

			// The decision, from the notification: the task goes on, and
			// completes.
			parts, _ := path(asked.body, "task", "status", "message", "parts").([]any)
			var call any
			for _, p := range parts {
				if p, _ := p.(map[string]any); path(p, "data", "name") == "adk_request_confirmation" {
					call = path(p, "data", "id")
				}
			}
			if call == nil {
				t.Fatalf("the input-required notification asks nothing: %s", jsonOf(asked.body))
			}
			calls := []map[string]any{{"id": call}}
			yes := a2av1.NewMessageForTask(a2av1.MessageRoleUser, task, a2av1.NewDataPart(map[string]any{"id": calls[0]["id"], "name": "adk_request_confirmation", "response": map[string]any{"confirmed": true}}))
			yes.Parts[0].Metadata = map[string]any{"adk_type": "function_response"}
			if _, err := c.SendMessage(ctx, &a2av1.SendMessageRequest{Message: yes}); err != nil {
				t.Fatal(err)
			}
			states(rc, "TASK_STATE_WORKING", "TASK_STATE_COMPLETED")
		})
	}
}

// Bad configs are refused with an error that says what is wrong, and
// so are webhooks at private, loopback and link-local addresses unless
// the handler allows them; configs are bounded per task and per user;
// without push notifications, each method says so.
func TestPushRefused(t *testing.T) {
	l := newLocal(t, &a2aagent.Options{Push: a2aagent.PushOptions{MaxPerTask: 2, MaxPerUser: 3}}, false)
	task := func() string {
		t.Helper()
		l.model.Enqueue(fake.Text("Hello."))
		_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, "application/json", true)
		id, _ := path(m, "result", "id").(string)
		if id == "" {
			t.Fatalf("message/send: %s", jsonOf(m))
		}
		return id
	}
	id := task()
	set := func(config string) map[string]any {
		_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+id+`","pushNotificationConfig":`+config+`}}`, "application/json", true)
		return m
	}
	for _, tc := range []struct{ name, config, want string }{
		{"no url", `{"id":"a"}`, "url is missing"},
		{"not http", `{"url":"ftp://example.com/hook"}`, "not an absolute http or https URL"},
		{"a path", `{"url":"/hook"}`, "not an absolute http or https URL"},
		{"credentials in the url", `{"url":"https://u:p@example.com/hook"}`, "send them in authentication"},
		{"loopback", `{"url":"http://127.0.0.1:9/hook"}`, "127.0.0.1 is a private, loopback or link-local address"},
		{"loopback v6", `{"url":"http://[::1]:9/hook"}`, "::1 is a private"},
		{"localhost", `{"url":"http://localhost:9/hook"}`, "is a private, loopback or link-local address"},
		{"private", `{"url":"https://10.1.2.3/hook"}`, "10.1.2.3 is a private"},
		{"metadata server", `{"url":"http://169.254.169.254/latest"}`, "169.254.169.254 is a private"},
		{"mapped", `{"url":"http://[::ffff:192.168.1.1]/hook"}`, "192.168.1.1 is a private"},
		{"unspecified", `{"url":"http://0.0.0.0:9/hook"}`, "0.0.0.0 is a private"},
		{"an unknown scheme", `{"url":"https://example.com/hook","authentication":{"schemes":["Digest"],"credentials":"x"}}`, `Digest`},
		{"credentials without a scheme", `{"url":"https://example.com/hook","authentication":{"credentials":"x"}}`, "no schemes"},
		{"a scheme without credentials", `{"url":"https://example.com/hook","authentication":{"schemes":["Bearer"]}}`, "has no credentials"},
		{"a token over lines", `{"url":"https://example.com/hook","token":"a\r\nX-Evil: 1"}`, "no line breaks"},
		{"a long token", `{"url":"https://example.com/hook","token":"` + strings.Repeat("t", 1025) + `"}`, "token is longer than 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := set(tc.config)
			if path(m, "error", "code") != -32602.0 || !strings.Contains(jsonOf(path(m, "error", "message")), tc.want) {
				t.Errorf("%s, want invalid params saying %q", jsonOf(m), tc.want)
			}
		})
	}

	// 1.0's bindings say the same.
	v1 := func(path, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, l.http.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := l.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := v1("/a2a/v1/rest/tasks/"+id+"/pushNotificationConfigs", `{"url":"http://192.168.0.9/hook"}`); status != 400 ||
		!strings.Contains(body, `"status":"INVALID_ARGUMENT"`) || !strings.Contains(body, "192.168.0.9 is a private") {
		t.Errorf("HTTP+JSON: %d %s", status, body)
	}
	if status, body := v1("/a2a/v1", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+id+
		`","url":"https://example.com/hook","authentication":{"scheme":"Digest","credentials":"x"}}}`); status != 200 ||
		!strings.Contains(body, `"code":-32602`) || !strings.Contains(body, `scheme \"Digest\": this agent speaks Bearer and Basic`) {
		t.Errorf("JSON-RPC: %d %s", status, body)
	}

	// The caps: 2 a task, 3 a user.
	capped := newLocal(t, &a2aagent.Options{Push: a2aagent.PushOptions{AllowPrivateNetworks: true, MaxPerTask: 2, MaxPerUser: 3}}, false)
	rc := newReceiver(t)
	capTask := func() string {
		t.Helper()
		capped.model.Enqueue(fake.Text("Hello."))
		_, _, m := capped.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, "application/json", true)
		return path(m, "result", "id").(string)
	}
	capID := capTask()
	hook := func(n string) string {
		_, _, m := capped.rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+capID+`","pushNotificationConfig":{"id":"`+n+`","url":"`+rc.URL+"/"+n+`"}}}`, "application/json", true)
		return jsonOf(m)
	}
	for _, n := range []string{"a", "b", "b"} { // b twice: replaced
		if m := hook(n); strings.Contains(m, `"error"`) {
			t.Fatalf("set %s: %s", n, m)
		}
	}
	if m := hook("c"); !strings.Contains(m, "has 2 push notification configs, as many as this agent keeps for a task") {
		t.Errorf("a third config of a task: %s", m)
	}
	capID = capTask()
	if m := hook("c"); strings.Contains(m, `"error"`) {
		t.Fatalf("set c: %s", m)
	}
	if m := hook("d"); !strings.Contains(m, "your tasks have 3 push notification configs") {
		t.Errorf("a fourth config of a user: %s", m)
	}
	for range 3 { // a, b (and maybe the b it replaced), c: the task, completed
		if n := rc.next(t); path(n.body, "status", "state") != "completed" {
			t.Errorf("notification %s", jsonOf(n.body))
		}
	}
	// A message's config is checked before the message takes effect.
	before := len(l.model.Requests())
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"pushNotificationConfig":{"url":"http://10.0.0.1/"}}}}`, "application/json", true)
	if path(m, "error", "code") != -32602.0 || len(l.model.Requests()) != before {
		t.Errorf("a message with a private webhook: %s", jsonOf(m))
	}

	off := newLocal(t, &a2aagent.Options{Push: a2aagent.PushOptions{Disabled: true}}, false)
	_, _, m = off.rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/list","params":{"id":"x"}}`, "application/json", true)
	if path(m, "error", "code") != -32003.0 {
		t.Errorf("disabled: %s", jsonOf(m))
	}
	resp, err := off.http.Client().Get(off.http.URL + a2aagent.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if path(card, "capabilities", "pushNotifications") != nil {
		t.Errorf("disabled, the card says %s", jsonOf(card["capabilities"]))
	}
}

// logged passes the records of a logger to a channel.
type logged chan slog.Record

func (l logged) Enabled(context.Context, slog.Level) bool { return true }
func (l logged) Handle(_ context.Context, r slog.Record) error {
	select {
	case l <- r.Clone():
	default:
	}
	return nil
}
func (l logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logged) WithGroup(string) slog.Handler      { return l }

// A host that resolved to a public address when its config was set, and
// resolves to loopback when the notification is sent (DNS rebinding), is
// not dialed: the address is checked again as it is dialed.
func TestPushRebinding(t *testing.T) {
	restore := a2aagent.SetLookupHost(func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.0.2.7")}, nil
	})
	defer restore()
	rc := newReceiver(t)
	logs := make(logged, 100)
	l := newLocal(t, nil, false, func(c *agentserver.Config) { c.Logger = slog.New(logs) })
	l.model.Enqueue(fake.Text("Hello."))
	hook := strings.Replace(rc.URL, "127.0.0.1", "localhost", 1)
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"pushNotificationConfig":{"url":"`+hook+`"}}}}`, "application/json", true)
	if path(m, "result", "status", "state") != "completed" {
		t.Fatalf("message/send: %s", jsonOf(m))
	}
	for r := range logs {
		if r.Message != "a2aagent: push notification not delivered" {
			continue
		}
		var err string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "error" {
				err = a.Value.String()
			}
			return true
		})
		if !strings.Contains(err, "private, loopback or link-local") {
			t.Errorf("the delivery failed with %s", err)
		}
		break
	}
	select {
	case n := <-rc.got:
		t.Errorf("the receiver on loopback was notified: %s", jsonOf(n.body))
	default:
	}
}

// A 0.3 message/stream sets a webhook for the task it starts: the config
// takes the task's id, and every state of the task is notified, in order.
func TestPushStreamConfig(t *testing.T) {
	rc := newReceiver(t)
	l := newLocal(t, &a2aagent.Options{Push: a2aagent.PushOptions{AllowPrivateNetworks: true}}, false)
	l.model.Enqueue(fake.Calls(fake.Call("wait", nil)), fake.Text("Done."))
	close(l.gate)
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"wait"}]},`+
		`"configuration":{"pushNotificationConfig":{"url":"`+rc.URL+`","token":"tok-s"}}}}`, "application/json", true)
	id, _ := path(m, "result", "id").(string)
	if id == "" {
		t.Fatalf("message/stream: %s", jsonOf(m))
	}
	for _, want := range []string{"working", "completed"} {
		n := rc.next(t)
		if path(n.body, "id") != id || path(n.body, "status", "state") != want || n.header.Get("X-A2A-Notification-Token") != "tok-s" {
			t.Fatalf("notification %s %v, want the task %s", jsonOf(n.body), n.header, want)
		}
	}
	_, _, m = l.rpc(`{"jsonrpc":"2.0","id":2,"method":"tasks/pushNotificationConfig/get","params":{"id":"`+id+`"}}`, "application/json", true)
	if path(m, "result", "pushNotificationConfig", "id") != id || path(m, "result", "pushNotificationConfig", "url") != rc.URL {
		t.Errorf("get: %s", jsonOf(m))
	}
}

// A webhook that keeps failing is tried Retries more times per
// notification after a 5xx, once after a 4xx; each notification that
// was not delivered is logged, and the next one is still sent.
func TestPushRetries(t *testing.T) {
	for _, tc := range []struct {
		status, attempts int
	}{{500, 3}, {http.StatusTooManyRequests, 3}, {http.StatusForbidden, 1}} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			rc := newReceiver(t)
			rc.failures.Store(1000)
			rc.status.Store(int32(tc.status))
			logs := make(logged, 100)
			l := newLocal(t, &a2aagent.Options{Push: a2aagent.PushOptions{AllowPrivateNetworks: true, Retries: 2, RetryDelay: time.Millisecond}}, false,
				func(c *agentserver.Config) { c.Logger = slog.New(logs) })
			l.model.Enqueue(fake.Text("Hello."))
			_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},`+
				`"configuration":{"pushNotificationConfig":{"url":"`+rc.URL+`"}}}}`, "application/json", true)
			if path(m, "result", "status", "state") != "completed" {
				t.Fatalf("message/send: %s", jsonOf(m))
			}
			var states []string
			for r := range logs {
				if r.Message != "a2aagent: push notification not delivered" {
					continue
				}
				r.Attrs(func(a slog.Attr) bool {
					if a.Key == "state" {
						states = append(states, a.Value.String())
					}
					return true
				})
				if len(states) == 2 {
					break
				}
			}
			if strings.Join(states, " ") != "working completed" || int(rc.failed.Load()) != 2*tc.attempts {
				t.Errorf("not delivered: %v, after %d attempts; want working and completed, after %d each", states, rc.failed.Load(), tc.attempts)
			}
		})
	}
}

// An IPv6 address that embeds a blocked IPv4 address is refused, when
// the config is set and when it is dialed (issue 43: NAT64, 6to4 and
// IPv4-compatible forms were accepted at both): on an IPv6-only host
// behind NAT64, 64:ff9b::a9fe:a9fe is the metadata server.
func TestPushEmbeddedIPv4(t *testing.T) {
	refused := []struct{ addr, embeds string }{
		{"64:ff9b::a9fe:a9fe", "169.254.169.254"}, // NAT64, well-known prefix (RFC 6052)
		{"64:ff9b::a00:5", "10.0.0.5"},
		{"64:ff9b::7f00:1", "127.0.0.1"},
		{"64:ff9b:1::a9fe:a9fe", ""},     // NAT64, local-use prefix (RFC 8215): refused whole
		{"64:ff9b:1:a9fe:a9:fe00::", ""}, // the same address as a /48 network would write it
		{"2002:7f00:1::", "127.0.0.1"},   // 6to4 (RFC 3056)
		{"2002:c0a8:101::1", "192.168.1.1"},
		{"::7f00:1", "127.0.0.1"}, // IPv4-compatible (RFC 4291)
		{"::a9fe:a9fe", "169.254.169.254"},
		{"::ffff:a9fe:a9fe", "169.254.169.254"},               // IPv4-mapped
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"}, // Teredo, its client 127.0.0.1 inverted (RFC 4380)
		{"2001:0:a00:1:8000:63bf:3fff:fdd2", "10.0.0.1"},      // Teredo, its server private
		{"2a00:1450:4001:81c::5efe:a00:1", "10.0.0.1"},        // ISATAP (RFC 5214)
		{"2a00:1450:4001:81c:200:5efe:c0a8:101", "192.168.1.1"},
		{"fec0::1", ""}, // site-local
	}
	allowed := []string{
		"64:ff9b::808:808",                     // NAT64 to 8.8.8.8
		"2002:808:808::1",                      // 6to4 of 8.8.8.8
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
		"2a00:1450:4001:81c::200e",             // a public address
		"2a00:1450:4001:81c::5efe:808:808",     // ISATAP of 8.8.8.8
		"8.8.8.8",
	}
	// When dialed.
	for _, tc := range refused {
		err := a2aagent.CheckDial("tcp6", "["+tc.addr+"]:443", nil)
		want := tc.embeds
		if want == "" {
			want = netip.MustParseAddr(tc.addr).String()
		}
		if err == nil || !strings.Contains(err.Error(), want+": a private, loopback or link-local address") {
			t.Errorf("dialing %s: %v, want refused for %s", tc.addr, err, want)
		}
	}
	for _, a := range allowed {
		if err := a2aagent.CheckDial("tcp", netip.AddrPortFrom(netip.MustParseAddr(a), 443).String(), nil); err != nil {
			t.Errorf("dialing %s: %v, want it allowed", a, err)
		}
	}

	// When set: as a URL's host, and as what a name resolves to.
	var resolved netip.Addr
	restore := a2aagent.SetLookupHost(func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{resolved}, nil })
	defer restore()
	l := newLocal(t, nil, false)
	l.model.Enqueue(fake.Text("Hello."))
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, "application/json", true)
	id, _ := path(m, "result", "id").(string)
	if id == "" {
		t.Fatalf("message/send: %s", jsonOf(m))
	}
	for _, tc := range refused {
		resolved = netip.MustParseAddr(tc.addr)
		for _, u := range []string{"http://[" + tc.addr + "]/hook", "https://hook.example/hook"} {
			_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+id+`","pushNotificationConfig":{"url":"`+u+`"}}}`, "application/json", true)
			msg := jsonOf(path(m, "error", "message"))
			if path(m, "error", "code") != -32602.0 || !strings.Contains(msg, "is a private, loopback or link-local address") ||
				!strings.Contains(msg, tc.embeds) {
				t.Errorf("set %s (%s): %s, want refused for %s", u, tc.addr, jsonOf(m), tc.embeds)
			}
		}
	}
	if status, body := l.send("POST", "/a2a/v1/rest/tasks/"+id+"/pushNotificationConfigs", "application/json", `{"url":"http://[64:ff9b::a9fe:a9fe]/latest"}`, nil); status != 400 ||
		!strings.Contains(body, "which embeds 169.254.169.254") {
		t.Errorf("HTTP+JSON, NAT64: %d %s", status, body)
	}
}
