package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
	ixmodels "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"
	"google.golang.org/genai/interactions/retry"
)

// The API comparison (-apis): one 30-turn conversation with a tool, the
// same on generateContent and on the Interactions API, each through the
// real genai client, by agent.Run and by a loop written by hand on the raw
// SDK. Each turn is one user message, a model turn calling get_weather,
// its answer, and the model's text: two requests. The history goes on
// from turn to turn, as a chat's does.
//
// The fake server (internal/fake, which checks every request as the API
// does) runs in a child process of its own (-serve), so that what this
// process spends is the client's alone: the loop, the SDK, the HTTP
// client. Bytes are what the client sent, counted by its transport.

// apisTurns is the conversation's length.
const apisTurns = 30

// apisModel makes the fake answer as Gemini 3 does: call ids, signatures.
const apisModel = "gemini-3-flash-preview"

// report is get_weather's answer: about 400 bytes of JSON, as a real
// weather tool's.
type report struct {
	City        string  `json:"city"`
	Condition   string  `json:"condition"`
	Temperature float64 `json:"temperature"`
	Humidity    int     `json:"humidity"`
	WindKPH     int     `json:"wind_kph"`
	Forecast    string  `json:"forecast"`
}

func weatherReport(city string) report {
	return report{City: city, Condition: "sunny", Temperature: 21.5, Humidity: 40, WindKPH: 12,
		Forecast: strings.Repeat("Clear skies through the evening, light winds from the west. ", 5)}
}

// apisChild is what serveEnv names for the child process serving -apis
// (see child.go): the fake, scripted for the conversation. urlEnv names a
// server started so beforehand, which the measured process then uses
// instead of starting one (valgrind cannot follow a process that starts
// and waits for a child).
const (
	apisChild = "apis"
	urlEnv    = "TOOLNEXUS_BENCH_URL"
)

// serveAPIs is the child process of -apis: the fake (internal/fake, which
// checks every request as the API does) until its standard input ends,
// then its verdict, as child.go's protocol says.
func serveAPIs() error {
	srv := fake.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		last := r.Contents[len(r.Contents)-1]
		if len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil {
			city := last.Parts[0].FunctionResponse.Response["result"].(map[string]any)["city"].(string)
			return fake.Text("It is sunny in " + city + ", 21.5°C.")
		}
		city := strings.TrimSuffix(strings.TrimPrefix(last.Parts[0].Text, "Weather in "), "?")
		return fake.Calls(fake.Call("get_weather", map[string]any{"city": city}))
	})
	fmt.Println(srv.URL)
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	if rj := srv.Rejections(); len(rj) > 0 {
		fmt.Printf("malformed request: %d rejected, the first by %s: %s\n", len(rj), rj[0].Rule, rj[0].Err.Message)
		return nil
	}
	fmt.Println("ok")
	return nil
}

// counter is a transport that counts the bytes of each request's body.
type counter struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    []int64
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	n := r.ContentLength
	if n < 0 && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		n = int64(len(b))
	}
	c.mu.Lock()
	c.n = append(c.n, n)
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// take returns the counts since the last call.
func (c *counter) take() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = nil
	return out
}

// An apiContestant runs the conversation with one client on one API.
type apiContestant struct {
	key, name string
	// turn runs turn i of a conversation whose state it keeps.
	setup func(client *genai.Client) (turn func(ctx context.Context, i int) error)
}

var apiContestants = []apiContestant{
	{"gc-raw", "generateContent, raw SDK hand loop", rawGenerateContent},
	{"gc-agent", "generateContent, agent.Run", agentOn(false, false)},
	{"ix-raw", "Interactions, raw SDK hand loop (previous_interaction_id)", rawInteractions},
	{"ix-agent", "Interactions, agent.Run (geminiinteractions)", agentOn(true, false)},
	{"gc-trim", "generateContent, agent.Run with a Trimmer", agentOn(false, true)},
	{"ix-trim", "Interactions, agent.Run with a Trimmer", agentOn(true, true)},
}

var reportTool = toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in struct {
	City string `json:"city"`
}) (report, error) {
	return weatherReport(in.City), nil
})

func message(i int) string { return fmt.Sprintf("Weather in city-%d?", i) }

// apisTrimAt makes the Trimmer trim from about turn 15 on: each turn adds
// about 900 bytes, some 225 of the fake's tokens.
const apisTrimAt = 3_500

// agentOn is agent.Run, each turn a run on the history so far.
func agentOn(interactions, trim bool) func(client *genai.Client) func(context.Context, int) error {
	return func(client *genai.Client) func(context.Context, int) error {
		var models agent.Models = client.Models
		if interactions {
			models = geminiinteractions.New(client, geminiinteractions.Config{})
		}
		cfg := agent.Config{Models: models, Model: apisModel, Tools: toolset.MustNew(reportTool),
			GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You report the weather.", genai.RoleUser)}}
		if trim {
			cfg.PrepareHistory = history.Trimmer{MaxTokens: apisTrimAt}.Prepare
		}
		a, err := agent.New(cfg)
		if err != nil {
			panic(err)
		}
		var hist []*genai.Content
		return func(ctx context.Context, i int) error {
			res, err := a.Run(ctx, append(hist, genai.NewContentFromText(message(i), genai.RoleUser)))
			if err != nil {
				return err
			}
			hist = res.History
			return nil
		}
	}
}

// rawGenerateContent is the hand loop on client.Models: the history sent
// whole each call, the model's content appended as it came.
func rawGenerateContent(client *genai.Client) func(context.Context, int) error {
	config := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You report the weather.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather", Description: "Current weather for a city",
			Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}, Required: []string{"city"}}}}}},
	}
	var hist []*genai.Content
	return func(ctx context.Context, i int) error {
		hist = append(hist, genai.NewContentFromText(message(i), genai.RoleUser))
		for range 4 {
			resp, err := client.Models.GenerateContent(ctx, apisModel, hist, config)
			if err != nil {
				return err
			}
			content := resp.Candidates[0].Content
			hist = append(hist, content)
			var answers []*genai.Part
			for _, p := range content.Parts {
				if fc := p.FunctionCall; fc != nil {
					answers = append(answers, genai.NewPartFromFunctionResponse(fc.Name, map[string]any{"result": weatherReport(fc.Args["city"].(string))}))
					answers[len(answers)-1].FunctionResponse.ID = fc.ID
				}
			}
			if len(answers) == 0 {
				return nil
			}
			hist = append(hist, &genai.Content{Role: genai.RoleUser, Parts: answers})
		}
		return errors.New("gc-raw: no answer")
	}
}

