package temporalagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/genai"
)

// maxReasonBytes bounds the reason a denial gives the model.
const maxReasonBytes = 4 << 10

// wfRun is one execution of the workflow: a run, or the part of one since
// its last continue-as-new. Only the workflow's coroutines touch it, one
// at a time.
type wfRun struct {
	h    *host
	ctx  workflow.Context
	name string
	st   settings

	history []*genai.Content
	working []*genai.Content // the shortened history PrepareHistory made, if it did
	sizes   payloadSizes
	turns   []agent.Turn
	at      []int                  // where each turn's model content is in history, -1 if it is not
	usage   agent.Usage            // the run's own
	agents  map[string]agent.Usage // of the agents its calls ran (AsTool), by name
	typed   agent.TypedState       // a typed run's state
	answer  json.RawMessage        // a typed run's answer, once given
	tokens  int                    // the last model call's prompt token count
	cache   agent.CacheRef         // the cache the last model call named: state, made by the activities
	made    int                    // turns made by this execution

	hopPrompt int // the first hop's prompt token count of the turn's continued answer

	turn     int // the turn under way
	pending  []*pendingCall
	decided  map[string]bool // ids of calls decided in earlier turns
	order    []string        // those ids, in the order decided, for a continue-as-new
	finished bool
	running  int // tool calls started and not finished

	// served is the log of a run an agentserver serves through a
	// Runner (served.go); nil otherwise.
	served *servedLog

	// obs is the context the workflow's own events are observed with:
	// the one the Observer chose for the run when it began, while this
	// process still holds it, or the run its Observer carried (st.Run),
	// resumed.
	obs context.Context
}

// payloadSizes tracks the JSON size of the history and of the working
// history, content by content, so that a turn never encodes the whole
// conversation to measure it.
type payloadSizes struct{ history, working int }

// pendingCall is a call waiting for approval, or, in a served run, for
// the result of a browser tool (browser.go).
type pendingCall struct {
	PendingApproval
	decided bool
	approve bool
	reason  string
	// A browser tool's call: its result, or its error, once decided.
	browser bool
	output  json.RawMessage
	failed  string
}

// run is the workflow: the loop of agent.Run, with the model call and
// each tool call made as activities.
func (h *host) run(ctx workflow.Context, in runInput) (*runOutput, error) {
	r, err := h.begin(ctx, in)
	if err != nil {
		return nil, err
	}
	return r.loop()
}

// begin sets a run up: a new one records its agent's settings; one that
// continued as new takes up its carried state.
func (h *host) begin(ctx workflow.Context, in runInput) (*wfRun, error) {
	r := &wfRun{h: h, ctx: ctx, name: in.Agent, history: in.Contents, decided: map[string]bool{}}
	if in.State == nil {
		// The settings are recorded, and the run begins for the agent's
		// Observer, once: a replay reads them from the history, and
		// reports nothing.
		err := workflow.SideEffect(ctx, func(workflow.Context) any {
			hd := h.agents[in.Agent]
			if hd == nil {
				return settings{Missing: true}
			}
			st := hd.settings
			if s := hd.steps; s.Observing() {
				e := &agent.Event{Kind: agent.EventRunStart, Model: s.Model()}
				r.obs = s.StartContext(s.Resume(context.Background(), in.Context), e)
				s.Observe(r.obs, e)
				st.Run = s.Carry(r.obs)
			}
			return st
		}).Get(&r.st)
		if err != nil {
			return nil, err
		}
		if r.st.Missing {
			f := failure{Kind: failAgent, Message: fmt.Sprintf("%q: no worker of this task queue holds an agent by that name", in.Agent)}
			return nil, temporal.NewNonRetryableApplicationError(f.err().Error(), errTypeRun, nil, *r.output(), f)
		}
	} else {
		s := in.State
		r.st, r.usage, r.agents, r.typed, r.working, r.tokens = s.Settings, s.Usage, s.Agents, s.Typed, s.Working, s.PromptTokens
		r.cache = s.Cache
		r.turns, r.at = expand(r.history, s.Turns)
		for _, id := range s.Decided {
			r.decided[id] = true
		}
		r.order = s.Decided
	}
	if r.obs == nil {
		r.obs = context.Background()
		if hd := h.agents[in.Agent]; hd != nil {
			r.obs = hd.steps.Resume(r.obs, r.st.Run)
		}
	}
	r.sizes.history = contentsSize(r.history)
	if r.working != nil {
		r.sizes.working = contentsSize(r.working)
	}
	if err := workflow.SetQueryHandler(ctx, ProgressQueryName, r.progress); err != nil {
		return nil, err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, DecideUpdateName, r.decide,
		workflow.UpdateHandlerOptions{Validator: r.validate})
	if err == nil && (in.Served != nil || (in.State != nil && in.State.Served != nil)) {
		err = r.serveBegin(in)
	}
	return r, err
}

