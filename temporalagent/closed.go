package temporalagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/session"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genai"
)

// A run that is over is read without a worker: see the package
// documentation, "Serving", on runs that are over.

// MaxFinalViewBytes bounds what a served run leaves in its workflow's
// result for readers that come once the workflow is closed: its RunInfo
// and its whole log when that fits, its done record otherwise, that
// record's text cut to fit (the thread in the store holds the answer
// whole).
const MaxFinalViewBytes = 256 << 10

// finalLog is what a served run leaves, once over, in its workflow's
// result (runOutput.Served).
type finalLog struct {
	LogView
	// Settled is servedLog.Settled, kept when the log is cut to its done
	// record: how the run's calls were decided, for a late decision.
	Settled map[string]string `json:",omitempty"`
}

// final is what the run leaves once over: its view with its whole log
// when that fits within budget bytes (and MaxFinalViewBytes), its done
// record alone otherwise, with how its calls were decided (when that
// takes a quarter of the budget at most), that record's typed output
// left out and then its text cut when it does not fit. Info.Done is
// left nil, since the done record holds it: the reader sets it back
// (finalView). nil while the run is not over.
func (s *servedLog) final(budget int) *finalLog {
	if s == nil || s.Done == nil {
		return nil
	}
	budget = min(budget, MaxFinalViewBytes)
	v := &finalLog{LogView: LogView{Info: s.info(), User: s.In.User, Records: s.Records}}
	v.Info.Done = nil
	if jsonSize(v) <= budget {
		return v
	}
	last := s.Records[len(s.Records)-1]
	v.Records = []agentserver.Record{last}
	if len(s.Settled) > 0 && jsonSize(s.Settled) <= budget/4 {
		v.Settled = s.Settled
	}
	size := jsonSize(v)
	if size <= budget {
		return v
	}
	// The done record's text (and typed output) is what makes it large.
	done := *last.Done
	last.Done = &done
	v.Records[0] = last
	if size-len(done.Output) <= budget {
		done.Output = nil
		return v
	}
	done.Output = nil
	over := jsonSize(v) - budget + len("…") + 8
	done.Text = cutText(done.Text, len(done.Text)-over) + "…"
	return v
}

// cutText returns s's first n bytes or fewer, cut at a rune's boundary.
func cutText(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// view reads the log of the thread's latest run, from offset: while its
// workflow is open, with the log query; once it is closed, from what
// the workflow left (closedView), so that a run that is over is read
// without any worker.
func (r *Runner) view(ctx context.Context, wid string, from int64) (*LogView, error) {
	lv, _, err := r.read(ctx, wid, from)
	return lv, err
}

// read is view, and how the run's calls were settled when the view
// comes from a final view cut to its done record (nil otherwise: the
// log's decision records say it).
func (r *Runner) read(ctx context.Context, wid string, from int64) (*LogView, map[string]string, error) {
	resp, err := r.cfg.Client.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
		WorkflowID: wid, QueryType: LogQueryName, Args: []any{from},
		QueryRejectCondition: enums.QUERY_REJECT_CONDITION_NOT_OPEN,
	})
	if err == nil && resp.QueryRejected != nil {
		return r.closedView(ctx, wid, from)
	}
	if err != nil {
		return nil, nil, queryError(ctx, err)
	}
	lv, err := decodeView(resp.QueryResult)
	return lv, nil, err
}

// queryView reads the log with the log query alone: a query of a closed
// workflow waits for a worker of its queue to replay it.
func (r *Runner) queryView(ctx context.Context, wid string, from int64) (*LogView, error) {
	v, err := r.cfg.Client.QueryWorkflow(ctx, wid, "", LogQueryName, from)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	return decodeView(v)
}

func queryError(ctx context.Context, err error) error {
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf), isUnknownQuery(err):
		// No workflow, or one that is not a served run.
		return noRun()
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return unavailable("reading a run", err)
}

func noRun() error {
	return &agentserver.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such run", Err: agentserver.ErrNotFound}
}

func decodeView(v converter.EncodedValue) (*LogView, error) {
	var lv LogView
	if v == nil || !v.HasValue() {
		return nil, noRun()
	}
	if err := v.Get(&lv); err != nil {
		return nil, fmt.Errorf("temporalagent: reading a run: %w", err)
	}
	lv.Info.User = lv.User
	return &lv, nil
}

// closedView reads the latest run of a closed workflow from its result:
// the final view the run left there (servedLog.final), read from the
// workflow's close event without any worker. A workflow that closed
// without ending its run (terminated, timed out) is read as a run that
// failed, from its input and how it closed. A run whose workflow left no
// final view (one of a worker of an older version) is read with the log
// query, which waits for a worker. The execution read is the one
// DescribeWorkflowExecution names: a run that starts meanwhile is not
// waited for.
func (r *Runner) closedView(ctx context.Context, wid string, from int64) (*LogView, map[string]string, error) {
	d, err := r.cfg.Client.DescribeWorkflowExecution(ctx, wid, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return nil, nil, noRun()
	case err != nil && ctx.Err() != nil:
		return nil, nil, ctx.Err()
	case err != nil:
		return nil, nil, unavailable("reading a run", err)
	}
	exec := d.GetWorkflowExecutionInfo()
	if exec.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		// A new run started since the query was refused.
		lv, err := r.queryView(ctx, wid, from)
		return lv, nil, err
	}
	runID, ended := exec.GetExecution().GetRunId(), exec.GetCloseTime().AsTime()
	var out runOutput
	err = r.cfg.Client.GetWorkflow(ctx, wid, runID).Get(ctx, &out)
	var (
		appErr  *temporal.ApplicationError
		canErr  *temporal.CanceledError
		termErr *temporal.TerminatedError
		timeErr *temporal.TimeoutError
	)
	switch {
	case err == nil:
	case errors.As(err, &notFound):
		return nil, nil, noRun()
	case errors.As(err, &appErr):
		_ = appErr.Details(&out) // a failure of another kind has none
	case errors.As(err, &canErr):
		_ = canErr.Details(&out)
	case errors.As(err, &termErr):
		lv, err := r.abortedView(ctx, wid, runID, ended, &agentserver.Failure{Code: "terminated", Message: "the run's workflow was terminated"})
		return lv, nil, err
	case errors.As(err, &timeErr):
		lv, err := r.abortedView(ctx, wid, runID, ended, &agentserver.Failure{Code: "timeout", Message: "the run's workflow timed out"})
		return lv, nil, err
	case ctx.Err() != nil:
		return nil, nil, ctx.Err()
	default:
		return nil, nil, unavailable("reading a run", err)
	}
	if out.Served == nil {
		lv, err := r.queryView(ctx, wid, from)
		return lv, nil, err
	}
	lv, err := finalView(&out.Served.LogView, from, false)
	return lv, out.Served.Settled, err
}

