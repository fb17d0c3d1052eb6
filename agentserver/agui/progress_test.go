package agui_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// A running call's progress is an activity message of its own, each
// report an ACTIVITY_SNAPSHOT that replaces the last, between the call
// and its result.
func TestProgressActivity(t *testing.T) {
	e := newEnv(t, nil)
	e.Model.Enqueue(fake.Calls(servertest.Call("Bergen")), fake.Text("Rainy in Bergen."))
	r := e.post("/agui", input("t1", "r1", user("u1", "Weather in Bergen?")))
	var call string
	var last map[string]any
	snapshots := 0
	for _, ev := range r.events {
		switch ev["type"] {
		case "TOOL_CALL_START":
			call = ev["toolCallId"].(string)
		case "ACTIVITY_SNAPSHOT":
			snapshots++
			if call == "" || ev["messageId"] != agui.ProgressMessageID(call) || ev["activityType"] != agui.ProgressActivity || ev["replace"] != true {
				t.Errorf("ACTIVITY_SNAPSHOT %v for call %q", ev, call)
			}
			last = ev["content"].(map[string]any)
		case "TOOL_CALL_RESULT":
			if snapshots == 0 {
				t.Fatalf("the call's result came before any progress: %v", r.types())
			}
			want := map[string]any{"toolCallId": call, "done": 3.0, "total": 3.0, "message": "station 3 of 3"}
			for k, v := range want {
				if last[k] != v {
					t.Errorf("the last progress before the result: %v; want %v", last, want)
					break
				}
			}
			call = "" // no progress after it
		}
	}
	if snapshots == 0 {
		t.Errorf("no ACTIVITY_SNAPSHOT in %v", r.types())
	}
}
