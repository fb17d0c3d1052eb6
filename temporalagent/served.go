package temporalagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/session"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/genai"
)

// Names of what a served run adds to the workflow (see [Runner]).
const (
	// LogQueryName is the query that reads a served run's log.
	LogQueryName = "toolnexus.served.log"
	// ServedDecideUpdateName is the update that hands a served run
	// decisions about its pending calls, all or none.
	ServedDecideUpdateName = "toolnexus.served.decide"
	// SaveActivityName is the activity that saves a served run to its
	// thread (see [RegisterStore]).
	SaveActivityName = "toolnexus.served.save"
)

// maxQueryRecords bounds the records one log query returns.
const maxQueryRecords = 512

// Error types of the served decide update's validator.
const (
	errTypeCallUnknown = "toolnexus.CallUnknown"
	errTypeCallDecided = "toolnexus.CallDecided"
	errTypeCallExpired = "toolnexus.CallExpired"
)

// servedInput is what a served run starts with, besides its contents.
type servedInput struct {
	RunID        string
	Thread       string // the store's id of the thread
	Conversation string // the client's
	User         string
	Loaded       int           // the contents of the thread before the run: history[:Loaded]
	Timeout      time.Duration // the run's bound, its waits included; 0: none
	Started      time.Time
	// Tools are the browser tools the request declared (browser.go).
	Tools []agentserver.ToolDecl `json:",omitempty"`
}

// servedLog is the state of a served run: its log, its pending calls and
// what was decided. It is workflow state, rebuilt by replay and carried
// over continue-as-new, never one history event per record.
type servedLog struct {
	In      servedInput
	Records []agentserver.Record
	Done    *agentserver.Done `json:",omitempty"`
	// Waiting lists the calls of the turn's pause that are not decided.
	Waiting []agentserver.Pending `json:",omitempty"`
	// Settled maps the calls decided to "decided" or "expired".
	Settled map[string]string `json:",omitempty"`
	// TimedOut is set when the run's Timeout cancelled it.
	TimedOut bool `json:",omitempty"`
}

// LogView is what the log query answers: the run, and its records from
// the offset asked for (at most 512 of them).
type LogView struct {
	Info agentserver.RunInfo
	// User is Info.User, which RunInfo's JSON leaves out.
	User    string
	Records []agentserver.Record
}

// servedDecision is the served decide update's argument.
type servedDecision struct {
	RunID     string
	Decisions []agentserver.Decision
}

// callID names a call of a served run in every protocol: the run's id,
// then its approval id, so that it is unique in the thread.
func callID(runID string, turn, index int) string { return runID + "." + approvalID(turn, index) }

// add appends a record, stamped with workflow time.
func (s *servedLog) add(ctx workflow.Context, rec agentserver.Record) {
	rec.Offset = int64(len(s.Records))
	rec.Time = workflow.Now(ctx)
	s.Records = append(s.Records, rec)
}

// state is where the run stands.
func (s *servedLog) state() agentserver.State {
	switch {
	case s.Done != nil:
		return s.Done.State
	case len(s.Waiting) > 0:
		return agentserver.StateWaiting
	}
	return agentserver.StateRunning
}

// info describes the run.
func (s *servedLog) info() agentserver.RunInfo {
	info := agentserver.RunInfo{ID: s.In.RunID, Thread: s.In.Conversation, User: s.In.User, State: s.state(),
		Started: s.In.Started, Len: int64(len(s.Records)), Done: s.Done}
	if s.Done != nil {
		info.Ended = s.Records[len(s.Records)-1].Time
	}
	if info.State == agentserver.StateWaiting {
		info.Pending = s.Waiting
	}
	return info
}

// view answers the log query.
func (s *servedLog) view(from int64) (*LogView, error) {
	if from < 0 || from > int64(len(s.Records)) {
		return nil, fmt.Errorf("temporalagent: offset %d is outside the log (0 to %d)", from, len(s.Records))
	}
	end := min(int64(len(s.Records)), from+maxQueryRecords)
	return &LogView{Info: s.info(), User: s.In.User, Records: s.Records[from:end]}, nil
}

// serveBegin sets up a served run's log and handlers: a new run's log
// starts with its KindStart record.
func (r *wfRun) serveBegin(in runInput) error {
	if in.State != nil && in.State.Served != nil {
		r.served = in.State.Served
	} else {
		r.served = &servedLog{In: *in.Served, Settled: map[string]string{}}
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindStart})
	}
	if t := r.served.In.Timeout; t > 0 {
		ctx, cancel := workflow.WithCancel(r.ctx)
		left := r.served.In.Started.Add(t).Sub(workflow.Now(r.ctx))
		workflow.Go(ctx, func(ctx workflow.Context) {
			if workflow.NewTimer(ctx, max(left, time.Millisecond)).Get(ctx, nil) == nil {
				r.served.TimedOut = true
				cancel()
			}
		})
		r.ctx = ctx
	}
	if err := workflow.SetQueryHandler(r.ctx, LogQueryName, r.served.view); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(r.ctx, ServedDecideUpdateName, r.serveDecide,
		workflow.UpdateHandlerOptions{Validator: r.serveValidate})
}

