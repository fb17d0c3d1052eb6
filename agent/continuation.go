package agent

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/genai"
)

// Long answers. The API cuts an answer longer than it makes in one request
// (65,536 output tokens streamed, 32,768 unary, for the models that decode
// longest) and says so: finish reason CONTINUATION, with a continuation
// token. The same request sent again with the token (top level, beside
// contents) continues the answer. genai would do that itself, unbounded,
// dropping the hops already billed when a later one fails; the loop owns
// it instead (see features.prepare), as it owns retries: each hop is a
// model call with its events and its retries, at most
// Config.MaxContinuations of them, and the hops are merged into the turn's
// response.

// ContinuationToken returns the token that continues resp, the answer the
// API cut: the first candidate's continuation token, when its finish
// reason says the answer goes on (CONTINUATION, or none: a streamed
// checkpoint) and the prompt was not blocked. It returns nil for an answer
// that is complete, or that the API ended for another reason.
func ContinuationToken(resp *genai.GenerateContentResponse) []byte {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return nil
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return nil
	}
	c := resp.Candidates[0]
	if len(c.ContinuationToken) == 0 || !resumable(c.FinishReason) {
		return nil
	}
	return c.ContinuationToken
}

// resumable reports whether an answer with this finish reason and a
// continuation token goes on: the reasons genai continues on
// (continuation.go's isResumableFinishReason).
func resumable(r genai.FinishReason) bool {
	return r == "" || r == genai.FinishReasonUnspecified || r == genai.FinishReasonContinuation
}

// ContinueConfig returns a copy of config that continues an answer with
// token: the request a continuation hop sends, the same as the one before
// it, plus the token.
func ContinueConfig(config *genai.GenerateContentConfig, token []byte) *genai.GenerateContentConfig {
	var c genai.GenerateContentConfig
	if config != nil {
		c = *config
	}
	c.ContinuationToken = token
	return &c
}

// Hops gathers the requests, or hops, of one answer that the API cut and
// the loop continued, and merges their responses as genai does: parts
// concatenated in order (thought parts and signatures where they came),
// every usage count summed, grounding chunks concatenated with the
// supports of later hops shifted to them, citations and URL metadata
// concatenated, the latest safety rating of each category, and the last
// hop's finish reason, message, token and response id. Run and Stream use
// it; a runtime that makes each model call a task of its own (see
// [Steps]) adds each hop's response with Add and sends the next hop with
// the token it returns, through [ContinueConfig].
//
// The zero value continues no answer; [NewHops] makes one that does.
type Hops struct {
	max    int
	n      int
	resp   *genai.GenerateContentResponse
	prompt int
	tokens [][]byte
}

// NewHops returns a Hops that continues an answer at most maxContinuations
// times (none when it is not positive): give it [Limits].MaxContinuations.
func NewHops(maxContinuations int) *Hops {
	return &Hops{max: maxContinuations}
}

// Add merges in the response of the next hop and returns the token to
// send the hop after it with; nil when the answer is complete, ended for
// another reason, or cannot go on: the API sent no token, or one it had
// sent before (a server that repeats its token would be asked forever),
// or the answer took every continuation allowed. The merged response then
// still says CONTINUATION; [CheckResponse] and [Steps.Stopped] tell why it
// ends the run.
func (h *Hops) Add(resp *genai.GenerateContentResponse) (next []byte) {
	if h.n == 0 {
		h.resp = resp
		if m := resp.UsageMetadata; m != nil {
			h.prompt = int(m.PromptTokenCount)
		}
	} else {
		h.resp = mergeHop(h.resp, resp)
	}
	h.n++
	token := ContinuationToken(resp)
	if token == nil || h.n > h.max || slices.ContainsFunc(h.tokens, func(t []byte) bool { return bytes.Equal(t, token) }) {
		return nil
	}
	h.tokens = append(h.tokens, token)
	return token
}

// Response returns the hops' responses merged: the turn's response.
func (h *Hops) Response() *genai.GenerateContentResponse { return h.resp }

// Len returns the number of hops added.
func (h *Hops) Len() int { return h.n }

