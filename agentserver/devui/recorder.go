package devui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/memory"
	"google.golang.org/genai"
)

// Defaults of the RecorderOptions fields whose zero value means "the
// default".
const (
	DefaultKeepRuns  = 20
	DefaultKeepUsers = 100
	DefaultMaxSpans  = 2000
)

// RecorderOptions bound what a [Recorder] keeps in memory.
type RecorderOptions struct {
	// KeepRuns is how many runs of each user are kept: the latest ones.
	// Zero means DefaultKeepRuns (20).
	KeepRuns int
	// KeepUsers bounds the users whose runs are kept: past it, the runs
	// of the user who started a run least recently are forgotten. Zero
	// means DefaultKeepUsers (100).
	KeepUsers int
	// MaxSpans bounds the spans of one run (model calls, tool calls, runs
	// of agents called as tools): past it, the run's later steps are not
	// recorded, and its timeline says so. Zero means DefaultMaxSpans
	// (2000).
	MaxSpans int
}

// A Recorder is an [agent.Observer] that records the runs of an
// [agentserver.Server], for the development UI's timelines: each model
// call with the exact request it sent (model, contents, config with the
// tools' declarations) and the response it got, its timing, tokens and
// retries; each tool call with its arguments, result and timing; the
// runs of agents called as tools, nested under their call; and, from the
// run's log, the waits for approvals and browser tools, and how the run
// ended.
//
// Give it to the server as Config.Observer (alone, or among others with
// agent.Observers) and to [Handler], which binds it to the server: it
// records the runs of that server only, from then on. It keeps the last
// RecorderOptions.KeepRuns runs of each user, of at most KeepUsers users,
// in memory; what it keeps of a model call is the loop's own contents and
// response (shared, never copied), so a run costs little more than its
// history. Its methods are safe for concurrent use.
type Recorder struct {
	opts   RecorderOptions
	server atomic.Pointer[agentserver.Server]

	mu    sync.Mutex
	runs  map[string]*runRec   // by run id: the runs kept, and those whose user is being looked up
	users map[string]*userRuns // by user
	tick  uint64               // orders the users by their latest run
}

// userRuns are the runs kept of one user, oldest first.
type userRuns struct {
	runs []*runRec
	last uint64 // tick of the latest run
}

