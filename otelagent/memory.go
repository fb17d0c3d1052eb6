package otelagent

import (
	"context"

	"github.com/toolnexus/toolnexus-go/memory"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The attributes of the memory spans (see [Observer.ObserveMemory]).
const (
	MemoryResultsKey  = attribute.Key("toolnexus.memory.results")  // search: the memories returned
	MemoryHybridKey   = attribute.Key("toolnexus.memory.hybrid")   // search: lexical and vector rankings fused
	MemoryFallbackKey = attribute.Key("toolnexus.memory.fallback") // search: embeddings failed, lexical only
	MemoryQueryKey    = attribute.Key("toolnexus.memory.query")    // search: the query, with content capture only
	MemoryAddedKey    = attribute.Key("toolnexus.memory.added")    // ingest, extract: the memories stored
	MemoryRemovedKey  = attribute.Key("toolnexus.memory.removed")  // extract, forget: the memories removed
	MemoryEmbeddedKey = attribute.Key("toolnexus.memory.embedded") // embed: the memories embedded
	MemoryAttemptKey  = attribute.Key("toolnexus.memory.attempt")  // embed, extract: the attempt, from 1
	MemoryFinalKey    = attribute.Key("toolnexus.memory.final")    // embed, extract: a failure not tried again
	MemoryThreadKey   = attribute.Key("toolnexus.memory.thread")   // ingest, extract: the thread
)

// ObserveMemory implements memory.Observer: give the Observer as a memory
// service's Config.Observer too, and each search, ingest, embedding,
// extraction and forgetting is a span (memory search, memory ingest,
// memory embed, memory extract, memory forget; kind internal), from the
// work's start to its end, under the span of the context it was done for:
// a run's span for Preload's search and the ingest after a served run,
// the tool's span for the search tool's. Attributes say what it did
// (toolnexus.memory.*: results, hybrid, fallback, added, removed,
// embedded, attempt, final, thread; the query only when content is
// captured); an extraction's span has the model's token usage
// (gen_ai.usage.input_tokens and output_tokens). A failure sets the
// span's status to Error and error.type; a search that fell back to
// lexical ranking is not a failure: its span records the embedding
// error as an event. No user id is recorded.
func (o *Observer) ObserveMemory(ctx context.Context, e *memory.Event) {
	name := "memory " + map[memory.EventKind]string{memory.EventSearch: "search", memory.EventIngest: "ingest",
		memory.EventEmbed: "embed", memory.EventExtract: "extract", memory.EventForget: "forget"}[e.Kind]
	if name == "memory " {
		return
	}
	start := e.Start
	if start.IsZero() {
		return
	}
	var attrs []attribute.KeyValue
	switch e.Kind {
	case memory.EventSearch:
		attrs = append(attrs, MemoryResultsKey.Int(len(e.Results)), MemoryHybridKey.Bool(e.Hybrid), MemoryFallbackKey.Bool(e.Fallback))
		if o.capture {
			attrs = append(attrs, MemoryQueryKey.String(e.Query))
		}
	case memory.EventIngest:
		attrs = append(attrs, MemoryAddedKey.Int(len(e.Memories)))
	case memory.EventEmbed:
		attrs = append(attrs, MemoryEmbeddedKey.Int(e.Count), MemoryAttemptKey.Int(e.Attempt))
	case memory.EventExtract:
		attrs = append(attrs, MemoryAddedKey.Int(len(e.Memories)), MemoryRemovedKey.Int(len(e.Removed)), MemoryAttemptKey.Int(e.Attempt),
			semconv.GenAIUsageInputTokens(e.Usage.PromptTokens), semconv.GenAIUsageOutputTokens(e.Usage.CandidatesTokens+e.Usage.ThoughtsTokens))
	case memory.EventForget:
		n := len(e.Removed)
		if e.All {
			n = -1
		}
		attrs = append(attrs, MemoryRemovedKey.Int(n))
	}
	if e.Thread != "" && (e.Kind == memory.EventIngest || e.Kind == memory.EventExtract) {
		attrs = append(attrs, MemoryThreadKey.String(e.Thread))
	}
	if e.Err != nil && (e.Kind == memory.EventEmbed || e.Kind == memory.EventExtract) {
		attrs = append(attrs, MemoryFinalKey.Bool(e.Final))
	}
	_, span := o.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	switch {
	case e.Err != nil && e.Fallback:
		span.AddEvent("embedding failed", trace.WithAttributes(semconv.ErrorTypeKey.String(errorType(e.Err)), attribute.String("error.message", e.Err.Error())))
	case e.Err != nil:
		span.SetStatus(codes.Error, e.Err.Error())
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(e.Err)))
	}
	span.End(trace.WithTimestamp(start.Add(e.Duration)))
}
