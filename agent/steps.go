package agent

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Steps are the loop's decisions, one step at a time, for a runtime that
// drives the loop itself and must behave exactly as [Agent.Run] does: a
// durable workflow that makes each model call and each tool call a task of
// its own, run later, retried, or run in another process (the
// temporalagent module is built on them). Run and Stream do not use them;
// an application calls Run.
//
// A turn made of steps reads as follows; every step makes the decision Run
// makes, by the same code:
//
//  1. The model call sends [Steps.PrepareHistory]'s contents with
//     [Steps.RequestConfig]; a failure is retried after [Steps.RetryDelay]
//     when that says so ([Steps.Retrying] reports it). An answer the API
//     cut ([ContinuationToken]) is continued: each hop sends the same
//     contents with [ContinueConfig] and the token [Hops].Add returns, at
//     most Limits.MaxContinuations times, and the turn's response is
//     [Hops].Response.
//  2. [CheckResponse] says whether the response can be used, or why not,
//     and whether asking again may help.
//  3. [FunctionCalls] lists the calls; [Steps.PlanCall] answers those that
//     need no tool and picks those that need approval (in a turn the API
//     ended with UNEXPECTED_TOOL_CALL, [UnexpectedCall] answers the others);
//     [Steps.RunCall] runs each other call as Run does; [NotApproved]
//     answers a call nobody approved.
//  4. [ResponseContent] is the content that answers the calls.
//  5. [Steps.Stopped] says whether the turn's answer, incomplete, ends the
//     run.
//
// A runtime resuming a run whose history ends with calls nobody answered
// ([PendingCalls]) answers them with steps 3 and 4 before its first model
// call, as Run does (see the package documentation, "Resuming a run").
//
// [NewResult] assembles the Result of a run from its history and turns.
// [Steps.Observe] and [Steps.StartContext] hand events to the agent's
// Observer as Run does; [Steps.Carry] and [Steps.Resume] carry the
// Observer's view of the run between the processes that run its steps. A Steps value is a small handle on its Agent: copy
// it freely.
type Steps struct{ a *Agent }

// Steps returns the steps of a's loop.
func (a *Agent) Steps() Steps { return Steps{a} }

// Limits are an agent's limits, defaults applied (see [Config]).
type Limits struct {
	MaxTurns        int
	MaxParallel     int
	MaxCallsPerTurn int
	ToolTimeout     time.Duration // zero: no bound
	MaxOutputBytes  int           // negative: no bound
	Retry           RetryPolicy   // every field set

	// MaxContinuations bounds the continuation hops of one answer; 0 when
	// the loop continues no answer (continuation is off, or genai's own
	// is on).
	MaxContinuations int
}

// Err returns the error every run of the agent fails with, when
// [Agent.With] could not apply its overrides; nil otherwise.
func (s Steps) Err() error { return s.a.err }

// Model returns the model's name.
func (s Steps) Model() string { return s.a.model }

// Models returns the client that makes the model calls: Config.Models,
// behind Config.Files's Resolve when the agent has a FileKeeper (each
// request's file references resolved first, as the loop's own calls
// resolve them).
func (s Steps) Models() Models { return s.a.generator() }

// Limits returns the agent's limits.
func (s Steps) Limits() Limits {
	return Limits{
		MaxTurns:        s.a.maxTurns,
		MaxParallel:     s.a.maxParallel,
		MaxCallsPerTurn: s.a.maxCalls,
		ToolTimeout:     s.a.toolTimeout,
		MaxOutputBytes:  s.a.maxOutputBytes,
		Retry:           s.a.retry,

		MaxContinuations: s.a.x.hops,
	}
}

// Stopped returns the error that ends a run after turn t, whose model
// content is in the history and whose calls were answered, because its
// answer is incomplete, as Run decides: cut at the output token limit
// with no calls ([ErrMaxTokens]), stopped after too many built-in tool
// calls ([ErrTooManyToolCalls]), or cut by the API and not continued
// ([ErrContinuation]). It returns nil when the run goes on, or ends with
// the answer.
func (s Steps) Stopped(turn int, t *Turn) *StopError { return s.a.cutShort(turn, t) }

// Tools returns the agent's tools.
func (s Steps) Tools() *toolset.Set { return s.a.tools }

