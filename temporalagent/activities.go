package temporalagent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genai"
)

// held returns the agent an activity names, or an error that ends the run.
func (h *host) held(name string) (*held, error) {
	if hd := h.agents[name]; hd != nil {
		return hd, nil
	}
	return nil, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%v %q: this worker holds none by that name", ErrUnknownAgent, name), errTypeUnknownAgent, nil)
}

// model makes one model call of a turn, as agent.Run does, on the worker:
// the request config, the agent's client and its credentials never leave
// it. A transient failure is retried by Temporal after the delay the
// agent's retry policy gives; any other ends the run. It reports the
// call's events to the agent's Observer, and plans the response's calls.
func (h *host) model(ctx context.Context, in modelInput) (*modelOutput, error) {
	hd, err := h.held(in.Agent)
	if err != nil {
		return nil, err
	}
	s, browser, err := hd.withBrowser(in.Browser)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), errTypeBrowser, nil)
	}
	attempt := in.Attempt + int(activity.GetInfo(ctx).Attempt) - 1
	contents, err := s.PrepareHistory(ctx, in.Contents, in.Turn, in.PromptTokens)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), errTypeHistory, nil)
	}
	config := withoutClientRetries(s.TypedConfig(in.Turn, in.Typed))
	if len(in.Token) > 0 {
		config = agent.ContinueConfig(config, in.Token) // a continuation hop (continuation.go)
	}
	runCtx, callCtx := ctx, ctx
	if s.Observing() {
		runCtx = s.Resume(ctx, in.Run)
	}
	// What the call sends: through the agent's cache, if it has one.
	c := cachedCall{s: s, turn: in.Turn, config: config, contents: contents}
	c.sent, c.send, c.ref = s.CacheRequest(runCtx, in.Turn, config, contents, in.Cache, "")
	if s.Observing() {
		e := &agent.Event{Kind: agent.EventModelRequest, Turn: in.Turn, Attempt: attempt, Hop: in.Hop, Model: s.Model(),
			Contents: c.send, Config: c.sent}
		callCtx = s.StartContext(runCtx, e)
		s.Observe(callCtx, e)
	}
	stop := heartbeats(ctx, nil)
	resp, err := c.call(callCtx)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			// The call was cancelled or timed out: Temporal decides what
			// comes next.
			return nil, err
		}
		f := modelFailure{Attempt: attempt, Message: err.Error()}
		var apiErr genai.APIError
		if errors.As(err, &apiErr) {
			f.Code, f.Status, f.Message = apiErr.Code, apiErr.Status, apiErr.Message
		}
		if d, ok := s.RetryDelay(err, attempt, in.Start); ok {
			s.Retrying(callCtx, in.Turn, attempt, err, d)
			return nil, temporal.NewApplicationErrorWithOptions(err.Error(), errTypeModelRetry,
				temporal.ApplicationErrorOptions{NextRetryDelay: max(d, time.Millisecond), Details: []any{f}})
		}
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), errTypeModel, nil, f)
	}
	// genai records the HTTP headers of the reply: they are no part of the
	// conversation and do not belong in the history.
	resp.SDKHTTPResponse = nil
	out := &modelOutput{Response: resp, Attempt: attempt, Model: s.Model(), Cache: c.ref}
	if len(contents) != len(in.Contents) || (len(contents) > 0 && &contents[0] != &in.Contents[0]) {
		out.Working = contents
	}
	stopErr, reask := agent.CheckResponse(resp)
	hop := len(in.Token) > 0 || (s.Limits().MaxContinuations > 0 && agent.ContinuationToken(resp) != nil)
	switch {
	case stopErr == nil:
		if s.Observing() {
			var reason genai.FinishReason
			if resp.Candidates[0] != nil {
				reason = resp.Candidates[0].FinishReason
			}
			e := &agent.Event{Kind: agent.EventModelResponse, Turn: in.Turn, Response: resp,
				Usage: in.Usage.Plus(agent.UsageOf(resp.UsageMetadata)), FinishReason: reason, Duration: time.Since(in.Start)}
			if hop {
				// One hop of an answer the workflow continues: its own
				// response and usage.
				e.Kind, e.Hop, e.Attempt, e.Usage = agent.EventHop, in.Hop, attempt, agent.UsageOf(resp.UsageMetadata)
			}
			s.Observe(callCtx, e)
		}
		out.Plans = h.plan(runCtx, hd, s, browser, in.Turn, in.CallsBefore, resp.Candidates[0])
	case hop:
		// A hop without content: the workflow decides about the answer.
	case reask && in.Reasks < in.MaxReasks:
		stopErr.Turn, stopErr.Attempts = in.Turn, attempt
		s.Retrying(callCtx, in.Turn, attempt, stopErr, 0)
	}
	return out, nil
}

// cachedCall is a model call through the agent's cache (Config.Cache), as
// agent.Run makes it: the cache is made, refreshed or adopted (the one the
// run named last, which another worker may have made) in the activity,
// never in workflow code. config and contents are the call's; sent and
// send what it sends, naming ref (zero when uncached).
type cachedCall struct {
	s        agent.Steps
	turn     int
	config   *genai.GenerateContentConfig
	contents []*genai.Content
	sent     *genai.GenerateContentConfig
	send     []*genai.Content
	ref      agent.CacheRef
}

// call makes the call. One the API refuses for its cache is sent again at
// once through a cache made anew, and, refused again, uncached (the agent
// gives that cache up); c.ref is then the cache the successful call named.
func (c *cachedCall) call(ctx context.Context) (*genai.GenerateContentResponse, error) {
	s := c.s
	for tries := 0; ; tries++ {
		resp, err := s.Models().GenerateContent(ctx, s.Model(), c.send, c.sent)
		if err == nil || c.ref.Name == "" || ctx.Err() != nil || !s.CacheGone(err) {
			return resp, err
		}
		if tries == 0 {
			c.sent, c.send, c.ref = s.CacheRequest(ctx, c.turn, c.config, c.contents, agent.CacheRef{}, c.ref.Name)
			continue
		}
		s.GiveUpCache(ctx, c.turn, c.ref.Name)
		c.sent, c.send, c.ref = c.config, c.contents, agent.CacheRef{}
	}
}

// plan decides about each function call of a model content, on the
// worker: the answer of a call that cannot run (reported to the Observer
// at once, as agent.Run does, under the run's context ctx), or how one
// that can runs.
//
// The calls of a continuation hop are numbered after those of the hops
// before it (before of them), in the turn's numbering.
//
// In a turn the API ended with UNEXPECTED_TOOL_CALL, no call runs: each is
// answered as agent.Run answers it.
//
// s are the steps of the call (hd's, with a served run's browser tools,
// named in browser): a call of a browser tool that can run waits for the
// browser's result, whatever the agent's NeedsApproval says of it.
func (h *host) plan(ctx context.Context, hd *held, s agent.Steps, browser map[string]bool, turn, before int, cand *genai.Candidate) []callPlan {
	calls := agent.FunctionCalls(cand.Content)
	if len(calls) == 0 {
		return nil
	}
	plans := make([]callPlan, len(calls))
	for i, call := range calls {
		a, approval := s.PlanCall(ctx, before+i, before+len(calls), call)
		if a == nil && cand.FinishReason == genai.FinishReasonUnexpectedToolCall {
			a, approval = agent.UnexpectedCall(call, cand.FinishMessage), false
		}
		if a == nil && browser[call.Name] {
			plans[i].Browser = true
			continue
		}
		if a == nil {
			plans[i] = hd.toolPlan(call.Name)
			plans[i].Approval = approval
			continue
		}
		plans[i].Answer = &answer{Output: a.Output, IsError: a.IsError, Denied: errors.Is(a.Err, agent.ErrDenied)}
		if s.Observing() {
			e := &agent.Event{Kind: agent.EventToolCall, Turn: turn, Index: before + i, Call: call}
			callCtx := s.StartContext(ctx, e)
			s.Observe(callCtx, e)
			s.Observe(callCtx, &agent.Event{Kind: agent.EventToolResult, Turn: turn, Index: before + i, Call: call,
				ToolResult: &agent.ToolResult{Call: call, Result: *a}})
		}
	}
	return plans
}