// PromptTokens returns the first hop's prompt token count: the size of
// what the request sends. Each later hop reads the prompt and the answer so
// far again, and is billed for it (the merged usage counts every hop), but
// the history to trim is the first hop's prompt and the answer.
func (h *Hops) PromptTokens() int { return h.prompt }

// mergeHop returns the response of two hops, a then b, merged; neither is
// modified.
func mergeHop(a, b *genai.GenerateContentResponse) *genai.GenerateContentResponse {
	out := *b
	if out.PromptFeedback == nil {
		out.PromptFeedback = a.PromptFeedback
	}
	if a.ModelVersion != "" {
		out.ModelVersion = a.ModelVersion
	}
	if !a.CreateTime.IsZero() {
		out.CreateTime = a.CreateTime
	}
	if out.SDKHTTPResponse == nil {
		out.SDKHTTPResponse = a.SDKHTTPResponse
	}
	out.UsageMetadata = sumUsage(a.UsageMetadata, b.UsageMetadata)
	if len(b.Candidates) == 0 {
		// The hop sent nothing more: the answer stays as it was, and
		// still says it was cut.
		out.Candidates = a.Candidates
		return &out
	}
	n := max(len(a.Candidates), len(b.Candidates))
	out.Candidates = make([]*genai.Candidate, n)
	for i := range n {
		var ca, cb *genai.Candidate
		if i < len(a.Candidates) {
			ca = a.Candidates[i]
		}
		if i < len(b.Candidates) {
			cb = b.Candidates[i]
		}
		out.Candidates[i] = mergeCandidate(ca, cb)
	}
	return &out
}

// mergeCandidate merges one candidate of two hops.
func mergeCandidate(a, b *genai.Candidate) *genai.Candidate {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	c := *b
	c.Index = a.Index
	c.TokenCount = a.TokenCount + b.TokenCount
	var before int // parts of the earlier hops, which later supports' part indexes follow
	if a.Content != nil || b.Content != nil {
		content := &genai.Content{Role: genai.RoleModel}
		if a.Content != nil {
			content.Role, before = a.Content.Role, len(a.Content.Parts)
			content.Parts = a.Content.Parts
		}
		if b.Content != nil {
			content.Parts = slices.Concat(content.Parts, b.Content.Parts)
		}
		c.Content = content
	}
	c.GroundingMetadata = mergeGrounding(a.GroundingMetadata, b.GroundingMetadata, before)
	switch {
	case a.CitationMetadata == nil:
	case b.CitationMetadata == nil:
		c.CitationMetadata = a.CitationMetadata
	default:
		c.CitationMetadata = &genai.CitationMetadata{Citations: slices.Concat(a.CitationMetadata.Citations, b.CitationMetadata.Citations)}
	}
	switch {
	case a.URLContextMetadata == nil:
	case b.URLContextMetadata == nil:
		c.URLContextMetadata = a.URLContextMetadata
	default:
		c.URLContextMetadata = &genai.URLContextMetadata{URLMetadata: slices.Concat(a.URLContextMetadata.URLMetadata, b.URLContextMetadata.URLMetadata)}
	}
	c.SafetyRatings = mergeRatings(a.SafetyRatings, b.SafetyRatings)
	return &c
}

// mergeGrounding merges the grounding of two hops: b's chunks follow a's,
// so b's supports are shifted to their chunks, and to their parts, which
// follow a's partsBefore parts.
func mergeGrounding(a, b *genai.GroundingMetadata, partsBefore int) *genai.GroundingMetadata {
	switch {
	case b == nil:
		return a
	case a == nil && partsBefore == 0:
		return b
	}
	var prev genai.GroundingMetadata
	if a != nil {
		prev = *a
	}
	out := *b
	chunks := int32(len(prev.GroundingChunks))
	out.GroundingChunks = slices.Concat(prev.GroundingChunks, b.GroundingChunks)
	out.GroundingSupports = slices.Clip(slices.Clone(prev.GroundingSupports))
	for _, s := range b.GroundingSupports {
		if s == nil {
			continue
		}
		shifted := *s
		if chunks > 0 && len(s.GroundingChunkIndices) > 0 {
			shifted.GroundingChunkIndices = make([]int32, len(s.GroundingChunkIndices))
			for j, k := range s.GroundingChunkIndices {
				shifted.GroundingChunkIndices[j] = k + chunks
			}
		}
		if partsBefore > 0 && s.Segment != nil {
			seg := *s.Segment
			seg.PartIndex += int32(partsBefore)
			shifted.Segment = &seg
		}
		out.GroundingSupports = append(out.GroundingSupports, &shifted)
	}
	out.WebSearchQueries = slices.Concat(prev.WebSearchQueries, b.WebSearchQueries)
	out.ImageSearchQueries = slices.Concat(prev.ImageSearchQueries, b.ImageSearchQueries)
	out.RetrievalQueries = slices.Concat(prev.RetrievalQueries, b.RetrievalQueries)
	out.SourceFlaggingUris = slices.Concat(prev.SourceFlaggingUris, b.SourceFlaggingUris)
	if out.SearchEntryPoint == nil {
		out.SearchEntryPoint = prev.SearchEntryPoint
	}
	if out.RetrievalMetadata == nil {
		out.RetrievalMetadata = prev.RetrievalMetadata
	}
	if out.GoogleMapsWidgetContextToken == "" {
		out.GoogleMapsWidgetContextToken = prev.GoogleMapsWidgetContextToken
	}
	return &out
}