// RequestConfig returns the config the model call of turn (from 0) sends:
// the caller's config with the tools' declarations, forcing function calls
// on the first turn only unless Config.ForceEveryTurn is set. It is shared:
// read it, never modify it.
func (s Steps) RequestConfig(turn int) *genai.GenerateContentConfig {
	if turn > 0 {
		return s.a.later
	}
	return s.a.config
}

// PrepareHistory returns the contents the model call of turn sends, given
// the run's working history (its whole history, unless an earlier call
// shortened it) and the prompt token count of the previous model call:
// what Config.PrepareHistory returns, or contents itself when it is not
// set or changes nothing. An error ends the run, as in Run.
func (s Steps) PrepareHistory(ctx context.Context, contents []*genai.Content, turn, promptTokens int) ([]*genai.Content, error) {
	r := &run{a: s.a, ctx: ctx, history: contents, promptTokens: promptTokens}
	return r.contents(turn)
}

// RetryDelay returns how long to wait before the model call that follows
// attempt (from 1), which failed with err, in a turn whose model calls
// started at start; false when the call must not be retried: err is not
// transient, the attempts are used up, or the wait would overrun
// RetryPolicy.MaxElapsed. The wait grows with attempt, with jitter, and is
// at least the delay the API asked for in a google.rpc.RetryInfo detail.
func (s Steps) RetryDelay(err error, attempt int, start time.Time) (time.Duration, bool) {
	rt := retrier{policy: &s.a.retry, start: start, flex: s.a.x.flex}
	var d time.Duration
	for a := 1; a <= attempt; a++ {
		var ok bool
		if d, ok = rt.delay(err, a); !ok {
			return 0, false
		}
	}
	return d, attempt > 0
}

// Retrying reports a retry of the model call of turn about to happen, as
// Run does: a log line at Warn, and an EventRetry event. err is why, and d
// the wait before the next attempt (zero for a re-ask).
func (s Steps) Retrying(ctx context.Context, turn, attempt int, err error, d time.Duration) {
	s.run(ctx).retrying(ctx, turn, attempt, err, d)
}

// CheckResponse returns why a model response cannot be used, if it
// cannot: the prompt was blocked, the model stopped for safety, produced
// malformed calls, reached its token limit with nothing to show, or sent
// nothing; reask says whether asking again with the same request may help.
// The caller sets the StopError's Turn and Attempts.
func CheckResponse(resp *genai.GenerateContentResponse) (stop *StopError, reask bool) {
	return check(resp)
}

// FunctionCalls returns the function calls of a model content, in order.
func FunctionCalls(c *genai.Content) []*genai.FunctionCall { return functionCalls(c) }

// PlanCall decides about call i of the n calls of a turn before anything
// runs: answer is the answer of a call that cannot run (over
// Config.MaxCallsPerTurn, or of an unknown tool), nil for one that can;
// approval says whether Config.NeedsApproval picked a call that can run.
func (s Steps) PlanCall(ctx context.Context, i, n int, call *genai.FunctionCall) (answer *toolset.Result, approval bool) {
	r := s.run(ctx)
	if _, answer = r.plan(i, n, call); answer != nil {
		return answer, false
	}
	return nil, s.a.needsApproval != nil && r.needsApproval(call)
}

// RunCall answers one call as Run does: it runs the call's tool under
// Config.ToolTimeout, after asking Config.Intercept unless approved is set
// (a person approved the call), and checks and caps the output; an unknown
// tool is answered with the error Run sends. ctx is the call's context:
// when it is done the tool is cancelled and the result says so. Give it the
// context [Steps.StartContext] returned for the call's EventToolCall, so
// that the events of an agent the tool runs ([AsTool]) name the call as
// their Parent. agents is the usage of the agents the call ran as tools, by
// name, nil when it ran none: hand the sums of a run's calls to
// [NewResult].
func (s Steps) RunCall(ctx context.Context, call *genai.FunctionCall, approved bool) (res ToolResult, agents map[string]Usage) {
	r := s.run(ctx)
	r.setContext(ctx) // for the agents the tool runs (AsTool)
	p := &callPlan{ctx: r.ctx, decided: approved}
	p.tool, p.answer = r.plan(0, 1, call)
	res = r.runCall(p, call)
	return res, r.agents.close()
}

// Interceptor returns the agent's Config.Intercept, nil when it has none:
// for a runtime that overrides the Interceptor (with [Agent.With]) to
// decide some calls itself, and hands the others to the agent's own.
func (s Steps) Interceptor() Interceptor { return s.a.intercept }

