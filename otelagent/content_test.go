package otelagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genai"
)

// contentKeys are the attributes that hold content.
var contentKeys = []string{
	"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
	"gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
}

// runWithContent runs one tool call and an answer with a system
// instruction, and returns the spans.
func runWithContent(t *testing.T, opts ...otelagent.Option) []sdktrace.ReadOnlySpan {
	t.Helper()
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		GenerateConfig: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("Answer briefly.", genai.RoleUser),
			Tools:             []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		},
		Observer: tel.observer(srv, opts...)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny <b>&</b> warm."))
	if _, err := a.Run(context.Background(), user("Weather in Paris?")); err != nil {
		t.Fatal(err)
	}
	return tel.ended(t)
}

// Content is recorded only when asked for, by option or by environment;
// the option wins over the environment.
func TestCaptureContentSwitch(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		opts []otelagent.Option
		want bool
	}{
		{name: "default", want: false},
		{name: "option on", opts: []otelagent.Option{otelagent.WithCaptureContent(true)}, want: true},
		{name: "env true", env: "true", want: true},
		{name: "env TRUE", env: "TRUE", want: true},
		{name: "env false", env: "false", want: false},
		{name: "env junk", env: "yes", want: false},
		{name: "option off beats env", env: "true", opts: []otelagent.Option{otelagent.WithCaptureContent(false)}, want: false},
		{name: "option on beats env", env: "false", opts: []otelagent.Option{otelagent.WithCaptureContent(true)}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(otelagent.CaptureContentEnv, tc.env)
			found := map[string]bool{}
			for _, s := range runWithContent(t, tc.opts...) {
				for _, k := range contentKeys {
					if strAttr(s, k) != "" {
						found[k] = true
					}
				}
			}
			for _, k := range contentKeys {
				if found[k] != tc.want {
					t.Errorf("%s recorded: %v, want %v", k, found[k], tc.want)
				}
			}
		})
	}
}

// Captured content has the shapes of the conventions' JSON schemas.
func TestCapturedContent(t *testing.T) {
	spans := runWithContent(t, otelagent.WithCaptureContent(true))
	calls := named(spans, "generate_content "+model)
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	// The second call sends the question, the model's call and the tool's
	// answer; what it receives is the final text.
	checkJSON(t, "second call's gen_ai.input.messages", strAttr(calls[1], "gen_ai.input.messages"), `[
		{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
		{"role": "assistant", "parts": [{"type": "tool_call", "id": "<id>", "name": "get_weather", "arguments": {"city": "Paris"}}]},
		{"role": "tool", "parts": [{"type": "tool_call_response", "id": "<id>", "response": {"result": "sunny in Paris"}}]}
	]`)
	checkJSON(t, "second call's gen_ai.output.messages", strAttr(calls[1], "gen_ai.output.messages"), `[
		{"role": "assistant", "parts": [{"type": "text", "content": "Sunny <b>&</b> warm."}], "finish_reason": "stop"}
	]`)
	checkJSON(t, "first call's gen_ai.output.messages", strAttr(calls[0], "gen_ai.output.messages"), `[
		{"role": "assistant", "parts": [{"type": "tool_call", "id": "<id>", "name": "get_weather", "arguments": {"city": "Paris"}}], "finish_reason": "tool_call"}
	]`)
	checkJSON(t, "gen_ai.system_instructions", strAttr(calls[0], "gen_ai.system_instructions"),
		`[{"type": "text", "content": "Answer briefly."}]`)
	checkJSON(t, "gen_ai.tool.definitions", strAttr(calls[0], "gen_ai.tool.definitions"), `[
		{"type": "google_search", "name": "google_search"},
		{"type": "function", "name": "get_weather", "description": "Current weather for a city"}
	]`)
	if !strings.Contains(strAttr(calls[1], "gen_ai.output.messages"), "<b>&</b>") {
		t.Errorf("output messages are HTML-escaped: %s", strAttr(calls[1], "gen_ai.output.messages"))
	}

	tool := named(spans, "execute_tool get_weather")[0]
	checkJSON(t, "gen_ai.tool.call.arguments", strAttr(tool, "gen_ai.tool.call.arguments"), `{"city": "Paris"}`)
	checkJSON(t, "gen_ai.tool.call.result", strAttr(tool, "gen_ai.tool.call.result"), `"sunny in Paris"`)

	runSpan := named(spans, "invoke_agent")[0]
	checkJSON(t, "run's gen_ai.input.messages", strAttr(runSpan, "gen_ai.input.messages"),
		`[{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]`)
	checkJSON(t, "run's gen_ai.output.messages", strAttr(runSpan, "gen_ai.output.messages"), `[
		{"role": "assistant", "parts": [{"type": "text", "content": "Sunny <b>&</b> warm."}], "finish_reason": "stop"}
	]`)
}

// checkJSON compares the JSON got with want, where the string "<id>"
// in want matches any non-empty string.
func checkJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("%s is not JSON (%v): %q", what, err, got)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want for %s: %v", what, err)
	}
	anyID := cmp.FilterValues(func(a, b string) bool { return a == "<id>" || b == "<id>" },
		cmp.Comparer(func(a, b string) bool { return a != "" && b != "" }))
	if diff := cmp.Diff(w, g, anyID); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// Parts other than text and calls convert too: thoughts, inline data,
// file references, code; a part with only a thought signature is left out.
func TestCapturedParts(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Observer: tel.observer(srv, otelagent.WithCaptureContent(true))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Parts(
		&genai.Part{Text: "pondering", Thought: true},
		&genai.Part{ExecutableCode: &genai.ExecutableCode{Language: genai.LanguagePython, Code: "print(1)"}},
		&genai.Part{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1"}},
		&genai.Part{Text: "one"},
	))
	input := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{
		{Text: "look"},
		{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}}},
		{FileData: &genai.FileData{MIMEType: "application/pdf", FileURI: "gs://bucket/doc.pdf"}},
	}}}
	if _, err := a.Run(context.Background(), input); err != nil {
		t.Fatal(err)
	}
	c := named(tel.ended(t), "generate_content "+model)[0]
	checkJSON(t, "gen_ai.input.messages", strAttr(c, "gen_ai.input.messages"), `[{"role": "user", "parts": [
		{"type": "text", "content": "look"},
		{"type": "blob", "mime_type": "image/png", "modality": "image", "content": "AQID"},
		{"type": "uri", "mime_type": "application/pdf", "modality": "application", "uri": "gs://bucket/doc.pdf"}
	]}]`)
	checkJSON(t, "gen_ai.output.messages", strAttr(c, "gen_ai.output.messages"), `[{"role": "assistant", "parts": [
		{"type": "reasoning", "content": "pondering"},
		{"type": "executable_code", "language": "PYTHON", "code": "print(1)"},
		{"type": "code_execution_result", "outcome": "OUTCOME_OK", "output": "1"},
		{"type": "text", "content": "one"}
	], "finish_reason": "stop"}]`)
}
