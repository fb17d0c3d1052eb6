package agent_test

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Google Search beside our own tool: the API runs the search during the
// model call, the loop runs get_weather, and the answer comes with what
// grounds it.
func ExampleConfig_builtinTools() {
	srv := fake.NewServer()
	defer srv.Close()
	turn := append(fake.GoogleSearch("Tokyo events this weekend"),
		&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Tokyo"})})
	answer := "Sunny, with a street festival on Saturday."
	srv.Enqueue(fake.Parts(turn...),
		fake.Text(answer).WithGrounding(fake.WebGrounding(answer, "https://events.example/tokyo")))

	a, err := agent.New(agent.Config{
		Models:       srv.Client().Models,
		Model:        "gemini-3-flash-preview",
		Tools:        toolset.MustNew(forecast),
		BuiltinTools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
	})
	if err != nil {
		panic(err)
	}
	for e, err := range a.Stream(context.Background(), genai.Text("Weekend in Tokyo?")) {
		switch {
		case err != nil:
			panic(err)
		case e.Kind == agent.EventServerToolCall:
			fmt.Println("the API runs", agent.ServerToolName(e.Part), e.Part.ToolCall.Args["queries"])
		case e.Kind == agent.EventToolCall:
			fmt.Println("we run", e.Call.Name)
		case e.Kind == agent.EventDone:
			fmt.Println(e.Result.Text)
			fmt.Println("source:", e.Result.Grounding.GroundingChunks[0].Web.Title)
		}
	}
	// Output:
	// the API runs google_search [Tokyo events this weekend]
	// we run get_weather
	// Sunny, with a street festival on Saturday.
	// source: events.example
}

// An answer too long for one request: the API cuts it twice, and the loop
// continues it, counting each hop.
func ExampleConfig_maxContinuations() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Hops(fake.Text("Chapter one. "), fake.Text("Chapter two. "), fake.Text("The end."))...)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", MaxContinuations: 8})
	if err != nil {
		panic(err)
	}
	res, err := a.Run(context.Background(), genai.Text("Write a long story."))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println("continuations:", res.Turns[0].Continuations, "requests:", len(srv.Requests()))
	// Output:
	// Chapter one. Chapter two. The end.
	// continuations: 2 requests: 3
}
