package otelagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The API key appears in no span, span event, status or metric: not with
// content captured, not in the HTTP spans, not in errors.
func TestAPIKeyNeverRecorded(t *testing.T) {
	const key = "AIzaSy-secret-key-0123456789"
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv, tel := newServer(t), newTelemetry(t)
			client := tracedClient(t, srv, key, otelhttp.WithMeterProvider(tel.mp))
			a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(weather), Retry: fastRetry,
				Observer: otelagent.New(otelagent.WithTracerProvider(tel.tp), otelagent.WithMeterProvider(tel.mp),
					otelagent.WithClient(client), otelagent.WithCaptureContent(true))})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(fake.Error(503, "busy"), fake.Calls(call("Paris")), fake.Text("Sunny."))
			if _, err := run(context.Background(), a, stream, user("Weather in Paris?")); err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(fake.Error(403, "denied"))
			if _, err := run(context.Background(), a, stream, user("again")); err == nil {
				t.Fatal("second run succeeded, want the 403")
			}
			if got := srv.LastRequest().APIKey; got != key {
				t.Fatalf("the server got key %q, want %q: the test would prove nothing", got, key)
			}

			spans := tel.ended(t)
			if len(named(spans, "HTTP POST")) == 0 || len(named(spans, "generate_content "+model)) == 0 {
				t.Fatalf("missing spans:\n%s", tree(spans))
			}
			for _, s := range spans {
				if text := spanText(s); strings.Contains(text, key) {
					t.Errorf("span %q holds the API key: %s", s.Name(), text)
				}
			}
			rm := tel.metrics(t)
			if len(rm.ScopeMetrics) == 0 {
				t.Fatal("no metrics recorded")
			}
			if b, _ := json.Marshal(metricText(rm)); strings.Contains(string(b), key) {
				t.Errorf("metrics hold the API key: %s", b)
			}
		})
	}
}

// spanText is everything a span records, as text.
func spanText(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	fmt.Fprintln(&b, s.Name(), s.Status().Description, s.InstrumentationScope().Name)
	writeAttrs(&b, s.Attributes())
	writeAttrs(&b, s.Resource().Attributes())
	for _, e := range s.Events() {
		fmt.Fprintln(&b, e.Name)
		writeAttrs(&b, e.Attributes)
	}
	for _, l := range s.Links() {
		writeAttrs(&b, l.Attributes)
	}
	return b.String()
}

func writeAttrs(b *strings.Builder, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		fmt.Fprintf(b, "%s=%s\n", kv.Key, kv.Value.String())
	}
}

// metricText is every metric's name and every data point's attributes.
func metricText(rm metricdata.ResourceMetrics) []string {
	var out []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out = append(out, m.Name, m.Description)
			var sets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			}
			for _, s := range sets {
				for _, kv := range s.ToSlice() {
					out = append(out, string(kv.Key)+"="+kv.Value.String())
				}
			}
		}
	}
	return out
}

// With content capture off, a call whose arguments fail validation is
// described without the values the model sent (the validator quotes them:
// an e-mail address, say), by the argument's path; so is a typed answer
// refused for its values. With capture on, the validator's own words are
// kept.
func TestArgumentValuesNotRecorded(t *testing.T) {
	const secret = "bob.secret@corp.example"
	type findIn struct {
		Email string `json:"email"`
	}
	schema, err := jsonschema.For[findIn](nil)
	if err != nil {
		t.Fatal(err)
	}
	schema.Properties["email"].Pattern = `^[a-z]+@example\.org$`
	find := toolset.MustDefine(toolset.Tool{Name: "find_user", Description: "Finds a user", InputSchema: schema,
		Run: func(context.Context, map[string]any) (any, error) { return "found", nil }})
	type answer struct {
		Count int `json:"count"`
	}
	for _, capture := range []bool{false, true} {
		t.Run(fmt.Sprintf("capture=%v", capture), func(t *testing.T) {
			srv, tel := newServer(t), newTelemetry(t)
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(find),
				Output:   agent.OutputConfig{Strategy: agent.OutputTool, MaxReasks: -1},
				Observer: tel.observer(srv, otelagent.WithCaptureContent(capture))})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(
				fake.Calls(fake.Call("find_user", map[string]any{"email": secret})),
				fake.Calls(fake.Call("final_answer", map[string]any{"count": secret})),
			)
			_, _, err = agent.RunTyped[answer](context.Background(), a, user("How many users named Bob?"))
			if !errors.Is(err, agent.ErrInvalidOutput) {
				t.Fatalf("RunTyped: %v, want the answer refused", err)
			}
			spans := tel.ended(t)
			tools := named(spans, "execute_tool find_user")
			if len(tools) != 1 {
				t.Fatalf("%d find_user spans, want 1:\n%s", len(tools), tree(spans))
			}
			status := tools[0].Status()
			checkAttrs(t, tools[0], map[string]any{"error.type": "invalid_arguments"})
			if !capture {
				want := `invalid arguments: argument "email" does not match the tool's input schema (values not recorded: content capture is off)`
				if status.Code != codes.Error || status.Description != want {
					t.Errorf("find_user status = %v %q, want %q", status.Code, status.Description, want)
				}
				if run := named(spans, "invoke_agent"); len(run) != 1 || run[0].Status().Code != codes.Error {
					t.Errorf("run spans %v, want one, failed", run)
				}
				for _, s := range spans {
					if text := spanText(s); strings.Contains(text, secret) {
						t.Errorf("span %q holds the argument's value with capture off: %s", s.Name(), text)
					}
				}
				return
			}
			if !strings.Contains(status.Description, secret) || !strings.Contains(status.Description, `argument "email"`) {
				t.Errorf("find_user status = %q, want the validator's message, with the value, when content is captured", status.Description)
			}
			if run := named(spans, "invoke_agent"); len(run) != 1 || !strings.Contains(run[0].Status().Description, secret) {
				t.Errorf("run spans %v, want one whose status quotes the refused answer, when content is captured", run)
			}
		})
	}
}