// NotApproved returns the answer to a call that needed approval and did not
// run: the model receives {"error": "tool NAME was not run: " + why}, and
// the result's Err is [ErrDenied].
func NotApproved(call *genai.FunctionCall, why string) *toolset.Result {
	return notApproved(call, why)
}

// ResponseContent returns the user content that answers calls in a
// conversation with model: one functionResponse part per call, in call
// order, each echoing its call's id; results[i] answers calls[i]. Media
// that tools handed back go into the parts for a model that takes them,
// and are described in words for one that does not, as in Run.
func ResponseContent(model string, calls []*genai.FunctionCall, results []ToolResult) *genai.Content {
	return responseContent(calls, mediaFor(geminiadapter.MediaInResponses(model), results))
}

// UsageOf returns the token counts of one response's usage metadata.
func UsageOf(m *genai.GenerateContentResponseUsageMetadata) Usage {
	var u Usage
	u.add(m)
	return u
}

// Plus returns the sum of u and v.
func (u Usage) Plus(v Usage) Usage { return u.plus(v) }

// NewResult returns the Result of a run whose history and turns these are,
// as Run fills it in: Text and FinishReason come from the last turn. usage
// is the run's own; agents sums what RunCall reported for the run's calls
// (nil when they ran no agent): the Result's Usage then counts the agents'
// usage too, and its Agents breaks the total down by agent, the run's own
// under Config.Name, as in Run.
func (s Steps) NewResult(history []*genai.Content, turns []Turn, usage Usage, agents map[string]Usage) *Result {
	return NewResult(history, turns, usage, s.a.name, agents)
}

// NewResult is [Steps.NewResult] for a caller that holds no agent: name is
// the agent's Config.Name.
func NewResult(history []*genai.Content, turns []Turn, usage Usage, name string, agents map[string]Usage) *Result {
	res := &Result{History: history, Turns: turns, Usage: usage}
	if n := len(turns); n > 0 {
		res.answer(&turns[n-1])
	}
	if len(agents) > 0 {
		fold(res, name, maps.Clone(agents))
	}
	return res
}

// Name returns the agent's name (Config.Name).
func (s Steps) Name() string { return s.a.name }

// Observing reports whether the agent has an Observer: when it has none,
// there is no need to build events.
func (s Steps) Observing() bool { return s.a.observer != nil }

// StartContext returns the context of the step e begins, as Run chooses
// it: the one a [ContextObserver] returns, or ctx; for an EventToolCall,
// one that also carries e, for the agents the call's tool runs. It stamps
// e with the agent's name, as Run stamps its events.
func (s Steps) StartContext(ctx context.Context, e *Event) context.Context {
	r := s.run(ctx)
	ctx = r.startContext(ctx, e)
	if e.Kind == EventToolCall {
		ctx = context.WithValue(ctx, callKey{}, e) // the Parent of a sub-agent's events (AsTool)
	}
	return ctx
}

// Carry returns what the agent's Observer, when it is a [Carrier], keeps
// in ctx for the steps of the run that run in other processes: from the
// context StartContext returned for the run's EventRunStart, the run; from
// a caller's context, what the run should continue (the caller's span).
// It returns nil when the Observer is no Carrier or carries nothing. A
// panic in the Observer is recovered and logged, and nil returned.
func (s Steps) Carry(ctx context.Context) (carried map[string]string) {
	c, ok := s.a.observer.(Carrier)
	if !ok {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			s.a.logger.LogAttrs(ctx, slog.LevelError, "agent: observer panicked", slog.Any("panic", v), slog.String("in", "Carry"))
			carried = nil
		}
	}()
	return c.Carry(ctx)
}

// Resume returns ctx with what Carry returned, in this process or another,
// put back by the agent's Observer when it is a [Carrier]: the contexts
// StartContext derives from it belong to the run carried. It returns ctx
// when the Observer is no Carrier or carried is nil. A panic in the
// Observer is recovered and logged, and ctx returned.
func (s Steps) Resume(ctx context.Context, carried map[string]string) (resumed context.Context) {
	c, ok := s.a.observer.(Carrier)
	if !ok || carried == nil {
		return ctx
	}
	defer func() {
		if v := recover(); v != nil {
			s.a.logger.LogAttrs(ctx, slog.LevelError, "agent: observer panicked", slog.Any("panic", v), slog.String("in", "Resume"))
			resumed = ctx
		}
	}()
	if resumed = c.Resume(ctx, carried); resumed == nil {
		resumed = ctx
	}
	return resumed
}

