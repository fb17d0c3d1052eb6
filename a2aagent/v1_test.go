package a2aagent_test

// a2a-go/v2's client, speaking A2A 1.0 over JSON-RPC and HTTP+JSON, in
// this process, against the tests' A2A server in another.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	a2a "github.com/a2aproject/a2a-go/v2/a2a"
	a2aclient "github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/toolnexus/toolnexus-go/a2aagent"
)

// The 1.0 bindings a client may choose.
var v1Bindings = []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}

// v1Client resolves the card at base and returns a 1.0 client of user
// over binding.
func v1Client(t *testing.T, base, user string, binding a2a.TransportProtocol) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	opt := a2aclient.WithJSONRPCTransport(httpClient(user))
	if binding == a2a.TransportProtocolHTTPJSON {
		opt = a2aclient.WithRESTTransport(httpClient(user))
	}
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithDefaultsDisabled(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return c, card
}

func v1Text(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

func v1Collect(t *testing.T, events func(func(a2a.Event, error) bool)) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream: %v (after %d events)", err, len(out))
		}
		out = append(out, ev)
	}
	return out
}

// v1Last returns the stream's last event, a status update.
func v1Last(t *testing.T, events []a2a.Event) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	st, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok {
		t.Fatalf("the last event is %s, not a status", jsonOf(events[len(events)-1]))
	}
	return st
}

