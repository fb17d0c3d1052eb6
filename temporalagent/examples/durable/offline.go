package main

// The example's tool and its offline model: a reply function for the
// project's fake Gemini server that answers weather questions with real
// function calls, so that the example runs with no key and no network.

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// offlineModelName is the model the fake serves; its gemini-3 prefix makes
// the fake give calls ids and thought signatures, as Gemini 3 does.
const offlineModelName = "gemini-3-offline-demo"

type weatherIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
}

type weatherOut struct {
	City        string `json:"city"`
	Condition   string `json:"condition"`
	Temperature int    `json:"temperature"`
	Units       string `json:"units"`
}

// weatherTool returns made-up weather, the same for a city every time.
func weatherTool() *toolset.Tool {
	return toolset.MustFunc("get_weather", "The current weather in a city (made-up demo data)",
		func(ctx context.Context, in weatherIn) (weatherOut, error) {
			if strings.TrimSpace(in.City) == "" {
				return weatherOut{}, fmt.Errorf("no city given")
			}
			h := fnv.New32a()
			h.Write([]byte(strings.ToLower(in.City)))
			n := h.Sum32()
			conditions := []string{"sunny", "cloudy", "light rain", "windy", "snow", "fog"}
			return weatherOut{City: in.City, Condition: conditions[n%uint32(len(conditions))],
				Temperature: int(n%35) - 5, Units: "celsius"}, nil
		})
}

var (
	// placeRE finds the places after "in", "for" or "at".
	placeRE = regexp.MustCompile(`(?i)\b(?:in|for|at)\s+([^?!.]+)`)
	listRE  = regexp.MustCompile(`(?i),|\band\b|&`)
)

// offlineModel answers one request: weather calls for the cities a
// question names, then an answer made of the tool results.
func offlineModel(req *fake.Request) *fake.Reply {
	if len(req.Contents) == 0 {
		return fake.Text("I did not get a message.")
	}
	last := req.Contents[len(req.Contents)-1]
	var lines []string
	for _, p := range last.Parts {
		if fr := p.FunctionResponse; fr != nil {
			lines = append(lines, describe(fr))
		}
	}
	if len(lines) > 0 {
		return fake.Text(strings.Join(lines, "\n") + "\n(The weather here is made-up demo data.)")
	}
	var question string
	for _, p := range last.Parts {
		question += p.Text
	}
	var calls []*genai.FunctionCall
	if m := placeRE.FindStringSubmatch(question); m != nil {
		for _, city := range listRE.Split(m[1], -1) {
			if city = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(city), "the ")); city != "" {
				calls = append(calls, fake.Call("get_weather", map[string]any{"city": city}))
			}
		}
	}
	if len(calls) == 0 {
		return fake.Text("I am the offline demo model: ask me about the weather in a few cities " +
			"(\"What is the weather in Paris and Tokyo?\"). Set GEMINI_API_KEY to talk to Gemini.")
	}
	return fake.Calls(calls...)
}

// describe turns one function response into a line of the answer.
func describe(fr *genai.FunctionResponse) string {
	if msg, ok := fr.Response["error"]; ok {
		return fmt.Sprintf("I could not get that: %v.", msg)
	}
	w, ok := fr.Response["result"].(map[string]any)
	if !ok {
		return fmt.Sprint(fr.Response["result"])
	}
	return fmt.Sprintf("%v: %v, %v°C.", w["city"], w["condition"], w["temperature"])
}
