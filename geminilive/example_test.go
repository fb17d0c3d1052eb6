package geminilive_test

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A live session of an agent on the fake: the user asks, the model calls
// the agent's tool, the session runs it and answers by id, the model
// speaks its answer.
func Example() {
	srv := geminitest.NewServer() // in a test: srv := geminitest.Start(t)
	defer srv.Close()
	srv.EnqueueLive(
		geminitest.LiveCalls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.LiveAudio("Sunny in Paris.", make([]byte, 4800)),
	)

	ctx := context.Background()
	client, err := genai.NewClient(ctx, srv.LiveClientConfig()) // genai.ClientConfig{APIKey: key} in production
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
	s, err := geminilive.Connect(ctx, client, a, geminilive.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	if err := s.SendText("What's the weather in Paris?"); err != nil { // or SendAudio, 16 kHz PCM
		fmt.Println(err)
		return
	}
	for e, err := range s.Events() {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch e.Kind {
		case geminilive.EventToolCall:
			fmt.Println("call:", e.Call.Name, e.Call.Args["city"])
		case geminilive.EventToolResult:
			fmt.Println("result:", e.Result.Output)
		case geminilive.EventAudio:
			fmt.Println("audio:", len(e.Audio), "bytes of", e.MIMEType)
		case geminilive.EventOutputTranscript:
			fmt.Println("said:", e.Text)
		case geminilive.EventTurnComplete:
			return
		}
	}
	// Output:
	// call: get_weather Paris
	// result: sunny in Paris
	// audio: 4800 bytes of audio/pcm;rate=24000
	// said: Sunny in Paris.
}
