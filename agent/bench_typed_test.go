package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The benchmarks of this file measure what typed runs and agents as tools
// add to the loop: each compares with a plain run that makes the same
// number of model requests (see BENCHMARKS.md).

const weatherJSON = `{"city":"Paris","temp_c":21.5,"summary":"Sunny."}`

// typedScript plays twoCallScript's conversation for a typed run: two
// calls, then the answer, through final_answer when it is declared, as
// JSON text otherwise.
func typedScript(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	if len(last.Parts) == 0 || last.Parts[0].FunctionResponse == nil {
		return twoCallScript(req)
	}
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == agent.DefaultOutputToolName {
				return fake.Calls(fake.Call(d.Name, map[string]any{"city": "Paris", "temp_c": 21.5, "summary": "Sunny."}))
			}
		}
	}
	return fake.Text(weatherJSON)
}

func benchTypedAgent(b *testing.B, model string, script func(*fake.Request) *fake.Reply) *agent.Agent {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(script)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(forecast)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	return a
}

// BenchmarkRunTypedTool is RunTyped with the final-answer tool
// (gemini-2.5-flash): two calls, then the final_answer call. Compare with
// BenchmarkRunTwoCalls.
func BenchmarkRunTypedTool(b *testing.B) {
	a := benchTypedAgent(b, model, typedScript)
	for i := 0; i < b.N; i++ {
		if _, _, err := agent.RunTyped[Weather](context.Background(), a, benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTypedNative is RunTyped with the native response schema
// (gemini-3): two calls, then the JSON answer. Compare with
// BenchmarkRunTwoCalls3.
func BenchmarkRunTypedNative(b *testing.B) {
	a := benchTypedAgent(b, model3, typedScript)
	for i := 0; i < b.N; i++ {
		if _, _, err := agent.RunTyped[Weather](context.Background(), a, benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTwoCalls3 is Run on the native benchmark's conversation.
func BenchmarkRunTwoCalls3(b *testing.B) {
	a := benchTypedAgent(b, model3, typedScript)
	for i := 0; i < b.N; i++ {
		if _, err := a.Run(context.Background(), benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTypedNativeByHand is what BenchmarkRunTypedNative does,
// written by hand: Run with the response schema in the config, and the
// answer decoded with encoding/json (not validated). The difference is
// RunTyped's own cost.
func BenchmarkRunTypedNativeByHand(b *testing.B) {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(typedScript)
	schema, err := jsonschema.For[Weather](nil)
	if err != nil {
		b.Fatal(err)
	}
	rs, err := geminiadapter.Schema(schema)
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3, Tools: toolset.MustNew(forecast),
		GenerateConfig: &genai.GenerateContentConfig{ResponseMIMEType: "application/json", ResponseSchema: rs}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := a.Run(context.Background(), benchQuestion)
		if err != nil {
			b.Fatal(err)
		}
		var w Weather
		if err := json.Unmarshal([]byte(res.Text), &w); err != nil {
			b.Fatal(err)
		}
	}
}

// helperScript plays a coordinator that calls a helper agent once, and the
// helper: three requests.
func helperScript(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	switch {
	case len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil:
		return fake.Text("The helper says: sunny.")
	case req.Tools != nil:
		return fake.Calls(fake.Call("helper", map[string]any{"request": "Weather in Paris?"}))
	}
	return fake.Text("Sunny in Paris.")
}

// BenchmarkAsTool is a coordinator run that calls a helper agent as a tool:
// three requests. Compare with BenchmarkAsToolBaseline.
func BenchmarkAsTool(b *testing.B) {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(helperScript)
	models := srv.Client().Models
	helperAgent, err := agent.New(agent.Config{Models: models, Model: model})
	if err != nil {
		b.Fatal(err)
	}
	helper, err := agent.AsTool(helperAgent, "helper", "Helps.")
	if err != nil {
		b.Fatal(err)
	}
	coordinator, err := agent.New(agent.Config{Models: models, Model: model, Tools: toolset.MustNew(helper)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := coordinator.Run(context.Background(), benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAsToolBaseline makes the same three requests with two plain
// runs: the coordinator's, whose tool answers at once, and the helper's.
func BenchmarkAsToolBaseline(b *testing.B) {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(helperScript)
	models := srv.Client().Models
	helperAgent, err := agent.New(agent.Config{Models: models, Model: model})
	if err != nil {
		b.Fatal(err)
	}
	helper := toolset.MustFunc("helper", "Helps.", func(context.Context, struct {
		Request string `json:"request"`
	}) (string, error) {
		return "Sunny in Paris.", nil
	})
	coordinator, err := agent.New(agent.Config{Models: models, Model: model, Tools: toolset.MustNew(helper)})
	if err != nil {
		b.Fatal(err)
	}
	ask := genai.Text("Weather in Paris?")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := helperAgent.Run(context.Background(), ask); err != nil {
			b.Fatal(err)
		}
		if _, err := coordinator.Run(context.Background(), benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}
