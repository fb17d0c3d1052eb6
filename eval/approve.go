package eval

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An Approver decides, in a run of case c, about a tool call that needs
// approval (the agent's Config.NeedsApproval picks it), as the person who
// would have approved or denied it: it returns nil to let the call run,
// or the call's answer instead ([agent.Deny], [agent.Answer]). turn is
// the index of the case's turn being played (for a scenario, of the
// simulated user's message). It is called concurrently for the calls of
// one turn. See Options.Approve.
type Approver func(ctx context.Context, c *Case, turn int, call *genai.FunctionCall) *toolset.Result

// ReplayDecisions is the default Approver: a call is decided as the case
// records that the same call was. The call is looked up among the calls
// of the expected turn it is made in, by name and arguments (equal as
// JSON values, as ToolTrajectory's ArgsExact compares them); the first
// that matches decides:
//   - its recorded response is a denial ({"error": reason, "denied":
//     true}, what agent.Deny and a person's denial leave in a stored
//     conversation): the call is denied with the same reason;
//   - it has another response, or the turn records no responses at all
//     (ADK's eval sets often list only tool_uses): the call is approved.
//
// A call that matches no expected call, and every call of a scenario
// case, is denied: nobody decided it. The dev UI's cases, conversations
// saved with their responses, are replayed this way.
func ReplayDecisions(_ context.Context, c *Case, turn int, call *genai.FunctionCall) *toolset.Result {
	if c == nil || c.Scenario != nil || turn < 0 || turn >= len(c.Turns) {
		return agent.Deny("the eval case records no decision about this call")
	}
	expected := callRuns(&c.Turns[turn])
	for _, e := range expected {
		if e.call.Name != call.Name || !argsEqual(e.call.Args, call.Args) {
			continue
		}
		if e.state == callNotRun {
			return agent.Deny(e.reason)
		}
		return nil
	}
	return agent.Deny(fmt.Sprintf("the eval case records no decision about %s: its turn %d has no such call", callString(call), turn+1))
}

// withApprover returns the agent a turn of c runs: calls that need
// approval are decided by approve, as a person would decide them (Run
// would otherwise deny them all: nobody is asked). An agent with an
// Interceptor of its own decides its approvals itself, as in Run, and is
// returned as it is.
func withApprover(a *agent.Agent, approve Approver, c *Case, turn int) *agent.Agent {
	steps := a.Steps()
	if steps.Interceptor() != nil || steps.Err() != nil {
		return a
	}
	return a.With(agent.Overrides{Intercept: func(ctx context.Context, call *genai.FunctionCall) *toolset.Result {
		if _, needs := steps.PlanCall(ctx, 0, 1, call); !needs {
			return nil
		}
		return approve(ctx, c, turn, call)
	}})
}

// callState says whether a call ran, as the turn's responses record it.
type callState int

const (
	// callRanUnknown: the turn records no responses (an ADK eval set
	// that lists only tool_uses), so nothing says; it matches either.
	callRanUnknown callState = iota
	// callRan: the call has a response that is not a denial.
	callRan
	// callNotRun: the call was denied, or never answered.
	callNotRun
)

// callRun is a call of a turn and whether it ran; reason says why not.
type callRun struct {
	call   *genai.FunctionCall
	state  callState
	reason string
}

// callRuns returns t's calls, each with whether it ran: its response is
// the one with its id, or, for calls without ids, the next response of
// the same name in order. A call with no response, in a turn that has
// responses, never ran.
func callRuns(t *Turn) []callRun {
	calls, responses := t.Calls(), t.Responses()
	out := make([]callRun, len(calls))
	used := make([]bool, len(responses))
	for i, c := range calls {
		out[i].call = c
		if len(responses) == 0 {
			continue
		}
		r := -1
		for j, fr := range responses {
			if used[j] || fr == nil {
				continue
			}
			if c.ID != "" && fr.ID != "" {
				if fr.ID == c.ID {
					r = j
					break
				}
			} else if fr.Name == c.Name {
				r = j
				break
			}
		}
		if r < 0 {
			out[i].state, out[i].reason = callNotRun, "never answered"
			continue
		}
		used[r] = true
		if why, denied := geminiadapter.Denied(responses[r]); denied {
			out[i].state, out[i].reason = callNotRun, why
		} else {
			out[i].state = callRan
		}
	}
	return out
}
