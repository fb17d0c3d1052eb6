package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// tracing is what -trace sets up: an OpenTelemetry tracer provider that
// either keeps each answer's spans to print them as a tree (tree), or,
// when OTEL_EXPORTER_OTLP_ENDPOINT is set, exports spans and metrics over
// OTLP/HTTP (the exporters read the standard OTEL_EXPORTER_OTLP_*
// variables). A nil *tracing traces nothing: every method is a no-op.
type tracing struct {
	tp   *sdktrace.TracerProvider
	mp   metric.MeterProvider
	tree *treePrinter // nil when exporting
	stop []func(context.Context) error
}

// startTracing sets up tracing; the span trees go to w.
func startTracing(ctx context.Context, w io.Writer) (*tracing, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "toolnexus-chat")),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	t := &tracing{mp: noop.NewMeterProvider()}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		t.tree = &treePrinter{w: w, spans: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(t.tree))
		t.stop = append(t.stop, t.tp.Shutdown)
		return t, nil
	}
	spans, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP span exporter: %w", err)
	}
	metrics, err := otlpmetrichttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP metric exporter: %w", err)
	}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)))
	t.mp = mp
	t.stop = append(t.stop, t.tp.Shutdown, mp.Shutdown)
	return t, nil
}

// httpClient returns an HTTP client whose requests are traced, on base's
// transport (http.DefaultTransport when base is nil): each model call's
// HTTP request becomes a span under the call's.
func (t *tracing) httpClient(base *http.Client) *http.Client {
	if t == nil {
		return base
	}
	var rt http.RoundTripper
	if base != nil {
		rt = base.Transport
	}
	return &http.Client{Transport: otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(t.tp), otelhttp.WithMeterProvider(t.mp))}
}

// observer returns the agent observer that records runs, or nil. client,
// when known, names the provider and the server of the model calls.
func (t *tracing) observer(client *genai.Client, models agent.Models) agent.Observer {
	if t == nil {
		return nil
	}
	return otelagent.New(otelagent.WithTracerProvider(t.tp), otelagent.WithMeterProvider(t.mp),
		otelagent.WithClient(client), otelagent.WithModels(models), otelagent.WithAgentName("chat"))
}

// flush prints the span trees of the answers that are over.
func (t *tracing) flush() {
	if t != nil && t.tree != nil {
		t.tree.flush()
	}
}

// shutdown exports what is left and stops the providers.
func (t *tracing) shutdown() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, stop := range t.stop {
		if err := stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "chat: tracing:", err)
		}
	}
	t.flush()
}

// treePrinter is a span processor that keeps the spans of each trace until
// its root span ends, and prints the trees of finished traces on flush:
// one span per line, indented under its parent, with its duration and its
// key attributes.
type treePrinter struct {
	w     io.Writer
	mu    sync.Mutex
	spans map[trace.TraceID][]sdktrace.ReadOnlySpan
	done  []trace.TraceID // traces whose root has ended, in order
}

func (p *treePrinter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (p *treePrinter) OnEnd(s sdktrace.ReadOnlySpan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := s.SpanContext().TraceID()
	p.spans[id] = append(p.spans[id], s)
	if !s.Parent().IsValid() {
		p.done = append(p.done, id)
	}
}

func (p *treePrinter) Shutdown(context.Context) error   { return nil }
func (p *treePrinter) ForceFlush(context.Context) error { return nil }

// flush prints and forgets the finished traces.
func (p *treePrinter) flush() {
	p.mu.Lock()
	done := p.done
	p.done = nil
	var traces [][]sdktrace.ReadOnlySpan
	for _, id := range done {
		traces = append(traces, p.spans[id])
		delete(p.spans, id)
	}
	p.mu.Unlock()
	for _, spans := range traces {
		var b strings.Builder
		writeTree(&b, spans)
		io.WriteString(p.w, b.String())
	}
}

// writeTree writes spans as a tree, children in order of start.
func writeTree(w io.Writer, spans []sdktrace.ReadOnlySpan) {
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Parent().IsValid() {
			children[s.Parent().SpanID()] = append(children[s.Parent().SpanID()], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) }
	var write func(s sdktrace.ReadOnlySpan, depth int)
	write = func(s sdktrace.ReadOnlySpan, depth int) {
		line := strings.Repeat("  ", depth) + s.Name() + "  " + spanDuration(s.EndTime().Sub(s.StartTime())).String()
		if detail := spanDetail(s); detail != "" {
			line += "  " + detail
		}
		fmt.Fprintln(w, line)
		kids := children[s.SpanContext().SpanID()]
		slices.SortStableFunc(kids, byStart)
		for _, k := range kids {
			write(k, depth+1)
		}
	}
	slices.SortStableFunc(roots, byStart)
	for _, r := range roots {
		write(r, 0)
	}
}

// spanDetail renders the attributes worth a glance: tokens, finish
// reasons, call ids, HTTP status and errors.
func spanDetail(s sdktrace.ReadOnlySpan) string {
	var parts []string
	get := func(key string) (attribute.Value, bool) {
		for _, kv := range s.Attributes() {
			if string(kv.Key) == key {
				return kv.Value, true
			}
		}
		return attribute.Value{}, false
	}
	add := func(label, key string) {
		v, ok := get(key)
		switch {
		case !ok:
		case v.Type() == attribute.STRINGSLICE:
			parts = append(parts, label+"="+strings.Join(v.AsStringSlice(), ","))
		default:
			parts = append(parts, label+"="+v.String())
		}
	}
	add("in", "gen_ai.usage.input_tokens")
	add("out", "gen_ai.usage.output_tokens")
	add("finish", "gen_ai.response.finish_reasons")
	add("call", "gen_ai.tool.call.id")
	add("status", "http.response.status_code")
	add("error", "error.type")
	return strings.Join(parts, " ")
}

// spanDuration rounds d for display, as roundDuration does, but keeps
// durations under a microsecond as they are.
func spanDuration(d time.Duration) time.Duration {
	if d < time.Microsecond {
		return d
	}
	return roundDuration(d)
}