// rawInteractions is the hand loop on client.Interactions: each call
// continues the previous interaction and sends only the new message or
// the function results, with the SDK's own types.
func rawInteractions(client *genai.Client) func(context.Context, int) error {
	tools := []ixmodels.Tool{ixmodels.NewTool(ixmodels.Function{Name: genai.Ptr("get_weather"), Description: genai.Ptr("Current weather for a city"),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}})}
	system := "You report the weather."
	var previous *string
	return func(ctx context.Context, i int) error {
		input := ixmodels.NewInteractionsInput([]ixmodels.Step{ixmodels.NewStep(ixmodels.UserInputStep{
			Content: []ixmodels.Content{ixmodels.NewContent(ixmodels.TextContent{Text: message(i)})}})})
		for range 4 {
			res, err := client.Interactions.Create(ctx, operations.CreateInteractionRequest{Body: operations.NewCreateInteractionRequestBody(ixmodels.CreateModelInteraction{
				Model: apisModel, Input: &input, PreviousInteractionID: previous, Tools: tools, SystemInstruction: &system,
			})}, operations.WithRetries(retry.Config{Strategy: "none"}), operations.WithAutomaticContinuation(false))
			if err != nil {
				return err
			}
			previous = res.Interaction.ID
			var results []ixmodels.Step
			for _, s := range res.Interaction.Steps {
				if fc := s.FunctionCallStep; fc != nil {
					out, err := json.Marshal(map[string]any{"result": weatherReport(fc.Arguments["city"].(string))})
					if err != nil {
						return err
					}
					results = append(results, ixmodels.NewStep(ixmodels.FunctionResultStep{CallID: fc.ID, Name: &fc.Name,
						Result: ixmodels.NewFunctionResultStepResultUnion(string(out))}))
				}
			}
			if len(results) == 0 {
				return nil
			}
			input = ixmodels.NewInteractionsInput(results)
		}
		return errors.New("ix-raw: no answer")
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runAPIs runs conversations of every selected contestant, interleaved,
// and prints the bytes each turn sent and the CPU a turn took.
func runAPIs(w io.Writer, conversations int, only string) (err error) {
	url := os.Getenv(urlEnv)
	if url == "" {
		srv, err := startChild(apisChild)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := srv.Close(); err == nil {
				err = cerr
			}
		}()
		url = srv.URL()
	}
	var selected []apiContestant
	for _, c := range apiContestants {
		if only == "" || strings.Contains(","+only+",", ","+c.key+",") {
			selected = append(selected, c)
		}
	}
	type result struct {
		bytes []int64 // per turn, of the first conversation
		cpu   []time.Duration
	}
	results := make([]result, len(selected))
	ctx := context.Background()
	for round := range conversations {
		for k := range selected {
			c := selected[(k+round)%len(selected)]
			idx := (k + round) % len(selected)
			cnt := &counter{base: http.DefaultTransport}
			client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI,
				HTTPClient: &http.Client{Transport: cnt}, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
			if err != nil {
				return err
			}
			turn := c.setup(client)
			start := cpuTime()
			for i := range apisTurns {
				if err := turn(ctx, i); err != nil {
					return fmt.Errorf("%s, turn %d: %w", c.key, i, err)
				}
				if round == 0 {
					var sum int64
					for _, n := range cnt.take() {
						sum += n
					}
					results[idx].bytes = append(results[idx].bytes, sum)
				}
			}
			results[idx].cpu = append(results[idx].cpu, (cpuTime()-start)/apisTurns)
		}
	}
	fmt.Fprintf(w, "\n%d-turn conversation, 2 requests a turn; %d conversations per contestant, interleaved.\n\n", apisTurns, conversations)
	fmt.Fprintln(w, "Bytes sent per turn:")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| contestant | turn 1 | turn 2 | turn 10 | turn 20 | turn 30 | total |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for i, c := range selected {
		b := results[i].bytes
		var total int64
		for _, n := range b {
			total += n
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d |\n", c.name, b[0], b[1], b[9], b[19], b[29], total)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Client CPU per turn (user+system, median over conversations):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| contestant | µs per turn | spread |\n|---|--:|--:|\n")
	for i, c := range selected {
		m, lo, hi := medianSpread(results[i].cpu)
		fmt.Fprintf(w, "| %s | %.0f | %.0f–%.0f |\n", c.name, us(m), us(lo), us(hi))
	}
	if os.Getenv("BENCH_BYTES_CSV") != "" {
		for i, c := range selected {
			fmt.Fprintf(w, "%s", c.key)
			for _, n := range results[i].bytes {
				fmt.Fprintf(w, ",%d", n)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func medianSpread(ds []time.Duration) (median, lo, hi time.Duration) {
	s := append([]time.Duration(nil), ds...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2], s[0], s[len(s)-1]
}