// modelName returns the model name of the named agent on this worker.
func (h *host) modelName(name string) string {
	if hd := h.agents[name]; hd != nil {
		return hd.steps.Model()
	}
	return ""
}

// loop runs turns until the model answers without calling a tool, a limit
// is reached, something fails, or the run continues as new.
func (r *wfRun) loop() (*runOutput, error) {
	for {
		turn := len(r.turns)
		r.turn = turn
		if turn-r.typed.Reasks == r.st.MaxTurns { // a typed run's re-asks do not count
			return r.fail(failure{Kind: failMaxTurns, Turn: turn - 1, MaxTurns: r.st.MaxTurns})
		}
		if r.served != nil {
			r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindStep, Turn: turn})
		}
		t, out, f := r.modelTurn(turn)
		r.usage = r.usage.Plus(t.Usage)
		if f != nil {
			if t.Response != nil {
				r.turns, r.at = append(r.turns, *t), append(r.at, -1)
			}
			return r.fail(*f)
		}
		content := t.Response.Candidates[0].Content
		at := len(r.history)
		r.add(content)
		t.Calls = agent.FunctionCalls(content)
		r.serveModel(turn, content, out.Plans)
		if len(t.Calls) > 0 {
			start := workflow.Now(r.ctx)
			t.Results = r.runTools(turn, t.Calls, out.Plans)
			t.ToolTime = workflow.Now(r.ctx).Sub(start)
			model := out.Model
			if model == "" {
				// A response recorded before the model was recorded
				// with it: what this worker's agent calls.
				model = r.h.modelName(r.name)
			}
			r.add(agent.ResponseContent(model, t.Calls, t.Results))
		}
		r.turns, r.at = append(r.turns, *t), append(r.at, at)
		r.made++
		r.serveTurnEnd(turn, t)
		r.observe(&agent.Event{Kind: agent.EventTurnEnd, Turn: turn, TurnInfo: t,
			Usage: t.Usage, FinishReason: t.FinishReason})
		if r.ctx.Err() != nil {
			return r.fail(failure{Kind: failCanceled, Turn: turn})
		}
		if stop := r.stopped(turn, t); stop != nil {
			return r.fail(stopFailure(stop))
		}
		if r.st.Typed {
			// A typed run ends with a valid typed answer, not with text.
			if done, out, err := r.typedTurnDone(turn, t); done {
				return out, err
			}
		} else if len(t.Calls) == 0 {
			return r.succeed()
		}
		if workflow.GetInfo(r.ctx).GetContinueAsNewSuggested() || (r.st.ContinueEvery > 0 && r.made >= r.st.ContinueEvery) {
			return nil, r.continueAsNew()
		}
	}
}

