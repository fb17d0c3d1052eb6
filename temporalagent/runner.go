package temporalagent

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/session"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genai"
)

// DefaultPollInterval is how often a cursor of a [Runner] asks the run
// for new records while it waits for them.
const DefaultPollInterval = 50 * time.Millisecond

// MaxWaitingPollInterval is how seldom, at the least, a cursor asks a run
// that waits for decisions (agentserver.StateWaiting) for new records:
// while such a run has nothing new, each poll waits twice as long as the
// last, from the PollInterval up to this. A waiting run may wait days, and
// each poll is a query that costs Temporal and a worker milliseconds of
// CPU; the decision's own response reads from a cursor of its own, at
// the PollInterval.
const MaxWaitingPollInterval = time.Second

// DefaultUnreachableTimeout is how long a cursor of a [Runner] goes on
// asking for a run's records while Temporal does not answer, before it
// fails.
const DefaultUnreachableTimeout = 30 * time.Second

// RunnerConfig configures a [Runner].
type RunnerConfig struct {
	// Client reaches the Temporal server. Required; the Runner does not
	// close it.
	Client client.Client
	// TaskQueue is the queue of the workers that hold the agent
	// ([Register]) and the store ([RegisterStore]). Required.
	TaskQueue string
	// Agent names the agent the runs run, as the workers registered it.
	// Required.
	Agent string
	// Store is the store of the servers' threads (their
	// agentserver.Config.Store): the Runner loads a thread's history from
	// it and takes the thread in it (session.Journaler.BeginRun) when a
	// run starts; the workers save the run to it. Required.
	Store session.Journaler
	// RunTimeout bounds a run, its waits for decisions included: it is
	// cancelled then, and saved as far as it went. 0 means
	// agentserver.DefaultRunTimeout, less than 0 no bound.
	RunTimeout time.Duration
	// PollInterval is how often a waiting cursor asks for new records;
	// 0 means DefaultPollInterval.
	PollInterval time.Duration
	// KeepFinished is how long Runs lists a run that is over (Lookup
	// finds it for as long as Temporal keeps its workflow). 0 (or less) means
	// agentserver.DefaultKeepFinished.
	KeepFinished time.Duration
	// MaxRunsPerUser bounds the runs in flight of one user across the
	// fleet, those that wait for decisions included, counted from the
	// store's journals: more are refused with 429 (too_many_runs). 0
	// means agentserver.DefaultMaxRunsPerUser; less than 0, no bound.
	// See the package documentation, "Limits of a fleet".
	MaxRunsPerUser int
	// UnreachableTimeout bounds how long a cursor goes on asking for new
	// records while Temporal does not answer (its polls fail or time
	// out), asking every second or so, before its Next fails with a 503
	// runner_unavailable *agentserver.Error, which a stream sends as the
	// protocol's error: the run itself goes on in Temporal, and a client
	// attaches again once Temporal answers. 0 means
	// DefaultUnreachableTimeout. A query waits for the workflow task in
	// flight, which a model call made as a local activity (the default)
	// holds for as long as the call lasts: a poll that times out while
	// Temporal answers that the workflow runs (DescribeWorkflowExecution,
	// which needs no worker) counts as a busy run, not an outage, and the
	// cursor waits on.
	UnreachableTimeout time.Duration
}

// A Runner serves an agentserver.Server's runs as workflows on Temporal:
// set it as agentserver.Config.Runner on every instance of the server, and
// any instance answers any request about any run. See the package
// documentation, "Serving".
type Runner struct {
	cfg     RunnerConfig
	closing atomic.Bool
	readers readers
}

var (
	_ agentserver.Runner    = (*Runner)(nil)
	_ agentserver.RunLister = (*Runner)(nil)
)

