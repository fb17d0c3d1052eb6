package otelagent

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/toolnexus/toolnexus-go/otelagent"

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

	name      string // WithAgentName's, for the runs of the agent observed
	capture   bool
	provider  attribute.KeyValue
	operation string               // the model calls' gen_ai.operation.name: generate_content, or create_interaction
	server    []attribute.KeyValue // server.address and server.port, when known

	// What calls would otherwise build again and again.
	client, internal trace.SpanStartOption
	runStarts        cache[runKind, spanStart]
	callStarts       cache[callKey, spanStart]
	toolStarts       cache[toolKey, spanStart]
	reasons          cache[string, attribute.KeyValue]
	measures         cache[measure, []metric.RecordOption]
}

// A spanStart is what a kind of span starts with: its name, its kind and
// the attributes samplers read. The options are shared: they are only
// read.
type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

var _ agent.ContextObserver = (*Observer)(nil)

// New returns an Observer configured by opts. Without options it records
// through the global tracer and meter providers, captures no content
// unless the environment asks for it (see [WithCaptureContent]), and names
// the provider gcp.gen_ai (see [WithClient]).
func New(opts ...Option) *Observer {
	c := config{provider: semconv.GenAIProviderNameGCPGenAI, operation: string(genaiconv.OperationNameGenerateContent)}
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
		tracer:    c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		name:      c.name,
		capture:   captureFromEnv(),
		provider:  c.provider,
		operation: c.operation,
	}
	if c.capture != nil {
		o.capture = *c.capture
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

// runKey finds a run's state in its context. It holds the Observer, so that
// two Observers on one agent keep their runs apart.
type runKey struct{ o *Observer }

// runState is what an Observer knows of one run. The loop calls
// StartContext and Observe for a run on the run's goroutine, one at a
// time, so it needs no lock.
type runState struct {
	span   trace.Span
	start  time.Time
	model  string
	parent trace.SpanContext // the span the run's span started under, if any

	// resumed is set for the state Resume rebuilt in a step's process: span
	// is then a stand-in holding the run span's context, which its children
	// name as their parent, and the run's span is made when the run ends
	// (see endRun).
	resumed bool

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

	// The call's progress events (see MaxProgressEvents): how many the
	// span has, and the latest report held for the end, with its time
	// and how many reports it replaced.
	progress, dropped int
	held              *toolset.Progress
	heldAt            time.Time
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
	case agent.EventModelResponse, agent.EventHop:
		// Each hop of a continued answer ends its own span; the turn's
		// EventModelResponse then finds none open.
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
	case agent.EventToolProgress:
		if t := st.openTool(e.Turn, e.Index, false); t != nil {
			o.progress(t, e)
		}
	case agent.EventToolResult:
		if t := st.openTool(e.Turn, e.Index, true); t != nil {
			o.endTool(t, e)
		}
	case agent.EventCache:
		o.cache(st, e)
	case agent.EventDone:
		o.endRun(ctx, st, e)
	}
}