// typedTurnDone acts on the decision about a typed run's turn, which the
// agent's Steps make as agent.RunTyped makes it: the run succeeds with the
// answer, fails with an OutputError when the re-asks ran out, or goes on,
// with the re-ask added to the history.
func (r *wfRun) typedTurnDone(turn int, t *agent.Turn) (done bool, out *runOutput, err error) {
	hd := r.h.agents[r.name]
	if hd == nil {
		out, err = r.fail(failure{Kind: failAgent, Turn: turn,
			Message: fmt.Sprintf("%q: the worker running the workflow holds none by that name", r.name)})
		return true, out, err
	}
	tt := hd.steps.TypedTurn(t, r.typed)
	r.typed = tt.Next
	switch {
	case tt.Err != nil:
		out, err = r.fail(failure{Kind: failOutput, Turn: turn, Message: tt.Err.Err.Error(), Raw: tt.Err.Raw,
			Strategy: tt.Err.Strategy, Reasks: tt.Err.Reasks})
		return true, out, err
	case tt.Done:
		b, merr := json.Marshal(tt.Output)
		if merr != nil { // it was decoded from JSON: it encodes
			out, err = r.fail(failure{Kind: failOutput, Turn: turn, Message: merr.Error()})
			return true, out, err
		}
		r.answer = b
		out, err = r.succeed()
		return true, out, err
	}
	if tt.Ask != nil {
		r.add(tt.Ask)
	}
	if tt.Retry != nil {
		workflow.GetLogger(r.ctx).Warn("agent: asking the model again for its answer", "turn", turn, "error", tt.Retry)
		r.observe(&agent.Event{Kind: agent.EventRetry, Turn: turn, Attempt: t.Attempts, Err: tt.Retry})
	}
	return false, nil, nil
}

// modelTurn makes the model call of a turn, with its re-asks, as activities
// that Temporal retries, and returns the turn holding the response with the
// worker's plan for its calls. On failure the turn is returned too, with
// the last response received, if any.
func (r *wfRun) modelTurn(turn int) (*agent.Turn, *modelOutput, *failure) {
	t := &agent.Turn{}
	start := workflow.Now(r.ctx)
	attempt, reasks := 1, 0
	for {
		in := modelInput{Agent: r.name, Turn: turn, Contents: r.sending(), PromptTokens: r.tokens, Attempt: attempt,
			Reasks: reasks, MaxReasks: r.st.MaxReasks, Start: start, Usage: t.Usage, Typed: r.typed, Run: r.st.Run, Cache: r.cache,
			Browser: r.browserTools()}
		if size := r.sendingSize() + r.browserSize(); size > r.st.MaxPayload {
			return t, nil, &failure{Kind: failPayload, Turn: turn, Message: fmt.Sprintf(
				"the model request of turn %d would carry %d bytes of conversation, over the limit of %d", turn, size, r.st.MaxPayload)}
		}
		var out modelOutput
		err := r.callModel(in, &out)
		t.Latency = workflow.Now(r.ctx).Sub(start)
		if err != nil {
			return t, nil, r.modelFailure(turn, attempt, err)
		}
		r.cache = out.Cache
		if out.Working != nil {
			r.working = out.Working
			r.sizes.working = contentsSize(r.working)
		}
		if f := r.continueAnswer(in, &out, t); f != nil { // continuation.go
			return t, nil, f
		}
		attempt = out.Attempt
		resp := out.Response
		t.Attempts, t.Response = attempt, resp
		t.Usage = t.Usage.Plus(agent.UsageOf(resp.UsageMetadata))
		if m := resp.UsageMetadata; m != nil {
			r.tokens = int(m.PromptTokenCount)
			if t.Continuations > 0 {
				r.tokens = r.hopPrompt // the first hop's: later ones re-read the answer
			}
		}
		if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
			t.FinishReason = resp.Candidates[0].FinishReason
		}
		stop, reask := agent.CheckResponse(resp)
		if stop == nil {
			return t, &out, nil
		}
		stop.Turn, stop.Attempts = turn, attempt
		if !reask || reasks >= r.st.MaxReasks {
			f := stopFailure(stop)
			return t, nil, &f
		}
		reasks++
		attempt++
	}
}

