package temporalagent

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/temporal"
)

// Browser tools of served runs. A request to an agentserver.Server may
// declare tools that run in the browser (agentserver.ToolDecl): the
// declarations are part of the served run's input (servedInput.Tools),
// carried over continue-as-new, and handed to every model activity of the
// run (modelInput.Browser), which adds them to the agent's tools as the
// in-process runner does (agent.With), so that the model sees them. A
// call of one is planned as a browser call (callPlan.Browser): the
// workflow never runs it, it waits for the browser's result as a call
// that needs approval waits for its decision (wfRun.approve), and the
// served decide update hands it the result or the error
// (agentserver.Decision's Output or Error), validated as the in-process
// runner validates it.

// maxBrowserSteps bounds the agents with browser tools a worker keeps
// made, keyed by their declarations: a conversation's model calls declare
// the same tools, turn after turn.
const maxBrowserSteps = 64

// browserSteps caches a worker's agents with browser tools.
type browserSteps struct {
	mu    sync.Mutex
	steps map[string]browserAgent
}

// browserAgent is an agent's steps with browser tools, and the tools'
// names.
type browserAgent struct {
	steps agent.Steps
	names map[string]bool
}

// withBrowser returns the steps of hd's agent with the browser tools
// decls declares added, and their names; hd's own steps when there are
// none. Declarations that the worker's agent does not take (a name of its
// own tools, a schema it refuses) are an error: the request's server
// checked them against its own agent, which should be the workers'.
func (hd *held) withBrowser(decls []agentserver.ToolDecl) (agent.Steps, map[string]bool, error) {
	if len(decls) == 0 {
		return hd.steps, nil, nil
	}
	key, err := json.Marshal(decls)
	if err != nil {
		return agent.Steps{}, nil, fmt.Errorf("temporalagent: browser tools: %w", err)
	}
	hd.browser.mu.Lock()
	ba, ok := hd.browser.steps[string(key)]
	hd.browser.mu.Unlock()
	if ok {
		return ba.steps, ba.names, nil
	}
	tools, err := agentserver.BrowserTools(decls)
	if err != nil {
		return agent.Steps{}, nil, fmt.Errorf("temporalagent: browser tools: %w", err)
	}
	s := hd.agent.With(agent.Overrides{Tools: tools}).Steps()
	if err := s.Err(); err != nil {
		return agent.Steps{}, nil, fmt.Errorf("temporalagent: browser tools: %w", err)
	}
	ba = browserAgent{steps: s, names: make(map[string]bool, len(decls))}
	for _, d := range decls {
		ba.names[d.Name] = true
	}
	hd.browser.mu.Lock()
	if hd.browser.steps == nil || len(hd.browser.steps) >= maxBrowserSteps {
		hd.browser.steps = map[string]browserAgent{}
	}
	hd.browser.steps[string(key)] = ba
	hd.browser.mu.Unlock()
	return ba.steps, ba.names, nil
}

// browserTools returns the browser tools of the run: those its request
// declared, when it is served.
func (r *wfRun) browserTools() []agentserver.ToolDecl {
	if r.served == nil {
		return nil
	}
	return r.served.In.Tools
}

// browserSize returns the JSON size of the run's browser tool
// declarations, which every model call's input carries with the
// conversation.
func (r *wfRun) browserSize() int {
	if tools := r.browserTools(); len(tools) > 0 {
		return jsonSize(tools)
	}
	return 0
}

// kind is what the call waits for.
func (p *pendingCall) kind() agentserver.PendingKind {
	if p.browser {
		return agentserver.WaitBrowser
	}
	return agentserver.WaitApproval
}

// browserAnswer is the answer of a browser tool's call: the browser's
// result or its error, as the in-process runner answers it, or, when none
// came before the call's deadline, a denial.
func (p *pendingCall) browserAnswer() *toolset.Result {
	switch {
	case !p.decided:
		return agent.NotApproved(p.Call, "it runs in the browser, and no result came before its deadline")
	case p.failed != "":
		return &toolset.Result{Output: p.failed, IsError: true}
	}
	return agent.Answer(p.output)
}

// maxBrowserResult bounds the output, or the error text, of a browser
// tool's result: it is written to the workflow history with the decision,
// and sent to the model.
const maxBrowserResult = DefaultMaxOutputBytes

// checkDecision checks that a decision suits the call p, as the in-process
// runner checks it: an approval is approved or denied; a browser tool's
// call gets its output, as JSON, or its error.
func checkDecision(p *pendingCall, d agentserver.Decision) error {
	switch {
	case d.Expired:
		return badDecision("a decision cannot be marked expired")
	case !p.browser && (len(d.Output) > 0 || d.Error != ""):
		return badDecision(fmt.Sprintf("call %q needs approval, not a result", d.CallID))
	case p.browser && (len(d.Output) > 0) == (d.Error != ""):
		return badDecision(fmt.Sprintf("call %q of browser tool %s needs its output or its error", d.CallID, p.Call.Name))
	case p.browser && len(d.Output) > maxBrowserResult, p.browser && len(d.Error) > maxBrowserResult:
		return badDecision(fmt.Sprintf("the result of call %q is %d bytes, over the limit of %d", d.CallID, max(len(d.Output), len(d.Error)), maxBrowserResult))
	case p.browser && !json.Valid(d.Output) && d.Error == "":
		return badDecision(fmt.Sprintf("the output of call %q is not JSON", d.CallID))
	case len(d.Reason) > maxReasonBytes:
		return badDecision(fmt.Sprintf("the reason is %d bytes, over the limit of %d", len(d.Reason), maxReasonBytes))
	}
	return nil
}

// errTypeBadDecision is the type of the served decide update's refusal
// of a decision that does not suit its call: agentserver's 400
// bad_decision.
const errTypeBadDecision = "toolnexus.BadDecision"

func badDecision(msg string) error { return temporal.NewApplicationError(msg, errTypeBadDecision) }

// maxBrowserDecls bounds the JSON of a run's browser tool declarations:
// they travel in the run's input, and in every model call's, each a
// Temporal payload (2 MiB by default).
const maxBrowserDecls = DefaultMaxPayloadBytes / 4

// checkBrowserTools checks a request's browser tools as the in-process
// runner does (agentserver.BrowserTools: 400 bad_tool, or
// schema_too_large), and that they fit what a run carries.
func checkBrowserTools(decls []agentserver.ToolDecl) error {
	if len(decls) == 0 {
		return nil
	}
	if _, err := agentserver.BrowserTools(decls); err != nil {
		return err
	}
	b, err := json.Marshal(decls)
	if err != nil {
		return agentserver.BadRequest(0, "bad_tool", "the browser tools do not encode: %v", err)
	}
	if len(b) > maxBrowserDecls {
		return agentserver.BadRequest(0, "tools_too_large",
			"the browser tools' declarations are %d bytes of JSON; a run on Temporal carries at most %d", len(b), maxBrowserDecls)
	}
	return nil
}
