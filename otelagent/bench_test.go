package otelagent_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/genai"
)

// The benchmarks below are agent.Run on the agent package's headline
// conversation (one turn of two parallel get_weather calls, then text),
// without and with tracing, on a fake server each. Compare their ns/op and
// allocs/op: BENCHMARKS.md gives the ratio.

// benchScript answers a conversation's first request with two parallel
// get_weather calls, and the request that answers them with text.
func benchScript(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	if len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil {
		return fake.Text("Sunny in Paris and Tokyo.")
	}
	return fake.Calls(call("Paris"), call("Tokyo"))
}

var benchForecast = toolset.MustFunc("get_weather", "Current weather for a city", func(_ context.Context, in weatherIn) (string, error) {
	return "sunny in " + in.City, nil
})

func benchRun(b *testing.B, observer func(*fake.Server) agent.Observer) {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(benchScript)
	cfg := agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: toolset.MustNew(benchForecast)}
	if observer != nil {
		cfg.Observer = observer(srv)
	}
	a, err := agent.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	question := genai.Text("What's the weather in Paris and Tokyo?")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Run(ctx, question); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun is agent.Run with no observer: the baseline.
func BenchmarkRun(b *testing.B) {
	benchRun(b, nil)
}

// BenchmarkRunTraced is agent.Run with otelagent on a real SDK: a tracer
// provider sampling every span and batching them to an exporter that
// discards them, and a meter provider aggregating every measurement.
func BenchmarkRunTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	benchRun(b, func(srv *fake.Server) agent.Observer {
		return otelagent.New(otelagent.WithTracerProvider(tp), otelagent.WithMeterProvider(mp), otelagent.WithClient(srv.Client()))
	})
}

// BenchmarkRunNoSDK is agent.Run with otelagent on the API's no-op
// providers: what installing otelagent costs a program that installs no
// OpenTelemetry SDK.
func BenchmarkRunNoSDK(b *testing.B) {
	benchRun(b, func(srv *fake.Server) agent.Observer {
		return otelagent.New(otelagent.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelagent.WithMeterProvider(metricnoop.NewMeterProvider()), otelagent.WithClient(srv.Client()))
	})
}

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
