package a2aagent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
)

// eventRecords are records of every kind the translator turns into
// events, with the values that change their JSON: thoughts, calls that
// wait, results that failed or are empty, progress with and without a
// total and a message, pauses of both kinds, runs that end every way,
// typed answers that are objects and that are not, text that needs
// escaping.
func eventRecords() []agentserver.Record {
	at := time.Date(2026, 12, 1, 13, 5, 7, 123456789, time.FixedZone("X", 3600))
	call := &agentserver.Call{ID: "run_X-c0-0", Name: "get_weather", Args: json.RawMessage(`{ "city": "Paris",
		"days": [1, 2.5, 1e21, 1e-7], "deep": {"b": null, "a": true} }`)}
	browser := &agentserver.Call{ID: "run_X-c0-1", Name: "pick_file", Args: json.RawMessage(`{}`), Wait: agentserver.WaitBrowser}
	usage := agent.Usage{PromptTokens: 20, CandidatesTokens: 5, ThoughtsTokens: 3, CachedTokens: 2, ToolUsePromptTokens: 1, TotalTokens: 31}
	return []agentserver.Record{
		{Kind: agentserver.KindStart, Time: at},
		{Kind: agentserver.KindText, Text: "Sunny in P"},
		{Kind: agentserver.KindText, Text: "quotes \" \\ tabs \t new\nlines <b>&amp;</b> \u2028 \x01 é 世界 \xff"},
		{Kind: agentserver.KindThought, Text: "thinking…"},
		{Kind: agentserver.KindThought, Turn: 2, Text: ""},
		{Kind: agentserver.KindToolCall, Call: call},
		{Kind: agentserver.KindToolCall, Call: browser},
		{Kind: agentserver.KindToolResult, Call: call, Result: &agentserver.CallResult{Output: json.RawMessage(`{"temperature":21,"sky":"<clear>"}`)}},
		{Kind: agentserver.KindToolResult, Call: call, Result: &agentserver.CallResult{Error: "no such city"}},
		{Kind: agentserver.KindToolResult, Call: call, Result: &agentserver.CallResult{}},
		{Kind: agentserver.KindProgress, Offset: 9, Time: at, Call: call, Progress: &agentserver.Progress{Done: 1.5}},
		{Kind: agentserver.KindProgress, Offset: 10, Time: at, Call: call, Progress: &agentserver.Progress{Done: 3, Total: 1e-9, Message: "fetching"}},
		{Kind: agentserver.KindPause, Offset: 11, Time: at, Pending: []agentserver.Pending{
			{Call: *call, Kind: agentserver.WaitApproval, Deadline: at.Add(time.Hour)},
			{Call: *browser, Kind: agentserver.WaitBrowser},
		}},
		{Kind: agentserver.KindDone, Time: at, Done: &agentserver.Done{State: agentserver.StateDone, Usage: usage, Output: json.RawMessage(`{"answer": 42}`)}},
		{Kind: agentserver.KindDone, Time: at, Done: &agentserver.Done{State: agentserver.StateDone, Output: json.RawMessage(`[1,"two"]`)}},
		{Kind: agentserver.KindDone, Time: at, Done: &agentserver.Done{State: agentserver.StateFailed, Usage: usage, Error: &agentserver.Failure{Code: "max_tokens", Message: "the answer was cut"}}},
		{Kind: agentserver.KindDone, Time: at, Done: &agentserver.Done{State: agentserver.StateCancelled}},
		{Kind: agentserver.KindDone, Turn: 3, Time: at, Done: &agentserver.Done{State: agentserver.StateDone, Text: "read alone"}},
	}
}