// mergeRatings keeps the latest safety rating of each category, in the
// order the categories first came.
func mergeRatings(a, b []*genai.SafetyRating) []*genai.SafetyRating {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, r := range b {
		if r == nil {
			continue
		}
		if i := slices.IndexFunc(out, func(o *genai.SafetyRating) bool { return o != nil && o.Category == r.Category }); i >= 0 {
			out[i] = r
		} else {
			out = append(out, r)
		}
	}
	return out
}

// sumUsage returns the usage of two hops, every count summed, and the
// details per modality summed by modality.
func sumUsage(a, b *genai.GenerateContentResponseUsageMetadata) *genai.GenerateContentResponseUsageMetadata {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	u := *b
	u.CacheTokensDetails = sumDetails(a.CacheTokensDetails, b.CacheTokensDetails)
	u.CachedContentTokenCount += a.CachedContentTokenCount
	u.CandidatesTokenCount += a.CandidatesTokenCount
	u.CandidatesTokensDetails = sumDetails(a.CandidatesTokensDetails, b.CandidatesTokensDetails)
	u.PromptTokenCount += a.PromptTokenCount
	u.PromptTokensDetails = sumDetails(a.PromptTokensDetails, b.PromptTokensDetails)
	u.ThoughtsTokenCount += a.ThoughtsTokenCount
	u.ToolUsePromptTokenCount += a.ToolUsePromptTokenCount
	u.ToolUsePromptTokensDetails = sumDetails(a.ToolUsePromptTokensDetails, b.ToolUsePromptTokensDetails)
	u.TotalTokenCount += a.TotalTokenCount
	if u.TrafficType == "" {
		u.TrafficType = a.TrafficType
	}
	return &u
}

// sumDetails sums token counts by modality, in the order the modalities
// first came.
func sumDetails(a, b []*genai.ModalityTokenCount) []*genai.ModalityTokenCount {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]*genai.ModalityTokenCount, 0, len(a)+len(b))
	add := func(d *genai.ModalityTokenCount) {
		if d == nil {
			return
		}
		for _, o := range out {
			if o.Modality == d.Modality {
				o.TokenCount += d.TokenCount
				return
			}
		}
		c := *d
		out = append(out, &c)
	}
	for _, d := range a {
		add(d)
	}
	for _, d := range b {
		add(d)
	}
	return out
}

// A ContinuationError ends a run when a continuation hop of an answer
// failed for good: the hops before it were made, and billed, and their
// merged answer is kept, in Response, in the last turn of the Result and in
// its Text, and in its History when it holds no function calls (whose
// answers would be missing). Sending the same request with Token continues
// the answer where it was cut. It wraps the failed call's [*ModelError], so
// errors.As still finds it, and the [genai.APIError] under it.
type ContinuationError struct {
	Turn          int                            // the model turn, from 0
	Continuations int                            // continuation hops made before the one that failed
	Response      *genai.GenerateContentResponse // the answer so far: the hops made, merged
	Token         []byte                         // the token the failed hop was sent with
	Err           error                          // the failed hop's error: a *ModelError
}

// Error says which turn's answer was cut, after how many hops, and why.
func (e *ContinuationError) Error() string {
	return fmt.Sprintf("agent: the answer of turn %d was cut after %d continuation hops: %v", e.Turn, e.Continuations, e.Err)
}

// Unwrap returns the failed hop's error.
func (e *ContinuationError) Unwrap() error { return e.Err }

// checkpointCut is the error of a streamed request that failed, or ended
// without a finish reason, after a checkpoint (a chunk carrying a
// continuation token) and before any text was yielded since: the answer
// can resume from the checkpoint, without duplicating anything the
// consumer has seen. resp is the answer up to the checkpoint.
type checkpointCut struct {
	resp *genai.GenerateContentResponse
	err  error
}

func (c *checkpointCut) Error() string { return c.err.Error() }
func (c *checkpointCut) Unwrap() error { return c.err }

// call makes one model call: streamed, with its content handed to the
// Stream consumer, or not.
func (r *run) call(ctx context.Context, turn int, contents []*genai.Content, config *genai.GenerateContentConfig) (resp *genai.GenerateContentResponse, streamed bool, err error) {
	if r.yield != nil {
		return r.stream(ctx, turn, contents, config)
	}
	resp, err = r.a.generator().GenerateContent(ctx, r.a.model, contents, config)
	return resp, false, err
}

// continues reports whether the model call that gave resp, or failed with
// err, leaves an answer the loop continues.
func (r *run) continues(resp *genai.GenerateContentResponse, err error) bool {
	if err != nil {
		_, cut := err.(*checkpointCut)
		return cut
	}
	return ContinuationToken(resp) != nil
}

// continueAnswer continues the answer of turn, which the model call made
// under ctx cut: first is its response, or the answer up to the checkpoint
// after which the stream failed with cause. It makes each continuation hop
// as a model call of its own, counted in t.Attempts, with its events and
// its retries, and returns the hops merged, the context of the last hop's
// call, and whether any hop's content reached the Stream consumer (the
// turn then cannot be asked again). When a hop fails for good, the turn
// keeps what the hops before it made, and the error is a
// [*ContinuationError] (or the run's context's, or ErrStopped).
//
// It runs a small state machine, one step per pass of its loop: while
// there is a hop to make, wait out the failure of the call before it, if
// that call failed, then make the call. A call either completes its hop
// (which gives the token of the next, or none when the answer is whole),
// ends at a checkpoint (the next hop resumes from it, after a wait), fails
// in a way a retry may mend, or ends the answer.
func (r *run) continueAnswer(ctx context.Context, turn int, t *Turn, contents []*genai.Content,
	config *genai.GenerateContentConfig, first *genai.GenerateContentResponse, cause error, start time.Time) (
	*genai.GenerateContentResponse, context.Context, bool, error) {
	c := continuation{r: r, turn: turn, contents: contents, config: config, ctx: ctx,
		hops: Hops{max: r.a.x.hops}, attempts: t.Attempts}
	if cut, ok := cause.(*checkpointCut); ok {
		c.took(cut.resp, cut.err, start)
	} else {
		c.took(first, nil, start)
	}
	for c.token != nil {
		if c.failed != nil {
			if err := c.wait(); err != nil {
				return c.end(t, err)
			}
		}
		if err := c.call(); err != nil {
			return c.end(t, err)
		}
	}
	// A last hop that ended at a checkpoint no hop may resume from ends
	// the answer cut.
	return c.end(t, c.failed)
}

// A continuation is the state of an answer the loop continues (see
// run.continueAnswer): the hops made, merged, and the hop to make next,
// with its token and its retries.
type continuation struct {
	r        *run
	turn     int
	contents []*genai.Content
	config   *genai.GenerateContentConfig // the turn's request, which each hop sends with its token
	ctx      context.Context              // the context of the last call made
	attempts int                          // the turn's model calls so far (Turn.Attempts)

	hops      Hops
	hop       int     // the hop to make next: hop 0 is the turn's first request
	token     []byte  // the token to send it with; nil once the answer is whole or cannot go on
	retry     retrier // the hop's retries
	tries     int     // the hop's calls that failed
	failed    error   // why the last call failed, if it did: the next call is a retry
	failedHop int     // the hop of that call
	streamed  bool    // some hop's content reached the Stream consumer
}

// took adds the answer of the hop being made, whole or, when cut is not
// nil, up to the checkpoint after which its call failed with cut: the
// next hop, if there is one, resumes from it, after the wait that failure
// earns. The next hop starts with retries of its own.
func (c *continuation) took(resp *genai.GenerateContentResponse, cut error, start time.Time) {
	c.token = c.hops.Add(resp)
	if cut == nil {
		c.r.hopDone(c.ctx, c.turn, c.hop, c.attempts, resp, time.Since(start))
	}
	c.failed, c.failedHop = cut, c.hop
	c.hop++
	if c.token != nil {
		c.retry, c.tries = retrier{policy: &c.r.a.retry, start: time.Now(), flex: c.r.a.x.flex}, 0
	}
}

// wait waits out the failure of the last call before the next call of the
// hop, and returns why there is none: the failure, when the retry policy
// does not retry it, or the end of the run.
func (c *continuation) wait() error {
	c.tries++
	d, ok := c.retry.delay(c.failed, c.tries)
	if !ok {
		return c.failed
	}
	c.r.retryingHop(c.ctx, c.turn, c.attempts, c.failedHop, c.failed, d)
	if !sleep(c.r.ctx, d) {
		return c.r.ctxError(c.turn)
	}
	c.failed = nil
	return nil
}

// call makes a call of the hop, and returns why the answer ends there, if
// it does. A call that fails in a way a retry may mend leaves its error in
// c.failed.
func (c *continuation) call() error {
	r := c.r
	config := ContinueConfig(c.config, c.token)
	c.attempts++
	c.ctx = r.ctx
	if r.emitting {
		req := &Event{Kind: EventModelRequest, Turn: c.turn, Attempt: c.attempts, Hop: c.hop, Model: r.a.model,
			Contents: c.contents, Config: config, Stream: r.yield != nil}
		c.ctx = r.startContext(r.ctx, req)
		if !r.emit(c.ctx, req) {
			return ErrStopped
		}
	}
	start := time.Now()
	resp, streamed, err := r.call(c.ctx, c.turn, c.contents, config)
	c.streamed = c.streamed || streamed
	cut, _ := err.(*checkpointCut)
	switch {
	case r.stopped:
		return ErrStopped
	case err != nil && r.ctx.Err() != nil:
		return r.ctxError(c.turn)
	case cut != nil:
		c.took(cut.resp, cut.err, start)
	case err != nil && streamed:
		// Text of this hop reached the consumer after its last
		// checkpoint: resending would show it twice.
		return err
	case err != nil:
		c.failed, c.failedHop = err, c.hop
	default:
		c.took(resp, nil, start)
	}
	return nil
}

// end ends the answer and records it in t. With err nil the answer is
// whole, or as whole as the API and Config.MaxContinuations let it be (the
// loop then tells why it ends the run). Otherwise the next hop could not
// be made, for err: the turn keeps the hops made, and the history their
// answer, when it holds no function calls (they would have no answers). A
// failed call is reported as a [*ContinuationError]; the run's context's
// error and ErrStopped as they are.
func (c *continuation) end(t *Turn, err error) (*genai.GenerateContentResponse, context.Context, bool, error) {
	r, resp := c.r, c.hops.Response()
	t.Attempts, t.Continuations = c.attempts, c.hops.Len()-1
	if err == nil {
		t.hopPrompt = c.hops.PromptTokens()
		return resp, c.ctx, c.streamed, nil
	}
	t.Response = resp
	t.Usage.addResponse(resp)
	if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
		cand := resp.Candidates[0]
		t.FinishReason = cand.FinishReason
		if cand.Content != nil && len(cand.Content.Parts) > 0 && len(functionCalls(cand.Content)) == 0 {
			r.add(cand.Content)
		}
	}
	if err == ErrStopped || r.ctx.Err() != nil {
		return resp, r.ctx, c.streamed, err
	}
	return resp, r.ctx, c.streamed, &ContinuationError{Turn: c.turn, Continuations: t.Continuations, Response: resp, Token: c.token,
		Err: &ModelError{Turn: c.turn, Attempts: t.Attempts, Err: err}}
}

