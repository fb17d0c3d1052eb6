package otelagent

import (
	"context"
	"errors"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/toolnexus/toolnexus-go/otelagent"

// The bucket boundaries the conventions give for the two histograms:
// powers of 4 tokens, and powers of 2 times 10 ms.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// An Observer turns an agent's runs into OpenTelemetry spans and metrics
// that follow the GenAI semantic conventions (see the package
// documentation). It implements [agent.ContextObserver]: install it as
// agent.Config.Observer, alone or among others with [agent.Observers].
//
// One Observer serves any number of agents and concurrent runs: what it
// knows of a run lives in the run's context, never in the Observer.
type Observer struct {
	tracer   trace.Tracer
	tokens   metric.Int64Histogram   // gen_ai.client.token.usage
	duration metric.Float64Histogram // gen_ai.client.operation.duration

	runName  string             // the run span's name
	agent    attribute.KeyValue // gen_ai.agent.name, when named
	named    bool
	capture  bool
	provider attribute.KeyValue
	server   []attribute.KeyValue // server.address and server.port, when known

	// What calls would otherwise build again and again.
	client, internal trace.SpanStartOption
	callNames        cache[string, string] // model: span name
	toolNames        cache[string, string] // tool: span name
	reasons          cache[string, attribute.KeyValue]
	measures         cache[measure, []metric.RecordOption]
}

var _ agent.ContextObserver = (*Observer)(nil)

// New returns an Observer configured by opts. Without options it records
// through the global tracer and meter providers, captures no content
// unless the environment asks for it (see [WithCaptureContent]), and names
// the provider gcp.gen_ai (see [WithClient]).
func New(opts ...Option) *Observer {
	c := config{provider: semconv.GenAIProviderNameGCPGenAI}
	for _, opt := range opts {
		opt(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	o := &Observer{
		tracer:   c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		runName:  "invoke_agent",
		capture:  captureFromEnv(),
		provider: c.provider,
	}
	if c.capture != nil {
		o.capture = *c.capture
	}
	if c.name != "" {
		o.runName += " " + c.name
		o.agent, o.named = semconv.GenAIAgentName(c.name), true
	}
	if c.address != "" {
		o.server = []attribute.KeyValue{semconv.ServerAddress(c.address)}
		if c.port > 0 {
			o.server = append(o.server, semconv.ServerPort(c.port))
		}
	}
	o.client, o.internal = trace.WithSpanKind(trace.SpanKindClient), trace.WithSpanKind(trace.SpanKindInternal)
	meter := c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	tokens, err := genaiconv.NewClientTokenUsage(meter, metric.WithExplicitBucketBoundaries(tokenBuckets...))
	if err != nil {
		otel.Handle(err)
	}
	duration, err := genaiconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		otel.Handle(err)
	}
	o.tokens, o.duration = tokens.Inst(), duration.Inst()
	return o
}

// A measure names the attributes of one metric recording: each distinct
// one is an attribute set built once.
type measure struct {
	op, model, responseModel, errType, tokenType string
}

// options returns the record options carrying m's attribute set.
func (o *Observer) options(m measure) []metric.RecordOption {
	return o.measures.get(m, func(m measure) []metric.RecordOption {
		attrs := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(m.op), o.provider, semconv.GenAIRequestModel(m.model)}
		if m.op == string(genaiconv.OperationNameGenerateContent) {
			attrs = append(attrs, o.server...)
		}
		if m.responseModel != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(m.responseModel))
		}
		if m.errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(m.errType))
		}
		if m.tokenType != "" {
			attrs = append(attrs, semconv.GenAITokenTypeKey.String(m.tokenType))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}

// recordDuration records an operation's duration since start.
func (o *Observer) recordDuration(ctx context.Context, start time.Time, m measure) {
	if o.duration.Enabled(ctx) {
		o.duration.Record(ctx, time.Since(start).Seconds(), o.options(m)...)
	}
}

// finishAttr returns gen_ai.response.finish_reasons holding one reason.
func (o *Observer) finishAttr(reason string) attribute.KeyValue {
	return o.reasons.get(reason, func(r string) attribute.KeyValue { return semconv.GenAIResponseFinishReasons(r) })
}

// runKey finds a run's state in its context. It holds the Observer, so that
// two Observers on one agent keep their runs apart.
type runKey struct{ o *Observer }

// runState is what an Observer knows of one run. The loop calls
// StartContext and Observe for a run on the run's goroutine, one at a
// time, so it needs no lock.
type runState struct {
	span  trace.Span
	start time.Time
	model string

	// The model call in progress, if any.
	call      trace.Span
	callStart time.Time
	chunked   bool // a piece of text arrived (Stream): the time to the first chunk is recorded

	tools   []openTool // tool calls in progress
	toolBuf [4]openTool

	input []*genai.Content // the first model call's contents, when content is captured
}

type openTool struct {
	turn, index int
	span        trace.Span
}

func (o *Observer) state(ctx context.Context) *runState {
	st, _ := ctx.Value(runKey{o}).(*runState)
	return st
}

// StartContext starts the span of the step e begins, and returns ctx with
// it: the run's invoke_agent span for EventRunStart, a generate_content
// span for EventModelRequest, an execute_tool span for EventToolCall. What
// runs under the returned context (the HTTP request of a model call
// through an otelhttp transport, spans a tool starts) nests under the span.
func (o *Observer) StartContext(ctx context.Context, e *agent.Event) context.Context {
	switch e.Kind {
	case agent.EventRunStart:
		return o.startRun(ctx, e)
	case agent.EventModelRequest:
		if st := o.state(ctx); st != nil {
			return o.startCall(ctx, st, e)
		}
	case agent.EventToolCall:
		if st := o.state(ctx); st != nil {
			return o.startTool(ctx, st, e)
		}
	}
	return ctx
}