// v1Parts returns the data parts of the events' artifacts of adk_type typ.
func v1Parts(events []a2a.Event, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range events {
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range au.Artifact.Parts {
				if d, ok := p.Data().(map[string]any); ok && p.Metadata["adk_type"] == typ {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// The card lists the 1.0 interfaces first, then 0.3's, which 0.3
// clients find at its url (TestA2AGoClientStream).
func TestV1Card(t *testing.T) {
	srv := startServer(t)
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range card.SupportedInterfaces {
		got = append(got, string(i.ProtocolBinding)+" "+string(i.ProtocolVersion)+" "+i.URL)
	}
	want := []string{
		"JSONRPC 1.0 " + srv.URL + "/a2a/v1",
		"HTTP+JSON 1.0 " + srv.URL + "/a2a/v1/rest",
		"JSONRPC 0.3 " + srv.URL + "/a2a",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("interfaces\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if card.Name != "Weather Desk" || !card.Capabilities.Streaming || len(card.Skills) != 5 {
		t.Errorf("card %s", jsonOf(card))
	}
}

// A streamed task over each binding: the Task, working, the call and its
// result as ADK's data parts, the text, the final status with the usage;
// GetTask folds the same.
func TestV1Stream(t *testing.T) {
	srv := startServer(t)
	for _, b := range v1Bindings {
		t.Run(string(b), func(t *testing.T) {
			c, _ := v1Client(t, srv.URL, "alice", b)
			ctx := context.Background()
			events := v1Collect(t, c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: v1Text("weather in Paris")}))
			task, ok := events[0].(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateSubmitted || task.ID == "" || task.ContextID == "" {
				t.Fatalf("first event %s", jsonOf(events[0]))
			}
			calls, results := v1Parts(events, "function_call"), v1Parts(events, "function_response")
			if len(calls) != 1 || calls[0]["name"] != "get_weather" || jsonOf(calls[0]["args"]) != `{"city":"Paris"}` {
				t.Errorf("calls %s", jsonOf(calls))
			}
			if len(results) != 1 || jsonOf(results[0]["response"]) != `{"result":"sunny in Paris"}` {
				t.Errorf("results %s", jsonOf(results))
			}
			var text strings.Builder
			for _, ev := range events {
				if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
					for _, p := range au.Artifact.Parts {
						text.WriteString(p.Text())
					}
				}
			}
			want := `Done: get_weather {"result":"sunny in Paris"}`
			if text.String() != want {
				t.Errorf("text %q, want %q", text.String(), want)
			}
			st := v1Last(t, events)
			if usage, _ := st.Metadata["adk_usage_metadata"].(map[string]any); st.Status.State != a2a.TaskStateCompleted || usage["totalTokenCount"] == nil {
				t.Errorf("final status %s", jsonOf(st))
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 2 || got.Artifacts[1].Parts[0].Text() != want {
				t.Errorf("GetTask %s", jsonOf(got))
			}
			// SendMessage, in the same context: the thread remembers.
			next := v1Text("remember?")
			next.ContextID = task.ContextID
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: next})
			if err != nil {
				t.Fatal(err)
			}
			t2, ok := res.(*a2a.Task)
			if !ok || t2.Status.State != a2a.TaskStateCompleted || t2.ContextID != task.ContextID {
				t.Fatalf("SendMessage %s", jsonOf(res))
			}
			if text := t2.Artifacts[len(t2.Artifacts)-1].Parts[0].Text(); text != "You said 2 things: weather in Paris | remember?." {
				t.Errorf("the second task's answer %q", text)
			}
		})
	}
}

// A call that needs approval ends the stream input-required, with ADK's
// confirmation requests; decisions sent back go on with the task.
func TestV1Approval(t *testing.T) {
	srv := startServer(t)
	for _, b := range v1Bindings {
		t.Run(string(b), func(t *testing.T) {
			c, _ := v1Client(t, srv.URL, "alice", b)
			ctx := context.Background()
			st := v1Last(t, v1Collect(t, c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: v1Text("email two")})))
			if st.Status.State != a2a.TaskStateInputRequired || st.Status.Message == nil {
				t.Fatalf("final status %s", jsonOf(st))
			}
			var ids []string
			for _, p := range st.Status.Message.Parts {
				if d, ok := p.Data().(map[string]any); ok && d["name"] == "adk_request_confirmation" && p.Metadata["adk_is_long_running"] == true {
					ids = append(ids, d["id"].(string))
				}
			}
			if len(ids) != 2 {
				t.Fatalf("status message %s", jsonOf(st.Status.Message))
			}
			answer := func(id string, confirmed bool) *a2a.Message {
				p := a2a.NewDataPart(map[string]any{"id": id, "name": "adk_request_confirmation", "response": map[string]any{"confirmed": confirmed}})
				p.Metadata = map[string]any{"adk_type": "function_response"}
				m := a2a.NewMessage(a2a.MessageRoleUser, p)
				m.TaskID, m.ContextID = st.TaskID, st.ContextID
				return m
			}
			if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer("no-such-call", true)}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "no-such-call") {
				t.Errorf("a decision for an unknown call: %v", err)
			}
			st2 := v1Last(t, v1Collect(t, c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: answer(ids[0], true)})))
			if st2.Status.State != a2a.TaskStateInputRequired || st2.TaskID != st.TaskID {
				t.Fatalf("after one decision: %s", jsonOf(st2))
			}
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer(ids[1], false)})
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2a.Task)
			if task.Status.State != a2a.TaskStateCompleted || !strings.Contains(task.Artifacts[len(task.Artifacts)-1].Parts[0].Text(), `send_email {"result":"sent to ann"}`) {
				t.Errorf("after both decisions: %s", jsonOf(task))
			}
			if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer(ids[1], true)}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Errorf("a message to a completed task: %v", err)
			}
		})
	}
}

// CancelTask stops the run and its tool; the stream ends canceled.
func TestV1Cancel(t *testing.T) {
	srv := startServer(t)
	for i, b := range v1Bindings {
		t.Run(string(b), func(t *testing.T) {
			c, _ := v1Client(t, srv.URL, "alice", b)
			ctx := context.Background()
			key := "v1c" + string(rune('0'+i))
			events := make(chan a2a.Event, 100)
			go func() {
				defer close(events)
				for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: v1Text("hold " + key)}) {
					if err != nil {
						return
					}
					events <- ev
				}
			}()
			task := (<-events).(*a2a.Task)
			srv.next("started " + key)
			got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCanceled {
				t.Errorf("CancelTask answered %s", jsonOf(got))
			}
			srv.next("stopped " + key)
			var last a2a.Event
			for ev := range events {
				last = ev
			}
			if st, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCanceled {
				t.Errorf("the stream ended with %s", jsonOf(last))
			}
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: v1Text("hi")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: res.(*a2a.Task).ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Errorf("canceling a completed task: %v", err)
			}
		})
	}
}

