package main

import (
	"context"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// TestSpansOfARunThatMovesWorkers: a traced run (otelagent on the
// workers, with otelagent.NewIDGenerator, and on the client, so that the
// run nests under the caller's span) starts on one worker, waits for
// approval, and ends on another worker that knows nothing of it: the first
// is stopped and the process's workflow cache purged, so that the second
// replays the run's history from the server. The trace holds each span
// once (the replay reports nothing), in the caller's trace, the run's span
// under the caller's and every model call and tool call under the run's,
// wherever it ran, as agent.Run nests them.
func TestSpansOfARunThatMovesWorkers(t *testing.T) {
	e := newEnv(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(otelagent.NewIDGenerator(nil)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	obs := otelagent.New(otelagent.WithTracerProvider(tp))
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: model.URL}})
	if err != nil {
		t.Fatal(err)
	}
	startWorker := func() worker.Worker {
		type cityIn struct {
			City string `json:"city"`
		}
		type payIn struct {
			Amount float64 `json:"amount"`
		}
		a, err := agent.New(agent.Config{Models: gc.Models, Model: "gemini-3-flash-preview", Name: "payer", Observer: obs,
			Tools: toolset.MustNew(
				toolset.MustFunc("pay", "Pays", func(ctx context.Context, in payIn) (string, error) { return "paid", nil }),
				toolset.MustFunc("get_weather", "Weather in a city", func(ctx context.Context, in cityIn) (string, error) {
					return "sunny in " + in.City, nil
				})),
			NeedsApproval: func(call *genai.FunctionCall) bool { return call.Name == "pay" }})
		if err != nil {
			t.Fatal(err)
		}
		w := worker.New(e.ts.GetDefaultClient(), e.queue, worker.Options{})
		if err := temporalagent.Register(w, temporalagent.Agent{Name: "approve", Agent: a}); err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	ended := func(name string) int {
		n := 0
		for _, s := range rec.Ended() {
			if s.Name() == name {
				n++
			}
		}
		return n
	}

	first := startWorker()
	ac := temporalagent.NewClient(e.ts.GetDefaultClient(), e.queue, temporalagent.WithObserver(otelagent.New()))
	caller, span := tp.Tracer("app").Start(context.Background(), "handle request")
	run, err := ac.Start(caller, client.StartWorkflowOptions{ID: e.queue + "-moves"}, "approve", []*genai.Content{genai.NewContentFromText("pay m1", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	span.End()
	e.waitFor(60*time.Second, "the pay calls to wait for approval and the weather call to end", func() bool {
		p, err := run.Progress(context.Background())
		return err == nil && len(p.Pending) == 2 && ended("execute_tool get_weather") == 1
	})
	first.Stop()
	worker.PurgeStickyWorkflowCache()
	second := startWorker()
	defer second.Stop()
	if err := run.Approve(context.Background(), "0.0"); err != nil {
		t.Fatal(err)
	}
	if err := run.Deny(context.Background(), "0.1", "too much"); err != nil {
		t.Fatal(err)
	}
	if _, err := result(t, run, 60*time.Second); err != nil {
		t.Fatal(err)
	}

	spans := rec.Ended()
	var open []sdktrace.ReadOnlySpan // started, never ended: never exported
	for _, s := range rec.Started() {
		if s.EndTime().IsZero() {
			open = append(open, s)
		}
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = append(byName[s.Name()], s)
		if s.SpanContext().TraceID() != span.SpanContext().TraceID() {
			t.Errorf("span %q is in trace %s, the caller's is %s", s.Name(), s.SpanContext().TraceID(), span.SpanContext().TraceID())
		}
	}
	for name, n := range map[string]int{"handle request": 1, "invoke_agent payer": 1, "generate_content gemini-3-flash-preview": 2,
		"execute_tool pay": 2, "execute_tool get_weather": 1} {
		if got := len(byName[name]); got != n {
			t.Errorf("%d %q spans, want %d", got, name, n)
		}
	}
	if len(spans) != 7 {
		t.Errorf("%d spans, want 7", len(spans))
	}
	runs := byName["invoke_agent payer"]
	if len(runs) != 1 {
		t.FailNow()
	}
	r := runs[0]
	// The first worker started the run's span and could not end it (it
	// stopped); the second made it again, with its ids, as the run ended.
	if len(open) != 1 || open[0].Name() != r.Name() || open[0].SpanContext().SpanID() != r.SpanContext().SpanID() {
		t.Errorf("spans left open: %v; want only the first worker's run span, %s", open, r.SpanContext().SpanID())
	}
	if r.Parent().SpanID() != span.SpanContext().SpanID() || len(r.Links()) != 0 {
		t.Errorf("the run's span is under %s with links %v; want it under the caller's, %s, with the span id its children name",
			r.Parent().SpanID(), r.Links(), span.SpanContext().SpanID())
	}
	for _, s := range spans {
		if s.Name() != "handle request" && s != r && s.Parent().SpanID() != r.SpanContext().SpanID() {
			t.Errorf("span %q is under %s, not under the run's span %s", s.Name(), s.Parent().SpanID(), r.SpanContext().SpanID())
		}
		if s != r && s.Name() != "handle request" && s.StartTime().Before(r.StartTime()) {
			t.Errorf("span %q starts before the run's", s.Name())
		}
	}
}