// NewRunner returns a Runner. It checks its config, not the server.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("temporalagent: NewRunner: the Client is nil")
	case cfg.TaskQueue == "":
		return nil, errors.New("temporalagent: NewRunner: the TaskQueue is empty")
	case cfg.Agent == "":
		return nil, errors.New("temporalagent: NewRunner: the Agent is empty")
	case cfg.Store == nil:
		return nil, errors.New("temporalagent: NewRunner: the Store is nil")
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = agentserver.DefaultRunTimeout
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.KeepFinished <= 0 {
		cfg.KeepFinished = agentserver.DefaultKeepFinished
	}
	if cfg.MaxRunsPerUser == 0 {
		cfg.MaxRunsPerUser = agentserver.DefaultMaxRunsPerUser
	}
	if cfg.UnreachableTimeout <= 0 {
		cfg.UnreachableTimeout = DefaultUnreachableTimeout
	}
	return &Runner{cfg: cfg, readers: readers{n: map[string]int{}}}, nil
}

// workflowID is the id of the workflow of a thread's runs: one at a time.
func workflowID(thread string) string { return "agentserver/" + thread }

// newRunID names a run: a random part, then the thread it belongs to, so
// that any instance finds the run's workflow from its id alone.
func newRunID(thread string) string {
	return "trun_" + rand.Text()[:16] + "_" + base64.RawURLEncoding.EncodeToString([]byte(thread))
}

// threadOf returns the thread a run id names.
func threadOf(runID string) (string, error) {
	rest, ok := strings.CutPrefix(runID, "trun_")
	if !ok || len(rest) < 18 || rest[16] != '_' {
		return "", notFound(runID)
	}
	b, err := base64.RawURLEncoding.DecodeString(rest[17:])
	if err != nil || len(b) == 0 {
		return "", notFound(runID)
	}
	return string(b), nil
}

func notFound(runID string) error {
	return &agentserver.Error{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf("run %q not found", runID), Err: agentserver.ErrNotFound}
}

// unavailable is the error of a request that Temporal did not answer.
func unavailable(what string, err error) error {
	return &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "runner_unavailable",
		Message: "the run service is unavailable; try again later", Err: fmt.Errorf("temporalagent: %s: %w", what, err)}
}

// journalEntry is the entry a served run's journal begins with: it marks
// the thread as taken, and holds the user's message.
type journalEntry struct {
	Temporal string         `json:"temporal"` // the workflow's id
	Run      string         `json:"run"`
	Message  *genai.Content `json:"message"`
}

// Start implements agentserver.Runner: it takes the thread in the store,
// loads its history and starts the thread's workflow.
func (r *Runner) Start(ctx context.Context, in *agentserver.Input) (agentserver.RunInfo, agentserver.Cursor, error) {
	if r.closing.Load() {
		return agentserver.RunInfo{}, nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "closing",
			Message: "the server is shutting down", Err: agentserver.ErrClosed}
	}
	if err := checkBrowserTools(in.Tools); err != nil {
		return agentserver.RunInfo{}, nil, err
	}
	id := newRunID(in.Thread)
	wid := workflowID(in.Thread)
	entry, err := json.Marshal(journalEntry{Temporal: wid, Run: id, Message: in.Message})
	if err != nil {
		return agentserver.RunInfo{}, nil, agentserver.BadRequest(0, "bad_message", "the message does not encode: %v", err)
	}
	err = r.cfg.Store.BeginRun(ctx, in.Thread, id, session.Claim{}, [][]byte{entry})
	if errors.Is(err, session.ErrRunInProgress) && r.release(ctx, in.Thread) {
		// The journal was of a run whose workflow closed without saving it.
		err = r.cfg.Store.BeginRun(ctx, in.Thread, id, session.Claim{}, [][]byte{entry})
	}
	if err != nil {
		if errors.Is(err, session.ErrRunInProgress) {
			return agentserver.RunInfo{}, nil, busy(in.Conversation)
		}
		return agentserver.RunInfo{}, nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "store_error",
			Message: "the conversation could not be stored", Err: err}
	}
	var info agentserver.RunInfo
	err = r.checkUser(ctx, in.User)
	if err == nil {
		info, err = r.start(ctx, in, id, wid)
	}
	if err != nil {
		// Nothing runs: the thread is free again.
		if derr := r.cfg.Store.EndRun(context.WithoutCancel(ctx), in.Thread, id, session.Claim{}, nil); derr != nil {
			err = errors.Join(err, derr)
		}
		return agentserver.RunInfo{}, nil, err
	}
	return info, &cursor{r: r, wid: wid, run: id}, nil
}

func busy(conversation string) error {
	return &agentserver.Error{Status: http.StatusConflict, Code: "busy",
		Message: fmt.Sprintf("thread %q has a run in progress", conversation), Err: agentserver.ErrBusy}
}

// start starts the workflow of a run whose journal is begun.
func (r *Runner) start(ctx context.Context, in *agentserver.Input, id, wid string) (agentserver.RunInfo, error) {
	loaded, err := r.cfg.Store.Load(ctx, in.Thread)
	if errors.Is(err, session.ErrNotFound) {
		loaded, err = nil, nil
	}
	if err != nil {
		return agentserver.RunInfo{}, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "store_error",
			Message: "the conversation could not be loaded", Err: err}
	}
	now := time.Now()
	var timeout time.Duration
	if r.cfg.RunTimeout > 0 {
		timeout = r.cfg.RunTimeout
	}
	wi := runInput{Agent: r.cfg.Agent, Contents: append(slices.Clip(loaded), in.Message),
		Served: &servedInput{RunID: id, Thread: in.Thread, Conversation: in.Conversation, User: in.User,
			Loaded: len(loaded), Timeout: timeout, Started: now, Tools: in.Tools}}
	opts := client.StartWorkflowOptions{ID: wid, TaskQueue: r.cfg.TaskQueue,
		Memo:                                     map[string]any{memoRun: id},
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}
	for attempt := 0; ; attempt++ {
		_, err = r.cfg.Client.ExecuteWorkflow(ctx, opts, WorkflowName, wi)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		switch {
		case err == nil:
			return agentserver.RunInfo{ID: id, Thread: in.Conversation, User: in.User, State: agentserver.StateRunning, Started: now}, nil
		case !errors.As(err, &started) && r.startedAnyway(ctx, wid, id):
			// Temporal started the run, and its answer was lost: the run
			// goes on, and its journal with it.
			return agentserver.RunInfo{ID: id, Thread: in.Conversation, User: in.User, State: agentserver.StateRunning, Started: now}, nil
		case !errors.As(err, &started):
			return agentserver.RunInfo{}, unavailable("starting a run", err)
		case attempt > 0:
			return agentserver.RunInfo{}, busy(in.Conversation)
		}
		// The thread's previous run is saved (its journal is gone) and
		// its workflow is closing: wait for it, then start.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_ = r.cfg.Client.GetWorkflow(wctx, wid, "").Get(wctx, nil) // how it ended is in its log
		late := wctx.Err()
		cancel()
		if late != nil {
			return agentserver.RunInfo{}, busy(in.Conversation)
		}
	}
}

// memoRun is the memo field of a served run's workflow that names the run.
const memoRun = "toolnexus.run"

// describeTimeout bounds startedAnyway's question.
const describeTimeout = 5 * time.Second

// startedAnyway reports whether the thread's workflow wid is run id's:
// whether ExecuteWorkflow, which failed, did start it (its request reached
// Temporal, its answer was lost). Start asks before it drops the run's
// journal, which a run that goes on needs to be saved. When Temporal does
// not answer within describeTimeout either, it reports false: the run is
// taken as not started.
func (r *Runner) startedAnyway(ctx context.Context, wid, id string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), describeTimeout)
	defer cancel()
	d, err := r.cfg.Client.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return false
	}
	p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[memoRun]
	var run string
	return p != nil && converter.GetDefaultDataConverter().FromPayload(p, &run) == nil && run == id
}

// lookup returns the run runID names, with its log from offset.
func (r *Runner) lookup(ctx context.Context, runID string, from int64) (*LogView, string, error) {
	thread, err := threadOf(runID)
	if err != nil {
		return nil, "", err
	}
	wid := workflowID(thread)
	lv, err := r.view(ctx, wid, from)
	if err != nil {
		if errors.Is(err, agentserver.ErrNotFound) {
			return nil, "", notFound(runID)
		}
		if strings.Contains(err.Error(), "outside the log") {
			return nil, "", agentserver.BadRequest(0, "bad_offset", "offset %d is past the run's log", from)
		}
		return nil, "", err
	}
	if lv.Info.ID != runID {
		return nil, "", notFound(runID) // the thread has a newer run: this one is forgotten
	}
	return lv, wid, nil
}

// Attach implements agentserver.Runner.
func (r *Runner) Attach(ctx context.Context, runID string, offset int64) (agentserver.Cursor, error) {
	if offset < 0 {
		return nil, agentserver.BadRequest(0, "bad_offset", "offset %d is negative", offset)
	}
	lv, wid, err := r.lookup(ctx, runID, offset)
	if err != nil {
		return nil, err
	}
	if err := r.readers.add(runID); err != nil {
		return nil, err
	}
	return &cursor{r: r, wid: wid, run: runID, next: offset, buf: lv.Records, length: lv.Info.Len, counted: true}, nil
}

// Decide implements agentserver.Runner: the decisions go to the run's
// workflow in one update, which validates them against the run's own
// pending calls before it records any.
func (r *Runner) Decide(ctx context.Context, runID string, decisions []agentserver.Decision) (agentserver.Cursor, error) {
	thread, err := threadOf(runID)
	if err != nil {
		return nil, err
	}
	wid := workflowID(thread)
	for _, d := range decisions {
		if len(d.Output) > 0 && !json.Valid(d.Output) {
			// It would not encode as the update's argument.
			return nil, agentserver.BadRequest(0, "bad_decision", "the output of call %q is not JSON", d.CallID)
		}
	}
	h, err := r.cfg.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: wid, UpdateName: ServedDecideUpdateName,
		Args:         []any{servedDecision{RunID: runID, Decisions: decisions}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var at int64
	if err == nil {
		err = h.Get(ctx, &at)
	}
	if err != nil {
		return nil, r.decisionError(ctx, wid, runID, decisions, err)
	}
	return &cursor{r: r, wid: wid, run: runID, next: at}, nil
}

// decisionError maps the error of a decide update to agentserver's.
func (r *Runner) decisionError(ctx context.Context, wid, runID string, decisions []agentserver.Decision, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case errTypeCallUnknown:
			return &agentserver.Error{Status: http.StatusConflict, Code: "unknown_call", Message: appErr.Message(), Err: agentserver.ErrUnknownCall}
		case errTypeCallDecided:
			return &agentserver.Error{Status: http.StatusConflict, Code: "decided", Message: appErr.Message(), Err: agentserver.ErrDecided}
		case errTypeCallExpired:
			return &agentserver.Error{Status: http.StatusConflict, Code: "expired", Message: appErr.Message(), Err: agentserver.ErrExpired}
		case errTypeBadDecision:
			return agentserver.BadRequest(0, "bad_decision", "%s", appErr.Message())
		}
		if strings.Contains(appErr.Message(), "over the limit") {
			return agentserver.BadRequest(0, "bad_decision", "%s", appErr.Message())
		}
	}
	// The run ended (here or elsewhere) before the update reached it:
	// its log says what became of the calls.
	lv, settled, lerr := r.read(ctx, wid, 0)
	if lerr != nil || lv.Info.ID != runID || !lv.Info.State.Over() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return unavailable("deciding", err)
	}
	if settled == nil {
		settled = map[string]string{}
		for _, rec := range lv.Records {
			switch {
			case rec.Kind != agentserver.KindDecision:
			case rec.Decision.Expired:
				settled[rec.Decision.CallID] = "expired"
			default:
				settled[rec.Decision.CallID] = "decided"
			}
		}
	}
	return settledError(settled, decisions)
}

