package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// MaxAgentDepth bounds how deeply agents run as tools nest: a run's tool
// may run an agent (depth 1), whose tool may run another (depth 2), and so
// on up to MaxAgentDepth. A call that would go deeper is not run: the
// calling model receives an error, as for any failed call. It keeps an
// agent that reaches itself through its tools from calling itself forever.
const MaxAgentDepth = 5

// ErrAgentDepth is the error of a call of an agent tool that was not run
// because it would have nested agents deeper than [MaxAgentDepth].
var ErrAgentDepth = errors.New("agent: agents nested too deep")

// AsTool returns a tool that runs a: a coordinator agent can then hand
// tasks to specialist agents (a researcher with search tools, a coder with
// a sandbox) by calling them as it calls any tool.
//
//	researcher, _ := agent.AsTool(researchAgent, "researcher",
//		"Researches a question on the web and answers with sources.")
//	coordinator, _ := agent.New(agent.Config{Models: client.Models, Model: model,
//		Tools: toolset.MustNew(researcher, writer)})
//
// The calling model passes one argument, "request": the task, in full. The
// agent runs its own loop on a new conversation holding only that request,
// with its own tools, model and limits, and its final text is the tool's
// result. For a typed request and answer, use [AsTypedTool].
//
// What the calling run sees of the agent's run, when the tool is called by
// a run of this package's loop:
//
//   - Usage: the agent run's token counts are added to the calling run's
//     Result.Usage, and Result.Agents breaks them down by agent name (the
//     tool's name), nested agents included.
//   - Events: the agent run reports to the calling run's Observer as well
//     as to its own (an observer both have sees each event once). Its
//     events carry Agent, the tool's name, and Parent, the calling run's
//     EventToolCall event for the call they serve. They come from the
//     call's goroutine, while the calling run goes on; a Stream consumer
//     of the calling run sees the tool call and its result, not the agent
//     run's steps (give the calling agent an Observer to see them).
//   - Cancellation and limits: the agent run gets the call's context, so
//     the calling run's cancellation, its Config.ToolTimeout and any
//     deadline reach it, and a ContextObserver's span for the call is the
//     parent of the agent run's.
//   - Failure: an agent run that fails (a model error, its own turn
//     limit, a cancelled context) is an error result the calling model
//     reads, saying which agent failed and why; the calling run goes on.
//   - Depth: agents nest at most [MaxAgentDepth] deep.
//
// The tool is safe for concurrent use: a model that calls it several
// times in one turn gets as many concurrent runs of a.
func AsTool(a *Agent, name, description string) (*toolset.Tool, error) {
	if a == nil {
		return nil, fmt.Errorf("agent: AsTool %q: nil *Agent", name)
	}
	return toolset.Func(name, description, func(ctx context.Context, in askInput) (string, error) {
		b, err := a.asCalled(ctx, name)
		if err != nil {
			return "", err
		}
		res, err := b.Run(ctx, []*genai.Content{genai.NewContentFromText(in.Request, genai.RoleUser)})
		reportAgent(ctx, name, res)
		if err != nil {
			return "", fmt.Errorf("agent %s failed: %w", name, err)
		}
		return res.Text, nil
	})
}

// askInput is the argument of a tool made by AsTool.
type askInput struct {
	Request string `json:"request" jsonschema:"the task or question for the agent, with everything it needs to know: it sees nothing else of this conversation"`
}

// AsTypedTool is [AsTool] for an agent with a typed request and answer:
// the tool's parameters are In's schema, inferred as [toolset.Func] infers
// it; the agent receives the request as JSON in a user message and runs
// as [RunTyped] runs it, with a's Config.Output; the tool's result is its
// Out. Everything else is as with AsTool.
func AsTypedTool[In, Out any](a *Agent, name, description string) (*toolset.Tool, error) {
	if a == nil {
		return nil, fmt.Errorf("agent: AsTypedTool %q: nil *Agent", name)
	}
	if _, err := planFor[Out](a.outputConfig.toolName()); err != nil {
		return nil, err
	}
	return toolset.Func(name, description, func(ctx context.Context, in In) (Out, error) {
		var zero Out
		b, err := a.asCalled(ctx, name)
		if err != nil {
			return zero, err
		}
		request, err := json.Marshal(in)
		if err != nil {
			return zero, fmt.Errorf("agent %s: encoding the request: %w", name, err)
		}
		out, res, err := RunTyped[Out](ctx, b, []*genai.Content{genai.NewContentFromText(string(request), genai.RoleUser)})
		reportAgent(ctx, name, res)
		if err != nil {
			return zero, fmt.Errorf("agent %s failed: %w", name, err)
		}
		return out, nil
	})
}