// Observe records e on the spans StartContext started, and ends them: a
// model call's span with its response or its failure, a tool call's with
// its result, and the run's, with anything still open, at EventDone.
// Events of a run StartContext did not see are ignored.
func (o *Observer) Observe(ctx context.Context, e *agent.Event) {
	st := o.state(ctx)
	if st == nil {
		return
	}
	switch e.Kind {
	case agent.EventModelRequest:
		o.request(st, e)
	case agent.EventText, agent.EventThought:
		if !st.chunked && st.call != nil {
			st.chunked = true
			st.call.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(time.Since(st.callStart).Seconds()))
		}
	case agent.EventModelResponse:
		o.response(ctx, st, e)
	case agent.EventRetry:
		o.retry(ctx, st, e)
	case agent.EventToolCall:
		if o.capture && e.Call != nil {
			if span := st.tool(e.Turn, e.Index, false); span != nil && span.IsRecording() {
				span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(encode(orEmpty(e.Call.Args))))
			}
		}
	case agent.EventApproval:
		if span := st.tool(e.Turn, e.Index, false); span != nil {
			span.AddEvent("approval_requested")
		}
	case agent.EventToolResult:
		if span := st.tool(e.Turn, e.Index, true); span != nil {
			o.endTool(span, e)
		}
	case agent.EventDone:
		o.endRun(ctx, st, e)
	}
}

func (o *Observer) startRun(ctx context.Context, e *agent.Event) context.Context {
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, semconv.GenAIOperationNameInvokeAgent, o.provider, semconv.GenAIRequestModel(e.Model))
	if o.named {
		attrs = append(attrs, o.agent)
	}
	ctx, span := o.tracer.Start(ctx, o.runName, o.internal, trace.WithAttributes(attrs...))
	st := &runState{span: span, start: time.Now(), model: e.Model}
	st.tools = st.toolBuf[:0]
	return context.WithValue(ctx, runKey{o}, st)
}

func (o *Observer) startCall(ctx context.Context, st *runState, e *agent.Event) context.Context {
	if st.call != nil {
		// Not reached: the loop reports every attempt's end. Never leave a
		// span open, though.
		o.endCall(ctx, st, nil)
	}
	attrs := make([]attribute.KeyValue, 0, 8+len(o.server))
	attrs = append(attrs, semconv.GenAIOperationNameGenerateContent, o.provider, semconv.GenAIRequestModel(e.Model))
	attrs = append(attrs, o.server...)
	if e.Stream {
		attrs = append(attrs, semconv.GenAIRequestStream(true))
	}
	attrs = requestAttrs(attrs, e.Config)
	name := o.callNames.get(e.Model, func(m string) string { return "generate_content " + m })
	ctx, span := o.tracer.Start(ctx, name, o.client, trace.WithAttributes(attrs...))
	st.call, st.callStart, st.chunked = span, time.Now(), false
	return ctx
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
		span.SetAttributes(attrs...)
	}
	span.End()
	m := measure{op: string(genaiconv.OperationNameGenerateContent), model: st.model, responseModel: resp.ModelVersion}
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

// retry ends the span of a model call that failed and will be made again,
// with its error and an event saying when the next attempt comes.
func (o *Observer) retry(ctx context.Context, st *runState, e *agent.Event) {
	if st.call == nil {
		return
	}
	if st.call.IsRecording() {
		st.call.AddEvent("retry", trace.WithAttributes(
			semconv.ErrorTypeKey.String(errorType(e.Err)),
			attribute.String("exception.message", errorText(e.Err)),
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
			span.SetStatus(codes.Error, errorText(err))
		}
	}
	span.End()
	o.recordDuration(ctx, st.callStart, measure{op: string(genaiconv.OperationNameGenerateContent), model: st.model, errType: et})
}

func (o *Observer) startTool(ctx context.Context, st *runState, e *agent.Event) context.Context {
	name := ""
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.GenAIOperationNameExecuteTool)
	if e.Call != nil {
		name = e.Call.Name
		attrs = append(attrs, semconv.GenAIToolName(name), semconv.GenAIToolTypeKey.String("function"))
		if e.Call.ID != "" {
			attrs = append(attrs, semconv.GenAIToolCallID(e.Call.ID))
		}
	}
	if e.Tool != nil && e.Tool.Description != "" {
		attrs = append(attrs, semconv.GenAIToolDescription(e.Tool.Description))
	}
	ctx, span := o.tracer.Start(ctx, o.toolNames.get(name, func(n string) string { return "execute_tool " + n }), o.internal, trace.WithAttributes(attrs...))
	st.tools = append(st.tools, openTool{turn: e.Turn, index: e.Index, span: span})
	return ctx
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
			span.SetStatus(codes.Error, toolErrorText(res))
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
// given, for a denied call), or the message sent to the model.
func toolErrorText(res *agent.ToolResult) string {
	if res.Err != nil {
		if reason, ok := res.Output.(string); ok && reason != "" && errors.Is(res.Err, agent.ErrDenied) {
			return res.Err.Error() + ": " + reason
		}
		return res.Err.Error()
	}
	if s, ok := res.Output.(string); ok {
		return s
	}
	return "tool call failed"
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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
