package devui

import (
	"errors"
	"net/http"
	"sync"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/runctx"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// maxToolNameBytes bounds a tool's name in a path.
const maxToolNameBytes = 128

// toolRunJSON is the answer of a tool run by hand.
type toolRunJSON struct {
	Tool string `json:"tool"`
	// Output is the tool's output, or, when IsError is set, the message
	// the model would read.
	Output  any  `json:"output"`
	IsError bool `json:"isError"`
	// Invalid says that the arguments did not match the tool's schema
	// (toolset.ErrInvalidArguments): the tool did not run.
	Invalid    bool    `json:"invalid,omitempty"`
	DurationMs float64 `json:"durationMs"`
}

// handRuns counts the tools run by hand in flight, in all and per user:
// the server's run limits bound them as they bound runs (a tool run by
// hand holds a goroutine, and whatever the tool holds, for up to the
// agent's ToolTimeout), counted apart from the runs.
type handRuns struct {
	mu    sync.Mutex
	total int
	users map[string]int
}

// startHandRun counts a run by hand of user's in, or refuses it: over the
// server's Config.MaxRunsPerUser (429) or MaxRuns (503), too_many_runs,
// as a run is. done counts it out.
func (h *handler) startHandRun(user string) (done func(), err error) {
	cfg := h.s.Config()
	h.hand.mu.Lock()
	defer h.hand.mu.Unlock()
	switch {
	case cfg.MaxRunsPerUser > 0 && h.hand.users[user] >= cfg.MaxRunsPerUser:
		return nil, &agentserver.Error{Status: http.StatusTooManyRequests, Code: "too_many_runs", Err: agentserver.ErrTooManyRuns,
			Message: sprintf("you run %d tools by hand already, as many as the server runs of one user at once: wait for one to end", cfg.MaxRunsPerUser)}
	case cfg.MaxRuns > 0 && h.hand.total >= cfg.MaxRuns:
		return nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "too_many_runs", Err: agentserver.ErrTooManyRuns,
			Message: "the server runs as many tools by hand as it takes at once; try again later"}
	}
	if h.hand.users == nil {
		h.hand.users = map[string]int{}
	}
	h.hand.total++
	h.hand.users[user]++
	return func() {
		h.hand.mu.Lock()
		defer h.hand.mu.Unlock()
		h.hand.total--
		if h.hand.users[user]--; h.hand.users[user] == 0 {
			delete(h.hand.users, user)
		}
	}, nil
}

// runTool runs one of the agent's tools with the request's arguments,
// {"args": {…}}, as the agent runs a model's call (agent.Steps.RunCall):
// the arguments checked against the tool's schema, under the agent's
// ToolTimeout, through its Intercept, the output capped, on a context that
// names the user (agentserver.RunUser) as a served run's does. A tool that needs
// approval is refused unless Options.RunToolsNeedingApproval is set; a
// browser tool is not the server's to run. A user runs at most the
// server's Config.MaxRunsPerUser tools by hand at once (429 too_many_runs
// beyond), and the server Config.MaxRuns (503).
func (h *handler) runTool(r *http.Request, user string) (any, error) {
	name := r.PathValue("tool")
	if len(name) > maxToolNameBytes {
		return nil, badRequest("bad_tool", "the tool's name is longer than %d bytes", maxToolNameBytes)
	}
	var body struct {
		Args map[string]any `json:"args"`
	}
	if err := h.s.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	steps := h.s.Agent().Steps()
	set := steps.Tools()
	if set == nil {
		return nil, notFound("tool %q not found: the agent has no tools", name)
	}
	if _, ok := set.Lookup(name); !ok {
		return nil, notFound("tool %q not found", name)
	}
	if body.Args == nil {
		body.Args = map[string]any{}
	}
	call := &genai.FunctionCall{Name: name, Args: body.Args}
	// The tool reads the user as in a served run: a tool that keeps
	// something per user (a credential, a remote conversation) finds the
	// one who asked, not nobody.
	ctx := runctx.WithUser(r.Context(), user)
	_, approval := steps.PlanCall(ctx, 0, 1, call)
	if approval && !h.opts.RunToolsNeedingApproval {
		return nil, &agentserver.Error{Status: http.StatusForbidden, Code: "needs_approval",
			Message: sprintf("tool %q needs approval: the dev UI runs it only with devui.Options.RunToolsNeedingApproval", name),
			Err:     agentserver.ErrBadRequest}
	}
	done, err := h.startHandRun(user)
	if err != nil {
		return nil, err
	}
	defer done()
	res, _ := steps.RunCall(ctx, call, approval)
	return &toolRunJSON{Tool: name, Output: res.Output, IsError: res.IsError,
		Invalid: errors.Is(res.Err, toolset.ErrInvalidArguments), DurationMs: float64(res.Duration.Microseconds()) / 1000}, nil
}