// Observe hands e to the agent's Observer, if any, with the context of e's
// step, stamped with the agent's name as Run stamps its events. A panic in
// the Observer is recovered and logged, as in Run.
func (s Steps) Observe(ctx context.Context, e *Event) {
	if s.a.observer != nil {
		r := s.run(ctx)
		r.mark(e)
		r.observe(ctx, e)
	}
}

// Typed returns the agent that the typed runs of a for T run on, the one
// [RunTyped] and [StreamTyped] run: its requests carry T's response schema
// or final-answer tool, as a's Config.Output chooses. Its Steps make a
// typed run's decisions ([Steps.TypedTurn]); its Run returns the answer in
// Result.Output.
func Typed[T any](a *Agent) (*Agent, error) { return typedAgent[T](a) }

// TypedState is where a typed run stands between its turns.
type TypedState struct {
	// Reasks counts the turns made to ask again for a refused answer.
	// They do not count against Config.MaxTurns: the run reaches its
	// limit at turn MaxTurns + Reasks.
	Reasks int

	// Force is set when the next turn must call the final-answer tool
	// (OutputTool, after a refused answer).
	Force bool
}

// Typed reports whether the agent makes typed runs: one [Typed] returned.
func (s Steps) Typed() bool { return s.a.output != nil }

// TypedConfig returns the request config of turn (from 0) of a typed run
// at st: RequestConfig's, or, on the last turn Config.MaxTurns allows and
// when the final-answer tool must be called, one that makes the model
// answer. It is shared: read it, never modify it.
func (s Steps) TypedConfig(turn int, st TypedState) *genai.GenerateContentConfig {
	if s.a.output == nil {
		return s.RequestConfig(turn)
	}
	r := &run{a: s.a, typed: typedRun{o: s.a.output, reasks: st.Reasks, force: st.Force}}
	return r.typedConfig(turn, s.RequestConfig(turn))
}

// A TypedTurn is the decision about one turn of a typed run, once the
// turn's calls have run, as RunTyped makes it.
type TypedTurn struct {
	// Next is the run's state for its next turn.
	Next TypedState

	// Done says that the run ends: with Output, or with Err.
	Done bool

	// Output is the answer, decoded into the run's T, when the run ends
	// without Err.
	Output any

	// Err is set when the answer was refused and the re-asks ran out
	// (OutputConfig.MaxReasks). Its Result is the caller's to set.
	Err *OutputError

	// Ask, when set, is a user content to add to the history before the
	// next turn: it asks the model again.
	Ask *genai.Content

	// Retry, when set, says why the answer is asked again (it wraps
	// [ErrInvalidOutput]): report it with [Steps.Retrying], as Run does.
	Retry error
}

// TypedTurn decides about turn t of a typed run at st, once t's calls have
// run and their results are in t: the run ends with the answer, goes on
// (the turn called tools), asks again for a refused answer, or ends with an
// [*OutputError] when the re-asks ran out. It has no effect: the caller
// acts on the decision. On an agent that makes no typed runs, every turn
// goes on.
func (s Steps) TypedTurn(t *Turn, st TypedState) TypedTurn {
	o := s.a.output
	if o == nil {
		return TypedTurn{Next: st}
	}
	v := o.decide(t)
	switch {
	case v.why == nil && v.answered:
		return TypedTurn{Next: TypedState{Reasks: st.Reasks}, Done: true, Output: v.output}
	case v.why == nil:
		return TypedTurn{Next: TypedState{Reasks: st.Reasks}} // a turn of other calls
	case st.Reasks >= o.maxReasks:
		return TypedTurn{Next: TypedState{Reasks: st.Reasks}, Done: true,
			Err: &OutputError{Strategy: o.strategy, Raw: v.raw, Err: v.why, Reasks: st.Reasks}}
	}
	tt := TypedTurn{Next: TypedState{Reasks: st.Reasks + 1, Force: o.strategy == OutputTool},
		Retry: fmt.Errorf("%w: %w", ErrInvalidOutput, v.why)}
	if v.ask != "" {
		tt.Ask = genai.NewContentFromText(v.ask, genai.RoleUser)
	}
	return tt
}

// run returns a run of s's agent under ctx, for the steps that are methods
// of run.
func (s Steps) run(ctx context.Context) *run {
	return &run{a: s.a, ctx: ctx, emitting: s.a.observer != nil}
}
