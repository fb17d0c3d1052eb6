package agent_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Weather is the typed answer of the examples.
type Weather struct {
	City    string  `json:"city"`
	TempC   float64 `json:"temp_c" jsonschema:"the temperature in degrees Celsius"`
	Summary string  `json:"summary" jsonschema:"one short sentence"`
}

// A typed run: the model looks the weather up with a tool, then gives its
// answer as a Weather. On gemini-2.5-flash and the Gemini API, which refuse
// a response schema together with tools, the answer comes through a
// final-answer tool; the fake stands in for the model.
func ExampleRunTyped() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})),
		fake.Calls(fake.Call("final_answer", map[string]any{"city": "Paris", "temp_c": 21.5, "summary": "Sunny and mild."})),
	)
	a, err := agent.New(agent.Config{
		Models: srv.Client().Models,
		Model:  "gemini-2.5-flash",
		Tools:  toolset.MustNew(forecast),
	})
	if err != nil {
		panic(err)
	}

	w, res, err := agent.RunTyped[Weather](context.Background(), a, genai.Text("Weather in Paris?"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.1f°C, %s\n", w.City, w.TempC, w.Summary)
	fmt.Println(len(res.Turns), "model turns; tools declared:", srv.Requests()[0].Tools[0].FunctionDeclarations[1].Name)
	// Output:
	// Paris: 21.5°C, Sunny and mild.
	// 2 model turns; tools declared: final_answer
}

// On Gemini 3 the response schema goes with the tools, and the answer is
// JSON text. An answer that does not validate is sent back with the reason
// and asked again.
func ExampleRunTyped_native() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})),
		fake.Text(`{"city": "Oslo", "temp_c": "cold"}`),
		fake.Text(`{"city": "Oslo", "temp_c": -3, "summary": "Snow."}`),
	)
	a, err := agent.New(agent.Config{
		Models: srv.Client().Models,
		Model:  "gemini-3-flash-preview",
		Tools:  toolset.MustNew(forecast),
	})
	if err != nil {
		panic(err)
	}

	w, _, err := agent.RunTyped[Weather](context.Background(), a, genai.Text("Weather in Oslo?"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.0f°C, %s\n", w.City, w.TempC, w.Summary)
	fmt.Println("response type:", srv.Requests()[0].GenerationConfig.ResponseMIMEType)
	reask := srv.Requests()[2].Contents
	fmt.Println("re-ask:", reask[len(reask)-1].Parts[0].Text)
	// Output:
	// Oslo: -3°C, Snow.
	// response type: application/json
	// re-ask: Your answer was refused: the answer does not match the response schema: argument "temp_c": cold has type "string", want "number". Answer again with only JSON that matches the response schema.
}

// StreamTyped streams a typed run; the answer is in the Result of the last
// event.
func ExampleStreamTyped() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text(`{"city": "Rome", "temp_c": 28, "summary": "Hot."}`).WithTextChunk(16))
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash"})
	if err != nil {
		panic(err)
	}

	for e, err := range agent.StreamTyped[Weather](context.Background(), a, genai.Text("Weather in Rome?")) {
		switch {
		case err != nil:
			panic(err)
		case e.Kind == agent.EventText:
			fmt.Printf("%q\n", e.Text)
		case e.Kind == agent.EventDone:
			w := e.Result.Output.(Weather)
			fmt.Println(w.City, w.TempC, w.Summary)
		}
	}
	// Output:
	// "{\"city\": \"Rome\","
	// " \"temp_c\": 28, \""
	// "summary\": \"Hot.\""
	// "}"
	// Rome 28 Hot.
}

// A coordinator hands a task to a researcher agent, which it calls as a
// tool. The researcher's run reports to the coordinator's observer, each
// event marked with its agent and the call it serves, and its tokens are
// counted in the coordinator's result.
func ExampleAsTool() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		// The coordinator's first turn, the researcher's run, the coordinator's answer.
		fake.Calls(fake.Call("researcher", map[string]any{"request": "Weather in Paris?"})),
		fake.Text("Sunny in Paris."),
		fake.Text("The researcher says: sunny in Paris."),
	)
	client := srv.Client()
	researchAgent, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-2.5-flash"})
	if err != nil {
		panic(err)
	}
	researcher, err := agent.AsTool(researchAgent, "researcher", "Researches a question and answers it.")
	if err != nil {
		panic(err)
	}
	coordinator, err := agent.New(agent.Config{
		Models: client.Models,
		Model:  "gemini-2.5-flash",
		Name:   "coordinator",
		Tools:  toolset.MustNew(researcher),
		Observer: agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
			if e.Kind == agent.EventRunStart && e.Parent != nil {
				fmt.Printf("%s started for %s's call %s(%v)\n", e.Agent, e.Parent.Agent, e.Parent.Call.Name, e.Parent.Call.Args["request"])
			}
		}),
	})
	if err != nil {
		panic(err)
	}

	res, err := coordinator.Run(context.Background(), genai.Text("What's the weather in Paris?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	names := slices.Sorted(maps.Keys(res.Agents))
	total := 0
	for _, name := range names {
		total += res.Agents[name].TotalTokens
	}
	fmt.Println("usage by agent:", names, "adds up:", total == res.Usage.TotalTokens)
	// Output:
	// researcher started for coordinator's call researcher(Weather in Paris?)
	// The researcher says: sunny in Paris.
	// usage by agent: [coordinator researcher] adds up: true
}
