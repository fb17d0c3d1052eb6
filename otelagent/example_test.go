package otelagent_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/genai"
)

// Tracing an agent: install the Observer, and wrap the genai client's
// transport with otelhttp so that each model call's HTTP request shows
// under it. Here the spans go to an in-memory exporter and the model is
// the offline fake.
func Example() {
	ctx := context.Background()
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer tp.Shutdown(ctx)

	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny in Paris."))
	cc := srv.ClientConfig() // with a real key: &genai.ClientConfig{}
	cc.HTTPClient = &http.Client{Transport: otelhttp.NewTransport(cc.HTTPClient.Transport)}
	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		log.Fatal(err)
	}

	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "sunny in " + in.City, nil
		})
	a, err := agent.New(agent.Config{
		Models: client.Models,
		Model:  "gemini-3-flash-preview",
		Tools:  toolset.MustNew(weather),
		Observer: otelagent.New(
			otelagent.WithTracerProvider(tp),
			otelagent.WithClient(client),
			otelagent.WithAgentName("weather"),
		),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := a.Run(ctx, genai.Text("Weather in Paris?")); err != nil {
		log.Fatal(err)
	}

	spans := exporter.GetSpans()
	slices.SortFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	depth := map[string]int{}
	for _, s := range spans {
		d := 0
		if s.Parent.IsValid() {
			d = depth[s.Parent.SpanID().String()] + 1
		}
		depth[s.SpanContext.SpanID().String()] = d
		provider := ""
		for _, kv := range s.Attributes {
			if kv.Key == "gen_ai.provider.name" {
				provider = " (" + kv.Value.AsString() + ")"
			}
		}
		fmt.Printf("%s%s%s\n", strings.Repeat("  ", d), s.Name, provider)
	}
	// Output:
	// invoke_agent weather (gcp.gemini)
	//   generate_content gemini-3-flash-preview (gcp.gemini)
	//     HTTP POST
	//   execute_tool get_weather
	//   generate_content gemini-3-flash-preview (gcp.gemini)
	//     HTTP POST
}
