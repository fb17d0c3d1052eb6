package a2aagent_test

// a2a-go's own client, in this process, against the tests' A2A server in
// another.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/toolnexus/toolnexus-go/a2aagent"
)

// bearer adds the user's token to each request.
type bearer struct {
	user string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.user)
	return b.base.RoundTrip(r)
}

func httpClient(user string) *http.Client {
	return &http.Client{Transport: bearer{user, http.DefaultTransport}}
}

// a2aClient resolves the card at base and returns a client of user.
func a2aClient(t *testing.T, base, user string) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(httpClient(user)))
	if err != nil {
		t.Fatal(err)
	}
	return c, card
}

func userText(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
}

// collect reads a stream to its end, or to its final event.
func collect(t *testing.T, events func(func(a2a.Event, error) bool)) []a2a.Event {
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

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// finalStatus returns the stream's last event, a final status update.
func finalStatus(t *testing.T, events []a2a.Event) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	st, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || !st.Final {
		t.Fatalf("the last event is %s, not a final status", jsonOf(events[len(events)-1]))
	}
	return st
}

// dataParts returns the data parts of the events' artifacts of adk_type typ.
func dataParts(events []a2a.Event, typ string) []a2a.DataPart {
	var out []a2a.DataPart
	for _, ev := range events {
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range au.Artifact.Parts {
				if dp, ok := p.(a2a.DataPart); ok && dp.Metadata["adk_type"] == typ {
					out = append(out, dp)
				}
			}
		}
	}
	return out
}

// streamedText joins the text of the events' artifacts, thoughts left out.
func streamedText(events []a2a.Event) string {
	var b strings.Builder
	for _, ev := range events {
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range au.Artifact.Parts {
				if tp, ok := p.(a2a.TextPart); ok && tp.Metadata["adk_thought"] == nil {
					b.WriteString(tp.Text)
				}
			}
		}
	}
	return b.String()
}