// serveModel records a turn's model answer: its thoughts and its text,
// each in one record (the model activity returns the answer whole), and
// its calls.
func (r *wfRun) serveModel(turn int, content *genai.Content, plans []callPlan) {
	if r.served == nil || content == nil {
		return
	}
	var thought, text strings.Builder
	for _, p := range content.Parts {
		switch {
		case p == nil || p.Text == "":
		case p.Thought:
			thought.WriteString(p.Text)
		default:
			text.WriteString(p.Text)
		}
	}
	if thought.Len() > 0 {
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindThought, Turn: turn, Text: thought.String()})
	}
	if text.Len() > 0 {
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindText, Turn: turn, Text: text.String()})
	}
	for i, call := range agent.FunctionCalls(content) {
		c := r.serveCall(turn, i, call)
		switch {
		case i < len(plans) && plans[i].Browser:
			c.Wait = agentserver.WaitBrowser
		case i < len(plans) && plans[i].Approval:
			c.Wait = agentserver.WaitApproval
		}
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindToolCall, Turn: turn, Call: c})
	}
}

func (r *wfRun) serveCall(turn, i int, call *genai.FunctionCall) *agentserver.Call {
	args, err := json.Marshal(call.Args)
	if err != nil || call.Args == nil {
		args = []byte("{}")
	}
	return &agentserver.Call{ID: callID(r.served.In.RunID, turn, i), Name: call.Name, Args: args}
}

// maxErrorText bounds the error text of a call's result record.
const maxErrorText = 4 << 10

// serveResult records a call's answer.
func (r *wfRun) serveResult(turn, i int, res *agent.ToolResult, denied bool) {
	if r.served == nil || res.Call == nil {
		return
	}
	cr := &agentserver.CallResult{Duration: res.Duration}
	if res.IsError {
		msg := fmt.Sprint(res.Output)
		if len(msg) > maxErrorText {
			msg = msg[:maxErrorText] + "…"
		}
		cr.Error, cr.Denied = msg, denied
	} else if out, err := json.Marshal(res.Output); err == nil {
		cr.Output = out
	} else {
		cr.Output = []byte(`"(the output is not JSON)"`)
	}
	r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindToolResult, Turn: turn, Call: r.serveCall(turn, i, res.Call), Result: cr})
}

// servePause records the calls of a turn that wait for approval, once
// the turn's other calls have their results.
func (r *wfRun) servePause(turn int) {
	if r.served == nil {
		return
	}
	r.served.Waiting = nil
	for _, p := range r.pending {
		if p.decided {
			continue
		}
		c := r.serveCall(turn, p.Index, p.Call)
		c.Wait = p.kind()
		r.served.Waiting = append(r.served.Waiting, agentserver.Pending{Call: *c, Kind: c.Wait, Deadline: p.Deadline})
	}
	if len(r.served.Waiting) > 0 {
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindPause, Turn: turn, Pending: r.served.Waiting})
	}
}

// serveExpired records the denial of the calls whose deadline passed.
func (r *wfRun) serveExpired(turn int) {
	if r.served == nil || r.ctx.Err() != nil {
		return
	}
	for _, p := range r.pending {
		if p.decided {
			continue
		}
		id := callID(r.served.In.RunID, turn, p.Index)
		r.served.Settled[id] = "expired"
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindDecision, Turn: turn,
			Decision: &agentserver.Decision{CallID: id, Expired: true, Kind: p.kind()}})
	}
	r.served.Waiting = nil
}

// serveValidate accepts decisions about the run's own pending calls, all
// or none, and rejects any other: a rejected update leaves no trace in
// the history.
func (r *wfRun) serveValidate(_ workflow.Context, d servedDecision) error {
	if d.RunID != r.served.In.RunID || r.served.Done != nil {
		return temporal.NewApplicationError("the run waits for no decision", errTypeCallUnknown)
	}
	if len(d.Decisions) == 0 {
		return temporal.NewApplicationError("no decision", errTypeCallUnknown)
	}
	seen := map[string]bool{}
	for _, dec := range d.Decisions {
		switch r.served.Settled[dec.CallID] {
		case "expired":
			return temporal.NewApplicationError(fmt.Sprintf("call %q was not decided in time; it was denied", dec.CallID), errTypeCallExpired)
		case "decided":
			return temporal.NewApplicationError(fmt.Sprintf("call %q was decided already", dec.CallID), errTypeCallDecided)
		}
		if seen[dec.CallID] {
			return temporal.NewApplicationError(fmt.Sprintf("call %q is decided twice", dec.CallID), errTypeCallDecided)
		}
		seen[dec.CallID] = true
		p := r.waiting(dec.CallID)
		if p == nil {
			return temporal.NewApplicationError(fmt.Sprintf("no call %q waits for a decision", dec.CallID), errTypeCallUnknown)
		}
		if err := checkDecision(p, dec); err != nil {
			return err
		}
	}
	return nil
}

