package otelagent

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

var _ agent.Carrier = (*Observer)(nil)

// The keys of what an Observer carries (see Carry). The span contexts are
// W3C trace context (traceparent, tracestate) under a prefix.
const (
	carryRun    = "otelagent.run."    // the run's span
	carryParent = "otelagent.parent." // the span the run's span starts under
	carryModel  = "otelagent.model"   // the run's model
	carryStart  = "otelagent.start"   // when the run began, in Unix nanoseconds
)

var traceContext propagation.TraceContext

// Carry returns what a step of the run of ctx that runs in another process
// needs, as strings (see [agent.Carrier]): once StartContext began the run,
// the run's span context, model and start time; before then, the span
// context of ctx, if any, for the run's span to start under. Nothing
// carried is content: span and trace ids, the trace state, a model name
// and a time.
func (o *Observer) Carry(ctx context.Context) map[string]string {
	m := map[string]string{}
	if st := o.state(ctx); st != nil {
		inject(m, carryRun, st.span.SpanContext())
		inject(m, carryParent, st.parent)
		m[carryModel] = st.model
		m[carryStart] = strconv.FormatInt(st.start.UnixNano(), 10)
		return m
	}
	if inject(m, carryParent, trace.SpanContextFromContext(ctx)) {
		return m
	}
	return nil
}

// Resume returns ctx holding what Carry returned (see [agent.Carrier]): a
// run, whose model and tool calls then start their spans under the run's
// span, record their metrics for the run's model, and whose EventDone
// ends the run; or a caller's span, under which the run's span starts.
//
// The span of a run resumed in a process other than the one that started
// it (a durable run that moved to another worker, or continued as new)
// cannot be ended there: the OpenTelemetry SDK ends a span only in the
// process that started it. The run's span is then made again when the
// run ends, with the time it began and the span id its children name as
// their parent, which the SDK gives it when its TracerProvider takes its
// ids from [NewIDGenerator]. With another ID generator, it gets a new span
// id, and a link to the span its children name.
func (o *Observer) Resume(ctx context.Context, carried map[string]string) context.Context {
	if carried == nil {
		return ctx
	}
	parent := extract(carried, carryParent)
	start, err := strconv.ParseInt(carried[carryStart], 10, 64)
	if err != nil {
		if parent.IsValid() {
			return trace.ContextWithRemoteSpanContext(ctx, parent)
		}
		return ctx
	}
	st := &runState{resumed: true, start: time.Unix(0, start), model: carried[carryModel], parent: parent}
	st.tools = st.toolBuf[:0]
	if run := extract(carried, carryRun); run.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, run)
	}
	st.span = trace.SpanFromContext(ctx)
	return context.WithValue(ctx, runKey{o}, st)
}

// remakeRun makes the span of a resumed run, as it ends: with the run's
// start, under the span the run began under, and with the span id its
// children name when the provider's ID generator gives it (see
// NewIDGenerator); else with a link to that span.
func (o *Observer) remakeRun(ctx context.Context, st *runState, e *agent.Event) {
	st.resumed = false
	was := st.span.SpanContext()
	if st.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, st.parent)
	} else {
		ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	start := o.runStart(st.model, o.agentName(e))
	opts := append(start.opts[:len(start.opts):len(start.opts)], trace.WithTimestamp(st.start))
	if was.IsValid() {
		ctx = context.WithValue(ctx, wantKey{}, was)
	}
	_, st.span = o.tracer.Start(ctx, start.name, opts...)
	if got := st.span.SpanContext(); was.IsValid() && got.SpanID() != was.SpanID() {
		st.span.AddLink(trace.Link{SpanContext: was})
	}
}

// inject writes sc, when it is valid, into m under prefix, and reports
// whether it did.
func inject(m map[string]string, prefix string, sc trace.SpanContext) bool {
	if !sc.IsValid() {
		return false
	}
	traceContext.Inject(trace.ContextWithSpanContext(context.Background(), sc), prefixed{m, prefix})
	return true
}

// extract reads the span context under prefix in m; invalid when there is
// none, or it does not parse.
func extract(m map[string]string, prefix string) trace.SpanContext {
	return trace.SpanContextFromContext(traceContext.Extract(context.Background(), prefixed{m, prefix}))
}

// prefixed is a propagation carrier over the keys of a map that start with
// a prefix.
type prefixed struct {
	m      map[string]string
	prefix string
}

func (p prefixed) Get(key string) string { return p.m[p.prefix+key] }
func (p prefixed) Set(key, value string) { p.m[p.prefix+key] = value }
func (p prefixed) Keys() []string {
	var keys []string
	for k := range p.m {
		if rest, ok := strings.CutPrefix(k, p.prefix); ok {
			keys = append(keys, rest)
		}
	}
	return keys
}

// An IDGenerator makes the trace and span ids of new spans. Its methods
// are those of the OpenTelemetry SDK's sdktrace.IDGenerator, so that a
// value of one is a value of the other.
type IDGenerator interface {
	NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID)
	NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID
}

// wantKey is the context key of the span context a span should get: the
// one a resumed run's span had where it started.
type wantKey struct{}

// NewIDGenerator returns an ID generator for the SDK's TracerProvider, on
// the processes that run durable runs (temporalagent's workers):
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(otelagent.NewIDGenerator(nil)), ...)
//
// It gives the span that an Observer makes again when a run resumed in
// another process ends (see [Observer.Resume]) the ids the run's span had
// where it started, so that the run's model and tool calls, made in any
// process, are its children in the trace, as in agent.Run. Every other
// span gets its ids from fallback, or random ones, as the SDK's default
// generator gives, when fallback is nil.
func NewIDGenerator(fallback IDGenerator) IDGenerator {
	if fallback == nil {
		fallback = randomIDs{}
	}
	return durableIDs{fallback}
}

type durableIDs struct{ fallback IDGenerator }

// NewIDs returns the ids of a new root span.
func (g durableIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(wantKey{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	return g.fallback.NewIDs(ctx)
}

// NewSpanID returns the id of a new span in the trace traceID.
func (g durableIDs) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(wantKey{}).(trace.SpanContext); ok && sc.TraceID() == traceID {
		return sc.SpanID()
	}
	return g.fallback.NewSpanID(ctx, traceID)
}

// randomIDs makes random ids, never zero ones.
type randomIDs struct{}

func (randomIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		hi, lo := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			tid[i], tid[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
		}
	}
	return tid, randomIDs{}.NewSpanID(ctx, tid)
}

func (randomIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		v := rand.Uint64()
		for i := range 8 {
			sid[i] = byte(v >> (56 - 8*i))
		}
	}
	return sid
}
