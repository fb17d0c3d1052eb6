package otelagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An answer continued over three hops is three generate_content spans,
// one per request, each with its own usage; the later ones say which hop
// they are, and the service tier asked for and served is on each.
func TestContinuationHopSpans(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv, tel := newServer(t), newTelemetry(t)
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Retry: fastRetry,
				GenerateConfig: &genai.GenerateContentConfig{ServiceTier: genai.ServiceTierFlex},
				Observer:       tel.observer(srv)})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(fake.Hops(fake.Text("one "), fake.Text("two "), fake.Text("three"))...)
			res, err := run(context.Background(), a, stream, user("count"))
			if err != nil {
				t.Fatal(err)
			}
			spans := tel.ended(t)
			calls := named(spans, "generate_content "+model)
			if len(calls) != 3 {
				t.Fatalf("%d model call spans, want one per hop:\n%s", len(calls), tree(spans))
			}
			var in int64
			for i, c := range calls {
				want := map[string]any{"gcp.gen_ai.request.service_tier": "flex", "gcp.gen_ai.response.service_tier": "flex",
					"toolnexus.continuation.hop": nil, "toolnexus.continuation": nil}
				if i > 0 {
					want["toolnexus.continuation.hop"], want["toolnexus.continuation"] = int64(i), true
				}
				if i < 2 {
					want["gen_ai.response.finish_reasons"] = "[continuation]"
				} else {
					want["gen_ai.response.finish_reasons"] = "[stop]"
				}
				checkAttrs(t, c, want)
				for _, kv := range c.Attributes() {
					if kv.Key == "gen_ai.usage.input_tokens" {
						in += kv.Value.AsInt64()
					}
				}
			}
			if in != int64(res.Usage.PromptTokens) {
				t.Errorf("the hops' spans count %d input tokens, the run %d", in, res.Usage.PromptTokens)
			}
		})
	}
}

// The built-in tools the API ran are execute_tool spans under the model
// call's, of type extension, with their ids; the model call's output
// holds them as server tool parts.
func TestServerToolSpans(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Retry: fastRetry,
		Tools: toolset.MustNew(weather), BuiltinTools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		Observer: tel.observer(srv, otelagent.WithCaptureContent(true))})
	if err != nil {
		t.Fatal(err)
	}
	parts := append(fake.GoogleSearch("Paris weather"), &genai.Part{FunctionCall: call("Paris")})
	srv.Enqueue(fake.Parts(parts...), fake.Text("Sunny."))
	res, err := a.Run(context.Background(), user("weather?"))
	if err != nil {
		t.Fatal(err)
	}
	spans := tel.ended(t)
	want := "invoke_agent\n  generate_content " + model + "\n    execute_tool google_search\n  execute_tool get_weather\n    lookup Paris\n  generate_content " + model + "\n"
	if got := tree(spans); got != want {
		t.Errorf("span tree\n%s\nwant\n%s", got, want)
	}
	search := named(spans, "execute_tool google_search")[0]
	id := res.History[1].Parts[0].ToolCall.ID
	checkAttrs(t, search, map[string]any{"gen_ai.tool.type": "extension", "gen_ai.tool.name": "google_search", "gen_ai.tool.call.id": id,
		"gen_ai.tool.call.arguments": `{"queries":["Paris weather"]}`})
	if r := strAttr(search, "gen_ai.tool.call.result"); r == "" {
		t.Error("the search's result was not captured")
	}
	out := strAttr(named(spans, "generate_content "+model)[0], "gen_ai.output.messages")
	if !strings.Contains(out, `"type":"server_tool_call"`) || !strings.Contains(out, `"type":"server_tool_call_response"`) {
		t.Errorf("output messages %s; want the server tool parts", out)
	}
}