// finalView answers from offset from a final view: the records at or
// after from. An aborted run's view (its done record alone, made by the
// reader) answers its done record at any offset.
func finalView(v *LogView, from int64, aborted bool) (*LogView, error) {
	if len(v.Records) == 0 || v.Records[len(v.Records)-1].Done == nil {
		return nil, errors.New("temporalagent: reading a run: its final view has no done record")
	}
	if from < 0 || (from > v.Info.Len && !aborted) {
		return nil, fmt.Errorf("temporalagent: offset %d is outside the log (0 to %d)", from, v.Info.Len)
	}
	out := *v
	out.Info.User = v.User
	out.Info.Done = v.Records[len(v.Records)-1].Done
	out.Records = nil
	for _, rec := range v.Records {
		if (rec.Offset >= from || aborted) && len(out.Records) < maxQueryRecords {
			out.Records = append(out.Records, rec)
		}
	}
	return &out, nil
}

// abortedView makes the view of a run whose workflow closed before the
// run ended (so it left no final view, and saved nothing): its done
// record, with why, at offset 0, read from the input of the workflow's
// execution runID, which ended then.
func (r *Runner) abortedView(ctx context.Context, wid, runID string, ended time.Time, why *agentserver.Failure) (*LogView, error) {
	in, err := r.servedInputOf(ctx, wid, runID)
	if err != nil {
		return nil, err
	}
	done := &agentserver.Done{State: agentserver.StateFailed, Error: why}
	v := &LogView{User: in.User,
		Info:    agentserver.RunInfo{ID: in.RunID, Thread: in.Conversation, State: done.State, Started: in.Started, Ended: ended, Len: 1},
		Records: []agentserver.Record{{Offset: 0, Kind: agentserver.KindDone, Time: ended, Done: done}}}
	return finalView(v, 0, true)
}

// servedInputOf reads what the served run of the workflow's execution
// runID started with, from that execution's first event.
func (r *Runner) servedInputOf(ctx context.Context, wid, runID string) (*servedInput, error) {
	it := r.cfg.Client.GetWorkflowHistory(ctx, wid, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, noRun()
	}
	ev, err := it.Next()
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, noRun()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, unavailable("reading a run", err)
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	var in runInput
	if attrs == nil || converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &in) != nil {
		return nil, noRun()
	}
	switch {
	case in.Served != nil:
		return in.Served, nil
	case in.State != nil && in.State.Served != nil:
		return &in.State.Served.In, nil
	}
	return nil, noRun() // not a served run
}

// release frees a thread whose journal outlived its run: the journal of
// a run whose workflow closed without saving it (terminated, timed out,
// or its save failed for good). The run's user message is saved to the
// thread (what the run made besides is in the workflow only), and the
// journal dropped. It reports whether it dropped one.
func (r *Runner) release(ctx context.Context, thread string) bool {
	j, err := r.cfg.Store.LoadRun(ctx, thread)
	if err != nil || len(j.Entries) == 0 {
		return false
	}
	var entry journalEntry
	if json.Unmarshal(j.Entries[0], &entry) != nil || entry.Temporal != workflowID(thread) {
		return false
	}
	lv, err := r.view(ctx, entry.Temporal, 0)
	if err != nil || lv.Info.ID != j.Run || !lv.Info.State.Over() {
		return false // the run goes on, or is not known yet: the thread is busy
	}
	var contents []*genai.Content
	if entry.Message != nil {
		contents = []*genai.Content{entry.Message}
	}
	err = r.cfg.Store.EndRun(ctx, thread, j.Run, session.Claim{}, contents)
	return err == nil || errors.Is(err, session.ErrNoRun)
}

// isUnknownQuery reports whether err is the answer of a workflow that
// has no log query: not a served run.
func isUnknownQuery(err error) bool { return strings.Contains(err.Error(), "unknown queryType") }

// settledError is the error of a late decision about a call of a run
// that is over, from how the run's calls were settled.
func settledError(settled map[string]string, decisions []agentserver.Decision) error {
	for _, d := range decisions {
		switch settled[d.CallID] {
		case "expired":
			return &agentserver.Error{Status: http.StatusConflict, Code: "expired", Message: fmt.Sprintf("call %q was not decided in time; it was denied", d.CallID), Err: agentserver.ErrExpired}
		case "decided":
			return &agentserver.Error{Status: http.StatusConflict, Code: "decided", Message: fmt.Sprintf("call %q was decided already", d.CallID), Err: agentserver.ErrDecided}
		}
	}
	return &agentserver.Error{Status: http.StatusConflict, Code: "unknown_call", Message: "the run is over: no call waits for a decision", Err: agentserver.ErrUnknownCall}
}
