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

// startCall starts a model call's generate_content span, with what
// samplers read among its first attributes.
func (o *Observer) startCall(ctx context.Context, st *runState, e *agent.Event) context.Context {
	if st.call != nil {
		// Not reached: the loop reports every attempt's end. Never leave a
		// span open, though.
		o.endCall(ctx, st, nil)
	}
	var start spanStart
	if settings := requestAttrs(nil, e.Config); len(settings) == 0 {
		// The common case: what the span starts with depends on the model
		// and the streaming only, and is built once.
		start = o.callStarts.get(callKey{e.Model, e.Stream}, func(k callKey) spanStart { return o.callStart(k, nil) })
	} else {
		start = o.callStart(callKey{e.Model, e.Stream}, settings)
	}
	ctx, span := o.tracer.Start(ctx, start.name, start.opts...)
	st.call, st.callStart, st.chunked = span, time.Now(), false
	return ctx
}

// callKey is what a model call's span starts with, but the request's
// settings.
type callKey struct {
	model  string
	stream bool
}

// callStart returns the name and start options of a model call's span:
// its kind, and the attributes samplers read, the streaming and the
// request's settings.
func (o *Observer) callStart(k callKey, settings []attribute.KeyValue) spanStart {
	attrs := make([]attribute.KeyValue, 0, 4+len(o.server)+len(settings))
	attrs = append(attrs, semconv.GenAIOperationNameKey.String(o.operation), o.provider, semconv.GenAIRequestModel(k.model))
	attrs = append(attrs, o.server...)
	if k.stream {
		attrs = append(attrs, semconv.GenAIRequestStream(true))
	}
	attrs = append(attrs, settings...)
	return spanStart{name: o.operation + " " + k.model, opts: []trace.SpanStartOption{o.client, trace.WithAttributes(attrs...)}}
}

// requestAttrs appends the request settings the conventions name, those
// config sets.
func requestAttrs(attrs []attribute.KeyValue, c *genai.GenerateContentConfig) []attribute.KeyValue {
	if c == nil {
		return attrs
	}
	if c.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(float64(*c.Temperature)))
	}
	if c.TopP != nil {
		attrs = append(attrs, semconv.GenAIRequestTopP(float64(*c.TopP)))
	}
	if c.TopK != nil {
		attrs = append(attrs, semconv.GenAIRequestTopK(float64(*c.TopK)))
	}
	if c.MaxOutputTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(int(c.MaxOutputTokens)))
	}
	if len(c.StopSequences) > 0 {
		attrs = append(attrs, semconv.GenAIRequestStopSequences(c.StopSequences...))
	}
	if c.Seed != nil {
		attrs = append(attrs, semconv.GenAIRequestSeed(int(*c.Seed)))
	}
	if c.CandidateCount > 1 {
		attrs = append(attrs, semconv.GenAIRequestChoiceCount(int(c.CandidateCount)))
	}
	if c.PresencePenalty != nil {
		attrs = append(attrs, semconv.GenAIRequestPresencePenalty(float64(*c.PresencePenalty)))
	}
	if c.FrequencyPenalty != nil {
		attrs = append(attrs, semconv.GenAIRequestFrequencyPenalty(float64(*c.FrequencyPenalty)))
	}
	if c.ResponseMIMEType == "application/json" || c.ResponseSchema != nil || c.ResponseJsonSchema != nil {
		attrs = append(attrs, semconv.GenAIOutputTypeJSON)
	}
	if c.ServiceTier != "" {
		attrs = append(attrs, requestServiceTier.String(string(c.ServiceTier)))
	}
	if len(c.ContinuationToken) > 0 {
		attrs = append(attrs, continuedAnswer)
	}
	return attrs
}

// request records, when content is captured, what a model call sends.
func (o *Observer) request(st *runState, e *agent.Event) {
	if !o.capture {
		return
	}
	if st.input == nil {
		st.input = e.Contents
	}
	if st.call == nil || !st.call.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{semconv.GenAIInputMessagesKey.String(inputMessages(e.Contents))}
	if c := e.Config; c != nil {
		if si := systemInstructions(c.SystemInstruction); si != "" {
			attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(si))
		}
		if defs := toolDefinitions(c.Tools); defs != "" {
			attrs = append(attrs, semconv.GenAIToolDefinitionsKey.String(defs))
		}
	}
	st.call.SetAttributes(attrs...)
}

