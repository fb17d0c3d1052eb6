package main

import (
	"encoding/json"
	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
	"slices"
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

// TestVoiceOffline: without a key, /live is the offline model's. It hears
// speech but no words: a spoken turn (audio, then the microphone off) is
// taken for the weather in Paris, asked with -approve and approved from
// the socket, and answered in speech with its transcription.
func TestVoiceOffline(t *testing.T) {
	url := start(t, options{Options: serverapp.Options{Approve: true}})
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+"/live?thread=spoken", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteMessage(websocket.BinaryMessage, make([]byte, 3200)); err != nil { // 100 ms at 16 kHz
		t.Fatal(err)
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"audio_end"}`)); err != nil {
		t.Fatal(err)
	}
	var seen []string
	var heard, said string
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
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, m.Type)
		switch m.Type {
		case "input_transcript":
			heard += m.Text
		case "output_transcript":
			said += m.Text
		case "approval":
			if m.Name != "get_weather" {
				t.Fatalf("approval asked for %s", m.Name)
			}
			d, _ := json.Marshal(map[string]any{"type": "decide", "id": m.ID, "approved": true})
			if err := ws.WriteMessage(websocket.TextMessage, d); err != nil {
				t.Fatal(err)
			}
		case "error":
			t.Fatalf("error: %s", data)
		}
		if m.Type == "turn_complete" {
			break
		}
	}
	if !strings.Contains(heard, "weather in Paris") || !strings.Contains(said, "Paris: ") || audio == 0 {
		t.Errorf("heard %q, said %q, %d bytes of speech; events %v", heard, said, audio, seen)
	}
	for _, want := range []string{"tool_call", "approval", "tool_result"} {
		if !slices.Contains(seen, want) {
			t.Errorf("no %s in %v", want, seen)
		}
	}
}
