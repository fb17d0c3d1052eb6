package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// twoCallScript answers a conversation's first request with two parallel
// get_weather calls, and the request that answers them with text.
func twoCallScript(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	if len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil {
		return fake.Text("Sunny in Paris and Tokyo.")
	}
	return fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"}))
}

// benchClient starts a fake server playing twoCallScript and returns a
// client on it.
func benchClient(b *testing.B) *genai.Client {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(twoCallScript)
	return srv.Client()
}

// benchQuestion is the question every benchmark conversation starts with.
var benchQuestion = genai.Text("What's the weather in Paris and Tokyo?")

// benchAgent returns an agent on a fresh benchClient, with forecast.
func benchAgent(b *testing.B) *agent.Agent {
	a, err := agent.New(agent.Config{Models: benchClient(b).Models, Model: model, Tools: toolset.MustNew(forecast)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	return a
}

// BenchmarkRunTwoCalls is agent.Run on one turn of two parallel calls and a
// text answer. Compare with BenchmarkRunRawLoop, the same wire work written
// by hand on the genai client.
func BenchmarkRunTwoCalls(b *testing.B) {
	a := benchAgent(b)
	for i := 0; i < b.N; i++ {
		if _, err := a.Run(context.Background(), benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamTwoCalls is Agent.Stream on the same conversation.
func BenchmarkStreamTwoCalls(b *testing.B) {
	a := benchAgent(b)
	for i := 0; i < b.N; i++ {
		for _, err := range a.Stream(context.Background(), benchQuestion) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRunRawLoop is the floor: the loop written by hand on the raw
// genai client, with the same tool, concurrency and wire work.
func BenchmarkRunRawLoop(b *testing.B) {
	client := benchClient(b)
	tools, err := geminiadapter.Tools(forecast)
	if err != nil {
		b.Fatal(err)
	}
	config := &genai.GenerateContentConfig{Tools: tools}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		history := append([]*genai.Content(nil), benchQuestion...)
		for {
			resp, err := client.Models.GenerateContent(ctx, model, history, config)
			if err != nil {
				b.Fatal(err)
			}
			content := resp.Candidates[0].Content
			history = append(history, content)
			var calls []*genai.FunctionCall
			for _, p := range content.Parts {
				if p.FunctionCall != nil {
					calls = append(calls, p.FunctionCall)
				}
			}
			if len(calls) == 0 {
				break
			}
			parts := make([]*genai.Part, len(calls))
			var wg sync.WaitGroup
			for j, call := range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					parts[j] = geminiadapter.Response(call, forecast.Execute(ctx, call.Args))
				}()
			}
			wg.Wait()
			history = append(history, &genai.Content{Role: genai.RoleUser, Parts: parts})
		}
	}
}

// tenTools returns ten typed tools, as a real agent might have.
func tenTools() *toolset.Set {
	tools := make([]*toolset.Tool, 10)
	for i := range tools {
		tools[i] = toolset.MustFunc(fmt.Sprintf("tool_%d", i), "A tool with a few typed parameters.",
			func(_ context.Context, in struct {
				City  string   `json:"city" jsonschema:"the city"`
				Days  int      `json:"days,omitempty" jsonschema:"how many days"`
				Units string   `json:"units,omitempty" jsonschema:"celsius or fahrenheit"`
				Tags  []string `json:"tags,omitempty"`
			}) (string, error) {
				return in.City, nil
			})
	}
	return toolset.MustNew(tools...)
}

// BenchmarkNewTenTools is what a per-run New costs: the declarations of ten
// tools are converted again.
func BenchmarkNewTenTools(b *testing.B) {
	models := benchClient(b).Models
	tools := tenTools()
	config := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agent.New(agent.Config{Models: models, Model: model, Tools: tools, GenerateConfig: config}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWithTenTools is the per-run alternative: With on an agent of
// ten tools, with another system instruction and limits.
func BenchmarkWithTenTools(b *testing.B) {
	a, err := agent.New(agent.Config{Models: benchClient(b).Models, Model: model, Tools: tenTools()})
	if err != nil {
		b.Fatal(err)
	}
	o := agent.Overrides{SystemInstruction: genai.NewContentFromText("Answer in French.", genai.RoleUser), MaxTurns: 3}
	b.ReportAllocs()
	for b.Loop() {
		_ = a.With(o)
	}
}
