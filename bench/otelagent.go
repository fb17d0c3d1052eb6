package main

import (
	"context"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genai"
)

// The agent-run-otel contestant is agent.Run, as agent-run, with otelagent
// recording every run into a real OpenTelemetry SDK: a tracer provider that
// samples every span and batches them to an exporter that discards them,
// and a meter provider that aggregates every measurement. Compared with
// agent-run, it is the cost of tracing a run. Its providers are its own,
// never the global one (see otel.go).
func init() {
	register(contestant{key: "agent-run-otel", name: "toolnexus agent.Run + otelagent (SDK)", setup: setupAgentOtel})
}

func setupAgentOtel(url string, sc scenario) (func(context.Context) error, func(), error) {
	client, err := newClient(url, nil)
	if err != nil {
		return nil, nil, err
	}
	set, err := toolset.New(toolsetTools(sc)...)
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	cleanup := func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
	a, err := agent.New(agent.Config{
		Models:   client.Models,
		Model:    benchModel,
		Tools:    set,
		MaxTurns: sc.requests(),
		Observer: otelagent.New(otelagent.WithTracerProvider(tp), otelagent.WithMeterProvider(mp), otelagent.WithClient(client)),
	})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}
	return func(ctx context.Context) error {
		res, err := a.Run(ctx, contents)
		if err != nil {
			return err
		}
		return checkAnswer(res.Text)
	}, cleanup, nil
}

// discardSpans is a span exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }
