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

	// emitting is set when anyone listens to events (an Observer, or a
	// Stream consumer), so that a plain Run builds none.
	emitting bool
	// yield is the Stream consumer's; nil for Run.
	yield func(*Event, error) bool
	// stopped is set when the Stream consumer broke out of its loop.
	stopped bool
}

// ErrStopped is the error of a run whose Stream consumer broke out of its
// range loop. The consumer never sees it; an Observer gets it as the Err of
// the run's EventDone.
var ErrStopped = errors.New("agent: stream consumer stopped")

func (a *Agent) newRun(ctx context.Context, contents []*genai.Content, yield func(*Event, error) bool) *run {
	history := make([]*genai.Content, len(contents), len(contents)+4)
	copy(history, contents)
	return &run{
		a:        a,
		ctx:      ctx,
		history:  history,
		result:   &Result{},
		emitting: a.observer != nil || yield != nil,
		yield:    yield,
	}
}

// loop runs turns until the model answers without calling a tool, a limit
// is reached or something fails.
func (r *run) loop() error {
	for turn := 0; ; turn++ {
		if turn == r.a.maxTurns {
			return fmt.Errorf("%w (%d)", ErrMaxTurns, r.a.maxTurns)
		}
		t, err := r.modelTurn(turn)
		if t != nil {
			r.result.Usage = r.result.Usage.plus(t.Usage)
		}
		if err != nil {
			if t != nil && t.Response != nil {
				r.result.Turns = append(r.result.Turns, *t)
			}
			return err
		}
		content := t.Response.Candidates[0].Content
		r.history = append(r.history, content)
		t.Calls = functionCalls(content)
		if len(t.Calls) > 0 {
			start := time.Now()
			t.Results = r.runTools(turn, t.Calls)
			t.ToolTime = time.Since(start)
			r.history = append(r.history, responseContent(t.Calls, mediaFor(r.a.model, t.Results)))
		}
		r.result.Turns = append(r.result.Turns, *t)
		if r.emitting {
			r.emit(&Event{Kind: EventTurnEnd, Turn: turn, TurnInfo: t,
				Usage: t.Usage, FinishReason: t.FinishReason})
		}
		if r.stopped {
			return ErrStopped
		}
		if err := r.ctx.Err(); err != nil {
			return r.ctxError(turn)
		}
		if len(t.Calls) == 0 {
			return nil
		}
	}
}

// finish fills in the result once the loop is over, hands the EventDone
// event to the observer, and returns it for the Stream consumer, unless the
// consumer has gone.
func (r *run) finish(err error) *Event {
	res := r.result
	res.History = r.history
	if n := len(res.Turns); n > 0 {
		last := &res.Turns[n-1]
		res.FinishReason = last.FinishReason
		if len(last.Response.Candidates) > 0 {
			res.Text = text(last.Response.Candidates[0].Content)
		}
	}
	if err != nil {
		r.a.logger.LogAttrs(r.ctx, slog.LevelDebug, "agent: run failed", slog.Int("turns", len(res.Turns)), slog.Any("error", err))
	}
	done := &Event{Kind: EventDone, Turn: len(res.Turns) - 1, Result: res, Err: err}
	if r.a.observer != nil {
		r.observe(done)
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

// emit hands e to the observer and, for Stream, to the consumer. It reports
// whether the run should go on.
func (r *run) emit(e *Event) bool {
	if r.a.observer != nil {
		r.observe(e)
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
func (r *run) observe(e *Event) {
	defer func() {
		if v := recover(); v != nil {
			r.a.logger.LogAttrs(r.ctx, slog.LevelError, "agent: observer panicked", slog.Any("panic", v), slog.String("event", e.Kind.String()))
		}
	}()
	r.a.observer.Observe(r.ctx, e)
}

// functionCalls returns the function calls of a model content, in order.
func functionCalls(c *genai.Content) []*genai.FunctionCall {
	var calls []*genai.FunctionCall
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
