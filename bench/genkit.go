package main

import (
	"context"
	"os"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/googlegenai"
	"google.golang.org/genai"
)

// The genkit contestant is one genkit.Generate call with the tools: Genkit
// runs the whole loop itself (tool calls in parallel, up to WithMaxTurns).
func init() {
	register(contestant{
		key:   "genkit",
		name:  "Genkit Go " + moduleVersion("github.com/firebase/genkit/go") + " genkit.Generate",
		setup: setupGenkit,
	})
}

// genkitInitMu serialises the global base-URL redirection around
// genkit.Init.
var genkitInitMu sync.Mutex

// setupGenkit initialises Genkit with the Google AI plugin pointed at url.
//
// The plugin has no base-URL option: it builds its genai client in Init, and
// genai reads the default base URL set by genai.SetDefaultBaseURLs when a
// client is made. So the default is set just before genkit.Init and reset
// right after, leaving every other client untouched.
//
// GENKIT_ENV=dev would start the reflection server and
// GENKIT_TELEMETRY_SERVER a trace exporter; both would skew the numbers, so
// both are unset. Genkit traces every action through the OpenTelemetry
// global tracer provider; see otel.go for how that is kept to Genkit.
func setupGenkit(url string, sc scenario) (func(context.Context) error, func(), error) {
	os.Unsetenv("GENKIT_ENV")
	os.Unsetenv("GENKIT_TELEMETRY_SERVER")
	installTracerProvider()

	genkitInitMu.Lock()
	genai.SetDefaultBaseURLs(genai.BaseURLParameters{GeminiURL: url})
	g := genkit.Init(context.Background(), genkit.WithPlugins(&googlegenai.GoogleAI{APIKey: apiKey}))
	genai.SetDefaultBaseURLs(genai.BaseURLParameters{})
	genkitInitMu.Unlock()

	var tools []ai.ToolRef
	for _, t := range sc.toolSpecs() {
		tools = append(tools, genkit.DefineTool(g, t.Name, t.Description,
			func(_ *ai.ToolContext, in weatherIn) (string, error) {
				return weather(in.City), nil
			}))
	}
	model := "googleai/" + benchModel

	loop := func(ctx context.Context) error {
		resp, err := genkit.Generate(withTracing(ctx), g,
			ai.WithModelName(model),
			ai.WithPrompt(prompt),
			ai.WithTools(tools...),
			ai.WithMaxTurns(sc.turns+1),
		)
		if err != nil {
			return err
		}
		return checkAnswer(resp.Text())
	}
	return loop, nil, nil
}
