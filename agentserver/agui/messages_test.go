package agui_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// get sends a GET as the env's user and returns its status and body.
func (e *env) get(path string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.HTTP.URL+path, nil)
	if e.user != "" {
		req.Header.Set("X-User", e.user)
	}
	resp, err := e.HTTP.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b json.RawMessage
	json.NewDecoder(resp.Body).Decode(&b)
	return resp.StatusCode, string(b)
}

// GET …/messages?threadId=: the thread's stored history as a
// MESSAGES_SNAPSHOT, as the stream shows it: reasoning, the turn's
// assistant message with its text and tool calls, a tool message per
// result (a denial as an error marked denied). Another user's thread, and a new one,
// have no messages.
func TestMessages(t *testing.T) {
	e := newEnv(t, servertest.NeedsOslo, byHeader)
	e.Model.Enqueue(
		fake.Parts(&genai.Part{Text: "Checking the sky.", Thought: true}, genai.NewPartFromText("Let me look."),
			&genai.Part{FunctionCall: servertest.Call("Oslo")}, &genai.Part{FunctionCall: servertest.Call("Paris")}),
		fake.Text("Paris: sunny."),
	)
	r := e.post("/agui", runInput("t1", "r1", "m1", "Weather in Oslo and Paris?"))
	interrupts := r.last()["outcome"].(map[string]any)["interrupts"].([]any)
	id := interrupts[0].(map[string]any)["id"].(string)
	r = e.post("/agui", map[string]any{"threadId": "t1", "runId": "r2", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"approved": false, "reason": "not today"}}}})
	if r.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("the denial: %v", r.types())
	}

	status, body := e.get("/agui/messages?threadId=t1")
	var got struct {
		Type     string
		Messages []agui.Message
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 || got.Type != "MESSAGES_SNAPSHOT" {
		t.Fatalf("GET messages = %d %v %s", status, err, body)
	}
	call := func(id, city string) agui.ToolCall {
		c := agui.ToolCall{ID: id, Type: "function"}
		c.Function.Name, c.Function.Arguments = "get_weather", `{"city":"`+city+`"}`
		return c
	}
	// The denial's text is the agent's.
	denial := got.Messages[3].Content
	want := []agui.Message{
		{ID: "h0", Role: "user", Content: "Weather in Oslo and Paris?"},
		{ID: "h1-r", Role: "reasoning", Content: "Checking the sky."},
		{ID: "h1", Role: "assistant", Content: "Let me look.", ToolCalls: []agui.ToolCall{call("h1-2", "Oslo"), call("h1-3", "Paris")}},
		{ID: "h1-2-result", Role: "tool", ToolCallID: "h1-2", Content: denial, Error: "not today", Metadata: json.RawMessage(`{"isError":true,"denied":true}`)},
		{ID: "h1-3-result", Role: "tool", ToolCallID: "h1-3", Content: `{"city":"Paris","sky":"sunny"}`},
		{ID: "h3", Role: "assistant", Content: "Paris: sunny."},
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" || denial != "not today" {
		t.Errorf("messages (-want +got):\n%s\ndenial %q", diff, denial)
	}
	for _, path := range []string{"/agui/messages?threadId=new"} {
		if status, body := e.get(path); status != 200 || body != `{"type":"MESSAGES_SNAPSHOT","messages":[]}` {
			t.Errorf("GET %s = %d %s", path, status, body)
		}
	}
	bob := *e
	bob.user = "bob"
	if status, body := bob.get("/agui/messages?threadId=t1"); status != 200 || body != `{"type":"MESSAGES_SNAPSHOT","messages":[]}` {
		t.Errorf("bob's GET = %d %s", status, body)
	}
	if status, _ := e.get("/agui/messages"); status != 400 {
		t.Errorf("GET without threadId = %d, want 400", status)
	}
}

// A call the user denied is a tool message with metadata {isError,
// denied} in the messages a server restarted on the same store reads
// back, as in the stream; a tool's failure is an error without the mark.
func TestMessagesDenied(t *testing.T) {
	store := session.NewMemory()
	onStore := func(c *agentserver.Config) { c.Store = store }
	e := newEnv(t, servertest.NeedsOslo, byHeader, onStore)
	e.Model.Enqueue(fake.Calls(servertest.Call("Oslo"), fake.Call("no_such_tool", nil)), fake.Text("Not Oslo, then."))
	r := e.post("/agui", runInput("t1", "r1", "m1", "Weather in Oslo?"))
	interrupts := r.last()["outcome"].(map[string]any)["interrupts"].([]any)
	id := interrupts[0].(map[string]any)["id"].(string)
	r = e.post("/agui", map[string]any{"threadId": "t1", "runId": "r2", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"approved": false, "reason": "not today"}}}})
	var live map[string]any
	for _, ev := range r.events {
		if ev["type"] == "TOOL_CALL_RESULT" && ev["toolCallId"] == id {
			live = ev
		}
	}
	if live == nil || !cmp.Equal(live["metadata"], map[string]any{"isError": true, "denied": true}) {
		t.Fatalf("the denial live: %v", r.events)
	}

	restarted := newEnv(t, servertest.NeedsOslo, byHeader, onStore)
	status, body := restarted.get("/agui/messages?threadId=t1")
	var got struct{ Messages []agui.Message }
	if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 || len(got.Messages) != 5 {
		t.Fatalf("GET messages = %d %v %s", status, err, body)
	}
	unknown := `unknown tool "no_such_tool"; available tools: get_weather`
	want := []agui.Message{
		{ID: "h1-0-result", Role: "tool", ToolCallID: "h1-0", Content: "not today", Error: "not today", Metadata: json.RawMessage(`{"isError":true,"denied":true}`)},
		{ID: "h1-1-result", Role: "tool", ToolCallID: "h1-1", Content: unknown, Error: unknown, Metadata: json.RawMessage(`{"isError":true}`)},
	}
	if diff := cmp.Diff(want, got.Messages[2:4]); diff != "" {
		t.Errorf("the answers after a restart (-want +got):\n%s", diff)
	}
}