// TestEventJSON holds the stream's own encoding of events to a2a-go's:
// for every kind of event the translator makes, the JSON appendEvent
// writes decodes to the same value as encoding/json's encoding of the
// event, and to the same event through a2a-go's own decoder. Where
// neither holds HTML's special characters in raw JSON (which
// encoding/json escapes, and appendEvent copies), the bytes are the same.
func TestEventJSON(t *testing.T) {
	kinds := map[string]bool{}
	check := func(t *testing.T, ev a2a.Event) {
		t.Helper()
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendEvent([]byte("prefix"), ev)
		if !ok {
			t.Fatalf("appendEvent refused %s", want)
		}
		if !bytes.HasPrefix(got, []byte("prefix")) {
			t.Fatalf("appendEvent lost what b held: %q", got)
		}
		got = got[len("prefix"):]
		if !json.Valid(got) {
			t.Fatalf("appendEvent wrote invalid JSON: %s", got)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("appendEvent:\n%s\nencoding/json:\n%s", got, want)
		}
		if !bytes.ContainsAny(want, `<>&`) && !bytes.Contains(want, []byte(`\u003c`)) && !bytes.Equal(got, want) {
			t.Errorf("the bytes differ:\n%s\n%s", got, want)
		}
		gev, err := a2a.UnmarshalEventJSON(got)
		if err != nil {
			t.Fatalf("a2a-go reads %s: %v", got, err)
		}
		wev, err := a2a.UnmarshalEventJSON(want)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gev, wev) {
			t.Fatalf("a2a-go reads different events: %#v, %#v", gev, wev)
		}
		var kind struct{ Kind string }
		_ = json.Unmarshal(got, &kind)
		kinds[kind.Kind] = true
	}
	for _, rec := range eventRecords() {
		t.Run(string(rec.Kind), func(t *testing.T) {
			tr := newTranslator(fileSource{}, agentserver.RunInfo{ID: "run_X", Thread: "ctx-1"})
			if rec.Kind == agentserver.KindDone && rec.Done.Text == "" {
				tr.begun = true
			}
			evs := tr.events(&rec, true)
			if len(evs) == 0 {
				t.Fatalf("no event for %s", rec.Kind)
			}
			for _, ev := range evs {
				check(t, ev)
			}
			// A second piece of the same artifact appends.
			for _, ev := range tr.events(&rec, true) {
				check(t, ev)
			}
		})
	}
	// The fields the translator leaves empty, set.
	at := time.Unix(0, 0)
	check(t, &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", LastChunk: true, Metadata: map[string]any{"n": []any{1, int32(2), int64(3), nil}},
		Artifact: &a2a.Artifact{ID: "a", Description: "d", Name: "n", Metadata: map[string]any{"k": map[string]any{}}, Parts: a2a.ContentParts{a2a.DataPart{}}}})
	check(t, &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c"})
	check(t, &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: &a2a.Artifact{ID: "a"}})
	check(t, &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &at,
		Message: &a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Metadata: map[string]any{"x": 1.0}}}})
	for _, k := range []string{"artifact-update", "status-update"} {
		if !kinds[k] {
			t.Errorf("no %s event was checked", k)
		}
	}

	// What it does not write, encoding/json does: appendResponse's
	// answer is the same as with encoding/json alone.
	for _, ev := range []a2a.Event{
		&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.FilePart{File: a2a.FileURI{URI: "https://x"}}}}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{"t": at}}}}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{Message: &a2a.Message{ID: "m", ReferenceTasks: []a2a.TaskID{"u"}}}},
	} {
		if b, ok := appendEvent([]byte("prefix"), ev); ok || string(b) != "prefix" {
			t.Errorf("appendEvent wrote %T: %q, %v", ev, b, ok)
		}
		got, err := appendResponse(nil, json.RawMessage(`7`), ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(ev)
		if string(got) != `{"jsonrpc":"2.0","id":7,"result":`+string(want)+`}` {
			t.Errorf("appendResponse: %s, want the result %s", got, want)
		}
	}
	// Raw JSON that is not JSON fails as in encoding/json.
	bad := &a2a.TaskArtifactUpdateEvent{Artifact: &a2a.Artifact{Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{"raw": json.RawMessage(`{`)}}}}}
	if _, ok := appendEvent(nil, bad); ok {
		t.Error("appendEvent wrote invalid raw JSON")
	}
	if _, err := json.Marshal(bad); err == nil {
		t.Error("encoding/json wrote invalid raw JSON")
	}
}

// TestStreamTextJSON: a text piece's event, written from its frame, is
// the event the translator makes of it, as a2a-go encodes it, for the
// first piece of a turn and for those that append.
func TestStreamTextJSON(t *testing.T) {
	texts := []string{"Sunny in P", "", `"<&>"` + "\u2028\x00\xff", strings.Repeat("é", 100)}
	enc := &encoder{id: json.RawMessage(`"req-1"`), tr: newTranslator(fileSource{}, agentserver.RunInfo{ID: "run_X", Thread: "ctx-1"})}
	ref := newTranslator(fileSource{}, agentserver.RunInfo{ID: "run_X", Thread: "ctx-1"})
	for turn := range 2 {
		for _, text := range texts {
			rec := agentserver.Record{Kind: agentserver.KindText, Turn: turn, Text: text}
			line := enc.appendText(nil, &rec)
			ev := ref.events(&rec, false)[0]
			want, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "req-1", "result": ev})
			if err != nil {
				t.Fatal(err)
			}
			var g, wv any
			if err := json.Unmarshal(line, &g); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			_ = json.Unmarshal(want, &wv)
			if !reflect.DeepEqual(g, wv) {
				t.Errorf("turn %d, %q:\n%s\nwant\n%s", turn, text, line, want)
			}
		}
	}
}
