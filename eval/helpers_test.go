package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

const testModel = "gemini-2.5-flash"

type cityIn struct {
	City string `json:"city"`
}

// weatherAgent is the agent under test: one weather tool, on srv.
func weatherAgent(t testing.TB, srv *geminitest.Server) *agent.Agent {
	t.Helper()
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{
		Models: srv.Client().Models, Model: testModel, Name: "weather_agent", Tools: toolset.MustNew(weather),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You report the weather.", genai.RoleUser)},
		Retry:          agent.RetryPolicy{InitialDelay: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var cityRE = regexp.MustCompile(`weather in ([A-Z][a-z]+)`)

// weatherModel plays the model for the weather agent: it calls get_weather
// for each "weather in City" of the user's message, and answers with the
// tool's results; other messages get "I only know the weather.".
func weatherModel(req *geminitest.Request) *geminitest.Reply {
	last := req.Contents[len(req.Contents)-1]
	if rs := req.LastFunctionResponses(""); len(rs) > 0 {
		var parts []string
		for _, r := range rs {
			parts = append(parts, fmt.Sprint(r.Response["result"]))
		}
		return geminitest.Text("It is " + strings.Join(parts, " and ") + ".")
	}
	var text string
	for _, p := range last.Parts {
		text += p.Text
	}
	var calls []*genai.FunctionCall
	for _, m := range cityRE.FindAllStringSubmatch(text, -1) {
		calls = append(calls, geminitest.Call("get_weather", map[string]any{"city": m[1]}))
	}
	if len(calls) == 0 {
		return geminitest.Text("I only know the weather.")
	}
	return geminitest.Calls(calls...)
}

// isJudge reports whether a request is a judge's, and which one.
func isJudge(req *geminitest.Request, kind string) bool {
	if req.SystemInstruction == nil || len(req.SystemInstruction.Parts) == 0 {
		return false
	}
	return strings.Contains(req.SystemInstruction.Parts[0].Text, kind)
}

const (
	matchJudge    = "You rate the answers of an AI agent"
	responseJudge = "You check the turn of an AI agent"
	toolUseJudge  = "You check how an AI agent used its tools"
	simulatorRole = "You play the user of an AI agent"
)

// between returns the text between <tag> and </tag> in s.
func between(s, tag string) string {
	_, after, _ := strings.Cut(s, "<"+tag+">\n")
	inside, _, _ := strings.Cut(after, "\n</"+tag+">")
	return inside
}

// jsonText returns a reply whose text is v as JSON: a typed answer.
func jsonText(v any) *geminitest.Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return geminitest.Text(string(b))
}

// propertyIDs returns the ids of a rubric judge's properties.
func propertyIDs(prompt string) []string {
	var ids []string
	for _, line := range strings.Split(between(prompt, "properties"), "\n") {
		if rest, ok := strings.CutPrefix(line, "- id "); ok {
			id, _, _ := strings.Cut(rest, ":")
			ids = append(ids, id)
		}
	}
	return ids
}

// models routes a request to the weather model or to a judge.
func models(judges func(req *geminitest.Request) *geminitest.Reply) func(req *geminitest.Request) *geminitest.Reply {
	return func(req *geminitest.Request) *geminitest.Reply {
		if req.SystemInstruction != nil && strings.HasPrefix(req.SystemInstruction.Parts[0].Text, "You report the weather.") {
			return weatherModel(req)
		}
		if judges != nil {
			return judges(req)
		}
		return nil
	}
}

// weatherSet is a set of two cases for the weather agent: Paris, which it
// gets right, and Oslo, where the set expects a city it does not call.
func weatherSet() *eval.Set {
	return &eval.Set{ID: "weather", Cases: []eval.Case{
		{ID: "paris", Turns: []eval.Turn{
			eval.UserTurn("What is the weather in Paris?").
				WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}).
				WithResponse("It is sunny in Paris."),
			eval.UserTurn("Thanks!").WithResponse("I only know the weather."),
		}},
		{ID: "oslo", Turns: []eval.Turn{
			eval.UserTurn("What is the weather in Oslo?").
				WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Bergen"}}).
				WithResponse("It is rainy in Bergen."),
		}},
	}}
}
