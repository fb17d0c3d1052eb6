package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/genai"
)

// errStreamCut is the error of a stream that ended, without an error, before
// any chunk carried a finish reason: the connection was cut at an event
// boundary, or a proxy ended it. The API always ends a stream with a finish
// reason, so what arrived is incomplete (genai's own Chat drops such turns).
var errStreamCut = errors.New("agent: stream ended before the model finished (no finish reason)")

// modelTurn makes the model call of one turn, with its retries and re-asks,
// and fills in t with the response. On failure t holds the last response
// received, if any.
func (r *run) modelTurn(turn int, t *Turn) error {
	contents, err := r.contents(turn)
	if err != nil {
		return err
	}
	config := r.a.config
	if turn > 0 {
		config = r.a.later
	}
	if r.typed.o != nil {
		config = r.typedConfig(turn, config)
	}
	start := time.Now()
	rt := retrier{policy: &r.a.retry, start: start}
	reasks := 0
	for attempt := 1; ; attempt++ {
		t.Attempts = attempt
		ctx := r.ctx
		if r.emitting {
			req := &Event{Kind: EventModelRequest, Turn: turn, Attempt: attempt, Model: r.a.model, Contents: contents, Config: config, Stream: r.yield != nil}
			ctx = r.startContext(r.ctx, req)
			if !r.emit(ctx, req) {
				return ErrStopped
			}
		}
		var (
			resp     *genai.GenerateContentResponse
			err      error
			streamed bool // content reached the Stream consumer: the turn cannot be replayed
		)
		if r.yield != nil {
			resp, streamed, err = r.stream(ctx, turn, contents, config)
		} else {
			resp, err = r.a.models.GenerateContent(ctx, r.a.model, contents, config)
		}
		t.Latency = time.Since(start)
		if r.stopped {
			return ErrStopped
		}
		if err != nil {
			if r.ctx.Err() != nil {
				return r.ctxError(turn)
			}
			d, ok := rt.delay(err, attempt)
			if !ok || streamed {
				return &ModelError{Turn: turn, Attempts: attempt, Err: err}
			}
			r.retrying(ctx, turn, attempt, err, d)
			if !sleep(r.ctx, d) {
				t.Latency = time.Since(start)
				return r.ctxError(turn)
			}
			continue
		}
		t.Response = resp
		t.Usage.add(resp.UsageMetadata)
		if m := resp.UsageMetadata; m != nil {
			r.promptTokens = int(m.PromptTokenCount)
		}
		if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
			t.FinishReason = resp.Candidates[0].FinishReason
		}
		if stop, reask := check(resp); stop != nil {
			stop.Turn, stop.Attempts = turn, attempt
			if reask && reasks < r.a.retry.MaxReasks && !streamed {
				reasks++
				r.retrying(ctx, turn, attempt, stop, 0)
				continue
			}
			return stop
		}
		if r.emitting {
			r.emit(ctx, &Event{Kind: EventModelResponse, Turn: turn, Response: resp, Usage: t.Usage,
				FinishReason: t.FinishReason, Duration: t.Latency})
		}
		return nil
	}
}

// retrying reports a retry about to happen.
func (r *run) retrying(ctx context.Context, turn, attempt int, err error, d time.Duration) {
	r.a.logger.LogAttrs(r.ctx, slog.LevelWarn, "agent: retrying model call",
		slog.Int("turn", turn), slog.Int("attempt", attempt), slog.Duration("delay", d), slog.Any("error", err))
	if r.emitting {
		r.emit(ctx, &Event{Kind: EventRetry, Turn: turn, Attempt: attempt, Err: err, Delay: d})
	}
}

// stream makes one streaming model call, handing the first candidate's
// text and thoughts to the consumer as they arrive, and returns the chunks
// merged into one response. streamed reports whether any content reached
// the consumer.
func (r *run) stream(ctx context.Context, turn int, contents []*genai.Content, config *genai.GenerateContentConfig) (resp *genai.GenerateContentResponse, streamed bool, err error) {
	var m merger
	onText := func(p *genai.Part) bool {
		kind := EventText
		if p.Thought {
			kind = EventThought
		}
		streamed = true
		return r.emit(ctx, &Event{Kind: kind, Turn: turn, Text: p.Text})
	}
	for chunk, err := range r.a.models.GenerateContentStream(ctx, r.a.model, contents, config) {
		if err != nil {
			return nil, streamed, err
		}
		if !m.add(chunk, onText) {
			return nil, streamed, ErrStopped
		}
	}
	resp = m.response()
	if len(resp.Candidates) > 0 && resp.Candidates[0].FinishReason == "" {
		return nil, streamed, errStreamCut
	}
	return resp, streamed, nil
}

// Finish reasons, grouped by what a response that ends with one means.
var (
	// unsafeReasons stop a turn for safety.
	unsafeReasons = map[genai.FinishReason]bool{
		genai.FinishReasonSafety:                 true,
		genai.FinishReasonProhibitedContent:      true,
		genai.FinishReasonBlocklist:              true,
		genai.FinishReasonSPII:                   true,
		genai.FinishReasonRecitation:             true,
		genai.FinishReasonImageSafety:            true,
		genai.FinishReasonImageProhibitedContent: true,
		genai.FinishReasonImageRecitation:        true,
	}
	// reaskReasons may end an empty reply that asking again can fix: the
	// model stopped at once, or for no reason it says.
	reaskReasons = map[genai.FinishReason]bool{
		"":                            true,
		genai.FinishReasonUnspecified: true,
		genai.FinishReasonStop:        true,
		genai.FinishReasonOther:       true,
	}
)

// check returns why resp cannot be used, if it cannot, and whether asking
// again may help. Asking again sends the same request, so it is done only
// where the model may well answer differently: never after MAX_TOKENS (the
// same budget runs out the same way), nor after LANGUAGE,
// TOO_MANY_TOOL_CALLS and the other reasons that a request decides.
func check(resp *genai.GenerateContentResponse) (stop *StopError, reask bool) {
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return &StopError{Kind: ErrPromptBlocked, BlockReason: pf.BlockReason, Message: pf.BlockReasonMessage}, false
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return &StopError{Kind: ErrEmptyReply}, true
	}
	c := resp.Candidates[0]
	switch {
	case unsafeReasons[c.FinishReason]:
		return &StopError{Kind: ErrUnsafe, FinishReason: c.FinishReason, Message: c.FinishMessage}, false
	case c.FinishReason == genai.FinishReasonMalformedFunctionCall || c.FinishReason == genai.FinishReasonUnexpectedToolCall:
		return &StopError{Kind: ErrMalformedCall, FinishReason: c.FinishReason, Message: c.FinishMessage}, true
	case c.Content != nil && len(c.Content.Parts) > 0:
		return nil, false
	case c.FinishReason == genai.FinishReasonMaxTokens:
		// Thinking used the whole output budget: asking again with the
		// same budget bills as many tokens for the same nothing.
		return &StopError{Kind: ErrMaxTokens, FinishReason: c.FinishReason, Message: c.FinishMessage}, false
	}
	return &StopError{Kind: ErrEmptyReply, FinishReason: c.FinishReason, Message: c.FinishMessage}, reaskReasons[c.FinishReason]
}
