package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"

	"google.golang.org/genai"
)

// A contestant is one way of running the tool-call loop. Each contestant file
// registers itself from an init function:
//
//	func init() {
//		register(contestant{key: "raw", name: "raw genai hand loop", setup: setupRaw})
//	}
type contestant struct {
	// key is the short name that -only selects (lower case, no spaces).
	key string
	// name is the row label of the results table.
	name string
	// setup prepares the contestant for one scenario against the fake
	// server at url (its base URL, e.g. "http://127.0.0.1:40123", to be
	// used as the Gemini base URL with the API key apiKey and the model
	// benchModel). It returns loop, which runs one whole conversation
	// (the prompt, every tool turn the server scripts, the final text
	// answer, which loop checks with checkAnswer) and must be safe to call
	// again and again, and cleanup, which releases what setup made (nil if
	// nothing). Everything that can be done once (clients, tool
	// declarations, agents) belongs in setup, which is not timed. A
	// contestant that cannot run sc returns errUnsupported; its cell shows
	// "n/a".
	setup func(url string, sc scenario) (loop func(context.Context) error, cleanup func(), err error)
	// optIn keeps the contestant out of the default run: it runs only
	// when -only names it (variants that explain another's cost).
	optIn bool
}

// errUnsupported is what a contestant's setup returns for a scenario that
// its API cannot express without contortions.
var errUnsupported = errors.New("scenario not supported by this contestant")

// contestants lists the registered contestants in registration order; the
// baseline (key "raw") is always shown first.
var contestants []contestant

// baselineKey is the contestant that every ratio is relative to.
const baselineKey = "raw"

// register adds c to the contestants. It panics on a duplicate or empty key,
// so that a mistake shows at start-up.
func register(c contestant) {
	if c.key == "" || c.name == "" || c.setup == nil {
		panic("bench: register: key, name and setup are required")
	}
	for _, o := range contestants {
		if o.key == c.key {
			panic("bench: register: duplicate contestant key " + c.key)
		}
	}
	contestants = append(contestants, c)
}

// A scenario is one scripted conversation: the prompt, then turns tool turns
// of calls parallel get_weather calls each, then a text answer, with tools
// tools declared.
type scenario struct {
	name  string
	about string
	calls int // parallel functionCall parts in each tool turn
	turns int // tool turns before the text answer
	tools int // declared tools: get_weather plus tools-1 fillers
}

// requests is the number of generateContent requests one loop makes.
func (sc scenario) requests() int { return sc.turns + 1 }

// scenarios are every scenario, headline first.
var scenarios = []scenario{
	{name: "two-call", about: "1 turn of 2 parallel calls, then text (the headline)", calls: 2, turns: 1, tools: 1},
	{name: "one-call", about: "1 call × 1 turn, then text", calls: 1, turns: 1, tools: 1},
	{name: "fanout8x3", about: "8 parallel calls × 3 turns, then text", calls: 8, turns: 3, tools: 1},
	{name: "long20", about: "20 turns of 1 call, then text: the history grows every turn", calls: 1, turns: 20, tools: 1},
	{name: "tools100", about: "100 tools declared, 1 call × 1 turn, then text", calls: 1, turns: 1, tools: 100},
}

// The conversation every contestant holds.
const (
	benchModel = "gemini-2.5-flash"
	apiKey     = "bench-key"
	prompt     = "What is the weather in Paris and London?"
	// answer is the final text the server sends and loops check.
	answer = "It is sunny and 21 C in every city you asked about."
)

// weatherTool is the name of the one tool the server calls.
const weatherTool = "get_weather"

// weatherDescription and cityDescription describe get_weather and its one
// parameter to the model.
const (
	weatherDescription = "Returns the current weather for a city."
	cityDescription    = "City name"
)

// A toolSpec is a tool that every contestant declares in its own API. All
// tools take the same input, {"city": string} (required); only get_weather
// is ever called.
type toolSpec struct {
	Name        string
	Description string
}

// toolSpecs returns the tools of sc: get_weather first, then fillers named
// tool_001, tool_002, ….
func (sc scenario) toolSpecs() []toolSpec {
	specs := []toolSpec{{Name: weatherTool, Description: weatherDescription}}
	for i := 1; i < sc.tools; i++ {
		specs = append(specs, toolSpec{
			Name:        fmt.Sprintf("tool_%03d", i),
			Description: fmt.Sprintf("Filler tool number %d; takes a city like get_weather.", i),
		})
	}
	return specs
}

// weatherIn is the input of every tool, for contestants that infer a schema
// from a Go type. The tag works for both invopop/jsonschema (Genkit) and
// eino-contrib/jsonschema (eino).
type weatherIn struct {
	City string `json:"city" jsonschema:"description=City name"`
}

// weather is the body of every tool: trivial and quick, so that tool time
// does not hide the loop's own cost.
func weather(city string) string {
	return "sunny, 21 C in " + city
}

// checkAnswer reports whether text is the final answer the server sent.
func checkAnswer(text string) error {
	if text != answer {
		return fmt.Errorf("final answer %q, want %q", text, answer)
	}
	return nil
}

// moduleVersion returns the version of module path linked into this binary,
// or "?" when it is unknown.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "?"
	}
	for _, m := range info.Deps {
		if m.Path == path {
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "?"
}

// selectContestants returns the registered contestants whose key is in the
// comma-separated list only (all of them when only is empty), baseline
// first.
func selectContestants(only string) ([]contestant, error) {
	want := map[string]bool{}
	for _, k := range strings.Split(only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	selecting := len(want) > 0
	var out []contestant
	for _, c := range contestants {
		if selecting && !want[c.key] || !selecting && c.optIn {
			continue
		}
		delete(want, c.key)
		if c.key == baselineKey {
			out = append([]contestant{c}, out...)
		} else {
			out = append(out, c)
		}
	}
	for k := range want {
		return nil, fmt.Errorf("no contestant %q (have %s)", k, contestantKeys())
	}
	if len(out) == 0 {
		return nil, errors.New("no contestant selected")
	}
	return out, nil
}

// contestantKeys lists the registered keys, for messages.
func contestantKeys() string {
	keys := make([]string, len(contestants))
	for i, c := range contestants {
		keys[i] = c.key
	}
	return strings.Join(keys, ", ")
}

// selectScenarios returns the scenarios selected by names ("all" or a
// comma-separated list).
func selectScenarios(names string) ([]scenario, error) {
	if names == "" || names == "all" {
		return scenarios, nil
	}
	var out []scenario
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, sc := range scenarios {
			if sc.name == n {
				out = append(out, sc)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no scenario %q", n)
		}
	}
	return out, nil
}

// newClient returns a genai client for the bench server at url, with the
// bench's API key; a non-nil httpClient replaces genai's default one.
func newClient(url string, httpClient *http.Client) (*genai.Client, error) {
	return genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      apiKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  httpClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: url},
	})
}
