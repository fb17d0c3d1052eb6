package temporalagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genai"
)

// A Client starts durable runs and follows them: it waits for their
// result, answers their approvals and reads their progress. Any process
// with a Temporal client can be one; it needs neither the agents nor their
// credentials, which stay on the workers.
type Client struct {
	c        client.Client
	queue    string
	observer agent.Observer
}

// NewClient returns a Client that starts runs on the workers of taskQueue
// through c.
func NewClient(c client.Client, taskQueue string, opts ...ClientOption) *Client {
	cl := &Client{c: c, queue: taskQueue}
	for _, opt := range opts {
		opt(cl)
	}
	return cl
}

// A ClientOption configures a [Client]; pass options to [NewClient].
type ClientOption func(*Client)

// WithObserver sets an Observer of the agents the Client starts runs of,
// as the workers' agents have: when it is an [agent.Carrier], the runs
// continue what it carries from Start's context. With otelagent's Observer
// (it needs no provider on the client), a run's spans nest under the span
// of the context the run was started with, as agent.Run's nest under its
// caller's:
//
//	ac := temporalagent.NewClient(c, "agents", temporalagent.WithObserver(otelagent.New()))
//	run, err := ac.Start(ctx, opts, "weather", contents) // under ctx's span
func WithObserver(o agent.Observer) ClientOption {
	return func(c *Client) { c.observer = o }
}

// ErrRunExists is the error of a Start whose ID names a run that is in
// progress (or, under a WorkflowIDReusePolicy that forbids reusing the
// ID, one that ran): the new run's input would otherwise be dropped. The
// error also wraps Temporal's *serviceerror.WorkflowExecutionAlreadyStarted.
var ErrRunExists = errors.New("temporalagent: a run with this ID exists")

// Start starts a run of the agent registered under agentName on contents
// (a conversation that ends with a user message, as for agent.Run) and
// returns it at once. opts are Temporal's: ID names the run (a unique one
// is made when it is empty), TaskQueue defaults to the Client's.
//
// A Start whose ID names a run in progress fails with [ErrRunExists],
// unless opts ask for another policy: WorkflowIDConflictPolicy
// USE_EXISTING returns the run in progress (its own input is kept, and
// contents are dropped), TERMINATE_EXISTING ends it and starts the new
// one.
func (c *Client) Start(ctx context.Context, opts client.StartWorkflowOptions, agentName string, contents []*genai.Content) (*Run, error) {
	switch {
	case agentName == "":
		return nil, errors.New("temporalagent: Start: the agent name is empty")
	case len(contents) == 0:
		return nil, errors.New("temporalagent: Start: no contents")
	}
	if opts.TaskQueue == "" {
		opts.TaskQueue = c.queue
	}
	if opts.WorkflowIDConflictPolicy == enums.WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED {
		// Without it, the SDK returns the run in progress as if it were
		// the new one.
		opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	}
	in := Input{Agent: agentName, Contents: contents}
	if carrier, ok := c.observer.(agent.Carrier); ok {
		in.Context = carrier.Carry(ctx)
	}
	wr, err := c.c.ExecuteWorkflow(ctx, opts, WorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &started):
		return nil, fmt.Errorf("temporalagent: starting a run of %q with ID %q: %w (%w)", agentName, opts.ID, ErrRunExists, err)
	case err != nil:
		return nil, fmt.Errorf("temporalagent: starting a run of %q: %w", agentName, err)
	}
	return &Run{c: c, id: wr.GetID()}, nil
}

// GetRun returns the run with the given ID (the one Start chose, or
// opts.ID), started by this process or another.
func (c *Client) GetRun(id string) *Run { return &Run{c: c, id: id} }

// A Run is a durable run, possibly of many workflow executions when it
// continued as new: its methods always address the latest.
type Run struct {
	c  *Client
	id string
}

// ID returns the run's ID, its workflow ID.
func (r *Run) ID() string { return r.id }

// Result waits until the run is over and returns its Result and error, as
// agent.Run would have: the same Result (with the tools' outputs as JSON
// decodes them, and no Go error in ToolResult.Err), and errors.Is/As find
// agent.ErrMaxTurns, *agent.StopError, *agent.ModelError (wrapping the
// genai.APIError), context.Canceled for a cancelled run, and this
// package's errors. Result is never nil. When ctx is done first, Result
// returns ctx's error and the run goes on.
func (r *Run) Result(ctx context.Context) (*agent.Result, error) {
	var out runOutput
	err := r.c.c.GetWorkflow(ctx, r.id, "").Get(ctx, &out)
	return outcome(err, &out)
}

// TypedResult is [Run.Result] for a run of a typed agent (one that
// agent.Typed returned, registered as any other): it waits until the run
// is over and returns its answer decoded into T, as agent.RunTyped returns
// it, with the Result, whose Output holds the same T. A run that fails
// returns the error agent.RunTyped would have, an *agent.OutputError when
// no valid answer came. A run of an agent that makes no typed runs fails
// with an error saying so.
//
//	inv, res, err := temporalagent.TypedResult[Invoice](ctx, run)
func TypedResult[T any](ctx context.Context, r *Run) (T, *agent.Result, error) {
	var (
		v   T
		out runOutput
	)
	res, err := outcome(r.c.c.GetWorkflow(ctx, r.id, "").Get(ctx, &out), &out)
	if err != nil {
		return v, res, err
	}
	if len(out.Output) == 0 {
		return v, res, fmt.Errorf("temporalagent: run %s gave no typed answer: its agent makes no typed runs (see agent.Typed)", r.id)
	}
	if err := json.Unmarshal(out.Output, &v); err != nil {
		return v, res, fmt.Errorf("temporalagent: run %s: its answer does not decode into %T: %w", r.id, v, err)
	}
	res.Output = v
	return v, res, nil
}

// outcome returns the Result and error of a run, given the workflow's
// error and, when there is none, its output.
func outcome(err error, out *runOutput) (*agent.Result, error) {
	if err == nil {
		return out.result(), nil
	}
	var (
		appErr   *temporal.ApplicationError
		canceled *temporal.CanceledError
		f        failure
	)
	switch {
	case errors.As(err, &appErr) && appErr.Type() == errTypeRun:
		if appErr.Details(out, &f) != nil {
			return &agent.Result{}, err
		}
		res, err := out.result(), f.err()
		if oe, ok := err.(*agent.OutputError); ok {
			oe.Result = res
		}
		return res, err
	case errors.As(err, &canceled):
		if canceled.Details(out, &f) != nil {
			f = failure{Kind: failCanceled}
		}
		return out.result(), fmt.Errorf("%w (%w)", f.err(), err)
	}
	return &agent.Result{}, fmt.Errorf("temporalagent: %w", err)
}

// Progress returns how far the run is: its turn, its usage so far, and the
// calls that wait for approval.
func (r *Run) Progress(ctx context.Context) (*Progress, error) {
	v, err := r.c.c.QueryWorkflow(ctx, r.id, "", ProgressQueryName)
	if err != nil {
		return nil, fmt.Errorf("temporalagent: run %s: progress: %w", r.id, err)
	}
	var p Progress
	if err := v.Get(&p); err != nil {
		return nil, fmt.Errorf("temporalagent: run %s: progress: %w", r.id, err)
	}
	return &p, nil
}

// Approve lets the call waiting under id (see PendingApproval.ID) run.
func (r *Run) Approve(ctx context.Context, id string) error {
	return r.Decide(ctx, Decision{ID: id, Approve: true})
}

// Deny refuses the call waiting under id: the model receives
// {"error": reason}, or a message saying the call was denied when reason
// is empty.
func (r *Run) Deny(ctx context.Context, id, reason string) error {
	return r.Decide(ctx, Decision{ID: id, Reason: reason})
}

// Decide sends a decision about a call that waits for approval, and
// returns once the run has recorded it. A decision about an id that waits
// for none is rejected with ErrUnknownApproval, and one about a call that
// was already decided (by a client, or by its deadline) with ErrDecided;
// a rejected decision leaves no trace in the run's history.
func (r *Run) Decide(ctx context.Context, d Decision) error {
	h, err := r.c.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   r.id,
		UpdateName:   DecideUpdateName,
		Args:         []any{d},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("temporalagent: run %s: %w", r.id, decisionError(err, d))
}

// decisionError returns the error of a rejected decision: this package's
// own when the validator rejected it.
func decisionError(err error, d Decision) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case errTypeUnknownID:
			return fmt.Errorf("%w: %q", ErrUnknownApproval, d.ID)
		case errTypeDecided:
			return fmt.Errorf("%w: %q", ErrDecided, d.ID)
		}
	}
	return fmt.Errorf("decision about %q: %w", d.ID, err)
}

// Cancel asks the run to stop: running tools are cancelled (through their
// heartbeats), and Result returns the partial result with an error that
// wraps context.Canceled.
func (r *Run) Cancel(ctx context.Context) error {
	if err := r.c.c.CancelWorkflow(ctx, r.id, ""); err != nil {
		return fmt.Errorf("temporalagent: run %s: cancel: %w", r.id, err)
	}
	return nil
}

// Progress is how far a run is.
type Progress struct {
	// Turn is the model turn under way, or the last one, from 0 over the
	// whole run.
	Turn int

	// Turns counts the turns completed.
	Turns int

	// Usage sums the tokens of the turns completed, those of the agents
	// their calls ran (agent.AsTool) included.
	Usage agent.Usage

	// Pending lists the calls that wait for a decision, in call order.
	Pending []PendingApproval

	// Done reports that the run is over.
	Done bool
}

// PendingApproval is a call that waits for approval.
type PendingApproval struct {
	// ID names the call in a Decision: "turn.index", e.g. "0.1".
	ID string

	// Turn and Index place the call in the run.
	Turn, Index int

	// Call is the call, as the model made it.
	Call *genai.FunctionCall

	// Since is when the wait began; Deadline is when the call is denied
	// if it is still undecided (zero: no deadline).
	Since, Deadline time.Time
}

// Decision decides about a call that waits for approval.
type Decision struct {
	// ID is the call's PendingApproval.ID.
	ID string

	// Approve lets the call run; otherwise it is denied.
	Approve bool

	// Reason is what the model receives, as {"error": reason}, when the
	// call is denied; at most 4 KiB. Empty means a message saying the
	// call was denied.
	Reason string `json:",omitempty"`
}
