package temporalagent

import (
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/genai"
)

// Long answers. When the API cuts an answer (finish reason CONTINUATION,
// with a token), the workflow continues it as agent.Run does, at most the
// agent's MaxContinuations times, but each hop is a model activity of its
// own: its input holds the token it sends, and its result, the hop's
// response, is in the workflow's history. A worker lost during a long
// answer costs the hop in flight, which another worker makes again with
// the same token; the hops made are not asked for, nor paid for, again.

// continueAnswer continues the answer out holds, the first hop's, when the
// API cut it: it makes the next hops, each a model activity like the
// first, sent with the token of the hop before it, and leaves the hops
// merged in out, with the plans of their calls in turn order. When a hop
// fails for good, the turn keeps the hops made, and the failure ends the
// run.
func (r *wfRun) continueAnswer(in modelInput, out *modelOutput, t *agent.Turn) *failure {
	if r.st.MaxContinuations <= 0 || agent.ContinuationToken(out.Response) == nil {
		t.Continuations = 0
		return nil
	}
	hops := agent.NewHops(r.st.MaxContinuations)
	next := hops.Add(out.Response)
	plans := out.Plans
	calls := callsOf(out.Response)
	for hop := 1; next != nil; hop++ {
		hin := in
		hin.Contents, hin.Hop, hin.Token, hin.CallsBefore = r.sending(), hop, next, calls
		hin.Attempt, hin.Start = out.Attempt+1, workflow.Now(r.ctx)
		hin.Usage = in.Usage.Plus(agent.UsageOf(hops.Response().UsageMetadata))
		var hout modelOutput
		if err := r.callModel(hin, &hout); err != nil {
			// The hops made stay in the turn: the answer so far, and its
			// usage, billed.
			resp := hops.Response()
			t.Response, t.Continuations = resp, hops.Len()-1
			t.Usage = t.Usage.Plus(agent.UsageOf(resp.UsageMetadata))
			if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
				t.FinishReason = resp.Candidates[0].FinishReason
			}
			f := r.modelFailure(in.Turn, hin.Attempt, err)
			f.Message = fmt.Sprintf("continuation hop %d: %s", hop, f.Message)
			return f
		}
		next = hops.Add(hout.Response)
		plans = append(plans, hout.Plans...)
		calls += callsOf(hout.Response)
		out.Attempt = hout.Attempt
	}
	out.Response, out.Plans = hops.Response(), plans
	t.Continuations = hops.Len() - 1
	r.hopPrompt = hops.PromptTokens()
	return nil
}

// callsOf counts the function calls of a response's first candidate.
func callsOf(resp *genai.GenerateContentResponse) int {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0] == nil || resp.Candidates[0].Content == nil {
		return 0
	}
	return len(agent.FunctionCalls(resp.Candidates[0].Content))
}

// stopped returns the error that ends the run after turn t because its
// answer is incomplete, as agent.Run decides (agent.Steps.Stopped).
func (r *wfRun) stopped(turn int, t *agent.Turn) *agent.StopError {
	if hd := r.h.agents[r.name]; hd != nil {
		return hd.steps.Stopped(turn, t)
	}
	if len(t.Calls) == 0 && t.FinishReason == genai.FinishReasonMaxTokens {
		return &agent.StopError{Kind: agent.ErrMaxTokens, Turn: turn, FinishReason: t.FinishReason, Attempts: t.Attempts}
	}
	return nil
}
