package agent

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genai"
)

// errStreamCut is the error of a stream that ended, without an error, before
// any chunk carried a finish reason: the connection was cut at an event
// boundary, or a proxy ended it. The API always ends a stream with a finish
// reason, so what arrived is incomplete (genai's own Chat drops such turns).
var errStreamCut = errors.New("agent: stream ended before the model finished (no finish reason)")

// modelTurn makes the model call of one turn, with its retries, re-asks
// and continuation hops, and fills in t with the response; t.Attempts
// counts every call made. On failure t holds the last response received,
// if any.
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
	// sent and send are what the calls send: config and contents, or
	// through the agent's cache, without what it holds.
	sent, send, recached := config, contents, false
	if r.a.cache != nil {
		sent, send = r.cacheRequest(config, contents, turn, "")
	}
	start := time.Now()
	rt := retrier{policy: &r.a.retry, start: start, flex: r.a.x.flex}
	tries, reasks := 0, 0 // the calls of the turn's first request, which its retries are bounded by
	for {
		t.Attempts++
		tries++
		ctx := r.ctx
		if r.emitting {
			req := &Event{Kind: EventModelRequest, Turn: turn, Attempt: t.Attempts, Model: r.a.model, Contents: send, Config: sent, Stream: r.yield != nil}
			ctx = r.startContext(r.ctx, req)
			if !r.emit(ctx, req) {
				return ErrStopped
			}
		}
		// streamed: content reached the Stream consumer, so the turn
		// cannot be replayed.
		resp, streamed, err := r.call(ctx, turn, send, sent)
		if r.a.x.hops > 0 && r.continues(resp, err) {
			// The API cut the answer: the loop continues it (continuation.go).
			var hopStreamed bool
			resp, ctx, hopStreamed, err = r.continueAnswer(ctx, turn, t, send, sent, resp, err, start)
			streamed = streamed || hopStreamed
			if err != nil {
				t.Latency = time.Since(start)
				return err
			}
		}
		t.Latency = time.Since(start)
		if r.stopped {
			return ErrStopped
		}
		if err != nil {
			if r.ctx.Err() != nil {
				return r.ctxError(turn)
			}
			if sent != config && !streamed && cacheGone(err) {
				// The cache is gone or refused: sent again, through a
				// new cache or uncached (cache.go).
				r.retrying(ctx, turn, t.Attempts, err, 0)
				sent, send = r.cacheLost(turn, config, sent, contents, &recached)
				continue
			}
			d, ok := rt.delay(err, tries)
			if !ok || streamed {
				return &ModelError{Turn: turn, Attempts: t.Attempts, Err: err}
			}
			r.retrying(ctx, turn, t.Attempts, err, d)
			if !sleep(r.ctx, d) {
				t.Latency = time.Since(start)
				return r.ctxError(turn)
			}
			continue
		}
		t.Response = resp
		t.Usage.addResponse(resp)
		if m := resp.UsageMetadata; m != nil {
			r.promptTokens = r.promptSize(t, m)
		}
		if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
			t.FinishReason = resp.Candidates[0].FinishReason
		}
		if stop, reask := check(resp); stop != nil {
			stop.Turn, stop.Attempts = turn, t.Attempts
			if reask && reasks < r.a.retry.MaxReasks && !streamed {
				reasks++
				t.Continuations, t.hopPrompt = 0, 0
				r.retrying(ctx, turn, t.Attempts, stop, 0)
				continue
			}
			return stop
		}
		if r.emitting {
			r.emit(ctx, &Event{Kind: EventModelResponse, Turn: turn, Hop: t.Continuations, Response: resp, Usage: t.Usage,
				FinishReason: t.FinishReason, Duration: t.Latency})
		}
		return nil
	}
}

// retrying reports a retry about to happen.
func (r *run) retrying(ctx context.Context, turn, attempt int, err error, d time.Duration) {
	r.retryingHop(ctx, turn, attempt, 0, err, d)
}

// stream makes one streaming model call, handing the first candidate's
// text and thoughts to the consumer as they arrive, and returns the chunks
// merged into one response. streamed reports whether any content reached
// the consumer.
//
// A stream that fails, or ends without a finish reason, after a checkpoint
// (a chunk carrying a continuation token) with nothing yielded since, ends
// in a *checkpointCut holding the answer up to it, which the loop resumes
// from (continuation.go).
func (r *run) stream(ctx context.Context, turn int, contents []*genai.Content, config *genai.GenerateContentConfig) (resp *genai.GenerateContentResponse, streamed bool, err error) {
	var m merger
	onPart := func(p *genai.Part) bool {
		streamed = true
		if e := serverEvent(turn, p); e != nil {
			return r.emit(ctx, e)
		}
		kind := EventText
		if p.Thought {
			kind = EventThought
		}
		return r.emit(ctx, &Event{Kind: kind, Turn: turn, Text: p.Text})
	}
	for chunk, err := range r.a.generator().GenerateContentStream(ctx, r.a.model, contents, config) {
		if err != nil {
			return m.cutAt(r.a.x.hops, streamed, err)
		}
		if !m.add(chunk, onPart) {
			return nil, streamed, ErrStopped
		}
		if token := checkpointToken(chunk); token != nil {
			m.checkpoint(token)
		}
	}
	resp = m.response()
	if len(resp.Candidates) > 0 && resp.Candidates[0].FinishReason == "" {
		return m.cutAt(r.a.x.hops, streamed, errStreamCut)
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
	case c.FinishReason == genai.FinishReasonMalformedFunctionCall ||
		c.FinishReason == genai.FinishReasonUnexpectedToolCall && (c.Content == nil || len(functionCalls(c.Content)) == 0):
		// An unexpected call the API sends is answered (builtin.go); one
		// it does not send can only be asked for again.
		return &StopError{Kind: ErrMalformedCall, FinishReason: c.FinishReason, Message: c.FinishMessage}, true
	case c.Content != nil && len(c.Content.Parts) > 0:
		return nil, false
	case c.FinishReason == genai.FinishReasonMaxTokens:
		// Thinking used the whole output budget: asking again with the
		// same budget bills as many tokens for the same nothing.
		return &StopError{Kind: ErrMaxTokens, FinishReason: c.FinishReason, Message: c.FinishMessage}, false
	case c.FinishReason == genai.FinishReasonTooManyToolCalls:
		return &StopError{Kind: ErrTooManyToolCalls, FinishReason: c.FinishReason, Message: c.FinishMessage}, false
	case c.FinishReason == genai.FinishReasonContinuation:
		return &StopError{Kind: ErrContinuation, FinishReason: c.FinishReason, Message: "the API cut the answer before it had any content"}, false
	}
	return &StopError{Kind: ErrEmptyReply, FinishReason: c.FinishReason, Message: c.FinishMessage}, reaskReasons[c.FinishReason]
}
