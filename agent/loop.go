package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/genai"
)

// run is the state of one run of the loop. It lives on the run's goroutine;
// only runTools hands work to other goroutines, and collects it back.
type run struct {
	a       *Agent
	ctx     context.Context
	cancel  context.CancelFunc // Stream: ends the run when the consumer stops
	history []*genai.Content
	result  *Result

	// working is the history the model calls send when a HistoryFunc
	// shortened it; nil while it is history itself.
	working []*genai.Content
	// promptTokens is the last model call's prompt token count.
	promptTokens int

	// emitting is set when anyone listens to events (an Observer, or a
	// Stream consumer), so that a plain Run builds none.
	emitting bool
	// yield is the Stream consumer's; nil for Run.
	yield func(*Event, error) bool
	// stopped is set when the Stream consumer broke out of its loop.
	stopped bool

	// typed is a typed run's state (see typed.go); zero for other runs.
	typed typedRun
	// agents sums the usage of agents run as tools by this run's calls
	// (see astool.go).
	agents agentUsage
	// rc is the run's context, when its tools may run agents (see
	// runContext).
	rc runContext

	// resume is the model content whose calls a resumed run answers
	// first, the last of the history it was given; nil for other runs
	// (see PendingCalls).
	resume *genai.Content
}

// runContext is the context a run hands its steps when it has tools: the
// caller's, under which the agents the tools run ([AsTool]) find the run
// (runKey). It is a field of the run, so that a run makes no context of
// its own for it.
type runContext struct {
	context.Context
	r *run
}

// Value returns the run for runKey, and ctx's value for any other key.
func (c *runContext) Value(key any) any {
	if _, ok := key.(runKey); ok {
		return c.r
	}
	return c.Context.Value(key)
}

// setContext makes ctx, carrying the run under runKey, the run's context.
func (r *run) setContext(ctx context.Context) {
	r.rc = runContext{Context: ctx, r: r}
	r.ctx = &r.rc
}

// ErrStopped is the error of a run whose Stream consumer broke out of its
// range loop. The consumer never sees it; an Observer gets it as the Err of
// the run's EventDone.
var ErrStopped = errors.New("agent: stream consumer stopped")

func (a *Agent) newRun(ctx context.Context, contents []*genai.Content, yield func(*Event, error) bool) *run {
	history := make([]*genai.Content, len(contents), len(contents)+4)
	copy(history, contents)
	r := &run{
		a:        a,
		ctx:      ctx,
		history:  history,
		result:   &Result{},
		emitting: a.observer != nil || yield != nil,
		yield:    yield,
		typed:    typedRun{o: a.output},
	}
	if PendingCalls(contents) != nil {
		r.resume = contents[len(contents)-1]
	}
	if a.tools.Len() > 0 {
		r.setContext(ctx) // for the agents that tools run (AsTool)
	}
	if r.emitting {
		start := &Event{Kind: EventRunStart, Model: a.model}
		r.ctx = r.startContext(r.ctx, start)
		r.emit(r.ctx, start)
	}
	return r
}

// loop runs turns until the model answers without calling a tool, a limit
// is reached or something fails. A resumed run's first turn makes no model
// call: its content is the last of the history, whose calls it answers.
func (r *run) loop() error {
	for turn := 0; ; turn++ {
		if r.counted(turn) == r.a.maxTurns {
			return fmt.Errorf("%w (%d)", ErrMaxTurns, r.a.maxTurns)
		}
		if r.stopped {
			return ErrStopped
		}
		var t Turn
		content := r.resume
		if turn > 0 || content == nil {
			if r.a.link != nil {
				r.reportTurn(turn, nil) // an agent run as a tool: progress of the call it serves
			}
			err := r.modelTurn(turn, &t)
			r.result.Usage = r.result.Usage.plus(t.Usage)
			if err != nil {
				if t.Response != nil {
					r.result.Turns = append(r.result.Turns, t)
				}
				return err
			}
			content = t.Response.Candidates[0].Content
			r.add(content)
			if r.emitting && r.yield == nil {
				r.serverEvents(r.ctx, turn, content) // Stream reported them as they came
			}
		}
		t.Calls = functionCalls(content)
		if len(t.Calls) > 0 {
			if r.a.link != nil {
				r.reportTurn(turn, t.Calls)
			}
			start := time.Now()
			if t.FinishReason == genai.FinishReasonUnexpectedToolCall {
				t.Results = r.unexpectedCalls(turn, t.Calls, finishMessage(t.Response)) // builtin.go
			} else {
				t.Results = r.runTools(turn, t.Calls)
			}
			t.ToolTime = time.Since(start)
			r.add(responseContent(t.Calls, mediaFor(r.a.mediaInResponses, t.Results)))
		}
		r.result.Turns = append(r.result.Turns, t)
		kept := &r.result.Turns[len(r.result.Turns)-1] // the turn, as Result.Turns holds it
		if r.emitting {
			r.emit(r.ctx, &Event{Kind: EventTurnEnd, Turn: turn, TurnInfo: kept,
				Usage: t.Usage, FinishReason: t.FinishReason})
		}
		if r.stopped {
			return ErrStopped
		}
		if err := r.ctx.Err(); err != nil {
			return r.ctxError(turn)
		}
		if stop := r.a.cutShort(turn, kept); stop != nil {
			// The answer was cut: it is in the history and in
			// Result.Text, but the run says it is incomplete.
			return stop
		}
		if r.typed.o != nil {
			// A typed run ends with a valid typed answer, not with text.
			if done, err := r.typedTurnDone(turn, kept); done {
				return err
			}
			continue
		}
		if len(t.Calls) == 0 {
			return nil
		}
	}
}

