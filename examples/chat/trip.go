package main

// The /trip command: a typed run by an agent that hands part of its work to
// another agent. The trip planner asks a weather researcher, an agent run
// as a tool (agent.AsTool) that has get_weather, about the city; then it
// answers with a tripPlan (agent.RunTyped), printed field by field. The
// researcher's tool calls show up, marked with its name, through the
// planner's observer.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// tripPlan is the planner's typed answer.
type tripPlan struct {
	City       string   `json:"city"`
	Weather    string   `json:"weather" jsonschema:"the weather the researcher reported, in a few words"`
	Activities []string `json:"activities" jsonschema:"three things to do that suit the weather"`
}

const (
	plannerPrompt = "You plan day trips. First ask weather_researcher about the weather in the city; " +
		"then plan three activities that suit it."
	researcherPrompt = "You report the weather in a city: call get_weather, then answer in one sentence, " +
		"saying that the data is made up."
)

// trip plans a day in city.
func (c *chat) trip(ctx context.Context, city string) {
	if city == "" {
		fmt.Fprintln(c.out, "usage: /trip <city>, e.g. /trip Lisbon")
		return
	}
	ctx, done := c.answering(ctx)
	defer done()
	weather, _ := c.tools.Lookup("get_weather")
	researcher, err := agent.New(agent.Config{Models: c.models, Model: c.model, Tools: toolset.MustNew(weather),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(researcherPrompt, genai.RoleUser)}})
	if err != nil {
		fmt.Fprintln(c.out, c.st.err("error: "+err.Error()))
		return
	}
	researcherTool := must(agent.AsTool(researcher, "weather_researcher", "Finds out the weather in a city and reports it in one sentence."))
	planner, err := agent.New(agent.Config{
		Models: c.models, Model: c.model, Name: "trip_planner", Tools: toolset.MustNew(researcherTool),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(plannerPrompt, genai.RoleUser)},
		Observer:       c.stepPrinter(),
	})
	if err != nil {
		fmt.Fprintln(c.out, c.st.err("error: "+err.Error()))
		return
	}
	plan, res, err := agent.RunTyped[tripPlan](ctx, planner, genai.Text("Plan a day in "+city+"."))
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(c.out, c.st.dim("(answer stopped)"))
		return
	case err != nil:
		fmt.Fprintln(c.out, c.st.err("error: "+err.Error()))
		return
	}
	fmt.Fprintf(c.out, "A day in %s (%s):\n", plan.City, plan.Weather)
	for i, a := range plan.Activities {
		fmt.Fprintf(c.out, "  %d. %s\n", i+1, a)
	}
	if c.opts.verbose {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(res.Agents)) {
			parts = append(parts, fmt.Sprintf("%s %d", name, res.Agents[name].TotalTokens))
		}
		fmt.Fprintln(c.out, c.st.dim("[tokens by agent: "+strings.Join(parts, ", ")+"]"))
	}
	if !c.opts.interactive {
		fmt.Fprintln(c.out)
	}
}

// stepPrinter returns an observer that shows the tool calls of a run and
// of the agents it runs as tools, each marked with its agent. Those come
// from the tool calls' goroutines: lines are written one at a time.
func (c *chat) stepPrinter() agent.Observer {
	var mu sync.Mutex
	return agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
		var prefix, line string
		if e.Parent != nil {
			prefix = fmt.Sprintf("  [%s] ", e.Agent)
		}
		switch e.Kind {
		case agent.EventToolCall:
			line = fmt.Sprintf("%s→ %s %s", prefix, e.Call.Name, compactJSON(e.Call.Args))
		case agent.EventToolResult:
			line = fit(prefix+"← "+e.Call.Name+" ", compactJSON(e.ToolResult.Output), "", c.width())
		default:
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(c.out, c.st.tool(line))
	})
}

// answering returns the context of an answer, which Ctrl-C cancels, and
// the function to call when the answer is over.
func (c *chat) answering(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.current = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		c.current = nil
		c.mu.Unlock()
		cancel()
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// offlineTrip plays the trip planner for the offline model: it asks the
// weather researcher, then answers with a plan that suits the weather. It
// returns nil for requests of other agents (the researcher's are ordinary
// weather questions).
func offlineTrip(req *fake.Request) *fake.Reply {
	if req.SystemInstruction == nil || offline.Text(req.SystemInstruction) != plannerPrompt {
		return nil
	}
	results := offline.FunctionResponses(req.Contents[len(req.Contents)-1])
	city := strings.TrimSuffix(strings.TrimPrefix(offline.Text(req.Contents[0]), "Plan a day in "), ".")
	if len(results) == 0 {
		return fake.Calls(fake.Call("weather_researcher", map[string]any{"request": "What is the weather in " + city + "?"}))
	}
	report, _ := results[0].Response["result"].(string)
	weather, _, _ := strings.Cut(report, "\n")
	weather = strings.TrimSuffix(strings.TrimPrefix(weather, city+": "), ".")
	activities := []string{"a walk through the old town", "lunch on a terrace", "a viewpoint at sunset"}
	if containsAny(weather, "rain", "thunder", "fog", "snow") {
		activities = []string{"a morning at a museum", "a covered market for lunch", "a café with a view"}
	}
	b, _ := json.Marshal(tripPlan{City: city, Weather: weather, Activities: activities})
	return fake.Text(string(b))
}

func containsAny(s string, words ...string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(s, w) })
}
