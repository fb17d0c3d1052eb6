package temporalagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is a real OpenTelemetry SDK recording every span, and a meter
// provider read on demand.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

// newTelemetry returns telemetry whose tracer provider takes its ids from
// otelagent.NewIDGenerator when durableIDs is set, and from the SDK's
// default generator otherwise.
func newTelemetry(t *testing.T, durableIDs bool) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(tel.spans)}
	if durableIDs {
		opts = append(opts, sdktrace.WithIDGenerator(otelagent.NewIDGenerator(nil)))
	}
	tel.tp = sdktrace.NewTracerProvider(opts...)
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) observer(srv *fake.Server, opts ...otelagent.Option) *otelagent.Observer {
	return otelagent.New(append([]otelagent.Option{otelagent.WithTracerProvider(tel.tp), otelagent.WithMeterProvider(tel.mp),
		otelagent.WithClient(srv.Client()), otelagent.WithAgentName("forecaster")}, opts...)...)
}

// ended returns the spans ended, and fails the test when a span started
// and did not end, or ended twice.
func (tel *telemetry) ended(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	ended := tel.spans.Ended()
	seen := map[trace.SpanID]bool{}
	for _, s := range ended {
		if id := s.SpanContext().SpanID(); seen[id] {
			t.Errorf("span %q (%s) ended twice", s.Name(), id)
		} else {
			seen[id] = true
		}
	}
	return ended
}

// tokenPoints returns the count of gen_ai.client.token.usage recordings
// and their sum, by token type, and the count of run durations.
func (tel *telemetry) tokenPoints(t *testing.T) (map[string][2]int64, uint64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	tokens := map[string][2]int64{}
	var runs uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					typ, _ := p.Attributes.Value("gen_ai.token.type")
					v := tokens[typ.AsString()]
					tokens[typ.AsString()] = [2]int64{v[0] + int64(p.Count), v[1] + p.Sum}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if op, _ := p.Attributes.Value("gen_ai.operation.name"); op.AsString() == "invoke_agent" {
						runs += p.Count
					}
				}
			}
		}
	}
	return tokens, runs
}

// varying are the attributes that differ between two fake servers playing
// the same conversation: the response ids, and the server's port.
var varying = map[attribute.Key]bool{"gen_ai.response.id": true, "server.port": true}

// render draws spans as a tree: each span with its kind, status and
// attributes but the varying ones, its children under it, siblings in the
// order of their drawing (parallel tool calls start in any order).
func render(spans []sdktrace.ReadOnlySpan) string {
	ids := map[trace.SpanID]bool{}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
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
	var draw func(s sdktrace.ReadOnlySpan, depth int) string
	draw = func(s sdktrace.ReadOnlySpan, depth int) string {
		var b strings.Builder
		indent := strings.Repeat("  ", depth)
		fmt.Fprintf(&b, "%s%s [%v %v %q]\n", indent, s.Name(), s.SpanKind(), s.Status().Code, s.Status().Description)
		var attrs []string
		for _, kv := range s.Attributes() {
			if !varying[kv.Key] {
				attrs = append(attrs, fmt.Sprintf("%s  %s=%s\n", indent, kv.Key, kv.Value.String()))
			}
		}
		slices.Sort(attrs)
		b.WriteString(strings.Join(attrs, ""))
		var kids []string
		for _, k := range children[s.SpanContext().SpanID()] {
			kids = append(kids, draw(k, depth+1))
		}
		slices.Sort(kids)
		b.WriteString(strings.Join(kids, ""))
		return b.String()
	}
	var out []string
	for _, r := range roots {
		out = append(out, draw(r, 0))
	}
	slices.Sort(out)
	return strings.Join(out, "")
}

// lookupTool is a get_weather tool that starts a span of its own, "lookup
// {city}", under the span of its context.
func lookupTool() *toolset.Set {
	return toolset.MustNew(toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in weatherIn) (string, error) {
		_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("weather").Start(ctx, "lookup "+in.City)
		defer span.End()
		return "sunny in " + in.City, nil
	}))
}

// tracedScript is a conversation of three turns: two parallel calls, one
// call and a call of an unknown tool, then the answer.
func tracedScript() []*fake.Reply {
	return []*fake.Reply{
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Tokyo"})),
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"}), fake.Call("no_such_tool", map[string]any{})),
		fake.Text("Sunny in Paris, Tokyo and Oslo."),
	}
}

