package otelagent

import (
	"context"
	"errors"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// startTool starts a tool call's execute_tool span.
func (o *Observer) startTool(ctx context.Context, st *runState, e *agent.Event) context.Context {
	var k toolKey
	id := ""
	if e.Call != nil {
		k.name, id = e.Call.Name, e.Call.ID
	}
	if e.Tool != nil {
		k.description = e.Tool.Description
	}
	start := o.toolStarts.get(k, o.toolStart)
	opts := start.opts
	if id != "" {
		opts = append(opts[:len(opts):len(opts)], trace.WithAttributes(semconv.GenAIToolCallID(id)))
	}
	ctx, span := o.tracer.Start(ctx, start.name, opts...)
	st.tools = append(st.tools, openTool{turn: e.Turn, index: e.Index, span: span})
	return ctx
}

// toolKey is what a tool call's span starts with, but the call's id.
type toolKey struct{ name, description string }

// toolStart returns the name and start options of a tool's calls' spans.
func (o *Observer) toolStart(k toolKey) spanStart {
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool}
	if k.name != "" {
		attrs = append(attrs, semconv.GenAIToolName(k.name), semconv.GenAIToolTypeKey.String("function"))
	}
	if k.description != "" {
		attrs = append(attrs, semconv.GenAIToolDescription(k.description))
	}
	return spanStart{name: "execute_tool " + k.name, opts: []trace.SpanStartOption{o.internal, trace.WithAttributes(attrs...)}}
}

// tool returns the span of a tool call in progress, removing it from the
// open ones when remove is set.
func (st *runState) tool(turn, index int, remove bool) trace.Span {
	for i, t := range st.tools {
		if t.turn == turn && t.index == index {
			if remove {
				st.tools = append(st.tools[:i], st.tools[i+1:]...)
			}
			return t.span
		}
	}
	return nil
}

// endTool ends a tool call's span with its result: an error result is an
// error of the span.
func (o *Observer) endTool(span trace.Span, e *agent.Event) {
	res := e.ToolResult
	if res != nil && span.IsRecording() {
		if res.IsError {
			span.SetAttributes(semconv.ErrorTypeKey.String(toolErrorType(res.Err)))
			span.SetStatus(codes.Error, o.toolErrorText(res))
		} else if o.capture {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(encode(res.Output)))
		}
	}
	span.End()
}

// toolErrorType is the error.type of a failed tool call.
func toolErrorType(err error) string {
	if err == nil {
		return "_OTHER"
	}
	return errorType(err)
}

// toolErrorText describes a failed tool call: its Go error (with the reason
// given, for a denied call; without the values of invalid arguments, when
// content is not captured), or the message sent to the model.
func (o *Observer) toolErrorText(res *agent.ToolResult) string {
	if res.Err != nil {
		if reason, ok := res.Output.(string); ok && reason != "" && errors.Is(res.Err, agent.ErrDenied) {
			return res.Err.Error() + ": " + reason
		}
		return o.errorText(res.Err)
	}
	if s, ok := res.Output.(string); ok {
		return s
	}
	return "tool call failed"
}
