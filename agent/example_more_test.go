package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// One agent serves many users; each run gets its own system instruction
// and limits, without converting the tools again.
func ExampleAgent_With() {
	srv := fake.NewServer()
	defer srv.Close()
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: toolset.MustNew(forecast)})
	if err != nil {
		panic(err)
	}
	srv.Enqueue(fake.Text("Il fait beau."))
	res, err := a.With(agent.Overrides{
		SystemInstruction: genai.NewContentFromText("Answer in French.", genai.RoleUser),
		MaxTurns:          3,
	}).Run(context.Background(), genai.Text("How is the weather?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println("sent:", srv.LastRequest().SystemInstruction.Parts[0].Text)
	// Output:
	// Il fait beau.
	// sent: Answer in French.
}

// A Stream consumer approves each call in its own loop: here it approves
// Paris and refuses Tokyo. A real app would ask a person.
func ExampleApproval() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "Tokyo"})),
		fake.Text("Sunny in Paris; I may not look up Tokyo."),
	)
	a, err := agent.New(agent.Config{
		Models:        srv.Client().Models,
		Model:         "gemini-2.5-flash",
		Tools:         toolset.MustNew(forecast),
		NeedsApproval: func(*genai.FunctionCall) bool { return true },
	})
	if err != nil {
		panic(err)
	}
	for e, err := range a.Stream(context.Background(), genai.Text("Weather in Paris and Tokyo?")) {
		switch {
		case err != nil:
			panic(err)
		case e.Kind == agent.EventApproval:
			if e.Call.Args["city"] == "Paris" {
				e.Approval.Approve()
			} else {
				e.Approval.Deny("the user declined")
			}
		case e.Kind == agent.EventToolResult:
			fmt.Println(e.Call.Args["city"], "->", e.ToolResult.Output)
		case e.Kind == agent.EventDone:
			fmt.Println(e.Result.Text)
		}
	}
	// Unordered output:
	// Paris -> sunny in Paris
	// Tokyo -> the user declined
	// Sunny in Paris; I may not look up Tokyo.
}

// An answer cut at the output token limit is an error, so it is never
// mistaken for a whole one; its text and history are kept.
func ExampleErrMaxTokens() {
	srv := fake.NewServer()
	defer srv.Close()
	cut := fake.Text("The three biggest cities are Tokyo, Delhi and")
	cut.Response.Candidates[0].FinishReason = genai.FinishReasonMaxTokens
	srv.Enqueue(cut)
	res, err := agent.Run(context.Background(), agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash"},
		genai.Text("Name the three biggest cities."))
	if errors.Is(err, agent.ErrMaxTokens) {
		fmt.Printf("cut short: %q\n", res.Text)
	}
	// Output:
	// cut short: "The three biggest cities are Tokyo, Delhi and"
}