// TestSpansAsAgentRun: a durable run, observed by otelagent on the
// workers, makes the spans agent.Run makes for the same conversation: the
// run's span under the caller's, with the spans of its model calls and tool
// calls under it and the spans a tool starts under its call's, with the
// same names, kinds, statuses and attributes (the messages too, when
// content is captured); and the same metrics. So it does when the run's
// steps are made from activities of either kind, and when the run
// continues as new, so that its span ends in an execution other than the
// one that started it (with otelagent.NewIDGenerator on the provider).
func TestSpansAsAgentRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		regular bool
		every   int // ContinueAsNewEvery
		capture bool
	}{
		{"local", false, 0, false},
		{"regular", true, 0, false},
		{"continue-as-new", false, 1, false},
		{"content captured", false, 0, true},
		{"content captured, continue-as-new", true, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			direct := newTelemetry(t, true)
			srv.Enqueue(tracedScript()...)
			capture := otelagent.WithCaptureContent(tc.capture)
			a := newAgent(t, srv, lookupTool(), func(c *agent.Config) { c.Observer = direct.observer(srv, capture) })
			caller, span := direct.tp.Tracer("app").Start(context.Background(), "handle request")
			if _, err := a.Run(caller, user("Weather?")); err != nil {
				t.Fatalf("agent.Run: %v", err)
			}
			span.End()

			srv = newServer(t)
			durable := newTelemetry(t, true)
			srv.Enqueue(tracedScript()...)
			obs := durable.observer(srv, capture)
			def := Agent{Name: "w", Agent: newAgent(t, srv, lookupTool(), func(c *agent.Config) { c.Observer = obs }),
				RegularModelCalls: tc.regular, ContinueAsNewEvery: tc.every}
			caller, span = durable.tp.Tracer("app").Start(context.Background(), "handle request")
			_, executions, err := executeInput(t, def, runInput{Agent: "w", Contents: user("Weather?"), Context: obs.Carry(caller)}, nil)
			if err != nil {
				t.Fatalf("durable run: %v", err)
			}
			span.End()
			if want := 1 + 2*tc.every; executions != want {
				t.Errorf("%d executions, want %d", executions, want)
			}

			want, got := direct.ended(t), durable.ended(t)
			if diff := cmp.Diff(render(want), render(got)); diff != "" {
				t.Errorf("spans of the durable run (+) differ from agent.Run's (-):\n%s", diff)
			}
			if len(got) != len(want) || len(got) != 1+1+3+3+3+1 {
				t.Errorf("%d spans, agent.Run made %d; want 12 (the caller, the run, 3 model calls, 4 tool calls, 3 lookups)", len(got), len(want))
			}
			root := named(got, "handle request")
			if len(root) != 1 {
				t.Fatalf("%d caller spans", len(root))
			}
			for _, s := range got {
				if s.SpanContext().TraceID() != root[0].SpanContext().TraceID() {
					t.Errorf("span %q is in trace %s, the caller's is %s", s.Name(), s.SpanContext().TraceID(), root[0].SpanContext().TraceID())
				}
			}
			if run := named(got, "invoke_agent forecaster"); len(run) != 1 || run[0].Parent().SpanID() != root[0].SpanContext().SpanID() {
				t.Errorf("run spans %v, want one, under the caller's", run)
			}

			wantTokens, wantRuns := direct.tokenPoints(t)
			gotTokens, gotRuns := durable.tokenPoints(t)
			if diff := cmp.Diff(wantTokens, gotTokens); diff != "" || gotRuns != wantRuns || gotRuns != 1 {
				t.Errorf("token usage by type (count, sum) differs from agent.Run's (-want +got):\n%s\nruns recorded: %d, agent.Run %d", diff, gotRuns, wantRuns)
			}
		})
	}
}

// named returns the spans called name.
func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// TestSpansWithoutDurableIDs: with the SDK's own ID generator, the span of
// a run that ends in another execution than the one that started it (it
// continued as new) cannot have the span id its children name, which only
// the process that started it could end; it is made when the run ends,
// once, under the caller's span, with a link to the span its children
// name, and every span stays in the caller's trace.
func TestSpansWithoutDurableIDs(t *testing.T) {
	srv := newServer(t)
	tel := newTelemetry(t, false)
	srv.Enqueue(tracedScript()...)
	obs := tel.observer(srv)
	def := Agent{Name: "w", Agent: newAgent(t, srv, lookupTool(), func(c *agent.Config) { c.Observer = obs }), ContinueAsNewEvery: 1}
	caller, span := tel.tp.Tracer("app").Start(context.Background(), "handle request")
	if _, _, err := executeInput(t, def, runInput{Agent: "w", Contents: user("Weather?"), Context: obs.Carry(caller)}, nil); err != nil {
		t.Fatal(err)
	}
	span.End()
	spans := tel.ended(t)
	run := named(spans, "invoke_agent forecaster")
	if len(run) != 1 || run[0].Parent().SpanID() != span.SpanContext().SpanID() {
		t.Fatalf("run spans %v, want one, under the caller's", run)
	}
	links := run[0].Links()
	if len(links) != 1 {
		t.Fatalf("the run's span has %d links, want 1", len(links))
	}
	calls := named(spans, "generate_content "+testModel)
	if len(calls) != 3 {
		t.Fatalf("%d model call spans, want 3", len(calls))
	}
	for _, s := range append(calls, named(spans, "execute_tool get_weather")...) {
		if s.Parent().SpanID() != links[0].SpanContext.SpanID() {
			t.Errorf("span %q is under %s; the run's span links to %s", s.Name(), s.Parent().SpanID(), links[0].SpanContext.SpanID())
		}
	}
	for _, s := range spans {
		if s.SpanContext().TraceID() != span.SpanContext().TraceID() {
			t.Errorf("span %q is in another trace than the caller's", s.Name())
		}
	}
}
