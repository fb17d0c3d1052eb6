package otelagent

import (
	"context"
	"errors"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
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

// MaxProgressEvents bounds the "progress" events of one tool call's span:
// the first MaxProgressEvents-1 reports the span sees, and the last one
// before the call's result, with its own time; the reports in between
// are counted in toolnexus.progress.dropped.
const MaxProgressEvents = 16

// Attributes of a tool call's progress events.
const (
	progressDone    = attribute.Key("toolnexus.progress.done")
	progressTotal   = attribute.Key("toolnexus.progress.total")
	progressMessage = attribute.Key("toolnexus.progress.message")
	progressDropped = attribute.Key("toolnexus.progress.dropped")
)

// progress records a call's progress report on its span, as an event,
// while the span has fewer than MaxProgressEvents-1; after that, it holds
// the latest report for endTool.
func (o *Observer) progress(t *openTool, e *agent.Event) {
	if e.Progress == nil || !t.span.IsRecording() {
		return
	}
	if t.progress < MaxProgressEvents-1 {
		t.progress++
		t.span.AddEvent("progress", trace.WithAttributes(o.progressAttrs(e.Progress)...))
		return
	}
	if t.held != nil {
		t.dropped++
	}
	p := *e.Progress
	t.held, t.heldAt = &p, time.Now()
}

// progressAttrs are the attributes of a progress event: the message only
// when content is captured, since a tool may put in it what it works on.
func (o *Observer) progressAttrs(p *toolset.Progress) []attribute.KeyValue {
	attrs := []attribute.KeyValue{progressDone.Float64(p.Done)}
	if p.Total > 0 {
		attrs = append(attrs, progressTotal.Float64(p.Total))
	}
	if o.capture && p.Message != "" {
		attrs = append(attrs, progressMessage.String(p.Message))
	}
	return attrs
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
	if t := st.openTool(turn, index, remove); t != nil {
		return t.span
	}
	return nil
}

// openTool returns a tool call in progress, removing it from the open
// ones when remove is set (the value returned is then a copy).
func (st *runState) openTool(turn, index int, remove bool) *openTool {
	for i := range st.tools {
		if t := &st.tools[i]; t.turn == turn && t.index == index {
			if remove {
				c := *t
				st.tools = append(st.tools[:i], st.tools[i+1:]...)
				return &c
			}
			return t
		}
	}
	return nil
}

// endTool ends a tool call's span with its result: an error result is an
// error of the span. The last progress report held, if any, is recorded
// first.
func (o *Observer) endTool(t *openTool, e *agent.Event) {
	span := t.span
	if t.held != nil && span.IsRecording() {
		span.AddEvent("progress", trace.WithTimestamp(t.heldAt), trace.WithAttributes(o.progressAttrs(t.held)...))
		if t.dropped > 0 {
			span.SetAttributes(progressDropped.Int(t.dropped))
		}
	}
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
