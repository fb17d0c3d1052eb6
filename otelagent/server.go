package otelagent

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// Attributes the conventions do not name, for what Gemini adds: the
// service tier a request asked for and the one that served it (as
// openai.request.service_tier and openai.response.service_tier are for
// OpenAI), and the hop of an answer the API cut and the loop continued
// (see agent.EventHop).
var (
	requestServiceTier  = attribute.Key("gcp.gen_ai.request.service_tier")
	responseServiceTier = attribute.Key("gcp.gen_ai.response.service_tier")
	continuationHop     = attribute.Key("toolnexus.continuation.hop")
	continuedAnswer     = attribute.Bool("toolnexus.continuation", true)
	cacheAction         = attribute.Key("toolnexus.cache.action")
	cacheName           = attribute.Key("toolnexus.cache.name")
	cacheTokens         = attribute.Key("toolnexus.cache.tokens")
)

// cache records what happened to the agent's context cache (see
// agent.EventCache) as an event "cache" of the run's span: its
// toolnexus.cache.action, toolnexus.cache.name, toolnexus.cache.tokens
// (the tokens of a cache made) and, when caching failed, error.type and
// exception.message. The conventions name no such event; the tokens read
// from a cache are each model call's gen_ai.usage.cache_read.input_tokens.
func (o *Observer) cache(st *runState, e *agent.Event) {
	if e.Cache == nil || !st.span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{cacheAction.String(string(e.Cache.Action))}
	if e.Cache.Name != "" {
		attrs = append(attrs, cacheName.String(e.Cache.Name))
	}
	if e.Cache.Tokens > 0 {
		attrs = append(attrs, cacheTokens.Int(e.Cache.Tokens))
	}
	if e.Cache.Err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(e.Cache.Err)), attribute.String("exception.message", o.errorText(e.Cache.Err)))
	}
	st.span.AddEvent("cache", trace.WithAttributes(attrs...))
}

// serverTools records the built-in tools the API ran during a model call,
// whose span is span: each invocation, with its result, as an execute_tool
// span under it, of type extension (datastore for file search, which
// queries the caller's stores), started and ended when the response is: the
// API says what it ran, not when.
func (o *Observer) serverTools(ctx context.Context, span trace.Span, resp *genai.GenerateContentResponse) {
	if !span.IsRecording() || len(resp.Candidates) == 0 || resp.Candidates[0] == nil || resp.Candidates[0].Content == nil {
		return
	}
	var open []trace.Span // invocations without their result yet, by position in ids
	var ids []string
	now := time.Now()
	ctx = trace.ContextWithSpan(ctx, span)
	for _, p := range resp.Candidates[0].Content.Parts {
		name := agent.ServerToolName(p)
		if name == "" {
			continue
		}
		id := agent.ServerToolID(p)
		if p.ToolCall != nil || p.ExecutableCode != nil {
			typ := "extension"
			if name == "file_search" {
				typ = "datastore"
			}
			attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name), semconv.GenAIToolTypeKey.String(typ)}
			if id != "" {
				attrs = append(attrs, semconv.GenAIToolCallID(id))
			}
			if o.capture {
				attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(encode(serverArgs(p))))
			}
			_, s := o.tracer.Start(ctx, "execute_tool "+name, o.internal, trace.WithTimestamp(now), trace.WithAttributes(attrs...))
			open, ids = append(open, s), append(ids, id)
			continue
		}
		// A result ends its invocation's span: the one of its id, or the
		// last one open.
		k := len(open) - 1
		for i, v := range ids {
			if id != "" && v == id {
				k = i
			}
		}
		if k < 0 {
			continue
		}
		s := open[k]
		if o.capture {
			s.SetAttributes(semconv.GenAIToolCallResultKey.String(encode(serverResult(p))))
		}
		s.End(trace.WithTimestamp(now))
		open, ids = append(open[:k], open[k+1:]...), append(ids[:k], ids[k+1:]...)
	}
	for _, s := range open {
		s.End(trace.WithTimestamp(now))
	}
}

// serverArgs and serverResult are what a built-in tool's invocation was
// given, and what it returned.
func serverArgs(p *genai.Part) any {
	if p.ExecutableCode != nil {
		return map[string]any{"language": p.ExecutableCode.Language, "code": p.ExecutableCode.Code}
	}
	return orEmpty(p.ToolCall.Args)
}

func serverResult(p *genai.Part) any {
	if p.CodeExecutionResult != nil {
		return map[string]any{"outcome": p.CodeExecutionResult.Outcome, "output": p.CodeExecutionResult.Output}
	}
	return orEmpty(p.ToolResponse.Response)
}