// callModel runs the model activity, local or regular, with the retry
// policy the agent's gives, counting attempts from in.Attempt.
func (r *wfRun) callModel(in modelInput, out *modelOutput) error {
	retry := &temporal.RetryPolicy{
		InitialInterval:        r.st.InitialDelay,
		BackoffCoefficient:     r.st.Multiplier,
		MaximumInterval:        r.st.MaxDelay,
		MaximumAttempts:        int32(max(1, r.st.ModelAttempts-in.Attempt+1)),
		NonRetryableErrorTypes: []string{errTypeModel, errTypeHistory, errTypeUnknownAgent, errTypeBrowser},
	}
	if r.st.LocalModel {
		ctx := workflow.WithLocalActivityOptions(r.ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: r.st.ModelTimeout, RetryPolicy: retry, Summary: fmt.Sprintf("model turn %d", in.Turn)})
		return workflow.ExecuteLocalActivity(ctx, ModelActivityName, in).Get(ctx, out)
	}
	ctx := workflow.WithActivityOptions(r.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: r.st.ModelTimeout, HeartbeatTimeout: r.st.Heartbeat, RetryPolicy: retry,
		Summary: fmt.Sprintf("model turn %d", in.Turn)})
	return workflow.ExecuteActivity(ctx, ModelActivityName, in).Get(ctx, out)
}

// modelFailure describes a model activity that failed for good.
func (r *wfRun) modelFailure(turn, attempt int, err error) *failure {
	if r.ctx.Err() != nil {
		return &failure{Kind: failCanceled, Turn: turn}
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case errTypeModel, errTypeModelRetry:
			var m modelFailure
			if appErr.Details(&m) == nil {
				f := modelError(turn, m)
				return &f
			}
		case errTypeHistory:
			return &failure{Kind: failHistory, Turn: turn, Message: appErr.Message()}
		case errTypeUnknownAgent:
			return &failure{Kind: failAgent, Turn: turn, Message: fmt.Sprintf("%q: the worker that made the model call holds none by that name", r.name)}
		case errTypeBrowser:
			return &failure{Kind: failBrowser, Turn: turn, Message: appErr.Message()}
		}
	}
	// A call that timed out on every attempt: its workers were lost, or
	// the model outlasted ModelTimeout.
	return &failure{Kind: failModel, Turn: turn, Attempts: max(attempt, r.st.ModelAttempts), Message: err.Error()}
}

// runTools answers the calls of a turn, in call order: a call the worker
// planned an answer for gets it, a call that needs approval waits for a
// decision, and the others run as activities, at most MaxParallel at once.
func (r *wfRun) runTools(turn int, calls []*genai.FunctionCall, plans []callPlan) []agent.ToolResult {
	results := make([]agent.ToolResult, len(calls))
	sem := workflow.NewSemaphore(r.ctx, int64(r.st.MaxParallel))
	wg := workflow.NewWaitGroup(r.ctx)
	start := func(i int, approved bool) {
		wg.Add(1)
		r.running++
		workflow.Go(r.ctx, func(ctx workflow.Context) {
			defer wg.Done()
			defer func() { r.running-- }()
			if err := sem.Acquire(ctx, 1); err != nil {
				results[i] = r.cancelled(calls[i])
				r.serveResult(turn, i, &results[i], false)
				return
			}
			defer sem.Release(1)
			results[i] = r.runTool(ctx, turn, i, calls[i], plans[i], approved)
			r.serveResult(turn, i, &results[i], false)
		})
	}
	var waiting []int
	for i, call := range calls {
		switch p := plans[i]; {
		case p.Answer != nil:
			results[i] = agent.ToolResult{Call: call, Result: p.Answer.result()}
			r.serveResult(turn, i, &results[i], false)
		case p.Approval || p.Browser:
			waiting = append(waiting, i)
		default:
			start(i, false)
		}
	}
	if len(waiting) > 0 {
		r.approve(turn, calls, plans, waiting, results, start)
	}
	wg.Wait(r.ctx)
	for i := range results {
		if results[i].Call == nil {
			results[i] = r.cancelled(calls[i])
			r.serveResult(turn, i, &results[i], false)
		}
	}
	return results
}

