package main

import (
	"context"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/genai"
)

// The agent-run-otel contestant is agent.Run, as agent-run, with otelagent
// recording every run into a real OpenTelemetry SDK: a tracer provider that
// samples every span and batches them to an exporter that discards them,
// and a meter provider that aggregates every measurement. Compared with
// agent-run, it is the cost of tracing a run. Its providers are its own,
// never the global one (see otel.go).
//
// Two opt-in variants (run them with -only) split that cost:
// agent-run-otel-sync ends spans into a synchronous processor (no batching
// goroutine to wake for each span), and agent-run-otel-noop records into the
// API's no-op providers, which is what otelagent costs a program that
// installs no SDK.
func init() {
	register(contestant{key: "agent-run-otel", name: "toolnexus agent.Run + otelagent (SDK)", setup: setupAgentOtel(batchSDK)})
	register(contestant{key: "agent-run-otel-sync", name: "toolnexus agent.Run + otelagent (SDK, synchronous span processor)", setup: setupAgentOtel(syncSDK), optIn: true})
	register(contestant{key: "agent-run-otel-noop", name: "toolnexus agent.Run + otelagent (no SDK: no-op providers)", setup: setupAgentOtel(noopProviders), optIn: true})
}

// providers returns the tracer and meter providers a variant records into,
// and what shuts them down.
type providers func() (trace.TracerProvider, metric.MeterProvider, func())

func batchSDK() (trace.TracerProvider, metric.MeterProvider, func()) {
	return sdkProviders(sdktrace.WithBatcher(discardSpans{}))
}

func syncSDK() (trace.TracerProvider, metric.MeterProvider, func()) {
	return sdkProviders(sdktrace.WithSyncer(discardSpans{}))
}

func sdkProviders(processor sdktrace.TracerProviderOption) (trace.TracerProvider, metric.MeterProvider, func()) {
	tp := sdktrace.NewTracerProvider(processor)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	return tp, mp, func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
}

func noopProviders() (trace.TracerProvider, metric.MeterProvider, func()) {
	return tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider(), func() {}
}

func setupAgentOtel(newProviders providers) func(url string, sc scenario) (func(context.Context) error, func(), error) {
	return func(url string, sc scenario) (func(context.Context) error, func(), error) {
		client, err := newClient(url, nil)
		if err != nil {
			return nil, nil, err
		}
		set, err := toolset.New(toolsetTools(sc)...)
		if err != nil {
			return nil, nil, err
		}
		tp, mp, cleanup := newProviders()
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
}

// discardSpans is a span exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }
