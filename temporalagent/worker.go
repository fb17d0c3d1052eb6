package temporalagent

import (
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The names under which Register registers the workflow and its
// activities, and the names of the run's update and query. Every worker of
// a task queue registers the same ones.
const (
	WorkflowName      = "toolnexus.AgentRun"
	ModelActivityName = "toolnexus.Model"
	ToolActivityName  = "toolnexus.Tool"
	DecideUpdateName  = "toolnexus.decide"
	ProgressQueryName = "toolnexus.progress"
)

// Defaults of the Agent and ToolOptions fields whose zero value means "the
// default".
const (
	// DefaultModelTimeout bounds one model call.
	DefaultModelTimeout = 5 * time.Minute

	// DefaultHeartbeatTimeout is how long a worker may stay silent while it
	// makes a model call or runs a tool before the call counts as lost.
	// Calls heartbeat by themselves, every third of it.
	DefaultHeartbeatTimeout = 30 * time.Second

	// DefaultToolAttempts bounds the attempts of an idempotent tool call.
	DefaultToolAttempts = 3

	// DefaultMaxOutputBytes bounds the JSON of one tool output, so that a
	// turn's outputs fit a Temporal payload (see Agent.MaxOutputBytes).
	DefaultMaxOutputBytes = 256 << 10

	// DefaultMaxPayloadBytes bounds each payload a run writes to its
	// workflow history: what a model call sends, what a continue-as-new
	// carries, the result. Temporal refuses payloads over 2 MiB by default.
	DefaultMaxPayloadBytes = 2<<20 - 64<<10

	// noToolTimeout is the start-to-close timeout of a tool call when the
	// agent sets no ToolTimeout: long enough for any tool, while heartbeats
	// notice a lost worker in seconds.
	noToolTimeout = 24 * time.Hour

	// toolTimeoutGrace is added to the agent's ToolTimeout to make the
	// activity's start-to-close timeout, so that the answer the worker
	// gives when ToolTimeout passes (the one agent.Run gives) reaches the
	// server before the server gives up on the call.
	toolTimeoutGrace = 10 * time.Second
)

// An Agent is an [agent.Agent] that a worker runs under a name, with the
// settings that only a durable run has. Clients start runs by that name;
// the agent itself (its client and credentials, its tools, which are Go
// functions) stays on the worker and never enters workflow history.
type Agent struct {
	// Name is the name runs refer to the agent by. Required.
	Name string

	// Agent runs the turns: its model, tools, limits (MaxTurns,
	// MaxParallel, MaxCallsPerTurn, ToolTimeout, MaxOutputBytes), retry
	// policy, Intercept, NeedsApproval, PrepareHistory and Observer apply
	// as in agent.Run. Required.
	Agent *agent.Agent

	// Tools sets durable options per tool name. A tool without an entry
	// has the zero ToolOptions: not idempotent.
	Tools map[string]ToolOptions

	// ApprovalTimeout bounds the wait for a decision about calls that need
	// approval (see agent.Config.NeedsApproval): calls still undecided
	// when it passes are denied. Zero means no bound: the run waits as
	// long as it takes, with no worker busy.
	ApprovalTimeout time.Duration

	// ContinueAsNewEvery makes the run continue as new after every so many
	// turns, so that its workflow history stays short. Zero means only
	// when the server suggests it (by default at 4 MiB or 4,096 events).
	ContinueAsNewEvery int

	// ModelTimeout bounds one model call. Zero means DefaultModelTimeout.
	ModelTimeout time.Duration

	// HeartbeatTimeout is how long a worker may stay silent during a
	// model call (made as a regular activity) before the call is made
	// again elsewhere. Zero means DefaultHeartbeatTimeout; negative turns
	// heartbeats off, so that a lost call is noticed at ModelTimeout.
	HeartbeatTimeout time.Duration

	// RegularModelCalls makes each model call a regular activity, which
	// any worker of the task queue may pick up, instead of a local
	// activity, which the worker running the workflow task makes at once.
	// A local call saves a task-queue round trip and keeps the request
	// (the whole conversation) out of the workflow history; a regular one
	// heartbeats, which suits calls that take minutes. See BENCHMARKS.md.
	RegularModelCalls bool

	// MaxOutputBytes caps the JSON of one tool output, as
	// agent.Config.MaxOutputBytes does, so that the conversation fits
	// MaxPayloadBytes. Zero means DefaultMaxOutputBytes, or the agent's
	// own limit when it is smaller.
	MaxOutputBytes int

	// MaxPayloadBytes bounds the conversation a run carries: a run whose
	// model request, continue-as-new state or result would be larger
	// fails with ErrPayloadTooLarge instead of being refused by the
	// server. Zero means DefaultMaxPayloadBytes; set it to your cluster's
	// blob size limit when it is not the default.
	MaxPayloadBytes int
}

// ToolOptions are the durable options of one tool.
type ToolOptions struct {
	// Idempotent says that running the tool twice for one call does no
	// harm. An idempotent call whose worker is lost is run again, up to
	// MaxAttempts times; any other is answered to the model as
	// interrupted, never run twice.
	Idempotent bool

	// MaxAttempts bounds the attempts of an idempotent call. Zero means
	// DefaultToolAttempts.
	MaxAttempts int

	// HeartbeatTimeout is how long a worker may stay silent while the
	// tool runs before the call counts as lost. The call heartbeats by
	// itself, every third of it, while the tool runs. Zero means
	// DefaultHeartbeatTimeout; negative turns heartbeats off, so that a
	// lost call is noticed only when its start-to-close timeout passes
	// (the agent's ToolTimeout plus a few seconds, or a day).
	HeartbeatTimeout time.Duration

	// Local runs the tool's calls as local activities: the worker that
	// runs the workflow task runs them at once, which saves a task-queue
	// round trip per turn (see BENCHMARKS.md). It applies to idempotent
	// tools only, and suits calls that take seconds, not minutes: a local
	// call is recorded only when its workflow task completes, so a call
	// whose worker is lost before then runs again on another worker, after
	// the workflow task timeout (10 s by default), and it sends no
	// heartbeats.
	Local bool
}

// ErrUnknownAgent is the error of a run that names an agent its worker
// does not hold.
var ErrUnknownAgent = errors.New("temporalagent: unknown agent")

// Register registers, on a worker, the workflow and activities that run
// the given agents. Call it once per worker, before the worker starts.
// Every worker of a task queue must hold the same agents, under the same
// names, with the same settings: a run may move from one worker to
// another at any step.
func Register(w worker.Registry, agents ...Agent) error {
	h, err := newHost(agents)
	if err != nil {
		return err
	}
	w.RegisterWorkflowWithOptions(h.run, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(h.model, activity.RegisterOptions{Name: ModelActivityName})
	w.RegisterActivityWithOptions(h.tool, activity.RegisterOptions{Name: ToolActivityName})
	return nil
}

// host holds a worker's agents; its methods are the workflow and the
// activities.
type host struct {
	agents map[string]*held
}

// held is one registered agent, ready to run.
type held struct {
	def      Agent
	agent    *agent.Agent // def.Agent, with the worker's output cap
	steps    agent.Steps
	settings settings
	browser  browserSteps // with the browser tools of served runs (browser.go)
}

func newHost(agents []Agent) (*host, error) {
	h := &host{agents: make(map[string]*held, len(agents))}
	for _, def := range agents {
		switch {
		case def.Name == "":
			return nil, errors.New("temporalagent: an Agent has no Name")
		case def.Agent == nil:
			return nil, fmt.Errorf("temporalagent: agent %q: Agent is nil", def.Name)
		case h.agents[def.Name] != nil:
			return nil, fmt.Errorf("temporalagent: two agents are named %q", def.Name)
		case def.ApprovalTimeout < 0, def.ContinueAsNewEvery < 0, def.ModelTimeout < 0, def.MaxOutputBytes < 0, def.MaxPayloadBytes < 0:
			return nil, fmt.Errorf("temporalagent: agent %q: negative setting", def.Name)
		}
		if err := def.Agent.Steps().Err(); err != nil {
			return nil, fmt.Errorf("temporalagent: agent %q: %w", def.Name, err)
		}
		for name, o := range def.Tools {
			if _, ok := def.Agent.Steps().Tools().Lookup(name); !ok {
				return nil, fmt.Errorf("temporalagent: agent %q: Tools names %q, which the agent does not have", def.Name, name)
			}
			if o.MaxAttempts < 0 {
				return nil, fmt.Errorf("temporalagent: agent %q: tool %q: negative MaxAttempts", def.Name, name)
			}
			if o.Local && !o.Idempotent {
				return nil, fmt.Errorf("temporalagent: agent %q: tool %q: Local needs Idempotent: a local call may run again", def.Name, name)
			}
		}
		a := def.Agent
		limit := def.MaxOutputBytes
		if limit == 0 {
			limit = DefaultMaxOutputBytes
		}
		if own := a.Steps().Limits().MaxOutputBytes; own < 0 || own > limit {
			a = a.With(agent.Overrides{MaxOutputBytes: limit})
		}
		hd := &held{def: def, agent: a, steps: a.Steps()}
		hd.settings = hd.settingsOf()
		h.agents[def.Name] = hd
	}
	return h, nil
}

// settings are what the workflow's decisions depend on, recorded in the
// run's history when it starts, so that a run keeps them for its whole
// life even when its workers restart with other ones.
type settings struct {
	Missing         bool   `json:",omitempty"` // no agent of that name on the worker
	Name            string `json:",omitempty"` // the agent's Config.Name, for Result.Agents
	Typed           bool   `json:",omitempty"` // the agent makes typed runs (agent.Typed)
	MaxTurns        int
	MaxParallel     int
	MaxReasks       int
	ModelAttempts   int
	InitialDelay    time.Duration
	MaxDelay        time.Duration
	Multiplier      float64
	ModelTimeout    time.Duration
	Heartbeat       time.Duration
	LocalModel      bool
	ApprovalTimeout time.Duration
	ContinueEvery   int
	MaxPayload      int

	// Run is what the agent's Observer carries of the run (agent.Carrier),
	// from the worker where it began: recorded with the settings, so that
	// every step, on any worker, and every execution after a
	// continue-as-new, reports to the same run.
	Run map[string]string `json:",omitempty"`
	// MaxContinuations bounds the continuation hops of one answer (see
	// continuation.go); 0 continues none.
	MaxContinuations int `json:",omitempty"`
}

func (hd *held) settingsOf() settings {
	l := hd.steps.Limits()
	s := settings{
		Name:            hd.steps.Name(),
		Typed:           hd.steps.Typed(),
		MaxTurns:        l.MaxTurns,
		MaxParallel:     l.MaxParallel,
		MaxReasks:       l.Retry.MaxReasks,
		ModelAttempts:   l.Retry.MaxAttempts,
		InitialDelay:    l.Retry.InitialDelay,
		MaxDelay:        l.Retry.MaxDelay,
		Multiplier:      l.Retry.Multiplier,
		ModelTimeout:    orDefault(hd.def.ModelTimeout, DefaultModelTimeout),
		Heartbeat:       heartbeat(hd.def.HeartbeatTimeout),
		LocalModel:      !hd.def.RegularModelCalls,
		ApprovalTimeout: hd.def.ApprovalTimeout,
		ContinueEvery:   hd.def.ContinueAsNewEvery,
		MaxPayload:      hd.def.MaxPayloadBytes,

		MaxContinuations: l.MaxContinuations,
	}
	if s.MaxPayload == 0 {
		s.MaxPayload = DefaultMaxPayloadBytes
	}
	return s
}

// toolPlan returns how a call of the named tool runs: its activity's
// timeouts and attempts.
func (hd *held) toolPlan(name string) callPlan {
	o := hd.def.Tools[name]
	p := callPlan{Timeout: noToolTimeout, Heartbeat: heartbeat(o.HeartbeatTimeout), Attempts: 1}
	if t := hd.steps.Limits().ToolTimeout; t > 0 {
		p.Timeout = t + toolTimeoutGrace
	}
	if o.Idempotent {
		p.Attempts = o.MaxAttempts
		if p.Attempts == 0 {
			p.Attempts = DefaultToolAttempts
		}
		p.Local = o.Local
	}
	return p
}

// heartbeat returns the heartbeat timeout a setting means.
func heartbeat(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultHeartbeatTimeout
	case d < 0:
		return 0
	}
	return d
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}