// waiting returns the pending call that id names, while it waits.
func (r *wfRun) waiting(id string) *pendingCall {
	prefix := r.served.In.RunID + "."
	if !strings.HasPrefix(id, prefix) {
		return nil
	}
	p := r.find(id[len(prefix):])
	if p == nil || p.decided || !r.isWaiting(id) {
		return nil
	}
	return p
}

func (r *wfRun) isWaiting(id string) bool {
	for _, p := range r.served.Waiting {
		if p.Call.ID == id {
			return true
		}
	}
	return false
}

// serveDecide records decisions that serveValidate accepted, and returns
// the offset of the first record they add.
func (r *wfRun) serveDecide(ctx workflow.Context, d servedDecision) (int64, error) {
	if err := r.serveValidate(ctx, d); err != nil {
		return 0, err
	}
	at := int64(len(r.served.Records))
	turn := r.turn
	for _, dec := range d.Decisions {
		p := r.waiting(dec.CallID)
		p.decided, p.approve, p.reason = true, dec.Approved, dec.Reason
		rec := agentserver.Decision{CallID: dec.CallID, Approved: dec.Approved, Reason: dec.Reason, Kind: p.kind()}
		if p.browser {
			p.approve, p.output, p.failed = false, dec.Output, dec.Error
			rec = agentserver.Decision{CallID: dec.CallID, Output: dec.Output, Error: dec.Error, Kind: p.kind()}
		}
		r.served.Settled[dec.CallID] = "decided"
		r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindDecision, Turn: turn, Decision: &rec})
	}
	r.servePause(turn) // the calls that still wait, if any
	return at, nil
}

// serveTurnEnd records the end of a turn.
func (r *wfRun) serveTurnEnd(turn int, t *agent.Turn) {
	if r.served == nil {
		return
	}
	u := t.Usage
	r.served.add(r.ctx, agentserver.Record{Kind: agentserver.KindStepEnd, Turn: turn, Usage: &u})
}

// serveEnd saves a served run, as far as it went, and records its end.
// It runs on a disconnected context, so that a cancelled run is saved
// too; the run's thread is free once the save is done.
func (r *wfRun) serveEnd(runErr error, canceled bool) {
	if r.served == nil || r.served.Done != nil {
		return
	}
	ctx, cancel := workflow.NewDisconnectedContext(r.ctx)
	defer cancel()
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
		Summary:             "save the run",
	})
	in := r.served.In
	var contents []*genai.Content
	if in.Loaded <= len(r.history) {
		contents = r.history[in.Loaded:]
	}
	saveErr := workflow.ExecuteActivity(ctx, SaveActivityName, saveInput{Thread: in.Thread, RunID: in.RunID, Contents: contents}).Get(ctx, nil)
	res := r.result()
	done := &agentserver.Done{State: agentserver.StateDone, Text: res.Text, Output: r.answer, Usage: res.Usage}
	switch {
	case saveErr != nil:
		done.State, done.Error = agentserver.StateFailed, &agentserver.Failure{Code: "store_error", Message: "the conversation could not be saved"}
	case r.served.TimedOut:
		done.State, done.Error = agentserver.StateFailed, &agentserver.Failure{Code: "timeout", Message: "the run took too long"}
	case canceled:
		done.State, done.Error = agentserver.StateCancelled, &agentserver.Failure{Code: "cancelled", Message: "the run was cancelled"}
	case runErr != nil:
		done.State, done.Error = agentserver.StateFailed, agentserver.FailureOf(runErr)
	}
	if saveErr != nil {
		workflow.GetLogger(r.ctx).Error("temporalagent: saving the served run", "run", in.RunID, "error", saveErr)
	}
	r.served.Waiting = nil
	r.served.Done = done
	r.served.add(ctx, agentserver.Record{Kind: agentserver.KindDone, Turn: max(0, len(r.turns)-1), Done: done})
}

// saveInput is the save activity's input.
type saveInput struct {
	Thread, RunID string
	Contents      []*genai.Content
}

// RegisterStore registers, on a worker, the activity that saves the runs
// a [Runner] serves to store: the store the servers' agentserver.Config
// names. Call it on every worker of the Runner's task queue, with
// [Register].
func RegisterStore(w worker.Registry, store session.Journaler) error {
	if store == nil {
		return errors.New("temporalagent: RegisterStore: the store is nil")
	}
	w.RegisterActivityWithOptions(func(ctx context.Context, in saveInput) error {
		err := store.EndRun(ctx, in.Thread, in.RunID, session.Claim{}, in.Contents)
		if errors.Is(err, session.ErrNoRun) && activity.GetInfo(ctx).Attempt > 1 {
			// An attempt before this one saved it, and its answer was
			// lost: the run is saved once.
			return nil
		}
		if errors.Is(err, session.ErrNoRun) {
			return temporal.NewNonRetryableApplicationError(err.Error(), "toolnexus.NoRun", err)
		}
		return err
	}, activity.RegisterOptions{Name: SaveActivityName})
	return nil
}
