package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// fail do not stop the others; the run's context stops them all.
func (r *run) runTools(turn int, calls []*genai.FunctionCall) []ToolResult {
	results := make([]ToolResult, len(calls))
	if r.emitting {
		for i, call := range calls {
			r.emit(&Event{Kind: EventToolCall, Turn: turn, Index: i, Call: call})
		}
	}
	if len(calls) == 1 {
		results[0] = r.runCall(0, len(calls), calls[0])
		r.toolDone(turn, 0, &results[0])
		return results
	}
	// Each call writes its own slot. When someone listens, each also
	// reports its index when done, so that results are reported, on this
	// goroutine, as they complete.
	var done chan int
	if r.emitting {
		done = make(chan int, len(calls))
	}
	var g errgroup.Group
	if len(calls) > r.a.maxParallel {
		g.SetLimit(r.a.maxParallel)
	}
	for i, call := range calls {
		g.Go(func() error {
			results[i] = r.runCall(i, len(calls), call)
			if done != nil {
				done <- i
			}
			return nil
		})
	}
	if done != nil {
		for range calls {
			i := <-done
			r.toolDone(turn, i, &results[i])
		}
	}
	_ = g.Wait() // the calls never fail: Wait only waits
	return results
}

// toolDone reports a finished call.
func (r *run) toolDone(turn, i int, res *ToolResult) {
	if r.emitting {
		r.emit(&Event{Kind: EventToolResult, Turn: turn, Index: i, Call: res.Call, ToolResult: res, Duration: res.Duration})
	}
}

// runCall answers one call: the tool's result, or an error result for an
// unknown tool, a call over the cap, or a call the interceptor answered.
func (r *run) runCall(i, n int, call *genai.FunctionCall) ToolResult {
	start := time.Now()
	res := r.callResult(i, n, call)
	if r.a.maxOutputBytes > 0 {
		res = capOutput(res, r.a.maxOutputBytes)
	}
	return ToolResult{Call: call, Result: res, Duration: time.Since(start)}
}

func (r *run) callResult(i, n int, call *genai.FunctionCall) toolset.Result {
	if i >= r.a.maxCalls {
		return toolset.Result{IsError: true, Err: ErrTooManyCalls, Output: fmt.Sprintf(
			"not run: %d function calls came in one turn and at most %d are run per turn; call again with fewer",
			n, r.a.maxCalls)}
	}
	tool, ok := r.a.tools.Lookup(call.Name)
	if !ok {
		return toolset.Result{IsError: true, Err: fmt.Errorf("%w %q", ErrUnknownTool, call.Name),
			Output: fmt.Sprintf("unknown tool %q; %s", call.Name, r.a.unknownTool)}
	}
	if r.a.intercept != nil {
		if res := r.intercepted(call); res != nil {
			return *res
		}
	}
	ctx := r.ctx
	if r.a.toolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.a.toolTimeout,
			fmt.Errorf("%w after %v", ErrToolTimeout, r.a.toolTimeout))
		defer cancel()
	}
	return tool.Execute(ctx, call.Args)
}

// intercepted asks the interceptor about call; a panic in it answers the
// call with an error.
func (r *run) intercepted(call *genai.FunctionCall) (res *toolset.Result) {
	defer func() {
		if v := recover(); v != nil {
			res = &toolset.Result{IsError: true, Err: fmt.Errorf("agent: interceptor panicked: %v", v),
				Output: fmt.Sprintf("tool %s was not run: the approval check failed", call.Name)}
		}
	}()
	return r.a.intercept(r.ctx, call)
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

// capOutput cuts an output whose JSON is larger than limit bytes, telling
// the model it was cut and how large it was. Outputs of a few scalar kinds
// are known to be small and are not encoded to be measured.
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
		text = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return res // Execute has already reported outputs that do not encode
		}
		if len(b) <= limit {
			return res
		}
		text = string(b)
	}
	size := jsonSize(res.Output, text)
	if size <= limit {
		return res
	}
	keep := limit - 200 // room for the note and the JSON quoting
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && keep < len(text) && !utf8.RuneStart(text[keep]) {
		keep--
	}
	if keep > len(text) {
		keep = len(text)
	}
	res.Output = fmt.Sprintf("[output truncated: it was %d bytes of JSON, over the limit of %d; the first %d bytes follow]\n%s",
		size, limit, keep, text[:keep])
	return res
}

// jsonSize returns the size of output's JSON, given text: its JSON for
// non-strings, itself for strings.
func jsonSize(output any, text string) int {
	if _, ok := output.(string); !ok {
		return len(text)
	}
	b, _ := json.Marshal(text)
	return len(b)
}
