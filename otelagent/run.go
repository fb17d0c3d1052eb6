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
	"google.golang.org/genai"
)

// startRun starts the run's invoke_agent span and keeps the run's state
// in the context it returns.
func (o *Observer) startRun(ctx context.Context, e *agent.Event) context.Context {
	start := o.runStart(e.Model, o.agentName(e))
	st := &runState{start: time.Now(), model: e.Model, parent: trace.SpanContextFromContext(ctx)}
	ctx, st.span = o.tracer.Start(ctx, start.name, start.opts...)
	if id := agent.Conversation(ctx); id != "" && st.span.IsRecording() {
		st.span.SetAttributes(semconv.GenAIConversationID(id)) // the thread a server runs it on (agent.WithConversation)
	}
	st.tools = st.toolBuf[:0]
	return context.WithValue(ctx, runKey{o}, st)
}

// runKind is what a run's span starts with: the model and the agent's
// name.
type runKind struct{ model, agent string }

// runStart returns the name and start options of the span of a run of the
// named agent on model.
func (o *Observer) runStart(model, name string) spanStart {
	return o.runStarts.get(runKind{model, name}, func(k runKind) spanStart {
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, o.provider, semconv.GenAIRequestModel(k.model)}
		span := "invoke_agent"
		if k.agent != "" {
			span += " " + k.agent
			attrs = append(attrs, semconv.GenAIAgentName(k.agent))
		}
		return spanStart{name: span, opts: []trace.SpanStartOption{o.internal, trace.WithAttributes(attrs...)}}
	})
}

// agentName returns the name of the agent whose run e reports: the one
// WithAgentName gives for the runs of the agent the Observer is installed
// on, and for the runs of agents that its tools run (agent.AsTool), whose
// events carry their caller's call as Parent, their own, Event.Agent.
func (o *Observer) agentName(e *agent.Event) string {
	if o.name != "" && e.Parent == nil {
		return o.name
	}
	return e.Agent
}

// endRun ends what the run left open, with the run's error (a model call
// that fails for good has no event of its own), then the run's span, and
// records the run's duration.
func (o *Observer) endRun(ctx context.Context, st *runState, e *agent.Event) {
	if st.resumed {
		o.remakeRun(ctx, st, e)
	}
	if st.call != nil {
		o.endCall(ctx, st, e.Err)
	}
	for _, t := range st.tools {
		if e.Err != nil && t.span.IsRecording() {
			t.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(e.Err)))
			t.span.SetStatus(codes.Error, o.errorText(e.Err))
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
				input := st.input
				if input == nil && len(res.Turns) > 0 {
					// The run's model calls were made in other processes
					// (see Resume).
					input = given(res)
				}
				if input != nil {
					attrs = append(attrs, semconv.GenAIInputMessagesKey.String(inputMessages(input)))
				}
				if n := len(res.Turns); n > 0 && res.Turns[n-1].Response != nil {
					attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(outputMessages(res.Turns[n-1].Response)))
				}
			}
		}
		if e.Err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(et))
			span.SetStatus(codes.Error, o.errorText(e.Err))
		}
		span.SetAttributes(attrs...)
	}
	span.End()
	o.recordDuration(ctx, st.start, measure{op: string(genaiconv.OperationNameInvokeAgent), model: st.model, errType: et})
}

// given returns what a run was given, from its result: the history before
// the first turn's response. It stands for what the run's first model call
// sent when that call was made in another process (see Resume).
func given(res *agent.Result) []*genai.Content {
	if r := res.Turns[0].Response; r != nil && len(r.Candidates) > 0 && r.Candidates[0] != nil {
		for i, c := range res.History {
			if c == r.Candidates[0].Content {
				return res.History[:i]
			}
		}
	}
	return res.History
}
