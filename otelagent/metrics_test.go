package otelagent_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The two client metrics are histograms with the conventions' names, units
// and bucket boundaries: tokens by type for each model call, and the
// duration of each model call (with error.type when it failed) and of
// each run.
func TestMetrics(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather), Retry: fastRetry,
		Observer: tel.observer(srv)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Error(429, "slow down"), fake.Calls(call("Paris")), fake.Text("Sunny."))
	res, err := a.Run(context.Background(), user("Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.URL[len("http://"):])
	base := map[string]any{
		"gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gcp.gemini",
		"gen_ai.request.model": model, "server.address": "127.0.0.1", "server.port": port,
	}
	with := func(extra map[string]any) string {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return fmt.Sprint(m)
	}

	tokens := histogram[int64](t, tel.metrics(t), "gen_ai.client.token.usage", "{token}")
	wantTokens := map[string]int64{
		with(map[string]any{"gen_ai.token.type": "input", "gen_ai.response.model": model}):  int64(res.Usage.PromptTokens),
		with(map[string]any{"gen_ai.token.type": "output", "gen_ai.response.model": model}): int64(res.Usage.CandidatesTokens + res.Usage.ThoughtsTokens),
	}
	gotTokens := map[string]int64{}
	for _, p := range tokens.DataPoints {
		gotTokens[fmt.Sprint(metricAttrs(p.Attributes))] = p.Sum
		if p.Count != 2 {
			t.Errorf("token point %v: count %d, want 2 (one per successful model call)", metricAttrs(p.Attributes), p.Count)
		}
		if diff := cmp.Diff([]float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}, p.Bounds); diff != "" {
			t.Errorf("token buckets (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(wantTokens, gotTokens); diff != "" {
		t.Errorf("token sums by attributes (-want +got):\n%s", diff)
	}

	durations := histogram[float64](t, tel.metrics(t), "gen_ai.client.operation.duration", "s")
	wantCounts := map[string]uint64{
		with(map[string]any{"error.type": "429"}):            1,
		with(map[string]any{"gen_ai.response.model": model}): 2,
		fmt.Sprint(map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "gcp.gemini", "gen_ai.request.model": model}): 1,
	}
	gotCounts := map[string]uint64{}
	for _, p := range durations.DataPoints {
		gotCounts[fmt.Sprint(metricAttrs(p.Attributes))] = p.Count
		if diff := cmp.Diff([]float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}, p.Bounds); diff != "" {
			t.Errorf("duration buckets (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff(wantCounts, gotCounts); diff != "" {
		t.Errorf("duration counts by attributes (-want +got):\n%s", diff)
	}
}

// histogram returns the histogram called name, checking its unit.
func histogram[N int64 | float64](t *testing.T, rm metricdata.ResourceMetrics, name, unit string) metricdata.Histogram[N] {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if m.Unit != unit {
				t.Errorf("%s: unit %q, want %q", name, m.Unit, unit)
			}
			h, ok := m.Data.(metricdata.Histogram[N])
			if !ok {
				t.Fatalf("%s is a %T, want a histogram", name, m.Data)
			}
			return h
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Histogram[N]{}
}
