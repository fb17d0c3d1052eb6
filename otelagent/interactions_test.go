package otelagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A run on the Interactions API: its model calls are create_interaction
// spans, on the provider and server of the Models' client, with the
// interaction's id as the response id; the metrics say so too.
func TestInteractionsSpans(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		tel := newTelemetry(t)
		models := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
		obs := otelagent.New(otelagent.WithTracerProvider(tel.tp), otelagent.WithMeterProvider(tel.mp), otelagent.WithModels(models))
		a, err := agent.New(agent.Config{Models: models, Model: model, Tools: toolset.MustNew(weather), Observer: obs, Retry: fastRetry})
		if err != nil {
			t.Fatal(err)
		}
		srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
		if _, err := run(context.Background(), a, stream, user("Paris?")); err != nil {
			t.Fatal(err)
		}
		var calls int
		for _, s := range tel.ended(t) {
			if !strings.HasPrefix(s.Name(), "create_interaction") {
				if strings.HasPrefix(s.Name(), "generate_content") {
					t.Errorf("a span named %q", s.Name())
				}
				continue
			}
			calls++
			at := attrs(s)
			if s.Name() != "create_interaction "+model || at["gen_ai.operation.name"] != "create_interaction" ||
				at["gen_ai.provider.name"] != "gcp.gemini" || at["server.address"] != "127.0.0.1" ||
				!strings.HasPrefix(at["gen_ai.response.id"].(string), "v1_") {
				t.Errorf("stream %t: span %s %v", stream, s.Name(), at)
			}
		}
		if calls != 2 {
			t.Errorf("stream %t: %d create_interaction spans; want 2", stream, calls)
		}
		for _, sm := range tel.metrics(t).ScopeMetrics {
			for _, m := range sm.Metrics {
				if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "gen_ai.client.operation.duration" {
					ops := map[string]bool{}
					for _, dp := range h.DataPoints {
						v, _ := dp.Attributes.Value("gen_ai.operation.name")
						ops[v.AsString()] = true
					}
					if !ops["create_interaction"] || ops["generate_content"] {
						t.Errorf("stream %t: durations recorded for %v", stream, ops)
					}
				}
			}
		}
	}
}
