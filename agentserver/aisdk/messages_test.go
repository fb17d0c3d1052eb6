package aisdk_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// GET {id}/messages: the chat's stored history as UIMessage[], a run's
// turns in one assistant message; tool parts in the state their answers
// give, an approved call with its approval. Another user's chat, and a
// new one, are empty.
func TestMessages(t *testing.T) {
	e := newEnv(t, servertest.NeedsOslo, byHeader)
	e.Model.Enqueue(
		fake.Parts(&genai.Part{Text: "Checking the sky.", Thought: true}, genai.NewPartFromText("Let me look."),
			&genai.Part{FunctionCall: servertest.Call("Oslo")}, &genai.Part{FunctionCall: servertest.Call("Paris")}),
		fake.Text("Oslo: sunny. Paris: sunny."),
	)
	ids := map[string]string{} // call ids by city
	calls := func(r *reply) {
		for _, c := range r.chunks {
			if c["type"] == "tool-input-available" {
				ids[c["input"].(map[string]any)["city"].(string)] = c["toolCallId"].(string)
			}
		}
	}
	r := e.do("POST", "/api/chat", chatBody("c1", "m1", "Weather in Oslo and Paris?"))
	calls(r)
	decide := `{"id":"c1","messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-get_weather","toolCallId":"` + ids["Oslo"] +
		`","state":"approval-responded","input":{"city":"Oslo"},"approval":{"id":"` + ids["Oslo"] + `","approved":true}}]}]}`
	if r := e.do("POST", "/api/chat", decide); r.status != 200 {
		t.Fatalf("the approval = %d %s", r.status, r.body)
	}
	e.Model.Enqueue(fake.Calls(servertest.Call("Tokyo")), fake.Text("No idea."))
	e.do("POST", "/api/chat", chatBody("c1", "m2", "And Tokyo?"))

	r = e.do("GET", "/api/chat/c1/messages", "")
	var got []aisdk.UIMessage
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET messages = %d %v %s", r.status, err, r.body)
	}
	weather := func(id, city string) aisdk.UIPart {
		return aisdk.UIPart{Type: "tool-get_weather", ToolCallID: id, State: "output-available",
			Input: json.RawMessage(`{"city":"` + city + `"}`), Output: json.RawMessage(`{"city":"` + city + `","sky":"sunny"}`)}
	}
	osloPart := weather("h1-2", "Oslo")
	osloPart.Approval = &aisdk.Approval{ID: "h1-2", Approved: true}
	want := []aisdk.UIMessage{
		{ID: "h0", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "Weather in Oslo and Paris?", State: "done"}}},
		{ID: "h1", Role: "assistant", Parts: []aisdk.UIPart{
			{Type: "step-start"},
			{Type: "reasoning", Text: "Checking the sky.", State: "done"},
			{Type: "text", Text: "Let me look.", State: "done"},
			osloPart, weather("h1-3", "Paris"),
			{Type: "step-start"},
			{Type: "text", Text: "Oslo: sunny. Paris: sunny.", State: "done"},
		}},
		{ID: "h4", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "And Tokyo?", State: "done"}}},
		{ID: "h5", Role: "assistant", Parts: []aisdk.UIPart{
			{Type: "step-start"}, weather("h5-0", "Tokyo"), {Type: "step-start"}, {Type: "text", Text: "No idea.", State: "done"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	for _, path := range []string{"/api/chat/new/messages"} {
		if r := e.do("GET", path, ""); r.status != 200 || r.body != "[]\n" {
			t.Errorf("GET %s = %d %q, want []", path, r.status, r.body)
		}
	}
	if r := e.doAs("bob", "GET", "/api/chat/c1/messages", ""); r.status != 200 || r.body != "[]\n" {
		t.Errorf("bob's GET = %d %q, want []", r.status, r.body)
	}
}

// A page reloaded while a run waits for approval loads the run's question
// with the stored messages (the answer comes with the resumed stream);
// once the run is over, the question keeps its id, answered.
func TestMessagesRunInProgress(t *testing.T) {
	e := newEnv(t, servertest.NeedsOslo, byHeader)
	e.Model.Enqueue(fake.Text("Hello."))
	e.do("POST", "/api/chat", chatBody("c1", "m1", "Hi"))
	e.Model.Enqueue(fake.Calls(servertest.Call("Oslo")), fake.Text("Oslo: sunny."))
	r := e.do("POST", "/api/chat", chatBody("c1", "m2", "Weather in Oslo?"))
	callID := approvalRequest(t, r)
	load := func(user string) []aisdk.UIMessage {
		t.Helper()
		r := e.doAs(user, "GET", "/api/chat/c1/messages", "")
		var got []aisdk.UIMessage
		if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != http.StatusOK {
			t.Fatalf("GET messages = %d %v %s", r.status, err, r.body)
		}
		return got
	}
	got := load("")
	want := aisdk.UIMessage{ID: "h2", Role: "user", Parts: []aisdk.UIPart{{Type: "text", Text: "Weather in Oslo?", State: "done"}}}
	if len(got) != 3 || !cmp.Equal(got[2], want) {
		t.Fatalf("the messages while the run waits: %+v", got)
	}
	if other := load("bob"); len(other) != 0 {
		t.Errorf("bob's chat c1: %+v", other)
	}
	decide := `{"id":"c1","messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-get_weather","toolCallId":"` + callID +
		`","state":"approval-responded","input":{"city":"Oslo"},"approval":{"id":"` + callID + `","approved":true}}]}]}`
	if r := e.do("POST", "/api/chat", decide); r.status != 200 {
		t.Fatalf("the approval = %d %s", r.status, r.body)
	}
	got = load("")
	if len(got) != 4 || !cmp.Equal(got[2], want) || got[3].Role != "assistant" {
		t.Errorf("the messages once the run is over: %+v", got)
	}
}

// A call the user denied is output-denied, with its reason, in the
// messages a server restarted on the same store reads back, and a
// tool's failure stays output-error.
func TestMessagesDenied(t *testing.T) {
	store := session.NewMemory()
	onStore := func(c *agentserver.Config) { c.Store = store }
	e := newEnv(t, servertest.NeedsOslo, byHeader, onStore)
	e.Model.Enqueue(fake.Calls(servertest.Call("Oslo"), fake.Call("no_such_tool", nil)), fake.Text("Not Oslo, then."))
	r := e.do("POST", "/api/chat", chatBody("c1", "m1", "Weather in Oslo?"))
	callID := approvalRequest(t, r)
	deny := `{"id":"c1","messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-get_weather","toolCallId":"` + callID +
		`","state":"approval-responded","input":{"city":"Oslo"},"approval":{"id":"` + callID + `","approved":false,"reason":"not today"}}]}]}`
	if r := e.do("POST", "/api/chat", deny); r.status != 200 || !slices.Contains(r.types(), "tool-output-denied") {
		t.Fatalf("the denial = %d %s", r.status, r.body)
	}

	restarted := newEnv(t, servertest.NeedsOslo, byHeader, onStore)
	r = restarted.do("GET", "/api/chat/c1/messages", "")
	var got []aisdk.UIMessage
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != http.StatusOK {
		t.Fatalf("GET messages = %d %v %s", r.status, err, r.body)
	}
	if len(got) != 2 || len(got[1].Parts) != 5 {
		t.Fatalf("messages = %+v", got)
	}
	want := []aisdk.UIPart{
		{Type: "tool-get_weather", ToolCallID: "h1-0", State: "output-denied", Input: json.RawMessage(`{"city":"Oslo"}`),
			Approval: &aisdk.Approval{ID: "h1-0", Reason: "not today"}},
		{Type: "tool-no_such_tool", ToolCallID: "h1-1", State: "output-error", Input: json.RawMessage(`{}`),
			ErrorText: `unknown tool "no_such_tool"; available tools: get_weather`},
	}
	if diff := cmp.Diff(want, got[1].Parts[1:3]); diff != "" {
		t.Errorf("the calls after a restart (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.body, `"approval":{"id":"h1-0","approved":false,"reason":"not today"}`) {
		t.Errorf("the denied part's JSON: %s", r.body)
	}
}

// approvalRequest returns the toolCallId of the reply's last
// tool-approval-request, and fails the test when it has none.
func approvalRequest(t *testing.T, r *reply) string {
	t.Helper()
	var callID string
	for _, c := range r.chunks {
		if c["type"] == "tool-approval-request" {
			callID = c["toolCallId"].(string)
		}
	}
	if callID == "" {
		t.Fatalf("no approval request: %s", r.body)
	}
	return callID
}
