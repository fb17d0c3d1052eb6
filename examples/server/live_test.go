package main

import (
	"encoding/json"
	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// TestVoice talks to /live, the fake playing the Live model: a typed
// question, a get_weather call run by the demo tools, a spoken answer.
func TestVoice(t *testing.T) {
	fake := geminitest.Start(t)
	client, err := genai.NewClient(t.Context(), fake.LiveClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	fake.EnqueueLive(geminitest.LiveCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}),
		geminitest.LiveAudio("It is sunny in Paris.", []byte{1, 0, 2, 0}))
	url := start(t, options{Options: serverapp.Options{LiveClient: client, LiveModel: "gemini-2.5-flash-native-audio-preview-12-2025"}})
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+"/live?thread=v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"text","text":"Weather in Paris?"}`))
	var seen []string
	audio := 0
	for {
		kind, data, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		if kind == websocket.BinaryMessage {
			audio += len(data)
			continue
		}
		var m live.Message
		json.Unmarshal(data, &m)
		seen = append(seen, m.Type)
		if m.Type == "tool_result" && !strings.Contains(string(m.Output), "Paris") {
			t.Errorf("the tool's result: %s", m.Output)
		}
		if m.Type == "turn_complete" {
			break
		}
	}
	if want := "ready tool_call tool_result output_transcript turn_complete"; strings.Join(seen, " ") != want || audio != 4 {
		t.Errorf("got %v and %d bytes of audio, want %s and 4", seen, audio, want)
	}
}
