package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A voice session served to a browser, on the fake: the page asks (typed
// here; a page streams its microphone as binary frames), the model calls
// the agent's tool, the route runs it, and the model's speech comes back
// in binary frames, with its transcript.
func Example() {
	model := geminitest.NewServer() // in a test: geminitest.Start(t)
	defer model.Close()
	model.EnqueueLive(
		geminitest.LiveCalls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.LiveAudio("Sunny in Paris.", make([]byte, 4800)),
	)
	ctx := context.Background()
	client, err := genai.NewClient(ctx, model.LiveClientConfig()) // genai.ClientConfig{APIKey: key} in production
	if err != nil {
		fmt.Println(err)
		return
	}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
	a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-2.5-flash-native-audio-preview-12-2025",
		Tools: toolset.MustNew(weather)})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(ctx)
	h, err := live.New(srv, live.Config{Client: client})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close(ctx)
	mux := http.NewServeMux()
	mux.Handle("/live", h)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	// The browser's side.
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+"/live?thread=t1", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close()
	ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"text","text":"Weather in Paris?"}`))
	for {
		kind, data, err := ws.ReadMessage()
		if err != nil {
			fmt.Println(err)
			return
		}
		if kind == websocket.BinaryMessage {
			fmt.Printf("audio: %d bytes\n", len(data))
			continue
		}
		var m live.Message
		json.Unmarshal(data, &m)
		switch m.Type {
		case "tool_call":
			fmt.Println("tool call:", m.Name, m.Args["city"])
		case "tool_result":
			fmt.Println("tool result:", string(m.Output))
		case "output_transcript":
			fmt.Println("said:", m.Text)
		}
		if m.Type == "turn_complete" {
			break
		}
	}
	ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	ws.ReadMessage() // the route's close: the session ended, its transcript saved
	h.Close(ctx)
	history, _ := srv.History(ctx, "local", "t1")
	for _, c := range history {
		fmt.Printf("thread: %s: %s\n", c.Role, c.Parts[0].Text)
	}
	// Output:
	// tool call: get_weather Paris
	// tool result: "sunny in Paris"
	// audio: 4800 bytes
	// said: Sunny in Paris.
	// thread: user: Weather in Paris?
	// thread: model: Sunny in Paris.
}
