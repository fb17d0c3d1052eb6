package main

import (
	"context"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/otelagent"
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
	register(contestant{key: "agent-run-otel", name: "toolnexus agent.Run + otelagent (SDK)", setup: setupAgent(false, otelObserver(batchSDK))})
	register(contestant{key: "agent-run-otel-sync", name: "toolnexus agent.Run + otelagent (SDK, synchronous span processor)", setup: setupAgent(false, otelObserver(syncSDK)), optIn: true})
	register(contestant{key: "agent-run-otel-noop", name: "toolnexus agent.Run + otelagent (no SDK: no-op providers)", setup: setupAgent(false, otelObserver(noopProviders)), optIn: true})
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

// otelObserver records runs into the providers newProviders makes.
func otelObserver(newProviders providers) observerFor {
	return func(client *genai.Client) (agent.Observer, func()) {
		tp, mp, cleanup := newProviders()
		return otelagent.New(otelagent.WithTracerProvider(tp), otelagent.WithMeterProvider(mp), otelagent.WithClient(client)), cleanup
	}
}

// discardSpans is a span exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }
