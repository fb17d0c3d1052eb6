package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"golang.org/x/sync/errgroup"
	"google.golang.org/genai"
)

// The Err of results the loop makes itself, for errors.Is.
var (
	// ErrUnknownTool: the model called a tool the set does not have.
	ErrUnknownTool = errors.New("agent: unknown tool")

	// ErrTooManyCalls: the call was over Config.MaxCallsPerTurn and was
	// not run.
	ErrTooManyCalls = errors.New("agent: too many function calls in one turn")

	// ErrToolTimeout: the call ran past Config.ToolTimeout.
	ErrToolTimeout = errors.New("tool call timed out")
)

// runTools runs the calls of one turn, concurrently but for at most
// MaxParallel at once, and returns their results in call order. Calls that
// fail do not stop the others; the run's context stops them all. Results
// are reported as the calls complete, and, when someone listens, the
// calls' progress as it comes (see progress.go): the run's goroutine
// never waits for a call to start.
func (r *run) runTools(turn int, calls []*genai.FunctionCall) []ToolResult {
	n := len(calls)
	results := make([]ToolResult, n)
	// A call is answered without running (over the cap, unknown) or runs
	// its tool, under its own context.
	plans := make([]callPlan, n)
	approvals := 0
	for i, call := range calls {
		p := &plans[i]
		p.ctx = r.ctx
		p.tool, p.answer = r.plan(i, n, call)
		if p.answer == nil && r.a.needsApproval != nil && r.needsApproval(call) {
			p.approval = true
			approvals++
		}
		if r.emitting {
			e := &Event{Kind: EventToolCall, Turn: turn, Index: i, Call: call, Tool: p.tool}
			p.ctx = r.startContext(r.ctx, e)
			p.ctx = context.WithValue(p.ctx, callKey{}, e) // the Parent of a sub-agent's events (AsTool)
			r.emit(p.ctx, e)
		}
	}
	if n == 1 && approvals == 0 && !r.emitting {
		// Nobody listens: the one call runs here.
		results[0] = r.runCall(&plans[0], calls[0])
		return results
	}
	// Each call writes its own slot. When someone listens, each also
	// reports its index when done, so that results are reported, on this
	// goroutine, as they complete, and its progress reports come here
	// too, through ready (see callProgress), to be handed out between
	// the results.
	var done, ready <-chan int
	var doneCh chan int
	if r.emitting {
		doneCh = make(chan int, n)
		done, ready = doneCh, r.listen(plans)
	}
	run := func(i int) {
		results[i] = r.runCall(&plans[i], calls[i])
		if doneCh != nil {
			doneCh <- i
		}
	}
	// The calls that run their tool run in an errgroup. When they may
	// outnumber MaxParallel, the group is limited to it, and one dispatcher
	// feeds it the calls in call order: the group's Go waits for a free
	// slot, so queued calls start in order as slots free up, and the run's
	// goroutine never waits for one. Below the limit, Go never waits, and
	// the calls are handed to the group at once.
	var (
		g     errgroup.Group
		queue chan int      // the dispatcher's
		fed   chan struct{} // closed once the dispatcher has handed every call to g
	)
	if n > r.a.maxParallel {
		g.SetLimit(r.a.maxParallel)
		queue, fed = make(chan int, n), make(chan struct{})
		go func() {
			defer close(fed)
			for i := range queue {
				g.Go(func() error { run(i); return nil })
			}
		}()
	}
	start := func(i int) {
		switch {
		case plans[i].answer != nil:
			run(i) // nothing to run: answered at once, without a slot
		case queue != nil:
			queue <- i
		default:
			g.Go(func() error { run(i); return nil })
		}
	}
	for i := range plans {
		if !plans[i].approval {
			start(i)
		}
	}
	for i := range plans {
		if plans[i].approval {
			// Calls that need no approval run meanwhile; results that
			// arrive wait in done until the decisions are taken.
			plans[i].answer = r.approve(turn, i, calls[i], &plans[i])
			start(i)
		}
	}
	if queue != nil {
		close(queue)
	}
	for left := n; done != nil && left > 0; {
		select {
		case i := <-done:
			r.progressDone(turn, i, calls[i], &plans[i])
			r.toolDone(turn, i, &plans[i], &results[i])
			left--
		case i := <-ready:
			r.progress(turn, i, calls[i], &plans[i])
		}
	}
	if fed != nil {
		<-fed // Wait must not begin before the last Go
	}
	g.Wait() // the calls return no error: their failures are results
	return results
}

// callPlan is what the loop decided about one call before running it.
type callPlan struct {
	ctx      context.Context // the call's context
	tool     *toolset.Tool   // the tool the call names, nil if unknown
	answer   *toolset.Result // the call's answer, when it does not run its tool
	approval bool            // the call needs approval
	decided  bool            // the Stream consumer approved it: the Interceptor is not asked
	progress *callProgress   // the call's progress reports, when someone listens
}

// plan returns the tool a call names, nil if unknown, and, for a call that
// cannot run (over the cap, or of an unknown tool), its answer.
func (r *run) plan(i, n int, call *genai.FunctionCall) (*toolset.Tool, *toolset.Result) {
	tool, ok := r.a.tools.Lookup(call.Name)
	switch {
	case i >= r.a.maxCalls:
		return tool, &toolset.Result{IsError: true, Err: ErrTooManyCalls, Output: fmt.Sprintf(
			"not run: %d function calls came in one turn and at most %d are run per turn; call again with fewer",
			n, r.a.maxCalls)}
	case !ok:
		return nil, &toolset.Result{IsError: true, Err: fmt.Errorf("%w %q", ErrUnknownTool, call.Name),
			Output: fmt.Sprintf("unknown tool %q; %s", call.Name, r.a.unknownTool)}
	}
	return tool, nil
}

// needsApproval asks Config.NeedsApproval about call; a panic in it counts
// as "yes", which is the safe side.
func (r *run) needsApproval(call *genai.FunctionCall) (yes bool) {
	defer func() {
		if v := recover(); v != nil {
			r.a.logger.LogAttrs(r.ctx, slog.LevelError, "agent: NeedsApproval panicked", slog.Any("panic", v), slog.String("tool", call.Name))
			yes = true
		}
	}()
	return r.a.needsApproval(call)
}

// approve gets the decision about a call that needs approval: from the
// Stream consumer, through an EventApproval event; in Run, from the
// Interceptor when there is one. It returns the call's answer, or nil to
// let it run.
func (r *run) approve(turn, i int, call *genai.FunctionCall, p *callPlan) *toolset.Result {
	if r.yield == nil {
		if r.a.intercept != nil {
			return nil // runCall asks the Interceptor, as for any call
		}
		return notApproved(call, "it needs approval, and nobody was asked (Run has no Interceptor)")
	}
	ap := &Approval{Call: call}
	if r.ctx.Err() == nil && !r.stopped {
		r.emit(p.ctx, &Event{Kind: EventApproval, Turn: turn, Index: i, Call: call, Tool: p.tool, Approval: ap})
	}
	answer, decided := ap.close()
	switch {
	case r.stopped || r.ctx.Err() != nil:
		return cancelledAnswer(r.ctx, call)
	case !decided:
		return notApproved(call, "it needed approval and was not approved")
	}
	p.decided = true
	return answer
}

// toolDone reports a finished call.
func (r *run) toolDone(turn, i int, p *callPlan, res *ToolResult) {
	if r.emitting {
		r.emit(p.ctx, &Event{Kind: EventToolResult, Turn: turn, Index: i, Call: res.Call, Tool: p.tool, ToolResult: res, Duration: res.Duration})
	}
}

// runCall answers one call: the tool's result, or the answer the plan, an
// approval or the interceptor gave, checked and capped as tool outputs are.
func (r *run) runCall(p *callPlan, call *genai.FunctionCall) ToolResult {
	start := time.Now()
	res := r.a.keepFiles(p.ctx, call, r.callResult(p, call))
	if r.a.maxOutputBytes > 0 {
		res = capOutput(res, r.a.maxOutputBytes)
	}
	return ToolResult{Call: call, Result: res, Duration: time.Since(start)}
}

func (r *run) callResult(p *callPlan, call *genai.FunctionCall) toolset.Result {
	if p.answer != nil {
		return checkedAnswer(call, *p.answer)
	}
	ctx := p.ctx
	if r.a.intercept != nil && !p.decided {
		if ctx.Err() != nil {
			// The run is over: nobody is asked any more.
			return *cancelledAnswer(ctx, call)
		}
		if res := r.intercepted(ctx, call); res != nil {
			return checkedAnswer(call, *res)
		}
	}
	if r.a.toolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.a.toolTimeout,
			fmt.Errorf("%w after %v", ErrToolTimeout, r.a.toolTimeout))
		defer cancel()
	}
	return p.tool.Execute(ctx, call.Args)
}

// intercepted asks the interceptor about call; a panic in it answers the
// call with an error.
func (r *run) intercepted(ctx context.Context, call *genai.FunctionCall) (res *toolset.Result) {
	defer func() {
		if v := recover(); v != nil {
			res = &toolset.Result{IsError: true, Err: fmt.Errorf("agent: interceptor panicked: %v", v),
				Output: fmt.Sprintf("tool %s was not run: the approval check failed", call.Name)}
		}
	}()
	return r.a.intercept(ctx, call)
}

// checkedAnswer returns res, an answer given in place of running a tool,
// if its output can be sent; else an error result saying why, since an
// output that does not encode would make the request, and every later one
// that continues the history, fail.
func checkedAnswer(call *genai.FunctionCall, res toolset.Result) toolset.Result {
	if err := toolset.CheckOutput(res.Output); err != nil {
		return toolset.Result{IsError: true, Err: fmt.Errorf("agent: the answer given for %s: %w", call.Name, err),
			Output: fmt.Sprintf("tool %s was not run, and the answer given in its place was refused: %v", call.Name, err)}
	}
	return res
}

// cancelledAnswer is the answer to a call that the run's end kept from
// running.
func cancelledAnswer(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
	cause := context.Cause(ctx)
	return &toolset.Result{IsError: true, Err: cause, Output: fmt.Sprintf("tool %s was not run: %v", call.Name, cause)}
}

// responseContent is the user turn answering calls: one functionResponse
// part per call, in call order, each echoing its call's id.
func responseContent(calls []*genai.FunctionCall, results []ToolResult) *genai.Content {
	parts := make([]*genai.Part, len(calls))
	for i, call := range calls {
		parts[i] = geminiadapter.Response(call, results[i].Result)
	}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// capOutput cuts an output whose JSON is larger than limit bytes into a
// string whose JSON is at most limit bytes: a note telling the model it was
// cut and how large it was, followed by as much of the start of the output
// (its text, or its JSON) as fits once escaped. Outputs of a few scalar
// kinds are known to be small and are not encoded to be measured.
func capOutput(res toolset.Result, limit int) toolset.Result {
	var text string
	switch v := res.Output.(type) {
	case nil, bool, int, int64, float64:
		return res
	case string:
		// JSON escaping at most sextuples a string, so most strings need
		// no measuring.
		if len(v) <= (limit-2)/6 {
			return res
		}
		if jsonLen(v) <= limit {
			return res
		}
		text = v
	default:
		b, err := json.Marshal(v)
		if err != nil || len(b) <= limit {
			return res // Execute has already reported outputs that do not encode
		}
		text = string(b)
	}
	size := len(text)
	if _, ok := res.Output.(string); ok {
		size = jsonLen(text)
	}
	// The note's own JSON is measured with the largest count it may
	// print, so that what it says and what follows fit together.
	note := func(kept int) string {
		return fmt.Sprintf("[output truncated: it was %d bytes of JSON, over the limit of %d; the first %d bytes follow]\n", size, limit, kept)
	}
	budget := limit - jsonLen(note(len(text)))
	keep := 0
	for keep < len(text) {
		c, n := utf8.DecodeRuneInString(text[keep:])
		w := escapedLen(c, n)
		if w > budget {
			break
		}
		budget -= w
		keep += n
	}
	res.Output = note(keep) + text[:keep]
	return res
}

// jsonLen returns the length of s encoded as a JSON string, as
// encoding/json writes it (HTML-safe), quotes included.
func jsonLen(s string) int {
	total := 2
	for len(s) > 0 {
		c, n := utf8.DecodeRuneInString(s)
		total += escapedLen(c, n)
		s = s[n:]
	}
	return total
}

// escapedLen returns the length in a JSON string, as encoding/json writes
// it, of rune c, read from n bytes: two bytes for \" \\ \n \r \t \b
// \f, six for the other control characters, <, >, &, U+2028, U+2029 and
// an invalid byte (written \ufffd), and n for the rest.
func escapedLen(c rune, n int) int {
	switch {
	case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
		return 2
	case c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029':
		return 6
	case c == utf8.RuneError && n == 1:
		return 6
	}
	return n
}