// hopDone reports a hop of a continued answer that is complete.
func (r *run) hopDone(ctx context.Context, turn, hop, attempt int, resp *genai.GenerateContentResponse, d time.Duration) {
	if !r.emitting {
		return
	}
	var reason genai.FinishReason
	if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
		reason = resp.Candidates[0].FinishReason
	}
	var u Usage
	u.addResponse(resp)
	r.emit(ctx, &Event{Kind: EventHop, Turn: turn, Hop: hop, Attempt: attempt, Response: resp, Usage: u,
		FinishReason: reason, Duration: d})
}

// retryingHop reports a retry of hop of the model call of turn about to
// happen: a log line at Warn, and an EventRetry.
func (r *run) retryingHop(ctx context.Context, turn, attempt, hop int, err error, d time.Duration) {
	if hop > 0 {
		r.a.logger.LogAttrs(r.ctx, slog.LevelWarn, "agent: retrying model call",
			slog.Int("turn", turn), slog.Int("attempt", attempt), slog.Int("hop", hop), slog.Duration("delay", d), slog.Any("error", err))
	} else {
		r.a.logger.LogAttrs(r.ctx, slog.LevelWarn, "agent: retrying model call",
			slog.Int("turn", turn), slog.Int("attempt", attempt), slog.Duration("delay", d), slog.Any("error", err))
	}
	if r.emitting {
		r.emit(ctx, &Event{Kind: EventRetry, Turn: turn, Attempt: attempt, Hop: hop, Err: err, Delay: d})
	}
}

// promptSize returns the prompt size the next turn's HistoryFunc reads,
// from the usage of the turn's response: for an answer the loop continued,
// the first hop's (each later hop re-reads the prompt and the answer so
// far, and the merged usage sums them); for one genai continued (the
// caller set AutomaticContinuation), the first hop's too, which genai
// keeps beside the response's usage, as long as it is genai's own value.
func (r *run) promptSize(t *Turn, m *genai.GenerateContentResponseUsageMetadata) int {
	switch {
	case t.hopPrompt > 0:
		return t.hopPrompt
	case r.a.x.sdk:
		return int(m.InitialPromptTokenCount())
	}
	return int(m.PromptTokenCount)
}

// cutShort returns the error that ends a run after turn t, whose content
// is in the history and whose calls, if any, were answered, when its
// finish reason says the answer is incomplete: cut at the output token
// limit with no calls (MAX_TOKENS; with calls the loop goes on, the calls
// being whole), stopped after too many built-in tool calls
// (TOO_MANY_TOOL_CALLS), or cut by the API and not continued
// (CONTINUATION). A truncated answer is never taken for a whole one.
func (a *Agent) cutShort(turn int, t *Turn) *StopError {
	switch t.FinishReason {
	case genai.FinishReasonMaxTokens:
		if len(t.Calls) > 0 {
			return nil
		}
		return &StopError{Kind: ErrMaxTokens, Turn: turn, FinishReason: t.FinishReason, Attempts: t.Attempts}
	case genai.FinishReasonTooManyToolCalls:
		return &StopError{Kind: ErrTooManyToolCalls, Turn: turn, FinishReason: t.FinishReason, Attempts: t.Attempts,
			Message: finishMessage(t.Response)}
	case genai.FinishReasonContinuation:
		return &StopError{Kind: ErrContinuation, Turn: turn, FinishReason: t.FinishReason, Attempts: t.Attempts,
			Message: a.notContinued(t)}
	}
	return nil
}

// notContinued says why the answer of t, which the API cut, was not
// continued.
func (a *Agent) notContinued(t *Turn) string {
	switch {
	case t.Response == nil || len(t.Response.Candidates) == 0 || t.Response.Candidates[0] == nil ||
		len(t.Response.Candidates[0].ContinuationToken) == 0:
		return "the API sent no continuation token"
	case a.x.hops == 0:
		return a.x.off
	case t.Continuations >= a.x.hops:
		return fmt.Sprintf("the answer took Config.MaxContinuations (%d) continuations", a.x.hops)
	}
	return "the API sent a continuation token it had sent before"
}

// finishMessage returns the first candidate's finish message.
func finishMessage(resp *genai.GenerateContentResponse) string {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return ""
	}
	return resp.Candidates[0].FinishMessage
}