// response ends the model call's span with its response, and records the
// call's token usage and duration.
func (o *Observer) response(ctx context.Context, st *runState, e *agent.Event) {
	span := st.call
	resp := e.Response
	if span == nil || resp == nil {
		return
	}
	st.call = nil
	u := resp.UsageMetadata
	var in, out int
	if u != nil {
		// Input tokens count cached ones (the prompt count includes them)
		// and those of tool-use prompts; output tokens count the
		// thoughts, as the conventions ask.
		in = int(u.PromptTokenCount + u.ToolUsePromptTokenCount)
		out = int(u.CandidatesTokenCount + u.ThoughtsTokenCount)
	}
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 8)
		if u != nil {
			attrs = append(attrs, semconv.GenAIUsageInputTokens(in), semconv.GenAIUsageOutputTokens(out))
			if u.ThoughtsTokenCount > 0 {
				attrs = append(attrs, semconv.GenAIUsageReasoningOutputTokens(int(u.ThoughtsTokenCount)))
			}
			if u.CachedContentTokenCount > 0 {
				attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(int(u.CachedContentTokenCount)))
			}
		}
		if resp.ResponseID != "" {
			attrs = append(attrs, semconv.GenAIResponseID(resp.ResponseID))
		}
		if resp.ModelVersion != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(resp.ModelVersion))
		}
		if reasons, ok := o.finishReasons(resp); ok {
			attrs = append(attrs, reasons)
		}
		if o.capture {
			attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(outputMessages(resp)))
		}
		if e.Usage.ServiceTier != "" {
			attrs = append(attrs, responseServiceTier.String(string(e.Usage.ServiceTier)))
		}
		if e.Hop > 0 {
			attrs = append(attrs, continuationHop.Int(e.Hop))
		}
		span.SetAttributes(attrs...)
	}
	o.serverTools(ctx, span, resp)
	span.End()
	m := measure{op: o.operation, model: st.model, responseModel: resp.ModelVersion}
	if u != nil && o.tokens.Enabled(ctx) {
		m.tokenType = string(genaiconv.TokenTypeInput)
		o.tokens.Record(ctx, int64(in), o.options(m)...)
		m.tokenType = string(genaiconv.TokenTypeOutput)
		o.tokens.Record(ctx, int64(out), o.options(m)...)
		m.tokenType = ""
	}
	o.recordDuration(ctx, st.callStart, m)
}

// finishReasons returns gen_ai.response.finish_reasons: the finish reason
// of each candidate.
func (o *Observer) finishReasons(resp *genai.GenerateContentResponse) (attribute.KeyValue, bool) {
	if len(resp.Candidates) == 1 && resp.Candidates[0] != nil {
		c := resp.Candidates[0]
		if r := finishReason(c.FinishReason, c.Content != nil && hasCalls(c.Content)); r != "" {
			return o.finishAttr(r), true
		}
		return attribute.KeyValue{}, false
	}
	var reasons []string
	for _, c := range resp.Candidates {
		if c == nil {
			continue
		}
		if r := finishReason(c.FinishReason, c.Content != nil && hasCalls(c.Content)); r != "" {
			reasons = append(reasons, r)
		}
	}
	switch len(reasons) {
	case 0:
		return attribute.KeyValue{}, false
	case 1:
		return o.finishAttr(reasons[0]), true
	}
	return semconv.GenAIResponseFinishReasons(reasons...), true
}

// finishAttr returns gen_ai.response.finish_reasons holding one reason.
func (o *Observer) finishAttr(reason string) attribute.KeyValue {
	return o.reasons.get(reason, func(r string) attribute.KeyValue { return semconv.GenAIResponseFinishReasons(r) })
}

// retry ends the span of a model call that failed and will be made again,
// with its error and an event saying when the next attempt comes.
func (o *Observer) retry(ctx context.Context, st *runState, e *agent.Event) {
	if st.call == nil {
		return
	}
	if st.call.IsRecording() {
		st.call.AddEvent("retry", trace.WithAttributes(
			semconv.ErrorTypeKey.String(errorType(e.Err)),
			attribute.String("exception.message", o.errorText(e.Err)),
			attribute.Float64("toolnexus.retry.delay", e.Delay.Seconds()),
			attribute.Int("toolnexus.retry.attempt", e.Attempt),
		))
	}
	o.endCall(ctx, st, e.Err)
}

// endCall ends the span of the model call in progress with err, and records
// its duration.
func (o *Observer) endCall(ctx context.Context, st *runState, err error) {
	span := st.call
	st.call = nil
	et := ""
	if err != nil {
		et = errorType(err)
		if span.IsRecording() {
			span.SetAttributes(semconv.ErrorTypeKey.String(et))
			span.SetStatus(codes.Error, o.errorText(err))
		}
	}
	span.End()
	o.recordDuration(ctx, st.callStart, measure{op: o.operation, model: st.model, errType: et})
}
