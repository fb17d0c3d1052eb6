package otelagent

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
)

// startRun starts the run's invoke_agent span and keeps the run's state
// in the context it returns.
func (o *Observer) startRun(ctx context.Context, e *agent.Event) context.Context {
	start := o.runStarts.get(e.Model, func(model string) spanStart {
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, o.provider, semconv.GenAIRequestModel(model)}
		if o.named {
			attrs = append(attrs, o.agent)
		}
		return spanStart{name: o.runName, opts: []trace.SpanStartOption{o.internal, trace.WithAttributes(attrs...)}}
	})
	ctx, span := o.tracer.Start(ctx, start.name, start.opts...)
	if id := agent.Conversation(ctx); id != "" && span.IsRecording() {
		span.SetAttributes(semconv.GenAIConversationID(id)) // the thread a server runs it on (agent.WithConversation)
	}
	st := &runState{span: span, start: time.Now(), model: e.Model}
	st.tools = st.toolBuf[:0]
	return context.WithValue(ctx, runKey{o}, st)
}

// endRun ends what the run left open, with the run's error (a model call
// that fails for good has no event of its own), then the run's span, and
// records the run's duration.
func (o *Observer) endRun(ctx context.Context, st *runState, e *agent.Event) {
	if st.call != nil {
		o.endCall(ctx, st, e.Err)
	}
	for _, t := range st.tools {
		if e.Err != nil && t.span.IsRecording() {
			t.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(e.Err)))
			t.span.SetStatus(codes.Error, e.Err.Error())
		}
		t.span.End()
	}
	st.tools = nil
	span := st.span
	et := ""
	if e.Err != nil {
		et = errorType(e.Err)
	}
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 6)
		if res := e.Result; res != nil {
			u := res.Usage
			if len(res.Turns) > 0 {
				attrs = append(attrs,
					semconv.GenAIUsageInputTokens(u.PromptTokens+u.ToolUsePromptTokens),
					semconv.GenAIUsageOutputTokens(u.CandidatesTokens+u.ThoughtsTokens))
				last := res.Turns[len(res.Turns)-1]
				if r := finishReason(last.FinishReason, len(last.Calls) > 0); r != "" {
					attrs = append(attrs, o.finishAttr(r))
				}
			}
			if o.capture {
				if st.input != nil {
					attrs = append(attrs, semconv.GenAIInputMessagesKey.String(inputMessages(st.input)))
				}
				if n := len(res.Turns); n > 0 && res.Turns[n-1].Response != nil {
					attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(outputMessages(res.Turns[n-1].Response)))
				}
			}
		}
		if e.Err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(et))
			span.SetStatus(codes.Error, e.Err.Error())
		}
		span.SetAttributes(attrs...)
	}
	span.End()
	o.recordDuration(ctx, st.start, measure{op: string(genaiconv.OperationNameInvokeAgent), model: st.model, errType: et})
}