// NewRecorder returns a Recorder that keeps what opts says (nil: the
// defaults).
func NewRecorder(opts *RecorderOptions) *Recorder {
	r := &Recorder{runs: map[string]*runRec{}, users: map[string]*userRuns{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.KeepRuns <= 0 {
		r.opts.KeepRuns = DefaultKeepRuns
	}
	if r.opts.KeepUsers <= 0 {
		r.opts.KeepUsers = DefaultKeepUsers
	}
	if r.opts.MaxSpans <= 0 {
		r.opts.MaxSpans = DefaultMaxSpans
	}
	return r
}

// bind makes the recorder record s's runs. A recorder records one
// server's: binding it to a second is an error.
func (r *Recorder) bind(s *agentserver.Server) error {
	if r.server.CompareAndSwap(nil, s) || r.server.Load() == s {
		return nil
	}
	return errors.New("devui: the Recorder records another server's runs")
}

// span is one step of a run: the run itself, a model call, a tool call,
// or the run of an agent called as a tool.
type span struct {
	id, parent int
	kind       string // "run", "model", "tool", "agent"
	name       string
	agent      string
	turn       int
	attempt    int // model calls: from 1
	index      int // tool calls: the call's position in its turn
	start, end time.Time
	// model calls
	firstToken time.Time
	contents   []*genai.Content
	config     *genai.GenerateContentConfig
	stream     bool
	response   *genai.GenerateContentResponse
	usage      *agent.Usage
	finish     genai.FinishReason
	failed     string        // why the call failed: the API's status, when it says
	backoff    time.Duration // the wait before the next attempt
	// tool calls
	call     *genai.FunctionCall
	result   *agent.ToolResult
	callID   string // the served run's own calls: the call's id in the log
	waitFrom time.Time
	waitTo   time.Time
	// resumed is when every call of the call's pause was decided: a pause
	// is resolved whole, so a call decided before the others waits for
	// theirs before it runs.
	resumed  time.Time
	waitKind agentserver.PendingKind
	decision *agentserver.Decision
	// memory searches and ingests (see ObserveMemory)
	memory *memory.Event
}

// subRun is the state of one agent run within a recorded run: the served
// run itself, or an agent run as a tool.
type subRun struct {
	span  *span
	model *span            // the model call in flight
	tools map[[2]int]*span // by turn and index
}

// runRec is one recorded run.
type runRec struct {
	id   string
	tick uint64 // orders runs

	mu sync.Mutex
	// user and thread are known once the run is looked up on the server
	// (see Recorder.keep).
	user, thread string
	spans        []*span
	subs         map[string]*subRun // by the key of the call that runs them; "" is the served run
	truncated    bool
	message      *genai.Content // the new user message
	// What the run's log says.
	state   agentserver.State
	pending map[string]agentserver.PendingKind // the calls waiting for a decision, by id
	done    *agentserver.Done
	callIDs map[int][]string // by turn, in call order
	retries map[[2]int]string
	// followed is closed once the run's log was read to its end (or could
	// not be read).
	followed chan struct{}
	// read is the offset after the last record the follower took, and
	// advanced is closed (and replaced) each time read moves on: see
	// caughtUp.
	read     int64
	advanced chan struct{}
}

// Observe implements agent.Observer.
func (r *Recorder) Observe(ctx context.Context, e *agent.Event) {
	id := agentserver.RunID(ctx)
	if id == "" {
		return
	}
	s := r.server.Load()
	if s == nil {
		return
	}
	now := time.Now()
	if e.Kind == agent.EventRunStart && e.Parent == nil {
		r.start(ctx, s, id, e, now)
		return
	}
	r.mu.Lock()
	rec := r.runs[id]
	r.mu.Unlock()
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.event(e, now, r.opts.MaxSpans)
}

// ObserveMemory implements memory.Observer: give the Recorder as the
// memory service's Config.Observer (memory.Observers to add others), and
// each run's timeline shows the memory searches made for it (Preload's,
// before its first model call, and its search tool's) with their query
// and the memories found, and the memories its end stored (the server's
// Config.Remember), as spans of kind "memory".
func (r *Recorder) ObserveMemory(ctx context.Context, e *memory.Event) {
	id := agentserver.RunID(ctx)
	if id == "" || (e.Kind != memory.EventSearch && e.Kind != memory.EventIngest) {
		return
	}
	r.mu.Lock()
	rec := r.runs[id]
	r.mu.Unlock()
	if rec == nil {
		return
	}
	name := "search"
	if e.Kind == memory.EventIngest {
		name = "remember"
	}
	start := e.Start
	if start.IsZero() {
		start = time.Now().Add(-e.Duration)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.spans) == 0 {
		return
	}
	rec.add(&span{kind: "memory", name: name, start: start, end: start.Add(e.Duration), memory: e}, rec.spans[0], r.opts.MaxSpans)
}

// start records a served run that begins, and follows its log.
func (r *Recorder) start(ctx context.Context, s *agentserver.Server, id string, e *agent.Event, now time.Time) {
	rec := &runRec{id: id, subs: map[string]*subRun{}, state: agentserver.StateRunning,
		callIDs: map[int][]string{}, retries: map[[2]int]string{}, followed: make(chan struct{}), advanced: make(chan struct{})}
	root := &span{id: 0, parent: -1, kind: "run", name: e.Agent, agent: e.Agent, start: now}
	if root.name == "" {
		root.name = "agent"
	}
	rec.spans = []*span{root}
	rec.subs[""] = &subRun{span: root, tools: map[[2]int]*span{}}
	r.mu.Lock()
	if r.runs[id] != nil {
		r.mu.Unlock()
		return
	}
	r.tick++
	rec.tick = r.tick
	r.runs[id] = rec
	r.mu.Unlock()
	go r.follow(context.WithoutCancel(ctx), s, rec)
}

// follow looks the run up, to know whose it is, and reads its log to the
// end: the waits for decisions, the calls' ids, the retries' reasons and
// the run's end, in the words the server shows its clients.
func (r *Recorder) follow(ctx context.Context, s *agentserver.Server, rec *runRec) {
	defer close(rec.followed)
	info, err := s.Runner().Lookup(ctx, rec.id)
	if err != nil {
		r.mu.Lock()
		delete(r.runs, rec.id)
		r.mu.Unlock()
		return
	}
	r.keep(rec, info.User, info.Thread)
	cur, err := s.Runner().Attach(ctx, rec.id, 0)
	if err != nil {
		return
	}
	defer cur.Close()
	for {
		rec2, ok, err := cur.Next(ctx, time.Minute)
		if err != nil {
			break
		}
		if ok {
			rec.mu.Lock()
			rec.record(&rec2)
			rec.read = rec2.Offset + 1
			close(rec.advanced)
			rec.advanced = make(chan struct{})
			rec.mu.Unlock()
		}
	}
}

// keep files rec among user's runs, forgetting the runs over the bounds.
// A run's user and thread are written here once, under both locks: the
// recorder's readers read them under either.
func (r *Recorder) keep(rec *runRec, user, thread string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.mu.Lock()
	rec.user, rec.thread = user, thread
	rec.mu.Unlock()
	if r.runs[rec.id] != rec {
		return
	}
	u := r.users[rec.user]
	if u == nil {
		u = &userRuns{}
		r.users[rec.user] = u
		for len(r.users) > r.opts.KeepUsers {
			r.forgetUser(rec.user)
		}
	}
	i, _ := slices.BinarySearchFunc(u.runs, rec.tick, func(x *runRec, t uint64) int { return cmpTick(x.tick, t) })
	u.runs = slices.Insert(u.runs, i, rec)
	u.last = max(u.last, rec.tick)
	for len(u.runs) > r.opts.KeepRuns {
		delete(r.runs, u.runs[0].id)
		u.runs = slices.Delete(u.runs, 0, 1)
	}
}

func cmpTick(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// forgetUser forgets the runs of the user whose latest run is the
// oldest, other than keep. r.mu is held.
func (r *Recorder) forgetUser(keep string) {
	oldest, at := "", uint64(0)
	found := false
	for name, u := range r.users {
		if name != keep && (!found || u.last < at) {
			oldest, at, found = name, u.last, true
		}
	}
	if !found {
		return
	}
	for _, rec := range r.users[oldest].runs {
		delete(r.runs, rec.id)
	}
	delete(r.users, oldest)
}

// caughtUpWait bounds how long caughtUp waits for the follower: a hang
// guard, for a follower that cannot read (the run's records come in
// microseconds).
const caughtUpWait = 5 * time.Second

// caughtUp waits until the follower has read every record the run's log
// holds now, so that what a client saw in its stream (a call waiting for
// approval, the run's end) is in the run's timeline when it asks for it
// next; it returns early when the log was read to its end or ctx ends.
func (rec *runRec) caughtUp(ctx context.Context, s *agentserver.Server) {
	info, err := s.Runner().Lookup(ctx, rec.id)
	if err != nil {
		return
	}
	timer := time.NewTimer(caughtUpWait)
	defer timer.Stop()
	for {
		rec.mu.Lock()
		read, advanced := rec.read, rec.advanced
		rec.mu.Unlock()
		if read >= info.Len {
			return
		}
		select {
		case <-advanced:
		case <-rec.followed:
			return
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// lookup returns user's recorded run id, or nil.
func (r *Recorder) lookup(user, id string) *runRec {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.runs[id]
	if rec == nil || rec.user != user {
		return nil
	}
	return rec
}

// list returns user's recorded runs, the latest first.
func (r *Recorder) list(user string) []*runRec {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.users[user]
	if u == nil {
		return nil
	}
	out := slices.Clone(u.runs)
	slices.Reverse(out)
	return out
}

// subKey names the agent run an event belongs to: "" for the served
// run, else the chain of calls that runs it.
func subKey(p *agent.Event) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s:%d:%d", subKey(p.Parent), p.Agent, p.Turn, p.Index)
}

// add appends a span under parent, unless the run has all the spans it
// may keep.
func (rec *runRec) add(s *span, parent *span, maxSpans int) bool {
	if len(rec.spans) >= maxSpans {
		rec.truncated = true
		return false
	}
	s.id, s.parent = len(rec.spans), parent.id
	rec.spans = append(rec.spans, s)
	return true
}

// event records one of the agent's events. rec.mu is held.
func (rec *runRec) event(e *agent.Event, now time.Time, maxSpans int) {
	key := subKey(e.Parent)
	sub := rec.subs[key]
	if sub == nil {
		if e.Kind != agent.EventRunStart {
			return
		}
		caller := rec.subs[subKey(e.Parent.Parent)]
		if caller == nil {
			return
		}
		call := caller.tools[[2]int{e.Parent.Turn, e.Parent.Index}]
		if call == nil {
			return
		}
		s := &span{kind: "agent", name: e.Agent, agent: e.Agent, start: now}
		if !rec.add(s, call, maxSpans) {
			return
		}
		rec.subs[key] = &subRun{span: s, tools: map[[2]int]*span{}}
		return
	}
	switch e.Kind {
	case agent.EventModelRequest:
		s := &span{kind: "model", name: e.Model, agent: e.Agent, turn: e.Turn, attempt: e.Attempt, start: now,
			contents: e.Contents, config: e.Config, stream: e.Stream}
		if key == "" && rec.message == nil && len(e.Contents) > 0 {
			rec.message = e.Contents[len(e.Contents)-1]
		}
		if rec.add(s, sub.span, maxSpans) {
			sub.model = s
		} else {
			sub.model = nil
		}
	case agent.EventText, agent.EventThought:
		if m := sub.model; m != nil && m.firstToken.IsZero() {
			m.firstToken = now
		}
	case agent.EventRetry:
		if m := sub.model; m != nil {
			m.end, m.backoff, m.failed = now, e.Delay, apiStatus(e.Err)
			sub.model = nil
		}
	case agent.EventModelResponse:
		if m := sub.model; m != nil {
			u := agent.UsageOf(e.Response.UsageMetadata)
			m.end, m.response, m.usage, m.finish = now, e.Response, &u, e.FinishReason
			sub.model = nil
		}
	case agent.EventToolCall:
		s := &span{kind: "tool", name: e.Call.Name, agent: e.Agent, turn: e.Turn, index: e.Index, start: now, call: e.Call}
		if key == "" {
			if ids := rec.callIDs[e.Turn]; e.Index < len(ids) {
				s.callID = ids[e.Index]
			}
		}
		if rec.add(s, sub.span, maxSpans) {
			sub.tools[[2]int{e.Turn, e.Index}] = s
		}
	case agent.EventToolResult:
		if s := sub.tools[[2]int{e.Turn, e.Index}]; s != nil {
			s.end, s.result = now, e.ToolResult
		}
	case agent.EventDone:
		sub.span.end = now
		sub.model = nil
		if key != "" {
			delete(rec.subs, key)
		}
	}
}

// apiStatus returns the API's status of a failed model call ("503
// UNAVAILABLE"), or "" when the error is not the API's.
func apiStatus(err error) string {
	var e genai.APIError
	if errors.As(err, &e) {
		return fmt.Sprintf("%d %s", e.Code, e.Status)
	}
	return ""
}

// record takes one record of the run's log. rec.mu is held.
func (rec *runRec) record(r *agentserver.Record) {
	switch r.Kind {
	case agentserver.KindToolCall:
		rec.callIDs[r.Turn] = append(rec.callIDs[r.Turn], r.Call.ID)
		i := len(rec.callIDs[r.Turn]) - 1
		if sub := rec.subs[""]; sub != nil {
			if s := sub.tools[[2]int{r.Turn, i}]; s != nil {
				s.callID = r.Call.ID
			}
		}
	case agentserver.KindPause:
		for _, p := range r.Pending {
			if s := rec.callSpan(p.Call.ID); s != nil && s.waitFrom.IsZero() {
				s.waitFrom, s.waitKind = r.Time, p.Kind
			}
			if rec.pending == nil {
				rec.pending = map[string]agentserver.PendingKind{}
			}
			rec.pending[p.Call.ID] = p.Kind
		}
	case agentserver.KindDecision:
		if s := rec.callSpan(r.Decision.CallID); s != nil {
			s.waitTo, s.decision = r.Time, r.Decision
			if s.waitKind == "" {
				s.waitKind = r.Decision.Kind
			}
		}
		delete(rec.pending, r.Decision.CallID)
		if len(rec.pending) == 0 {
			// The pause is resolved: its calls go on from here.
			rec.resume(r.Time)
		}
	case agentserver.KindRetry:
		rec.retries[[2]int{r.Turn, r.Retry.Attempt}] = r.Retry.Reason
	case agentserver.KindDone:
		rec.state, rec.done, rec.pending = r.Done.State, r.Done, nil
		return
	}
	// As the server's RunInfo.State: waiting while a call waits for a
	// decision, running again once every one is decided.
	if len(rec.pending) > 0 {
		rec.state = agentserver.StateWaiting
	} else {
		rec.state = agentserver.StateRunning
	}
}

// resume marks every decided call of the served run that waited, and
// was not yet resumed, as resumed at t. rec.mu is held.
func (rec *runRec) resume(t time.Time) {
	sub := rec.subs[""]
	if sub == nil {
		return
	}
	for _, s := range sub.tools {
		if !s.waitTo.IsZero() && s.resumed.IsZero() {
			s.resumed = t
		}
	}
}

// waitingFor says what a waiting run waits for: approval when any of its
// calls waits for one, else the browser. rec.mu is held.
func (rec *runRec) waitingFor() agentserver.PendingKind {
	var kind agentserver.PendingKind
	for _, k := range rec.pending {
		if k == agentserver.WaitApproval {
			return k
		}
		kind = k
	}
	return kind
}

// callSpan returns the span of the served run's call id.
func (rec *runRec) callSpan(id string) *span {
	for turn, ids := range rec.callIDs {
		if i := slices.Index(ids, id); i >= 0 {
			if sub := rec.subs[""]; sub != nil {
				return sub.tools[[2]int{turn, i}]
			}
		}
	}
	return nil
}