// approve waits until every call of waiting is decided, or its deadline
// passes, then starts the approved ones and answers the others: a
// browser tool's call with the browser's result.
func (r *wfRun) approve(turn int, calls []*genai.FunctionCall, plans []callPlan, waiting []int, results []agent.ToolResult, start func(int, bool)) {
	if r.served != nil {
		// A served run pauses once the turn's other calls have their
		// results (agentserver's Runner contract).
		_ = workflow.Await(r.ctx, func() bool { return r.running == 0 })
	}
	now := workflow.Now(r.ctx)
	var deadline time.Time
	if r.st.ApprovalTimeout > 0 {
		deadline = now.Add(r.st.ApprovalTimeout)
	}
	for _, i := range waiting {
		p := &pendingCall{PendingApproval: PendingApproval{ID: approvalID(turn, i), Turn: turn, Index: i, Call: calls[i],
			Since: now, Deadline: deadline}, browser: plans[i].Browser}
		r.pending = append(r.pending, p)
		if p.browser {
			continue // not an approval: the browser runs it
		}
		r.observe(&agent.Event{Kind: agent.EventApproval, Turn: turn, Index: i, Call: calls[i],
			Approval: &agent.Approval{Call: calls[i]}})
	}
	if r.ctx.Err() == nil {
		r.servePause(turn)
	}
	all := func() bool {
		for _, p := range r.pending {
			if !p.decided {
				return false
			}
		}
		return true
	}
	if r.st.ApprovalTimeout > 0 {
		_, _ = workflow.AwaitWithTimeout(r.ctx, r.st.ApprovalTimeout, all)
	} else {
		_ = workflow.Await(r.ctx, all)
	}
	r.serveExpired(turn)
	for _, p := range r.pending {
		r.decided[p.ID] = true
		r.order = append(r.order, p.ID)
		call := p.Call
		var answer *toolset.Result
		switch {
		case r.ctx.Err() != nil:
			continue // the run was cancelled: runTools answers the call
		case p.browser:
			answer = p.browserAnswer()
		case p.decided && p.approve:
			start(p.Index, true)
			continue
		case p.decided && p.reason != "":
			answer = agent.Deny(p.reason)
		case p.decided:
			answer = agent.NotApproved(call, "it needed approval and was denied")
		default:
			answer = agent.NotApproved(call, "it needed approval and no decision came before its deadline")
		}
		results[p.Index] = agent.ToolResult{Call: call, Result: toolset.Result{Output: answer.Output, IsError: answer.IsError, Err: answer.Err}}
		r.serveResult(turn, p.Index, &results[p.Index], !p.browser || !p.decided)
		r.observeAnswer(turn, p.Index, call, &results[p.Index], true)
	}
	r.pending = nil
}

// approvalID names the call of a turn that waits for approval.
func approvalID(turn, index int) string { return fmt.Sprintf("%d.%d", turn, index) }

// validate accepts a decision about a call that waits for one, and
// rejects any other: a rejected update is not written to the history.
func (r *wfRun) validate(_ workflow.Context, d Decision) error {
	p := r.find(d.ID)
	switch {
	case p == nil && r.decided[d.ID], p != nil && p.decided:
		return temporal.NewApplicationError(fmt.Sprintf("%v: %s", ErrDecided, d.ID), errTypeDecided)
	case p == nil, p.browser:
		return temporal.NewApplicationError(fmt.Sprintf("%v: %q", ErrUnknownApproval, d.ID), errTypeUnknownID)
	case len(d.Reason) > maxReasonBytes:
		return fmt.Errorf("temporalagent: the reason is %d bytes, over the limit of %d", len(d.Reason), maxReasonBytes)
	}
	return nil
}

// decide records a decision that validate accepted.
func (r *wfRun) decide(ctx workflow.Context, d Decision) error {
	if err := r.validate(ctx, d); err != nil {
		return err
	}
	p := r.find(d.ID)
	p.decided, p.approve, p.reason = true, d.Approve, d.Reason
	return nil
}