// Cancel implements agentserver.Runner: it cancels the run's workflow,
// which cancels its tools, saves the run and ends its log.
func (r *Runner) Cancel(ctx context.Context, runID string) error {
	lv, wid, err := r.lookup(ctx, runID, 0)
	if err != nil {
		return err
	}
	if lv.Info.State.Over() {
		return nil
	}
	if err := r.cfg.Client.CancelWorkflow(ctx, wid, ""); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil // it ended meanwhile
		}
		return unavailable("cancelling a run", err)
	}
	return nil
}

// Lookup implements agentserver.Runner.
func (r *Runner) Lookup(ctx context.Context, runID string) (agentserver.RunInfo, error) {
	lv, _, err := r.lookup(ctx, runID, 0)
	if err != nil {
		return agentserver.RunInfo{}, err
	}
	return lv.Info, nil
}

// Latest implements agentserver.Runner: the latest run of the thread's
// workflow, for as long as Temporal keeps it (the namespace's retention).
func (r *Runner) Latest(ctx context.Context, thread string) (agentserver.RunInfo, error) {
	lv, err := r.view(ctx, workflowID(thread), 0)
	if err != nil {
		return agentserver.RunInfo{}, err
	}
	return lv.Info, nil
}

// Close implements agentserver.Runner: the Runner takes no more runs.
// The runs themselves live in Temporal, not in this process: they go on,
// and any other instance serves them.
func (r *Runner) Close(ctx context.Context) error {
	r.closing.Store(true)
	return nil
}

// cursor reads a served run's log, asking the workflow for records
// (the log query) while it waits: it never holds the run.
type cursor struct {
	r      *Runner
	wid    string
	run    string
	next   int64 // the offset of the first record of buf
	buf    []agentserver.Record
	length int64 // the log's length, as last read
	eof    bool
	closed bool
	// counted is set on a cursor of Attach, which counts among the run's
	// readers in this process until it is closed.
	counted bool
	// failing is when the polls began to fail, zero while they succeed.
	failing time.Time
	// idle is the pause after the last poll of a run that waits for
	// decisions and had nothing new: doubled at each such poll, up to
	// MaxWaitingPollInterval; zero once a record comes or the run goes on.
	idle time.Duration
}

// Next implements agentserver.Cursor.
func (c *cursor) Next(ctx context.Context, wait time.Duration) (agentserver.Record, bool, error) {
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	for {
		if err := ctx.Err(); err != nil {
			return agentserver.Record{}, false, err
		}
		if len(c.buf) > 0 {
			rec := c.buf[0]
			c.buf = c.buf[1:]
			c.next = rec.Offset + 1
			if rec.Kind == agentserver.KindDone {
				c.eof = true
			}
			return rec, true, nil
		}
		if c.eof || c.closed {
			return agentserver.Record{}, false, io.EOF
		}
		lv, err := c.poll(ctx, deadline)
		if err != nil {
			return agentserver.Record{}, false, err
		}
		pause := c.r.cfg.PollInterval
		switch {
		case lv == nil:
			// Temporal did not answer: ask again a little later.
			pause = max(pause, minPollRetry)
		case lv.Info.ID != c.run:
			c.eof = true // a newer run took the thread: this one is over
			continue
		default:
			c.buf, c.length = lv.Records, lv.Info.Len
			if len(c.buf) > 0 {
				c.idle = 0
				continue
			}
		}
		if lv != nil && lv.Info.State.Over() {
			c.eof = true // the cursor is past the run's done record
			continue
		}
		if lv != nil {
			c.idle = c.waitingPause(lv.Info.State)
			pause = max(pause, c.idle)
		}
		left := time.Until(deadline)
		if wait <= 0 || left <= 0 {
			return agentserver.Record{}, false, nil
		}
		t := time.NewTimer(min(left, pause))
		select {
		case <-ctx.Done():
			t.Stop()
			return agentserver.Record{}, false, ctx.Err()
		case <-t.C:
		}
	}
}

