package main

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// OpenTelemetry's tracer provider is process-global, and two contestants
// use it:
//
//   - Genkit traces every action. On its first span it installs
//     sdktrace.NewTracerProvider() (which records every span) as the global
//     provider, unless the global already is an *sdktrace.TracerProvider, in
//     which case it uses that one.
//   - langchaingo's REST transport (google.golang.org/api) wraps otelhttp,
//     which traces every request through the global provider.
//
// Left alone, once Genkit had run, its provider would make langchaingo (and
// any contestant that traces through the global provider, such as this
// module's own, should it trace) record spans that it does not record in a
// program of its own. So the runner installs the global provider itself,
// before any contestant: an SDK provider whose sampler records the spans
// started under a context marked by withTracing (Genkit's loop marks its
// context) and their children, which is what Genkit gets on its own, and
// drops every other root span, which is what the others get on their own in
// effect (a non-recording span instead of a no-op one: langchaingo measured
// the same allocations per loop either way).

// tracingKey marks a context whose root spans are to be recorded.
type tracingKey struct{}

// withTracing marks ctx so that the spans started under it are recorded.
func withTracing(ctx context.Context) context.Context {
	return context.WithValue(ctx, tracingKey{}, true)
}

var installTracer sync.Once

// installTracerProvider installs the global tracer provider described above;
// only the first call does anything.
func installTracerProvider() {
	installTracer.Do(func() {
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSampler(markedSampler{})))
	})
}

// markedSampler samples like sdktrace.ParentBased(sdktrace.AlwaysSample())
// under a context marked by withTracing, and drops root spans elsewhere.
type markedSampler struct{}

// ShouldSample implements [sdktrace.Sampler].
func (markedSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	record := parent.IsSampled()
	if !parent.IsValid() {
		record = p.ParentContext.Value(tracingKey{}) != nil
	}
	if record {
		return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample, Tracestate: parent.TraceState()}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: parent.TraceState()}
}

// Description implements [sdktrace.Sampler].
func (markedSampler) Description() string { return "bench.markedSampler" }