// The card says who the agent is, and a stream carries the run: the Task,
// working, each call and result as ADK's data parts, the text as it
// streams, and the final status with the usage; tasks/get then folds the
// same into one task, and the context goes on in the next message.
func TestA2AGoClientStream(t *testing.T) {
	srv := startServer(t)
	c, card := a2aClient(t, srv.URL, "alice")
	if card.Name != "Weather Desk" || !card.Capabilities.Streaming || card.URL != srv.URL+a2aagent.DefaultPath ||
		card.ProtocolVersion != a2aagent.LegacyProtocolVersion || card.PreferredTransport != a2a.TransportProtocolJSONRPC {
		t.Errorf("card %s", jsonOf(card))
	}
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.Name)
	}
	if strings.Join(skills, ",") != "Weather Desk,get_weather,send_email,hold,count" || !strings.Contains(card.Description, "get_weather") {
		t.Errorf("skills %v, description %q", skills, card.Description)
	}

	ctx := context.Background()
	events := collect(t, c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: userText("weather in Paris")}))
	task, ok := events[0].(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted || task.ID == "" || task.ContextID == "" {
		t.Fatalf("first event %s", jsonOf(events[0]))
	}
	if st, ok := events[1].(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateWorking || st.Final {
		t.Errorf("second event %s", jsonOf(events[1]))
	}
	for _, ev := range events {
		if info := ev.TaskInfo(); info.TaskID != task.ID || info.ContextID != task.ContextID {
			t.Errorf("event %s is not of task %s in context %s", jsonOf(ev), task.ID, task.ContextID)
		}
	}
	calls, results := dataParts(events, "function_call"), dataParts(events, "function_response")
	if len(calls) != 1 || calls[0].Data["name"] != "get_weather" || jsonOf(calls[0].Data["args"]) != `{"city":"Paris"}` ||
		calls[0].Metadata["adk_is_long_running"] != false {
		t.Errorf("calls %s", jsonOf(calls))
	}
	if len(results) != 1 || results[0].Data["id"] != calls[0].Data["id"] || jsonOf(results[0].Data["response"]) != `{"result":"sunny in Paris"}` {
		t.Errorf("results %s", jsonOf(results))
	}
	want := `Done: get_weather {"result":"sunny in Paris"}`
	if got := streamedText(events); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	textUpdates := 0
	for _, ev := range events {
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && au.Artifact.ID == a2a.ArtifactID(string(task.ID)+"-t1") {
			if textUpdates > 0 != au.Append {
				t.Errorf("text update %d: append %v", textUpdates, au.Append)
			}
			textUpdates++
		}
	}
	if textUpdates < 3 {
		t.Errorf("the text came in %d updates; it streams in pieces of 8 bytes", textUpdates)
	}
	st := finalStatus(t, events)
	usage, _ := st.Metadata["adk_usage_metadata"].(map[string]any)
	if st.Status.State != a2a.TaskStateCompleted || usage["totalTokenCount"].(float64) == 0 {
		t.Errorf("final status %s", jsonOf(st))
	}

	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 2 || got.Metadata["adk_usage_metadata"] == nil {
		t.Fatalf("tasks/get %s", jsonOf(got))
	}
	if a := got.Artifacts[1]; len(a.Parts) != 1 || a.Parts[0].(a2a.TextPart).Text != want {
		t.Errorf("the answer's artifact %s: the text is one part", jsonOf(a))
	}
	if a := got.Artifacts[0]; len(a.Parts) != 2 {
		t.Errorf("the first turn's artifact %s: a call and its result", jsonOf(a))
	}

	// message/send, in the same context: the thread remembers.
	next := userText("remember?")
	next.ContextID = task.ContextID
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: next})
	if err != nil {
		t.Fatal(err)
	}
	t2, ok := res.(*a2a.Task)
	if !ok || t2.Status.State != a2a.TaskStateCompleted || t2.ContextID != task.ContextID || t2.ID == task.ID {
		t.Fatalf("message/send %s", jsonOf(res))
	}
	if text := t2.Artifacts[len(t2.Artifacts)-1].Parts[0].(a2a.TextPart).Text; text != "You said 2 things: weather in Paris | remember?." {
		t.Errorf("the second task's answer %q", text)
	}
	// A thought is a text part marked adk_thought.
	events = collect(t, c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: userText("think")}))
	var thought, text string
	for _, ev := range events {
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range au.Artifact.Parts {
				if tp := p.(a2a.TextPart); tp.Metadata["adk_thought"] == true {
					thought += tp.Text
				} else {
					text += tp.Text
				}
			}
		}
	}
	if thought != "pondering" || text != "thought it over" {
		t.Errorf("thought %q, text %q", thought, text)
	}
}

// A running call's progress is a working status whose message says it in
// a sentence and carries it as a data part; the last report before the
// result is among them, and tasks/get ends completed all the same.
func TestA2AGoClientProgress(t *testing.T) {
	srv := startServer(t)
	c, _ := a2aClient(t, srv.URL, "alice")
	events := collect(t, c.SendStreamingMessage(context.Background(), &a2a.MessageSendParams{Message: userText("count to 5")}))
	var last *a2a.TaskStatusUpdateEvent
	var callID any
	for _, ev := range events {
		if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range au.Artifact.Parts {
				if dp, ok := p.(a2a.DataPart); ok && dp.Metadata["adk_type"] == "function_call" {
					callID = dp.Data["id"]
				}
				if dp, ok := p.(a2a.DataPart); ok && dp.Metadata["adk_type"] == "function_response" && last == nil {
					t.Errorf("the call's result came before any progress")
				}
			}
		}
		st, ok := ev.(*a2a.TaskStatusUpdateEvent)
		if !ok || st.Status.Message == nil || st.Status.State != a2a.TaskStateWorking {
			continue
		}
		if st.Final {
			t.Errorf("a progress status is final: %s", jsonOf(st))
		}
		last = st
	}
	if last == nil {
		t.Fatalf("no progress in %s", jsonOf(events))
	}
	parts := last.Status.Message.Parts
	if len(parts) != 2 || parts[0].(a2a.TextPart).Text != "count: 5 of 5, step 5" {
		t.Fatalf("the last progress %s", jsonOf(last))
	}
	dp := parts[1].(a2a.DataPart)
	if dp.Metadata["toolnexus_tool_progress"] != true || dp.Data["id"] != callID || dp.Data["name"] != "count" ||
		dp.Data["done"] != 5.0 || dp.Data["total"] != 5.0 || dp.Data["message"] != "step 5" {
		t.Errorf("the last progress's data %s (call %v)", jsonOf(dp), callID)
	}
	if st := finalStatus(t, events); st.Status.State != a2a.TaskStateCompleted {
		t.Errorf("final %s", jsonOf(st))
	}
}

// A call that needs approval ends the stream with input-required, ADK's
// confirmation call in the status; the follow-up on the same task carries
// the decisions; a decision for an unknown or decided call is refused.
func TestA2AGoClientApproval(t *testing.T) {
	srv := startServer(t)
	c, _ := a2aClient(t, srv.URL, "alice")
	ctx := context.Background()
	events := collect(t, c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: userText("email two")}))
	st := finalStatus(t, events)
	if st.Status.State != a2a.TaskStateInputRequired || st.Status.Message == nil {
		t.Fatalf("final status %s", jsonOf(st))
	}
	var ids []string
	for _, p := range st.Status.Message.Parts {
		if dp, ok := p.(a2a.DataPart); ok {
			args, _ := dp.Data["args"].(map[string]any)
			orig, _ := args["originalFunctionCall"].(map[string]any)
			if dp.Data["name"] != "adk_request_confirmation" || dp.Metadata["adk_is_long_running"] != true || orig["name"] != "send_email" || orig["id"] != dp.Data["id"] {
				t.Errorf("confirmation %s", jsonOf(dp))
			}
			ids = append(ids, dp.Data["id"].(string))
		}
	}
	if len(ids) != 2 || !strings.Contains(st.Status.Message.Parts[0].(a2a.TextPart).Text, "needs approval") {
		t.Fatalf("status message %s", jsonOf(st.Status.Message))
	}
	// The task, looked up while its run waits: its history holds the
	// question that started it.
	waiting, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: st.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	asked := func(task *a2a.Task) bool {
		if len(task.History) != 1 {
			return false
		}
		q := task.History[0]
		return q.Role == a2a.MessageRoleUser && q.TaskID == task.ID && q.ContextID == task.ContextID && q.ID != "" &&
			jsonOf(q.Parts) == jsonOf(a2a.ContentParts{a2a.TextPart{Text: "email two"}})
	}
	if waiting.Status.State != a2a.TaskStateInputRequired || !asked(waiting) {
		t.Errorf("tasks/get while the run waits: %s", jsonOf(waiting))
	}
	answer := func(id string, confirmed bool, text string) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{
			Data:     map[string]any{"id": id, "name": "adk_request_confirmation", "response": map[string]any{"confirmed": confirmed}},
			Metadata: map[string]any{"adk_type": "function_response"}})
		if text != "" {
			m.Parts = append(m.Parts, a2a.TextPart{Text: text})
		}
		m.TaskID, m.ContextID = st.TaskID, st.ContextID
		return m
	}
	// An unknown call: refused, and nothing changes.
	_, err = c.SendMessage(ctx, &a2a.MessageSendParams{Message: answer("no-such-call", true, "")})
	if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "no-such-call") {
		t.Errorf("a decision for an unknown call: %v", err)
	}
	// Only text: the task waits for decisions.
	m := userText("yes")
	m.TaskID = st.TaskID
	if _, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: m}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "function_response") {
		t.Errorf("a follow-up without decisions: %v", err)
	}
	// The first call, approved: the task waits for the second.
	events = collect(t, c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: answer(ids[0], true, "")}))
	st2 := finalStatus(t, events)
	if st2.Status.State != a2a.TaskStateInputRequired || st2.TaskID != st.TaskID || len(st2.Status.Message.Parts) != 2 {
		t.Fatalf("after one decision: %s", jsonOf(st2))
	}
	if first, ok := events[0].(*a2a.TaskStatusUpdateEvent); !ok || first.Status.State != a2a.TaskStateWorking {
		t.Errorf("a stream that goes on opens with %s", jsonOf(events[0]))
	}
	// The first call again: decided already.
	if _, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: answer(ids[0], true, "")}); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "decided already") {
		t.Errorf("a decision for a decided call: %v", err)
	}
	// The second, denied with a reason in text: the task completes.
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: answer(ids[1], false, "not bob")})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after both decisions: %s", jsonOf(task))
	}
	answerText := task.Artifacts[len(task.Artifacts)-1].Parts[0].(a2a.TextPart).Text
	if !strings.Contains(answerText, `send_email {"result":"sent to ann"}`) || !strings.Contains(answerText, "not bob") {
		t.Errorf("answer %q: ann's email was sent, bob's refused with the reason", answerText)
	}
	// The task, looked up: the turn of the calls, whose parts three
	// streams sent, and the answer.
	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Artifacts) != 2 || len(dataParts([]a2a.Event{&a2a.TaskArtifactUpdateEvent{Artifact: got.Artifacts[0]}}, "function_call")) != 2 ||
		len(dataParts([]a2a.Event{&a2a.TaskArtifactUpdateEvent{Artifact: got.Artifacts[0]}}, "function_response")) != 2 ||
		got.Artifacts[1].Parts[0].(a2a.TextPart).Text != answerText || !asked(got) {
		t.Errorf("tasks/get after the decisions %s", jsonOf(got))
	}
	// The denied call's response is marked denied, the other's is a
	// result: a client tells a denial from a failure.
	responses := map[string]any{} // by call id
	for _, dp := range dataParts([]a2a.Event{&a2a.TaskArtifactUpdateEvent{Artifact: got.Artifacts[0]}}, "function_response") {
		responses[dp.Data["id"].(string)] = dp.Data["response"]
	}
	if want := map[string]any{ids[0]: map[string]any{"result": "sent to ann"}, ids[1]: map[string]any{"error": "not bob", "denied": true}}; jsonOf(responses) != jsonOf(want) {
		t.Errorf("the calls' responses in tasks/get: %s, want %s", jsonOf(responses), jsonOf(want))
	}
	// The task is over: it takes no more messages.
	if _, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: answer(ids[1], true, "")}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("a message to a completed task: %v", err)
	}
}

