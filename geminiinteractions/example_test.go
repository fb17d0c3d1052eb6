package geminiinteractions_test

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An agent on the Interactions API: the same loop, and each call after the
// first sends only what the server lacks. The fake stands in for Gemini
// here; with a real client, New(client, …) is all that changes.
func Example() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.Text("Sunny in Paris."),
		geminitest.Text("Yes, all day."),
	)
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
	models := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a, err := agent.New(agent.Config{Models: models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(weather)})
	if err != nil {
		panic(err)
	}
	res, err := a.Run(context.Background(), genai.Text("Weather in Paris?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	res, err = a.Run(context.Background(), append(res.History, genai.NewContentFromText("All day?", genai.RoleUser)))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	s := models.Stats()
	fmt.Printf("%d calls: %d sent the whole history, %d only what the server lacked\n", s.Requests, s.Whole, s.Chained)
	// Output:
	// Sunny in Paris.
	// Yes, all day.
	// 3 calls: 1 sent the whole history, 2 only what the server lacked
}

// Stateless keeps nothing at Google: every call sends the whole history,
// with store false.
func ExampleConfig_stateless() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.Enqueue(geminitest.Text("Hello."))
	models := geminiinteractions.New(srv.Client(), geminiinteractions.Config{Stateless: true})
	res, err := agent.Run(context.Background(), agent.Config{Models: models, Model: "gemini-3-flash-preview"}, genai.Text("Hi"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, "store:", *srv.LastRequest().Store, "kept:", len(srv.InteractionIDs()))
	// Output:
	// Hello. store: false kept: 0
}