// A client that drops its stream subscribes to the task: the task as it
// stands, then the rest of the run.
func TestV1Subscribe(t *testing.T) {
	srv := startServer(t)
	for i, b := range v1Bindings {
		t.Run(string(b), func(t *testing.T) {
			c, _ := v1Client(t, srv.URL, "alice", b)
			key := "v1r" + string(rune('0'+i))
			ctx, drop := context.WithCancel(context.Background())
			var task *a2a.Task
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: v1Text("hold " + key)}) {
				if err != nil {
					t.Fatal(err)
				}
				if tk, ok := ev.(*a2a.Task); ok {
					task = tk
				}
				if len(v1Parts([]a2a.Event{ev}, "function_call")) > 0 {
					break
				}
			}
			drop()
			srv.next("started " + key)
			done := make(chan []a2a.Event)
			first := make(chan a2a.Event, 1)
			go func() {
				var out []a2a.Event
				for ev, err := range c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
					if err != nil {
						break
					}
					if len(out) == 0 {
						first <- ev
					}
					out = append(out, ev)
				}
				done <- out
			}()
			snap, ok := (<-first).(*a2a.Task)
			if !ok || snap.ID != task.ID || snap.Status.State != a2a.TaskStateWorking || len(snap.Artifacts) != 1 {
				t.Fatalf("the subscribed stream opens with %s", jsonOf(snap))
			}
			srv.release(key)
			events := <-done
			if r := v1Parts(events, "function_response"); len(r) != 1 || jsonOf(r[0]["response"]) != `{"result":"released `+key+`"}` {
				t.Errorf("results %s", jsonOf(r))
			}
			if st := v1Last(t, events); st.Status.State != a2a.TaskStateCompleted {
				t.Errorf("final %s", jsonOf(st))
			}
		})
	}
}

// ListTasks lists the user's tasks, the latest of each thread, and never
// another user's; another user's task is not found, whatever is asked of
// it.
func TestV1ListTasksAndOtherUser(t *testing.T) {
	srv := startServer(t)
	for _, b := range v1Bindings {
		t.Run(string(b), func(t *testing.T) {
			alice, _ := v1Client(t, srv.URL, "alice-"+string(b), b)
			bob, _ := v1Client(t, srv.URL, "bob-"+string(b), b)
			ctx := context.Background()
			var aliceTasks []*a2a.Task
			for _, text := range []string{"hi", "email carol"} {
				res, err := alice.SendMessage(ctx, &a2a.SendMessageRequest{Message: v1Text(text)})
				if err != nil {
					t.Fatal(err)
				}
				aliceTasks = append(aliceTasks, res.(*a2a.Task))
			}
			res, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: v1Text("hello")})
			if err != nil {
				t.Fatal(err)
			}
			bobTask := res.(*a2a.Task)

			list, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var ids []a2a.TaskID
			for _, tk := range list.Tasks {
				ids = append(ids, tk.ID)
				if len(tk.Artifacts) != 0 {
					t.Errorf("task %s listed with its artifacts, unasked", tk.ID)
				}
			}
			// The most recently updated thread first.
			if len(ids) != 2 || ids[0] != aliceTasks[1].ID || ids[1] != aliceTasks[0].ID || list.NextPageToken != "" {
				t.Errorf("alice's tasks %v, want %v then %v", ids, aliceTasks[1].ID, aliceTasks[0].ID)
			}
			list, err = alice.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired, IncludeArtifacts: true})
			if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != aliceTasks[1].ID || len(list.Tasks[0].Artifacts) == 0 {
				t.Errorf("alice's tasks waiting for input: %v %s", err, jsonOf(list))
			}
			list, err = alice.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: aliceTasks[0].ContextID})
			if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != aliceTasks[0].ID {
				t.Errorf("alice's tasks of a context: %v %s", err, jsonOf(list))
			}
			page, err := alice.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1})
			if err != nil || len(page.Tasks) != 1 || page.NextPageToken == "" {
				t.Fatalf("a page of one: %v %s", err, jsonOf(page))
			}
			page, err = alice.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: page.NextPageToken})
			if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != aliceTasks[0].ID {
				t.Errorf("the next page: %v %s", err, jsonOf(page))
			}
			list, err = bob.ListTasks(ctx, &a2a.ListTasksRequest{})
			if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != bobTask.ID {
				t.Errorf("bob's tasks: %v %s", err, jsonOf(list))
			}
			// Alice's context, named by bob: bob's thread of that name, which has no task.
			list, err = bob.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: aliceTasks[0].ContextID})
			if err != nil || len(list.Tasks) != 0 {
				t.Errorf("bob's tasks of alice's context: %v %s", err, jsonOf(list))
			}

			id := aliceTasks[1].ID
			if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob's GetTask: %v", err)
			}
			if _, err := bob.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob's CancelTask: %v", err)
			}
			for _, err := range bob.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("bob's SubscribeToTask: %v", err)
				}
				break
			}
			p := a2a.NewDataPart(map[string]any{"id": "x", "name": "adk_request_confirmation", "response": map[string]any{"confirmed": true}})
			p.Metadata = map[string]any{"adk_type": "function_response"}
			m := a2a.NewMessage(a2a.MessageRoleUser, p)
			m.TaskID = id
			if _, err := bob.SendMessage(ctx, &a2a.SendMessageRequest{Message: m}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob's decision: %v", err)
			}
			if got, err := alice.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || got.Status.State != a2a.TaskStateInputRequired {
				t.Errorf("alice's task after bob's tries: %v %s", err, jsonOf(got))
			}
		})
	}
}