// counted returns how many of the turns before turn count against
// MaxTurns: a typed run's re-asks do not, nor the turn a resumed run
// answered without a model call.
func (r *run) counted(turn int) int {
	if r.resume != nil {
		turn--
	}
	return turn - r.typed.reasks
}

// add appends a content to the history and, when a HistoryFunc shortened
// it, to the working history.
func (r *run) add(c *genai.Content) {
	r.history = append(r.history, c)
	if r.working != nil {
		r.working = append(r.working, c)
	}
}

// contents returns what the next model call sends: the working history,
// prepared by the HistoryFunc, if any.
func (r *run) contents(turn int) ([]*genai.Content, error) {
	send := r.history
	if r.working != nil {
		send = r.working
	}
	if r.a.prepareHistory == nil {
		return send, nil
	}
	out, err := r.a.prepareHistory(r.ctx, &HistoryInfo{Contents: send, Turn: turn, PromptTokens: r.promptTokens, Model: r.a.model})
	if err != nil {
		return nil, fmt.Errorf("agent: preparing the history of turn %d: %w", turn, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("agent: preparing the history of turn %d: the HistoryFunc returned no contents", turn)
	}
	if len(out) != len(send) || &out[0] != &send[0] {
		// A copy of its own: what the hook returned may share an array
		// with the history, which later turns append to.
		r.working = append(make([]*genai.Content, 0, len(out)+4), out...)
		return r.working, nil
	}
	return send, nil
}

// finish fills in the result once the loop is over, hands the EventDone
// event to the observer, and returns it for the Stream consumer, unless the
// consumer has gone.
func (r *run) finish(err error) *Event {
	res := r.result
	res.History = r.history
	if n := len(res.Turns); n > 0 {
		res.answer(&res.Turns[n-1])
	}
	r.foldAgents(res)
	if err != nil {
		r.a.logger.LogAttrs(r.ctx, slog.LevelDebug, "agent: run failed", slog.Int("turns", len(res.Turns)), slog.Any("error", err))
	}
	if !r.emitting {
		return nil // nobody listens
	}
	done := &Event{Kind: EventDone, Turn: len(res.Turns) - 1, Result: res, Err: err}
	r.mark(done)
	if r.a.observer != nil {
		r.observe(r.ctx, done)
	}
	if r.stopped {
		return nil // the consumer has gone: only the observer sees the end
	}
	return done
}

// ctxError is the error of a run whose context is done: it wraps the
// context's error, and its cause when there is one.
func (r *run) ctxError(turn int) error {
	err, cause := r.ctx.Err(), context.Cause(r.ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("agent: run stopped in turn %d: %w: %w", turn, err, cause)
	}
	return fmt.Errorf("agent: run stopped in turn %d: %w", turn, err)
}

// emit hands e to the observer, with the context of e's step, and, for
// Stream, to the consumer. It reports whether the run should go on.
func (r *run) emit(ctx context.Context, e *Event) bool {
	r.mark(e)
	if r.a.observer != nil {
		r.observe(ctx, e)
	}
	if r.yield != nil && !r.stopped {
		if !r.yield(e, nil) {
			r.stopped = true
			r.cancel()
		}
	}
	return !r.stopped
}

// observe calls the observer, which cannot break the run.
func (r *run) observe(ctx context.Context, e *Event) {
	defer func() {
		if v := recover(); v != nil {
			r.a.logger.LogAttrs(r.ctx, slog.LevelError, "agent: observer panicked", slog.Any("panic", v), slog.String("event", e.Kind.String()))
		}
	}()
	r.a.observer.Observe(ctx, e)
}

// startContext returns the context of the step e begins: the one the
// ContextObserver chooses, or ctx. A panic in it is logged, and ctx used.
func (r *run) startContext(ctx context.Context, e *Event) (scoped context.Context) {
	r.mark(e)
	if r.a.scoper == nil {
		return ctx
	}
	defer func() {
		if v := recover(); v != nil {
			r.a.logger.LogAttrs(ctx, slog.LevelError, "agent: observer panicked", slog.Any("panic", v), slog.String("event", e.Kind.String()))
			scoped = ctx
		}
	}()
	if scoped = r.a.scoper.StartContext(ctx, e); scoped == nil {
		scoped = ctx
	}
	return scoped
}

// functionCalls returns the function calls of a model content, in order;
// nil when it has none.
func functionCalls(c *genai.Content) []*genai.FunctionCall {
	n := 0
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	calls := make([]*genai.FunctionCall, 0, n)
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			calls = append(calls, p.FunctionCall)
		}
	}
	return calls
}

// text returns the text of a content's parts, thoughts left out.
func text(c *genai.Content) string {
	if c == nil {
		return ""
	}
	n, only := 0, ""
	for _, p := range c.Parts {
		if p != nil && !p.Thought && p.Text != "" {
			n++
			only = p.Text
		}
	}
	if n <= 1 {
		return only
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
