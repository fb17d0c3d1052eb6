package agentserver_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func locationTool() agentserver.ToolDecl {
	return agentserver.ToolDecl{Name: "get_location", Description: "Where the user is, from the browser",
		Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"precision": {Type: "string", Enum: []any{"city", "exact"}}}}}
}

// A browser tool joins the agent's tools for the run: the model sees its
// declaration, its call pauses the run, and the result the next request
// carries answers it; the loop never runs it.
func TestBrowserToolRoundTrip(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(fake.Call("get_location", map[string]any{"precision": "city"})),
		fake.Calls(call("Lyon")), fake.Text("Sunny in Lyon."))

	first := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather here?", Tools: []agentserver.ToolDecl{locationTool()}})
	if diff := cmp.Diff([]string{"open", "start", "step", "tool-call", "pause"}, first.kinds()); diff != "" {
		t.Fatalf("first response (-want +got):\n%s", diff)
	}
	p := first.last().Pending[0]
	if p.Kind != agentserver.WaitBrowser || p.Call.Name != "get_location" || first.of(agentserver.KindToolCall)[0].Call.Wait != agentserver.WaitBrowser {
		t.Errorf("pending %+v", p)
	}
	var names []string
	for _, d := range h.model.Requests()[0].Tools[0].FunctionDeclarations {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"get_weather", "get_location"}, names); diff != "" {
		t.Errorf("declared tools (-want +got):\n%s", diff)
	}

	// Results for calls that do not wait (the past) are ignored; the one
	// for the pending call answers it.
	second := h.post(bg, "alice", testRequest{Thread: "t1", Results: []agentserver.Decision{
		{CallID: "run_old-c0-0", Output: json.RawMessage(`{"city":"Paris"}`)},
		{CallID: p.Call.ID, Output: json.RawMessage(`{"city":"Lyon"}`)},
	}})
	want := []string{"open", "decision", "tool-result", "step-end", "step", "tool-call", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if diff := cmp.Diff(want, second.kinds()); diff != "" {
		t.Fatalf("second response (-want +got):\n%s", diff)
	}
	if r := second.of(agentserver.KindToolResult)[0].Result; string(r.Output) != `{"city":"Lyon"}` {
		t.Errorf("browser result %+v", r)
	}
	sent := requestText(h.model.Requests()[1])
	if last := sent[len(sent)-1]; last != `user: response get_location{"result":{"city":"Lyon"}}` {
		t.Errorf("the model read %q", last)
	}
}

// A browser tool's error reaches the model as the call's error, not as a
// denial.
func TestBrowserToolError(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(fake.Call("get_location", nil)), fake.Text("I could not find you."))
	first := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather here?", Tools: []agentserver.ToolDecl{locationTool()}})
	id := first.last().Pending[0].Call.ID
	bad := h.post(bg, "alice", testRequest{Thread: "t1", Results: []agentserver.Decision{{CallID: id}}})
	if bad.status != 400 || bad.errorCode() != "bad_decision" {
		t.Errorf("a result with neither output nor error: %d %s", bad.status, bad.body)
	}
	second := h.post(bg, "alice", testRequest{Thread: "t1", Results: []agentserver.Decision{{CallID: id, Error: "permission denied by the user"}}})
	r := second.of(agentserver.KindToolResult)[0].Result
	if r.Error != "permission denied by the user" || r.Denied {
		t.Errorf("result %+v", r)
	}
	sent := requestText(h.model.Requests()[1])
	if last := sent[len(sent)-1]; !strings.Contains(last, `"error":"permission denied by the user"`) {
		t.Errorf("the model read %q", last)
	}
}

func schemaOf(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// Browser tools that could not be declared to Gemini, or that break a
// limit, refuse the request before anything runs.
func TestBadBrowserTools(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.MaxTools = 3 }})
	many := []agentserver.ToolDecl{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	for _, tc := range []struct {
		name  string
		tools []agentserver.ToolDecl
		code  string
	}{
		{"a name Gemini refuses", []agentserver.ToolDecl{{Name: "get location"}}, "bad_tool"},
		{"an empty name", []agentserver.ToolDecl{{Name: ""}}, "bad_tool"},
		{"a name of the agent's", []agentserver.ToolDecl{{Name: "get_weather"}}, "bad_tool"},
		{"twice the same name", []agentserver.ToolDecl{{Name: "x"}, {Name: "x"}}, "bad_tool"},
		{"a schema that is not an object", []agentserver.ToolDecl{{Name: "x", Parameters: &jsonschema.Schema{Type: "string"}}}, "bad_tool"},
		{"a schema that cannot compile", []agentserver.ToolDecl{{Name: "x", Parameters: &jsonschema.Schema{Type: "object", Ref: "#/nowhere"}}}, "bad_tool"},
		{"too many", many, "too_many_tools"},
		// Issue 32: $defs that each refer twice to the one before.
		{"a schema expanding 14 levels", []agentserver.ToolDecl{{Name: "x", Parameters: schemaOf(t, schematest.Doubling(14))}}, "schema_too_large"},
		{"a schema expanding 16 levels", []agentserver.ToolDecl{{Name: "x", Parameters: schemaOf(t, schematest.Doubling(16))}}, "schema_too_large"},
	} {
		resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Hi", Tools: tc.tools})
		if resp.status != 400 || resp.errorCode() != tc.code {
			t.Errorf("%s: %d %s, want 400 %s", tc.name, resp.status, resp.body, tc.code)
		}
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
	if got := h.stored("alice", "t1"); got != nil {
		t.Errorf("the thread was written: %v", got)
	}
	// The refusal of a schema over the budget is matchable as both.
	_, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: genai.NewContentFromText("Hi", genai.RoleUser),
		Tools: []agentserver.ToolDecl{{Name: "x", Parameters: schemaOf(t, schematest.Doubling(16))}}})
	if !errors.Is(err, agentserver.ErrBadRequest) || !errors.Is(err, toolset.ErrSchemaTooLarge) {
		t.Errorf("Submit(a schema expanding 16 levels) = %v; want ErrBadRequest and toolset.ErrSchemaTooLarge", err)
	}
}
