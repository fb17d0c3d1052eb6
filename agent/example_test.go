package agent_test

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type forecastIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
}

var forecast = toolset.MustFunc("get_weather", "Current weather for a city",
	func(_ context.Context, in forecastIn) (string, error) {
		return "sunny in " + in.City, nil
	})

// A whole conversation: the model calls get_weather twice in parallel, gets
// both answers in one turn, and answers in text. The fake server stands in
// for Gemini; with a real key, use genai.NewClient(ctx, nil) instead.
func ExampleRun() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "Tokyo"})),
		fake.Text("Sunny in both Paris and Tokyo."),
	)
	client := srv.Client()

	res, err := agent.Run(context.Background(), agent.Config{
		Models: client.Models,
		Model:  "gemini-2.5-flash",
		Tools:  toolset.MustNew(forecast),
	}, genai.Text("What's the weather in Paris and Tokyo?"))
	if err != nil {
		panic(err)
	}
	for _, r := range res.Turns[0].Results {
		fmt.Println(r.Call.Name, r.Call.Args["city"], "->", r.Output)
	}
	fmt.Println(res.Text)
	fmt.Println(len(res.History), "contents,", len(res.Turns), "model turns")
	// Output:
	// get_weather Paris -> sunny in Paris
	// get_weather Tokyo -> sunny in Tokyo
	// Sunny in both Paris and Tokyo.
	// 4 contents, 2 model turns
}

// Result.History holds the whole conversation: append the next user message
// and run again.
func ExampleAgent_Run_continue() {
	srv := fake.NewServer()
	defer srv.Close()
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(forecast)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})), fake.Text("Sunny in Oslo."))
	res, err := a.Run(ctx, genai.Text("Weather in Oslo?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)

	srv.Enqueue(fake.Text("You asked about Oslo."))
	next := append(res.History, genai.NewContentFromText("Which city did I ask about?", genai.RoleUser))
	res, err = a.Run(ctx, next)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println(len(srv.LastRequest().Contents), "contents sent")
	// Output:
	// Sunny in Oslo.
	// You asked about Oslo.
	// 5 contents sent
}

// An Interceptor sees each call before it runs: here it refuses one, and
// the model receives {"error": reason, "denied": true} instead of the
// tool's result, and the history keeps the call as denied.
func ExampleDeny() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Area 51"})),
		fake.Text("I am not allowed to look that up."),
	)
	a, err := agent.New(agent.Config{
		Models: srv.Client().Models,
		Model:  "gemini-2.5-flash",
		Tools:  toolset.MustNew(forecast),
		Intercept: func(_ context.Context, call *genai.FunctionCall) *toolset.Result {
			if call.Args["city"] == "Area 51" {
				return agent.Deny("the user did not approve this call")
			}
			return nil // run the tool
		},
	})
	if err != nil {
		panic(err)
	}
	res, err := a.Run(context.Background(), genai.Text("Weather at Area 51?"))
	if err != nil {
		panic(err)
	}
	sent := srv.LastRequest().Contents[2].Parts[0].FunctionResponse.Response
	fmt.Println(sent["error"])
	reason, denied := geminiadapter.Denied(res.History[2].Parts[0].FunctionResponse)
	fmt.Println(denied, reason)
	fmt.Println(res.Text)
	// Output:
	// the user did not approve this call
	// true the user did not approve this call
	// I am not allowed to look that up.
}

// An Observer sees every step of a run.
func ExampleObserverFunc() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Lima"})), fake.Text("Sunny."))
	logSteps := agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
		switch e.Kind {
		case agent.EventToolCall:
			fmt.Println("calling", e.Call.Name, e.Call.Args)
		case agent.EventToolResult:
			fmt.Println("result", e.ToolResult.Output)
		case agent.EventDone:
			fmt.Println("done:", e.Result.Text)
		}
	})
	_, err := agent.Run(context.Background(), agent.Config{
		Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: toolset.MustNew(forecast), Observer: logSteps,
	}, genai.Text("Weather in Lima?"))
	if err != nil {
		panic(err)
	}
	// Output:
	// calling get_weather map[city:Lima]
	// result sunny in Lima
	// done: Sunny.
}
