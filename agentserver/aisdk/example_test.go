package aisdk_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// An agent served to useChat: the handler at /api/chat (and under it, for
// the resume route), and what one question streams.
func Example() {
	model := fake.NewServer() // in a program: a genai client's Models
	defer model.Close()
	model.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny in Paris."))
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "sunny", nil
		})
	a, _ := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(weather)})
	srv, _ := agentserver.New(agentserver.Config{Agent: a})
	defer srv.Close(context.Background())

	mux := http.NewServeMux()
	mux.Handle("/api/chat", aisdk.Handler(srv))
	mux.Handle("/api/chat/", aisdk.Handler(srv))
	hs := httptest.NewServer(mux)
	defer hs.Close()

	resp, err := http.Post(hs.URL+"/api/chat", "application/json", strings.NewReader(
		`{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"Weather in Paris?"}]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.Header.Get("X-Vercel-Ai-Ui-Message-Stream"))
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var chunk struct{ Type, Delta string }
		json.Unmarshal([]byte(data), &chunk)
		fmt.Println(strings.TrimSpace(cmpOr(chunk.Type, data) + " " + chunk.Delta))
	}
	// Output:
	// v1
	// start
	// start-step
	// tool-input-available
	// tool-output-available
	// finish-step
	// start-step
	// text-start
	// text-delta Sunny in Paris.
	// text-end
	// finish-step
	// finish
	// [DONE]
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
