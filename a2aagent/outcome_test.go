package a2aagent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

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
		c, err := cs.acquire(ctx, ck(key))
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
	held, _ := cs.acquire(ctx, ck("c"))
	stop, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cs.acquire(stop, ck("c")); !errors.Is(err, context.Canceled) {
		t.Errorf("a call on a busy conversation: %v", err)
	}
	cs.release(held)
	if a, b := use("", "x"), use("", ""); a == b || b.contextID != "" {
		t.Error("calls with no conversation share one")
	}
}

// ck is the key of a conversation of one user.
func ck(conversation string) convKey {
	if conversation == "" {
		return convKey{}
	}
	return convKey{user: "u", conversation: conversation}
}

// A conversation a call holds, or waits for, is never forgotten, however
// many others come and go: the next call of it waits for the one in
// progress and gets the same conversation, its contextId included. Once
// idle, it is forgotten as the bound says.
func TestConversationsInUseStay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := newConversations(1)
		ctx := t.Context()
		first, _ := cs.acquire(ctx, ck("a"))
		for _, other := range []string{"b", "c"} { // each would evict a
			c, _ := cs.acquire(ctx, ck(other))
			cs.release(c)
		}
		got := make(chan *conversation)
		go func() {
			c, _ := cs.acquire(ctx, ck("a"))
			got <- c
		}()
		synctest.Wait()
		select {
		case c := <-got:
			t.Fatalf("a second call of a holds a conversation (%p, the first's %p) while the first holds its own", c, first)
		default:
		}
		first.contextID = "ctx-a"
		cs.release(first)
		second := <-got
		if second != first || second.contextID != "ctx-a" {
			t.Errorf("the second call of a got %p (contextId %q); want the first's %p (ctx-a)", second, second.contextID, first)
		}
		cs.release(second)
		if n := cs.lru.Len(); n != 1 {
			t.Errorf("%d conversations remembered; want 1", n)
		}
		c, _ := cs.acquire(ctx, ck("d")) // a is idle: it goes
		cs.release(c)
		if c, _ := cs.acquire(ctx, ck("a")); c == first {
			t.Error("an idle conversation over the bound was kept")
		} else {
			cs.release(c)
		}
	})
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