// tool runs one function call on the worker, exactly as agent.Run runs it
// (the Interceptor, ToolTimeout, the output's check and cap), reporting
// its events to the agent's Observer. The tool's answer, success or
// error, is the activity's result: only a lost or cancelled call fails
// the activity.
func (h *host) tool(ctx context.Context, in toolInput) (*toolOutput, error) {
	hd, err := h.held(in.Agent)
	if err != nil {
		return nil, err
	}
	s := hd.steps
	callCtx := ctx
	t, _ := s.Tools().Lookup(in.Call.Name)
	if s.Observing() {
		e := &agent.Event{Kind: agent.EventToolCall, Turn: in.Turn, Index: in.Index, Call: in.Call, Tool: t}
		callCtx = s.StartContext(s.Resume(ctx, in.Run), e)
		s.Observe(callCtx, e)
	}
	// The tool's progress rides on the activity's heartbeats, for
	// Run.Progress, and goes to the Observer; a local activity has no
	// heartbeats.
	beat := &toolBeat{ctx: ctx, callCtx: callCtx, s: s, in: in, tool: t,
		remote: !activity.GetInfo(ctx).IsLocalActivity,
		info:   ToolProgress{Turn: in.Turn, Index: in.Index, Name: in.Call.Name}}
	runCtx := callCtx
	var pacer *toolset.ProgressPacer
	if beat.remote || s.Observing() {
		pacer = &toolset.ProgressPacer{To: beat, Interval: toolset.DefaultProgressInterval}
		runCtx = toolset.WithProgress(callCtx, pacer)
	}
	stop := heartbeats(ctx, beat.details)
	res, agents := s.RunCall(runCtx, in.Call, in.Approved)
	if pacer != nil {
		pacer.Close() // the last report, before the result
	}
	stop()
	if res.IsError && ctx.Err() != nil {
		// The call did not finish: the run was cancelled, the worker is
		// stopping, or the server gave up on it. Whether it runs again is
		// Temporal's decision (see ToolOptions.Idempotent).
		return nil, fmt.Errorf("tool %s did not finish: %w", in.Call.Name, context.Cause(ctx))
	}
	if s.Observing() {
		s.Observe(callCtx, &agent.Event{Kind: agent.EventToolResult, Turn: in.Turn, Index: in.Index, Call: in.Call,
			Tool: t, ToolResult: &res, Duration: res.Duration})
	}
	out := &toolOutput{Output: res.Output, IsError: res.IsError, Media: res.Media, Agents: agents, Duration: res.Duration}
	if limit := s.Limits().MaxOutputBytes; limit > 0 && mediaJSONLen(res.Media) > limit {
		// Media travel in the activity's result and in the workflow
		// history: larger than an output may be, they would not fit.
		out.Output = fmt.Sprintf("tool %s returned %d bytes of media, more than the %d bytes a durable run carries per output; the media were left out",
			in.Call.Name, mediaLen(res.Media), limit)
		out.IsError, out.Media = true, nil
	}
	return out, nil
}

// mediaLen returns the size of media's data.
func mediaLen(media []toolset.Media) int {
	n := 0
	for _, m := range media {
		n += len(m.Data)
	}
	return n
}

// mediaJSONLen returns about the size of media encoded as JSON: the data
// in base64, and its MIME type.
func mediaJSONLen(media []toolset.Media) int {
	n := 0
	for _, m := range media {
		n += base64.StdEncoding.EncodedLen(len(m.Data)) + len(m.MIMEType) + 32
	}
	return n
}

// toolBeat hands a tool call's progress reports, paced, to the activity's
// heartbeat (the SDK batches heartbeats, keeping the latest details) and
// to the agent's Observer, as EventToolProgress events.
type toolBeat struct {
	ctx, callCtx context.Context
	s            agent.Steps
	in           toolInput
	tool         *toolset.Tool
	remote       bool // a regular activity, which heartbeats

	mu   sync.Mutex
	info ToolProgress // the call, and its latest progress
}

// OnProgress records p; the pacer calls it, one report at a time.
func (b *toolBeat) OnProgress(p toolset.Progress) {
	b.mu.Lock()
	b.info.Progress = &p
	info := b.info
	b.mu.Unlock()
	if b.remote {
		activity.RecordHeartbeat(b.ctx, info)
	}
	if b.s.Observing() {
		b.s.Observe(b.callCtx, &agent.Event{Kind: agent.EventToolProgress, Turn: b.in.Turn, Index: b.in.Index,
			Call: b.in.Call, Tool: b.tool, Progress: &p})
	}
}

// details returns what the activity's heartbeats carry: the call and its
// latest progress, so that a heartbeat keeps it (the server replaces the
// details of the last heartbeat with those of the next).
func (b *toolBeat) details() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.info
}

// heartbeats heartbeats the activity of ctx every third of its heartbeat
// timeout until stop is called, so that the server notices a lost worker
// in seconds, with the details that details returns (none when it is
// nil). A call shorter than that sends none.
func heartbeats(ctx context.Context, details func() any) (stop func()) {
	info := activity.GetInfo(ctx)
	if info.IsLocalActivity || info.HeartbeatTimeout <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(info.HeartbeatTimeout / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if details != nil {
					activity.RecordHeartbeat(ctx, details())
				} else {
					activity.RecordHeartbeat(ctx)
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// withoutClientRetries returns a copy of config that turns genai's own
// HTTP retries off, whatever the client's options say: Temporal retries
// model calls, and two layers of retries would multiply.
func withoutClientRetries(config *genai.GenerateContentConfig) *genai.GenerateContentConfig {
	c := genai.GenerateContentConfig{}
	if config != nil {
		c = *config
	}
	var h genai.HTTPOptions
	if c.HTTPOptions != nil {
		h = *c.HTTPOptions
	}
	h.Headers = h.Headers.Clone()
	if h.Headers == nil {
		h.Headers = map[string][]string{}
	}
	one := int32(1)
	h.RetryOptions = &genai.HTTPRetryOptions{Attempts: &one}
	c.HTTPOptions = &h
	return &c
}