// runKey and callKey are the context keys under which a run hands itself,
// and, when it reports events, the EventToolCall of a call, to the calls'
// tools: the agents AsTool runs find their caller with them.
type (
	runKey  struct{}
	callKey struct{}
)

// agentLink ties the copy of an agent that runs for one call of an AsTool
// tool to the calling run.
type agentLink struct {
	depth int    // 1 for an agent called by a run that is not itself one
	call  *Event // the calling run's EventToolCall, or nil
}

// depth returns how deeply a's runs are nested in agents' tool calls.
func (a *Agent) depth() int {
	if a.link == nil {
		return 0
	}
	return a.link.depth
}

// asCalled returns the copy of a that runs for one tool call under ctx:
// named after the tool, linked to the calling run, and reporting to the
// calling run's observer too.
func (a *Agent) asCalled(ctx context.Context, name string) (*Agent, error) {
	b := *a
	b.name = name
	link := &agentLink{depth: 1}
	if caller, ok := ctx.Value(runKey{}).(*run); ok {
		link.depth = caller.a.depth() + 1
		link.call, _ = ctx.Value(callKey{}).(*Event)
		b.setObserver(linkObservers(a.observer, caller.a.observer))
	}
	if link.depth > MaxAgentDepth {
		return nil, fmt.Errorf("%w: agent %s was not run: it would be agent %d in a chain of agents calling agents, and at most %d are allowed",
			ErrAgentDepth, name, link.depth, MaxAgentDepth)
	}
	b.link = link
	return &b, nil
}

// mark stamps an event with the run's agent and, for an agent run as a
// tool, the call it serves.
func (r *run) mark(e *Event) {
	e.Agent = r.a.name
	if r.a.link != nil {
		e.Parent = r.a.link.call
	}
}

// agentUsage sums, for one run, the usage of the agents its calls ran.
// Calls report concurrently; the run folds the sums into its Result when
// it finishes, and reports that come later (from an agent run still
// winding down after a cancellation) are not counted.
type agentUsage struct {
	mu     sync.Mutex
	by     map[string]Usage
	closed bool
}

// reportAgent adds the usage of res, the run of the agent tool name, to
// the run that made the call under ctx, if a run of this package did.
func reportAgent(ctx context.Context, name string, res *Result) {
	caller, ok := ctx.Value(runKey{}).(*run)
	if !ok || res == nil {
		return
	}
	u := &caller.agents
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	if u.by == nil {
		u.by = map[string]Usage{}
	}
	if res.Agents == nil {
		u.by[name] = u.by[name].plus(res.Usage)
		return
	}
	for agent, usage := range res.Agents {
		u.by[agent] = u.by[agent].plus(usage)
	}
}

// foldAgents adds the usage of the agents the run's calls ran to res: to
// Usage, and by agent to Agents, next to the run's own. Later reports are
// not counted.
func (r *run) foldAgents(res *Result) {
	if by := r.agents.close(); by != nil {
		fold(res, r.a.name, by)
	}
}

// close ends the sums, so that later reports are not counted, and returns
// the usage by agent, nil when no agent reported.
func (u *agentUsage) close() map[string]Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	return u.by
}

// fold adds the usage of the agents a run's calls ran, by name, to res:
// res.Usage, the run's own, becomes the total, and res.Agents the
// breakdown, the run's own under name.
func fold(res *Result, name string, by map[string]Usage) {
	own := res.Usage
	for _, u := range by {
		res.Usage = res.Usage.plus(u)
	}
	res.Agents = by
	res.Agents[name] = res.Agents[name].plus(own)
}

// linkObservers returns the observer of an agent's run as a tool: its own
// and the calling run's, each observer once.
func linkObservers(own, caller Observer) Observer {
	if own == nil {
		return caller
	}
	if caller == nil {
		return own
	}
	callers := flatten(caller)
	var keep []Observer
	for _, o := range flatten(own) {
		if !slices.ContainsFunc(callers, func(c Observer) bool { return sameObserver(o, c) }) {
			keep = append(keep, o)
		}
	}
	return Observers(append(keep, caller)...)
}

// flatten returns the observers o hands events to.
func flatten(o Observer) []Observer {
	switch m := o.(type) {
	case multiObserver:
		return m
	case scopedMulti:
		return m.multiObserver
	}
	return []Observer{o}
}

// sameObserver reports whether x and y are known to be the same observer:
// equal values of a comparable type.
func sameObserver(x, y Observer) (same bool) {
	t := reflect.TypeOf(x)
	if t != reflect.TypeOf(y) || !t.Comparable() {
		return false
	}
	defer func() {
		if recover() != nil { // a struct holding an incomparable value
			same = false
		}
	}()
	return x == y
}