// tasks/cancel stops the run and its tool, and the stream ends canceled.
func TestA2AGoClientCancel(t *testing.T) {
	srv := startServer(t)
	c, _ := a2aClient(t, srv.URL, "alice")
	ctx := context.Background()
	events := make(chan a2a.Event, 100)
	go func() {
		defer close(events)
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: userText("hold c1")}) {
			if err != nil {
				return
			}
			events <- ev
		}
	}()
	task := (<-events).(*a2a.Task)
	srv.next("started c1")
	// The task, looked up while its tool runs: working, its history the
	// question that started it.
	working, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || working.Status.State != a2a.TaskStateWorking || len(working.History) != 1 ||
		working.History[0].Role != a2a.MessageRoleUser || jsonOf(working.History[0].Parts) != jsonOf(a2a.ContentParts{a2a.TextPart{Text: "hold c1"}}) {
		t.Errorf("tasks/get while the tool runs: %s, %v", jsonOf(working), err)
	}
	got, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("tasks/cancel answered %s", jsonOf(got))
	}
	if line := srv.next("stopped c1"); !strings.Contains(line, "context canceled") {
		t.Errorf("the tool: %q", line)
	}
	var last a2a.Event
	for ev := range events {
		last = ev
	}
	if st, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCanceled || !st.Final {
		t.Errorf("the stream ended with %s", jsonOf(last))
	}
	if _, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID}); err != nil {
		t.Errorf("canceling a canceled task again: %v", err)
	}
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: userText("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: res.(*a2a.Task).ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("canceling a completed task: %v", err)
	}
}

