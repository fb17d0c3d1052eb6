package aisdk_test

import (
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// A running call's progress is a transient data-tool-progress part, with
// the call's id, between the call and its output, the last its last
// report.
func TestProgressDataParts(t *testing.T) {
	e := newEnv(t, nil)
	e.Model.Enqueue(fake.Calls(servertest.Call("Bergen")), fake.Text("Rainy in Bergen."))
	r := e.chat(map[string]any{"id": "c1", "trigger": "submit-message", "messages": []any{userMessage("u1", "Weather in Bergen?")}})
	var call string
	var parts []map[string]any
	for _, c := range r.chunks {
		switch c["type"] {
		case "tool-input-available":
			call = c["toolCallId"].(string)
		case "data-tool-progress":
			if call == "" || c["id"] != call || c["transient"] != true {
				t.Errorf("progress part %v for call %q", c, call)
			}
			parts = append(parts, c["data"].(map[string]any))
		case "tool-output-available":
			n := len(parts)
			if n == 0 || fmt.Sprint(parts[n-1]) != fmt.Sprintf("map[done:3 message:station 3 of 3 toolCallId:%s total:3]", call) {
				t.Errorf("progress before the output: %v; want the last, station 3 of 3", parts)
			}
			call = ""
		}
	}
	if len(parts) == 0 {
		t.Errorf("no data-tool-progress part in %v", r.types())
	}
}
