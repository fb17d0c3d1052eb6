package otelagent_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

const model = "gemini-3-flash-preview" // the fake gives its calls ids and thought signatures

// telemetry is a real SDK tracer provider recording every span, and a
// meter provider read on demand.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T, opts ...sdktrace.TracerProviderOption) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(append(opts, sdktrace.WithSpanProcessor(tel.spans))...)
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// observer returns an Observer recording to tel, for the agents of srv.
func (tel *telemetry) observer(srv *fake.Server, opts ...otelagent.Option) *otelagent.Observer {
	base := []otelagent.Option{otelagent.WithTracerProvider(tel.tp), otelagent.WithMeterProvider(tel.mp), otelagent.WithClient(srv.Client())}
	return otelagent.New(append(base, opts...)...)
}

// metrics collects the metrics recorded so far.
func (tel *telemetry) metrics(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// ended returns the ended spans, and fails the test if any span started
// was not ended.
func (tel *telemetry) ended(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	started, ended := tel.spans.Started(), tel.spans.Ended()
	if len(started) != len(ended) {
		var open []string
		for _, s := range started {
			if s.EndTime().IsZero() {
				open = append(open, s.Name())
			}
		}
		t.Errorf("%d spans started, %d ended; open: %v", len(started), len(ended), open)
	}
	return ended
}

// newServer starts a fake Gemini server, closed when the test ends, that
// fails the test if any request broke the protocol.
func newServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	t.Cleanup(func() {
		for _, rj := range srv.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
		srv.Close()
	})
	return srv
}

// tracedClient returns a genai client on srv whose HTTP transport is
// wrapped with otelhttp, with no provider of its own: its spans go to the
// provider of the span in the request's context.
func tracedClient(t *testing.T, srv *fake.Server, apiKey string, opts ...otelhttp.Option) *genai.Client {
	t.Helper()
	cc := srv.ClientConfig()
	if apiKey != "" {
		cc.APIKey = apiKey
	}
	cc.HTTPClient = &http.Client{Transport: otelhttp.NewTransport(cc.HTTPClient.Transport, opts...)}
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

var fastRetry = agent.RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Jitter: -1}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

// weather is a get_weather tool that starts a span of its own, "lookup
// {city}", with the tracer provider of the span in its context.
var weather = toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in weatherIn) (string, error) {
	_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("weather").Start(ctx, "lookup "+in.City)
	defer span.End()
	return "sunny in " + in.City, nil
})

func user(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}

func call(city string) *genai.FunctionCall {
	return fake.Call("get_weather", map[string]any{"city": city})
}

// run runs a, or streams it to the end when stream is set.
func run(ctx context.Context, a *agent.Agent, stream bool, contents []*genai.Content) (*agent.Result, error) {
	if !stream {
		return a.Run(ctx, contents)
	}
	var res *agent.Result
	var err error
	for ev, e := range a.Stream(ctx, contents) {
		if ev.Kind == agent.EventDone {
			res, err = ev.Result, e
		}
	}
	return res, err
}

// tree draws spans as an indented tree, children in order of start: one
// span per line, its name, two spaces per level.
func tree(spans []sdktrace.ReadOnlySpan) string {
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent().SpanID(); p.IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) }
	var b strings.Builder
	var draw func(s sdktrace.ReadOnlySpan, depth int)
	draw = func(s sdktrace.ReadOnlySpan, depth int) {
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name())
		kids := children[s.SpanContext().SpanID()]
		slices.SortStableFunc(kids, byStart)
		for _, k := range kids {
			draw(k, depth+1)
		}
	}
	slices.SortStableFunc(roots, byStart)
	for _, r := range roots {
		draw(r, 0)
	}
	return b.String()
}

// named returns the spans called name, in order of start.
func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return out
}

// attrs returns a span's attributes as a map from key to value.
func attrs(s sdktrace.ReadOnlySpan) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// diffAttrs reports the attributes of s that differ from want, where a want
// value of nil means "absent".
func diffAttrs(s sdktrace.ReadOnlySpan, want map[string]any) []string {
	got := attrs(s)
	var diffs []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w := want[k]
		g, ok := got[k]
		switch {
		case w == nil && ok:
			diffs = append(diffs, fmt.Sprintf("%s = %v, want absent", k, g))
		case w != nil && !ok:
			diffs = append(diffs, fmt.Sprintf("%s absent, want %v", k, w))
		case w != nil && fmt.Sprint(g) != fmt.Sprint(w):
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", k, g, w))
		}
	}
	return diffs
}

func checkAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	for _, d := range diffAttrs(s, want) {
		t.Errorf("span %q: %s", s.Name(), d)
	}
}

// strAttr returns the string attribute key of s.
func strAttr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}

// metricAttrs returns a data point's attributes as a map.
func metricAttrs(set attribute.Set) map[string]any {
	m := map[string]any{}
	for _, kv := range set.ToSlice() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}