// A client that drops its stream resubscribes: the task as it stands,
// then the rest of the run.
func TestA2AGoClientResubscribe(t *testing.T) {
	srv := startServer(t)
	c, _ := a2aClient(t, srv.URL, "alice")
	ctx, drop := context.WithCancel(context.Background())
	var task *a2a.Task
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: userText("hold r1")}) {
		if err != nil {
			t.Fatal(err)
		}
		if tk, ok := ev.(*a2a.Task); ok {
			task = tk
		}
		if len(dataParts([]a2a.Event{ev}, "function_call")) > 0 {
			break // the client goes away in the middle of the run
		}
	}
	drop()
	srv.next("started r1")
	done := make(chan []a2a.Event)
	first := make(chan a2a.Event, 1)
	go func() {
		var out []a2a.Event
		for ev, err := range c.ResubscribeToTask(context.Background(), &a2a.TaskIDParams{ID: task.ID}) {
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
	if !ok || snap.ID != task.ID || snap.Status.State != a2a.TaskStateWorking || len(snap.Artifacts) != 1 ||
		snap.Artifacts[0].Parts[0].(a2a.DataPart).Data["name"] != "hold" {
		t.Fatalf("the resubscribed stream opens with %s", jsonOf(snap))
	}
	srv.release("r1")
	events := <-done
	if r := dataParts(events, "function_response"); len(r) != 1 || jsonOf(r[0].Data["response"]) != `{"result":"released r1"}` {
		t.Errorf("results %s", jsonOf(r))
	}
	if st := finalStatus(t, events); st.Status.State != a2a.TaskStateCompleted {
		t.Errorf("final %s", jsonOf(st))
	}
	// A run that is over: its task, then its end.
	events = collect(t, c.ResubscribeToTask(context.Background(), &a2a.TaskIDParams{ID: task.ID}))
	if tk, ok := events[0].(*a2a.Task); !ok || len(events) != 2 || finalStatus(t, events).Status.State != a2a.TaskStateCompleted ||
		len(tk.Artifacts) != 2 || len(tk.Artifacts[0].Parts) != 2 {
		t.Errorf("resubscribing to a task that is over: %s", jsonOf(events))
	}
}

// Another user's task is not found, whatever is asked of it, and a
// request without credentials is refused.
func TestA2AGoClientOtherUser(t *testing.T) {
	srv := startServer(t)
	alice, _ := a2aClient(t, srv.URL, "alice")
	bob, _ := a2aClient(t, srv.URL, "bob")
	ctx := context.Background()
	res, err := alice.SendMessage(ctx, &a2a.MessageSendParams{Message: userText("email carol")})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("alice's task %s", jsonOf(task))
	}
	if _, err := bob.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's tasks/get: %v", err)
	}
	if _, err := bob.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's tasks/cancel: %v", err)
	}
	for _, err := range bob.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: task.ID}) {
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob's tasks/resubscribe: %v", err)
		}
		break
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{
		Data:     map[string]any{"id": "x", "name": "adk_request_confirmation", "response": map[string]any{"confirmed": true}},
		Metadata: map[string]any{"adk_type": "function_response"}})
	m.TaskID = task.ID
	if _, err := bob.SendMessage(ctx, &a2a.MessageSendParams{Message: m}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's decision: %v", err)
	}
	// Bob's message in alice's context starts bob's own thread.
	m = userText("remember?")
	m.ContextID = task.ContextID
	res, err = bob.SendMessage(ctx, &a2a.MessageSendParams{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.(*a2a.Task).Artifacts[0].Parts[0].(a2a.TextPart).Text; text != "You said 1 things: remember?." {
		t.Errorf("bob's thread of alice's context id holds %q", text)
	}
	if got, err := alice.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("alice's task after bob's tries: %v %s", err, jsonOf(got))
	}
	anon, err := a2aclient.NewFromCard(ctx, &a2a.AgentCard{URL: srv.URL + "/a2a", PreferredTransport: a2a.TransportProtocolJSONRPC},
		a2aclient.WithJSONRPCTransport(&http.Client{Timeout: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("no credentials: %v", err)
	}
}

// A typed agent's answer is a data artifact.
func TestA2AGoClientTyped(t *testing.T) {
	srv := startServer(t)
	c, card := a2aClient(t, srv.URL+"/typed", "alice")
	if card.Name != "forecaster" || card.URL != srv.URL+"/typed/a2a" || card.DefaultOutputModes[0] != "application/json" {
		t.Errorf("card %s", jsonOf(card))
	}
	res, err := c.SendMessage(context.Background(), &a2a.MessageSendParams{Message: userText("forecast for Oslo")})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	last := task.Artifacts[len(task.Artifacts)-1]
	if task.Status.State != a2a.TaskStateCompleted || last.Name != "output" || jsonOf(last.Parts[0].(a2a.DataPart).Data) != `{"celsius":21,"city":"Oslo"}` {
		t.Errorf("task %s", jsonOf(task))
	}
}