// waitingPause returns the pause before the next poll of a run in state
// that had nothing new: the last one doubled while it waits for
// decisions, up to MaxWaitingPollInterval; zero while it runs.
func (c *cursor) waitingPause(state agentserver.State) time.Duration {
	if state != agentserver.StateWaiting {
		return 0
	}
	return min(max(2*c.idle, c.r.cfg.PollInterval), max(MaxWaitingPollInterval, c.r.cfg.PollInterval))
}

// minPollRetry is the least pause before a poll that Temporal did not
// answer is made again; minPollTimeout the least time a poll is given.
const (
	minPollRetry   = 500 * time.Millisecond
	minPollTimeout = time.Second
)

// poll reads the log from c.next. A poll that Temporal does not answer
// (runner_unavailable, or no answer within the time left) returns nil and
// no error, for Next to ask again, until UnreachableTimeout has passed
// since the first poll of the streak: then it fails, with a 503
// runner_unavailable error. A poll that times out while Temporal answers
// that the workflow runs is no part of a streak: the workflow is busy. A
// poll is given the time left until then, and until the end of Next's
// wait (at least minPollTimeout).
func (c *cursor) poll(ctx context.Context, deadline time.Time) (*LogView, error) {
	start := time.Now()
	since := c.failing
	if since.IsZero() {
		since = start
	}
	limit := since.Add(c.r.cfg.UnreachableTimeout).Sub(start)
	if !deadline.IsZero() {
		limit = min(limit, time.Until(deadline))
	}
	pctx, cancel := context.WithTimeout(ctx, max(limit, minPollTimeout))
	lv, err := c.r.view(pctx, c.wid, c.next)
	cancel()
	var se *agentserver.Error
	switch {
	case err == nil:
		c.failing = time.Time{}
		return lv, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &se) && se.Code == "runner_unavailable"):
		return nil, err // the run is gone, or the offset bad: no retry mends it
	case c.r.running(ctx, c.wid):
		// Temporal answers, and the workflow runs: the query waits for
		// its workflow task, which a model call made as a local activity
		// holds for as long as it lasts (or for a worker). Not an outage.
		c.failing = time.Time{}
		return nil, nil
	}
	c.failing = since
	if time.Since(since) < c.r.cfg.UnreachableTimeout {
		return nil, nil
	}
	return nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "runner_unavailable",
		Message: fmt.Sprintf("the run service did not answer for %v; the run goes on: attach to it again later", c.r.cfg.UnreachableTimeout.Round(time.Second)),
		Err:     fmt.Errorf("temporalagent: reading run %s: %w", c.run, err)}
}

// running reports whether Temporal answers, within minPollTimeout, that
// the workflow wid runs: a question its server answers itself, without a
// worker.
func (r *Runner) running(ctx context.Context, wid string) bool {
	ctx, cancel := context.WithTimeout(ctx, minPollTimeout)
	defer cancel()
	d, err := r.cfg.Client.DescribeWorkflowExecution(ctx, wid, "")
	return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// Buffered implements agentserver.Cursor: the records after the cursor
// in the log as last read.
func (c *cursor) Buffered() int {
	return max(len(c.buf), int(c.length-c.next))
}

// Close implements agentserver.Cursor.
func (c *cursor) Close() {
	if c.counted && !c.closed {
		c.r.readers.done(c.run)
	}
	c.closed = true
	c.buf = nil
}