// Bad requests of each binding get that binding's errors.
func TestV1BadRequests(t *testing.T) {
	srv := startServer(t)
	do := func(method, path, contentType, body string, auth bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer alice")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, method, path, contentType, body string
		auth                                  bool
		status                                int
		want                                  string
	}{
		{"jsonrpc: no credentials", "POST", "/a2a/v1", "application/json", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, false, 401, `"code":-32600`},
		{"jsonrpc: not json", "POST", "/a2a/v1", "application/json", `{nope`, true, 400, `"code":-32700`},
		{"jsonrpc: another type", "POST", "/a2a/v1", "text/plain", `{}`, true, 415, `"code":-32600`},
		{"jsonrpc: a2a+json", "POST", "/a2a/v1", "application/a2a+json", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, true, 200, `"code":-32001`},
		{"jsonrpc: 0.3's method", "POST", "/a2a/v1", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, true, 200, `"code":-32601`},
		{"jsonrpc: bad params", "POST", "/a2a/v1", "application/json", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`, true, 200, `"code":-32602`},
		{"jsonrpc: push", "POST", "/a2a/v1", "application/json", `{"jsonrpc":"2.0","id":1,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"x"}}`, true, 200, `"code":-32001`},
		{"jsonrpc: push without url", "POST", "/a2a/v1", "application/json", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"x"}}`, true, 200, `"code":-32001`},
		{"rest: push of no task", "GET", "/a2a/v1/rest/tasks/x/pushNotificationConfigs", "", "", true, 404, `"reason":"TASK_NOT_FOUND"`},
		{"rest: no credentials", "GET", "/a2a/v1/rest/tasks/x", "", "", false, 401, `"status":"UNAUTHENTICATED"`},
		{"rest: not found", "GET", "/a2a/v1/rest/tasks/x", "", "", true, 404, `not found`},
		{"rest: a stream of no task", "POST", "/a2a/v1/rest/tasks/x:subscribe", "", "", true, 404, `"reason":"TASK_NOT_FOUND"`},
		{"rest: a stream of no message", "POST", "/a2a/v1/rest/message:stream", "application/json", `{}`, true, 400, `"status":"INVALID_ARGUMENT"`},
		{"rest: not json", "POST", "/a2a/v1/rest/message:send", "application/json", `{nope`, true, 400, `"status":"INVALID_ARGUMENT"`},
		{"rest: another type", "POST", "/a2a/v1/rest/message:send", "text/plain", `{}`, true, 415, `"status":"INVALID_ARGUMENT"`},
		{"rest: bad params", "POST", "/a2a/v1/rest/message:send", "application/json", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}`, true, 400, `no parts`},
		{"rest: page size", "GET", "/a2a/v1/rest/tasks?pageSize=1000", "", "", true, 400, `pageSize`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(tc.method, tc.path, tc.contentType, tc.body, tc.auth)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s, want %d and %s", status, body, tc.status, tc.want)
			}
		})
	}
}

var _ = a2aagent.ProtocolVersion