func (r *wfRun) find(id string) *pendingCall {
	for _, p := range r.pending {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// progress answers the progress query.
func (r *wfRun) progress() (*Progress, error) {
	p := &Progress{Turn: r.turn, Turns: len(r.turns), Usage: r.result().Usage, Done: r.finished}
	for _, c := range r.pending {
		if !c.decided {
			p.Pending = append(p.Pending, c.PendingApproval)
		}
	}
	return p, nil
}

// runTool runs one call as a tool activity. A call that does not complete
// (its worker was lost and it may not run again, or every attempt was) is
// answered as interrupted.
func (r *wfRun) runTool(ctx workflow.Context, turn, i int, call *genai.FunctionCall, p callPlan, approved bool) agent.ToolResult {
	retry := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: 30 * time.Second, MaximumAttempts: int32(max(1, p.Attempts))}
	in := toolInput{Agent: r.name, Turn: turn, Index: i, Call: call, Approved: approved, Run: r.st.Run}
	var fut workflow.Future
	if p.Local {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: p.Timeout, RetryPolicy: retry, Summary: call.Name})
		fut = workflow.ExecuteLocalActivity(ctx, ToolActivityName, in)
	} else {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: p.Timeout, HeartbeatTimeout: p.Heartbeat, RetryPolicy: retry, Summary: call.Name})
		fut = workflow.ExecuteActivity(ctx, ToolActivityName, in)
	}
	var out toolOutput
	err := fut.Get(ctx, &out)
	if err == nil {
		for name, u := range out.Agents {
			if r.agents == nil {
				r.agents = map[string]agent.Usage{}
			}
			r.agents[name] = r.agents[name].Plus(u)
		}
		return agent.ToolResult{Call: call, Result: toolset.Result{Output: out.Output, IsError: out.IsError, Media: out.Media},
			Duration: out.Duration}
	}
	if ctx.Err() != nil {
		return r.cancelled(call)
	}
	cause := err
	if u := errors.Unwrap(err); u != nil {
		cause = u
	}
	var msg string
	if p.Attempts > 1 {
		msg = fmt.Sprintf("tool %s did not finish: %d attempts were interrupted (last: %v)", call.Name, p.Attempts, cause)
	} else {
		msg = fmt.Sprintf("tool %s was interrupted (%v) and was not run again, since it is not idempotent: it may or may not have taken effect", call.Name, cause)
	}
	res := agent.ToolResult{Call: call, Result: toolset.Result{Output: msg, IsError: true}}
	r.observeAnswer(turn, i, call, &res, false)
	return res
}

// cancelled is the answer to a call that the run's cancellation kept from
// finishing.
func (r *wfRun) cancelled(call *genai.FunctionCall) agent.ToolResult {
	return agent.ToolResult{Call: call, Result: toolset.Result{IsError: true,
		Output: fmt.Sprintf("tool %s was not run: the run was cancelled", call.Name)}}
}

// add appends a content to the history and, when PrepareHistory
// shortened it, to the working history.
func (r *wfRun) add(c *genai.Content) {
	n := contentSize(c)
	r.history = append(r.history, c)
	r.sizes.history += n
	if r.working != nil {
		r.working = append(r.working, c)
		r.sizes.working += n
	}
}

// sending returns what the next model call sends, before PrepareHistory.
func (r *wfRun) sending() []*genai.Content {
	if r.working != nil {
		return r.working
	}
	return r.history
}

func (r *wfRun) sendingSize() int {
	if r.working != nil {
		return r.sizes.working
	}
	return r.sizes.history
}

// output is the run's result as it stands.
func (r *wfRun) output() *runOutput {
	return &runOutput{History: r.history, Turns: compact(r.history, r.turns, r.at), Usage: r.usage, Name: r.st.Name,
		Agents: r.agents, Output: r.answer}
}

// result is the run's Result so far.
func (r *wfRun) result() *agent.Result {
	res := agent.NewResult(r.history, r.turns, r.usage, r.st.Name, r.agents)
	if r.answer != nil {
		_ = json.Unmarshal(r.answer, &res.Output)
	}
	return res
}

// succeed ends a run that finished.
func (r *wfRun) succeed() (*runOutput, error) {
	out := r.output()
	if size := jsonSize(out); size > r.st.MaxPayload {
		return r.fail(failure{Kind: failPayload, Turn: len(r.turns) - 1, Message: fmt.Sprintf(
			"the run's result would be %d bytes, over the limit of %d", size, r.st.MaxPayload)})
	}
	if err := workflow.Await(r.ctx, func() bool { return workflow.AllHandlersFinished(r.ctx) }); err != nil {
		return r.fail(failure{Kind: failCanceled, Turn: len(r.turns) - 1})
	}
	r.serveEnd(nil, false)
	out.Served = r.served.final(r.st.MaxPayload - jsonSize(out))
	r.finished = true
	r.observe(&agent.Event{Kind: agent.EventDone, Turn: len(r.turns) - 1,
		Result: r.result()})
	return out, nil
}

