package otelagent_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// A run carried to other processes (Observers of their own, on the same
// backend): its model call, made in a second, nests under the run's span
// and records its metrics; the run ends in a third, which makes the run's
// span again, with the ids and start time it had in the first (the
// provider takes its ids from NewIDGenerator), under the caller's span.
func TestCarry(t *testing.T) {
	tel := newTelemetry(t, sdktrace.WithIDGenerator(otelagent.NewIDGenerator(nil)))
	tp := tel.tp
	process := func() *otelagent.Observer {
		return otelagent.New(otelagent.WithTracerProvider(tp), otelagent.WithMeterProvider(tel.mp), otelagent.WithCaptureContent(false))
	}

	if m := process().Carry(context.Background()); m != nil {
		t.Errorf("Carry of a context with no span = %v, want nil", m)
	}
	caller, span := tp.Tracer("app").Start(context.Background(), "handle request")
	defer span.End()
	m := process().Carry(caller)
	if len(m) != 1 || m["otelagent.parent.traceparent"] == "" {
		t.Fatalf("Carry of the caller's context = %v, want its traceparent only", m)
	}

	first := process()
	runCtx := first.StartContext(first.Resume(context.Background(), m), &agent.Event{Kind: agent.EventRunStart, Model: model, Agent: "w"})
	started := trace.SpanFromContext(runCtx).SpanContext()
	run := first.Carry(runCtx)

	second := process()
	req := &agent.Event{Kind: agent.EventModelRequest, Model: model, Agent: "w", Attempt: 1}
	callCtx := second.StartContext(second.Resume(context.Background(), run), req)
	second.Observe(callCtx, req)
	second.Observe(callCtx, &agent.Event{Kind: agent.EventModelResponse, Agent: "w", Response: &genai.GenerateContentResponse{
		Candidates:    []*genai.Candidate{{Content: genai.NewContentFromText("hi", genai.RoleModel), FinishReason: genai.FinishReasonStop}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 2}}})

	third := process()
	third.Observe(third.Resume(context.Background(), run), &agent.Event{Kind: agent.EventDone, Agent: "w", Result: &agent.Result{}})

	spans := tel.spans.Ended() // the first process's run span stays open: it is never exported
	runs, calls := named(spans, "invoke_agent w"), named(spans, "generate_content "+model)
	if len(spans) != 2 || len(runs) != 1 || len(calls) != 1 {
		t.Fatalf("spans:\n%s", tree(spans))
	}
	r := runs[0]
	if r.SpanContext().SpanID() != started.SpanID() || r.SpanContext().TraceID() != span.SpanContext().TraceID() ||
		r.Parent().SpanID() != span.SpanContext().SpanID() || len(r.Links()) != 0 {
		t.Errorf("the run's span is %s under %s, want %s (the one the first process started) under the caller's %s",
			r.SpanContext().SpanID(), r.Parent().SpanID(), started.SpanID(), span.SpanContext().SpanID())
	}
	if calls[0].Parent().SpanID() != started.SpanID() || calls[0].StartTime().Before(r.StartTime()) {
		t.Errorf("the model call is under %s, want the run's %s, and after its start", calls[0].Parent().SpanID(), started.SpanID())
	}
	checkAttrs(t, r, map[string]any{"gen_ai.agent.name": "w", "gen_ai.request.model": model, "gen_ai.operation.name": "invoke_agent"})

	rm := tel.metrics(t)
	points := map[string]int{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				if v, _ := p.Attributes.Value("gen_ai.request.model"); v.AsString() == model {
					points[m.Name] += int(p.Count)
				}
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				op, _ := p.Attributes.Value("gen_ai.operation.name")
				points[m.Name+" "+op.AsString()] += int(p.Count)
			}
		}
	}
	want := map[string]int{"gen_ai.client.token.usage": 2, "gen_ai.client.operation.duration generate_content": 1,
		"gen_ai.client.operation.duration invoke_agent": 1}
	for k, n := range want {
		if points[k] != n {
			t.Errorf("%s: %d recordings, want %d (all: %v)", k, points[k], n, points)
		}
	}
}

// What Resume does not understand resumes nothing, and breaks nothing.
func TestResumeGarbage(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	obs := tel.observer(srv)
	for _, m := range []map[string]string{
		nil, {}, {"otelagent.start": "soon"}, {"otelagent.parent.traceparent": "00-zz-zz-01"},
		{"otelagent.start": "1", "otelagent.run.traceparent": "garbage"},
	} {
		ctx := obs.Resume(context.Background(), m)
		e := &agent.Event{Kind: agent.EventModelRequest, Model: model}
		obs.Observe(obs.StartContext(ctx, e), e)
		obs.Observe(ctx, &agent.Event{Kind: agent.EventDone, Result: &agent.Result{}})
	}
	for _, s := range tel.ended(t) {
		if s.Parent().IsValid() {
			t.Errorf("span %q has a parent, %s, from garbage", s.Name(), s.Parent().SpanID())
		}
	}
}

// NewIDGenerator gives valid random ids, or those of its fallback, to
// every span but a resumed run's.
func TestIDGenerator(t *testing.T) {
	g := otelagent.NewIDGenerator(nil)
	seen := map[trace.SpanID]bool{}
	for range 100 {
		tid, sid := g.NewIDs(context.Background())
		if !tid.IsValid() || !sid.IsValid() || seen[sid] {
			t.Fatalf("NewIDs = %s %s", tid, sid)
		}
		seen[sid] = true
		if s := g.NewSpanID(context.Background(), tid); !s.IsValid() || seen[s] {
			t.Fatalf("NewSpanID = %s", s)
		}
	}
	fixed := otelagent.NewIDGenerator(fixedIDs{})
	if tid, sid := fixed.NewIDs(context.Background()); tid != (trace.TraceID{1}) || sid != (trace.SpanID{2}) {
		t.Errorf("with a fallback: %s %s", tid, sid)
	}
	var _ sdktrace.IDGenerator = g // the SDK takes it
}

type fixedIDs struct{}

func (fixedIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	return trace.TraceID{1}, trace.SpanID{2}
}
func (fixedIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return trace.SpanID{3} }
