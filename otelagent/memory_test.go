package otelagent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genai"
)

type userKey struct{}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// The memory service's work as spans: Preload's search under the run's
// span, with what it found; an ingest; a failure with its status.
func TestMemorySpans(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	tel := newTelemetry(t)
	obs := tel.observer(srv, otelagent.WithCaptureContent(true))
	svc, err := memory.New(memory.Config{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	ctx := context.WithValue(context.Background(), userKey{}, "alice")
	user := func(ctx context.Context) string { s, _ := ctx.Value(userKey{}).(string); return s }
	if _, err := svc.Remember(ctx, "alice", memory.Fact{Text: "Alice's dog is called Rex."}); err != nil {
		t.Fatal(err)
	}
	pre := &memory.Preload{Service: svc, User: user}
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Observer: obs, PrepareHistory: pre.Prepare})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Text("Rex."))
	if _, err := a.Run(ctx, []*genai.Content{genai.NewContentFromText("What's my dog's name?", genai.RoleUser)}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Forget(ctx, "bob", "mem_missing"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatal(err)
	}
	spans := tel.ended(t)
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = s
	}
	search, ingest := byName["memory search"], byName["memory ingest"]
	var run sdktrace.ReadOnlySpan
	for _, s := range spans {
		if !s.Parent().SpanID().IsValid() && s.Name() != "memory ingest" {
			run = s
		}
	}
	if search == nil || ingest == nil || run == nil {
		t.Fatalf("spans: %v", byName)
	}
	if search.Parent().SpanID() != run.SpanContext().SpanID() {
		t.Errorf("the search's parent is %v, want the run's span %s", search.Parent().SpanID(), run.Name())
	}
	if v, _ := attr(search, otelagent.MemoryResultsKey); v.AsInt64() != 1 {
		t.Errorf("results = %v", v)
	}
	if v, _ := attr(search, otelagent.MemoryQueryKey); v.AsString() != "What's my dog's name?" {
		t.Errorf("query = %v", v)
	}
	if search.EndTime().Before(search.StartTime()) || search.StartTime().Before(run.StartTime()) {
		t.Errorf("the search's times %v–%v are not within the run's %v", search.StartTime(), search.EndTime(), run.StartTime())
	}
	if v, _ := attr(ingest, otelagent.MemoryAddedKey); v.AsInt64() != 1 {
		t.Errorf("ingest added = %v", v)
	}
	for _, kv := range ingest.Attributes() {
		if kv.Value.AsString() == "alice" {
			t.Errorf("the user id is recorded: %v", kv)
		}
	}
	if _, ok := byName["memory forget"]; ok {
		t.Error("a forget that failed made a span: it is no event")
	}
}

// An extraction's span has the model's usage; a failed one, its status.
func TestMemoryExtractSpan(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	tel := newTelemetry(t)
	obs := tel.observer(srv)
	svc, err := memory.New(memory.Config{Observer: obs, MaxAttempts: 1, Extraction: &memory.Extraction{Models: srv.Client().Models, Model: model}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	srv.Enqueue(fake.Text(`{"facts":[{"text":"The user owns a boat.","message":0}]}`), fake.Error(400, "bad"))
	ctx := context.Background()
	svc.IngestThread(ctx, "alice", "t1", []*genai.Content{genai.NewContentFromText("I bought a boat.", genai.RoleUser)}, 0)
	svc.Wait(ctx)
	svc.IngestThread(ctx, "alice", "t2", []*genai.Content{genai.NewContentFromText("Another thing.", genai.RoleUser)}, 0)
	svc.Wait(ctx)
	var ok, failed sdktrace.ReadOnlySpan
	for _, s := range tel.ended(t) {
		if s.Name() != "memory extract" {
			continue
		}
		if s.Status().Code == codes.Error {
			failed = s
		} else {
			ok = s
		}
	}
	if ok == nil || failed == nil {
		t.Fatal("want one extraction span that succeeded and one that failed")
	}
	if v, _ := attr(ok, "gen_ai.usage.input_tokens"); v.AsInt64() == 0 {
		t.Errorf("the extraction's input tokens: %v", v)
	}
	if v, _ := attr(ok, otelagent.MemoryAddedKey); v.AsInt64() != 1 {
		t.Errorf("facts added: %v", v)
	}
	if v, _ := attr(failed, otelagent.MemoryFinalKey); !v.AsBool() {
		t.Errorf("the failure is not final: %v", v)
	}
}