// fail ends a run that failed: as cancelled when its context is done, or
// with an error that carries the partial result and what agent.Run would
// have returned.
func (r *wfRun) fail(f failure) (*runOutput, error) {
	err := f.err()
	r.serveEnd(err, f.Kind == failCanceled)
	r.finished = true
	r.observe(&agent.Event{Kind: agent.EventDone, Turn: len(r.turns) - 1,
		Result: r.result(), Err: err})
	out := r.output()
	if jsonSize(out) > r.st.MaxPayload {
		out = &runOutput{Usage: r.usage} // too large to carry: the error still says why
	}
	out.Served = r.served.final(r.st.MaxPayload - jsonSize(out))
	if f.Kind == failCanceled && (r.served == nil || !r.served.TimedOut) {
		return nil, temporal.NewCanceledError(*out, f)
	}
	return nil, temporal.NewNonRetryableApplicationError(err.Error(), errTypeRun, nil, *out, f)
}

// continueAsNew ends this execution and starts the next with the run's
// state, so that the workflow history starts afresh.
func (r *wfRun) continueAsNew() error {
	if err := workflow.Await(r.ctx, func() bool { return workflow.AllHandlersFinished(r.ctx) }); err != nil {
		_, err = r.fail(failure{Kind: failCanceled, Turn: len(r.turns) - 1})
		return err
	}
	in := runInput{Agent: r.name, Contents: r.history, State: &carried{Settings: r.st, Turns: compact(r.history, r.turns, r.at),
		Usage: r.usage, Agents: r.agents, Typed: r.typed, Working: r.working, PromptTokens: r.tokens, Decided: r.order, Cache: r.cache, Served: r.served}}
	if size := jsonSize(in); size > r.st.MaxPayload {
		_, err := r.fail(failure{Kind: failPayload, Turn: len(r.turns) - 1, Message: fmt.Sprintf(
			"the state to continue as new would be %d bytes, over the limit of %d", size, r.st.MaxPayload)})
		return err
	}
	return workflow.NewContinueAsNewError(r.ctx, WorkflowName, in)
}

// observe hands an event of the workflow itself to the agent's Observer,
// with the run's context, unless the workflow is replaying what it did
// before: an event is reported once.
func (r *wfRun) observe(e *agent.Event) {
	if workflow.IsReplaying(r.ctx) {
		return
	}
	if hd := r.h.agents[r.name]; hd != nil && hd.steps.Observing() {
		hd.steps.Observe(r.obs, e)
	}
}

// observeAnswer reports the answer the workflow gave a call, as agent.Run
// reports a call it answered: EventToolCall (when the call was not
// reported by a worker already) and EventToolResult, with the context the
// Observer chooses for the call.
func (r *wfRun) observeAnswer(turn, i int, call *genai.FunctionCall, res *agent.ToolResult, withCall bool) {
	hd := r.h.agents[r.name]
	if workflow.IsReplaying(r.ctx) || hd == nil || !hd.steps.Observing() {
		return
	}
	t, _ := hd.steps.Tools().Lookup(call.Name)
	ctx := r.obs
	if withCall {
		e := &agent.Event{Kind: agent.EventToolCall, Turn: turn, Index: i, Call: call, Tool: t}
		ctx = hd.steps.StartContext(ctx, e)
		hd.steps.Observe(ctx, e)
	}
	hd.steps.Observe(ctx, &agent.Event{Kind: agent.EventToolResult, Turn: turn, Index: i, Call: call, Tool: t, ToolResult: res})
}

// contentsSize returns the JSON size of a list of contents.
func contentsSize(cs []*genai.Content) int {
	n := 2
	for _, c := range cs {
		n += contentSize(c)
	}
	return n
}

// contentSize returns the JSON size of a content, with its comma.
func contentSize(c *genai.Content) int { return jsonSize(c) + 1 }

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // the data converter reports it
	}
	return len(b)
}
