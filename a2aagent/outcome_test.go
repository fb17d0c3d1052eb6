package a2aagent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// The answer of a stream, as agents other than ours send it.
func TestOutcomeAnswer(t *testing.T) {
	fc := a2a.DataPart{Data: map[string]any{"id": "1", "name": "f"}, Metadata: map[string]any{metaType: typeFunctionCall}}
	fr := a2a.DataPart{Data: map[string]any{"id": "1", "name": "f", "response": map[string]any{}}, Metadata: map[string]any{metaType: typeFunctionResponse}}
	art := func(id string, append bool, meta map[string]any, parts ...a2a.Part) *a2a.TaskArtifactUpdateEvent {
		return &a2a.TaskArtifactUpdateEvent{TaskID: "t", Append: append, Metadata: meta, Artifact: &a2a.Artifact{ID: a2a.ArtifactID(id), Parts: parts}}
	}
	done := &a2a.TaskStatusUpdateEvent{TaskID: "t", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	for _, tc := range []struct {
		name   string
		events []a2a.Event
		text   string
		data   any
	}{
		{"a message", []a2a.Event{&a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.TextPart{Text: "hello"}}}}, "hello", nil},
		{"ADK's legacy artifacts: the partial one is dropped, the answer follows the last call", []a2a.Event{
			art("p", false, map[string]any{metaPartial: true}, a2a.TextPart{Text: "Let me"}),
			art("r", false, map[string]any{metaPartial: false}, a2a.TextPart{Text: "Let me check."}, fc),
			art("r", true, map[string]any{metaPartial: false}, fr, a2a.TextPart{Text: "It is sunny."}),
			art("p", false, map[string]any{metaPartial: true}, a2a.DataPart{Data: map[string]any{}}),
			done}, "It is sunny.", nil},
		{"text that streams", []a2a.Event{art("a", false, nil, a2a.TextPart{Text: "It is "}), art("a", true, nil, a2a.TextPart{Text: "sunny."}),
			art("a", true, nil, a2a.TextPart{Text: "hmm", Metadata: map[string]any{metaThought: true}}), done}, "It is sunny.", nil},
		{"a replaced artifact", []a2a.Event{art("a", false, nil, a2a.TextPart{Text: "draft"}), art("a", false, nil, a2a.TextPart{Text: "final"}), done}, "final", nil},
		{"the answer in the status", []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: "t", Final: true, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
			Message: &a2a.Message{Parts: a2a.ContentParts{a2a.TextPart{Text: "in the status"}}}}}}, "in the status", nil},
		{"data", []a2a.Event{art("o", false, nil, a2a.DataPart{Data: map[string]any{"n": 1.0}}), done}, "", map[string]any{"n": 1.0}},
		{"wrapped data", []a2a.Event{art("o", false, nil, a2a.DataPart{Data: map[string]any{"value": []any{"a"}}, Metadata: map[string]any{metaDataCompat: true}}), done}, "", []any{"a"}},
		{"a task snapshot replaces what came before", []a2a.Event{art("a", false, nil, a2a.TextPart{Text: "old"}),
			&a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Artifacts: []*a2a.Artifact{{ID: "b", Parts: a2a.ContentParts{a2a.TextPart{Text: "new"}}}}}}, "new", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o outcome
			for _, ev := range tc.events {
				if err := o.add(ev); err != nil {
					t.Fatal(err)
				}
			}
			if !o.final || o.state != a2a.TaskStateCompleted {
				t.Errorf("final %v, state %q", o.final, o.state)
			}
			data, ok := o.data()
			if got := o.text(); tc.data == nil && (got != tc.text || ok) {
				t.Errorf("text %q (data %v), want %q", got, data, tc.text)
			}
			if tc.data != nil && (!ok || jsonString(data) != jsonString(tc.data)) {
				t.Errorf("data %v, want %v", data, tc.data)
			}
		})
	}
	var o outcome
	if err := o.add(&a2a.Task{}); err == nil {
		t.Error("a task without an id was taken")
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{
		"Travel Agent": "travel_agent", "weather-desk v2": "weather-desk_v2", "123 go": "agent_123_go", "!!!": "agent_",
		"Ünïcode Bot": "n_code_bot",
	} {
		if got := toolName(in); got != want {
			t.Errorf("toolName(%q) = %q, want %q", in, got, want)
		}
	}
	if n := toolName(strings.Repeat("abc", 30)); len(n) != 64 {
		t.Errorf("a long name: %d bytes", len(n))
	}
}

// Conversations are remembered up to the bound, the least recently used
// forgotten first; a call waits for the one in progress on its
// conversation.
func TestConversations(t *testing.T) {
	cs := newConversations(2)
	ctx := context.Background()
	use := func(key, contextID string) *conversation {
		c, err := cs.acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if contextID != "" {
			c.contextID = contextID
		}
		cs.release(c)
		return c
	}
	use("a", "ctx-a")
	use("b", "ctx-b")
	use("a", "")      // a is the most recent
	use("c", "ctx-c") // b goes
	if c := use("b", ""); c.contextID != "" {
		t.Errorf("b was remembered: %q", c.contextID)
	}
	if c := use("c", ""); c.contextID != "ctx-c" {
		t.Errorf("c was forgotten")
	}
	held, _ := cs.acquire(ctx, "c")
	stop, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cs.acquire(stop, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("a call on a busy conversation: %v", err)
	}
	cs.release(held)
	if a, b := use("", "x"), use("", ""); a == b || b.contextID != "" {
		t.Error("calls with no conversation share one")
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
