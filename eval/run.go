package eval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Defaults of the Options fields whose zero value means "the default".
const (
	// DefaultParallel is how many runs go at once: ADK's inference
	// parallelism.
	DefaultParallel = 4
	// DefaultUserID is the user of ADK's eval sessions when a case gives
	// none.
	DefaultUserID = "test_user_id"
)

// Options configure a run of an eval set ([Run], [Test]). Only Agent is
// required.
type Options struct {
	// Agent is the agent under test. Every turn of a case is one
	// Agent.Run, on the conversation so far.
	Agent *agent.Agent

	// Metrics score each run. Nil means the metrics of Set.Criteria, or,
	// when the set has none, [DefaultCriteria] (ADK's defaults); built
	// from criteria, the judged ones use Judge and the others come from
	// Custom.
	Metrics []Metric
	// Judge is the model the judged metrics of criteria files grade with
	// (final_response_match_v2, the rubric-based ones). A criterion's
	// judge_model_options choose its model and samples, unless Judge sets
	// them.
	Judge *Judge
	// Custom provides, by name, the metrics a criteria file names that
	// this package does not implement: its custom_metrics, or any other
	// name. A criteria file's threshold replaces the metric's own only
	// for metrics made by [Func] and [TurnFunc]. A name found nowhere is
	// scored NotEvaluated, as ADK does.
	Custom map[string]Metric

	// Runs is how many times each case runs, for models that do not
	// answer the same way twice; zero means 1 (adk eval's default; ADK's
	// pytest AgentEvaluator runs 2). A metric's score of a case is the
	// mean of its turn scores over all runs.
	Runs int
	// Parallel bounds the runs going at once, over all cases; zero means
	// DefaultParallel. Under [Test], go test's -parallel flag bounds the
	// cases running at once as well.
	Parallel int
	// CaseTimeout bounds one run of a case, every turn of it; zero means
	// none. A run that times out fails with context.DeadlineExceeded.
	CaseTimeout time.Duration

	// Start, when set, returns the conversation a run of c starts from:
	// its first turn is appended to it. Nil starts every run from an
	// empty conversation. [FromSession] starts from a stored
	// conversation. A run never modifies what Start returns.
	Start func(ctx context.Context, c *Case) ([]*genai.Content, error)
	// Simulator plays the user of scenario cases; without one they are
	// not evaluated.
	Simulator Simulator

	// Approve decides about the tool calls that need approval (the
	// agent's Config.NeedsApproval picks them), which Agent.Run alone
	// would deny, nobody being asked. Nil means [ReplayDecisions]: each
	// call is decided as the case's expected turn records it was, and a
	// call it does not record is denied. An agent with an Interceptor of
	// its own (Config.Intercept) decides them itself, and Approve is not
	// asked.
	Approve Approver

	// ResultFile, when set, is where [Test] writes the results as ADK's
	// EvalSetResult JSON.
	ResultFile string
}

// FromSession returns an Options.Start that starts each run of a case from
// a stored conversation: the contents of store's conversation id(c). The
// store is only read. A case for which id returns "" starts empty.
func FromSession(store session.Store, id func(c *Case) string) func(ctx context.Context, c *Case) ([]*genai.Content, error) {
	return func(ctx context.Context, c *Case) ([]*genai.Content, error) {
		name := id(c)
		if name == "" {
			return nil, nil
		}
		contents, err := store.Load(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("eval: loading the conversation %q the case starts from: %w", name, err)
		}
		return contents, nil
	}
}

// A Run is one run of a case: the conversation the agent had, turn by
// turn, and its scores.
type Run struct {
	// Index numbers the case's runs from 0.
	Index int
	// SessionID and UserID identify the run in results, as ADK's eval
	// sessions do ("___eval___session___…", the case's user).
	SessionID, UserID string

	// Start is the conversation the run started from (Options.Start).
	Start []*genai.Content
	// Turns are the actual turns, as ADK records them: one per expected
	// turn for a scripted case (those after an agent error are empty:
	// they never ran, and every metric's score of them is NotEvaluated),
	// one per simulated user message for a scenario.
	Turns []Turn
	// Results are the agent's results, Results[i] for Turns[i]: every
	// model turn, tool call and result, their timings and usage. History
	// of the last one is the whole conversation.
	Results []*agent.Result
	// Latency is each turn's wall time.
	Latency []time.Duration
	// Duration is the run's wall time, its scoring included.
	Duration time.Duration

	// Usage sums the agent's token counts over the run; ModelCalls counts
	// its model calls, retries included.
	Usage      agent.Usage
	ModelCalls int
	// SimulatorUsage counts the simulated user's tokens, kept apart.
	SimulatorUsage agent.Usage

	// Err is why the run stopped before its end: the agent's error, the
	// timeout, the simulator's, Start's. A run with an error fails.
	Err error
	// Skipped says why the run did not run at all, when it did not: a
	// scenario case without a Simulator. Its metrics are not evaluated.
	Skipped string

	// Scores are the metrics' scores, in the order of the metrics.
	Scores []*Score
	// notRun counts the turns at the end of Turns that never ran, an
	// error having stopped the run before them.
	notRun int
	// Status is the run's outcome, as ADK decides a case's from its
	// metrics: Failed if the run failed or any metric failed, else Passed
	// if any passed, else NotEvaluated.
	Status Status
}

// A runner runs one set with one set of options.
type runner struct {
	set     *Set
	opts    Options
	metrics []Metric
	sem     chan struct{}
	app     []byte // the agent's app details, recorded on actual turns
	warning string // said in the report: why no metric scores anything
}

func newRunner(set *Set, opts Options) (*runner, error) {
	if set == nil {
		return nil, errors.New("eval: the set is nil")
	}
	if opts.Agent == nil {
		return nil, errors.New("eval: Options.Agent is nil")
	}
	if opts.Runs < 0 || opts.Parallel < 0 || opts.CaseTimeout < 0 {
		return nil, fmt.Errorf("eval: negative Options (Runs %d, Parallel %d, CaseTimeout %v)", opts.Runs, opts.Parallel, opts.CaseTimeout)
	}
	if err := opts.Agent.Steps().Err(); err != nil {
		return nil, fmt.Errorf("eval: the agent cannot run: %w", err)
	}
	if opts.Runs == 0 {
		opts.Runs = 1
	}
	if opts.Parallel == 0 {
		opts.Parallel = DefaultParallel
	}
	if opts.Approve == nil {
		opts.Approve = ReplayDecisions
	}
	r := &runner{set: set, opts: opts, sem: make(chan struct{}, opts.Parallel)}
	r.metrics = opts.Metrics
	if r.metrics == nil {
		criteria := set.Criteria
		if criteria == nil {
			criteria = DefaultCriteria()
		}
		r.metrics = criteria.metrics(opts.Judge, opts.Custom)
	}
	seen := map[string]bool{}
	for i, m := range r.metrics {
		if m == nil {
			return nil, fmt.Errorf("eval: Options.Metrics[%d] is nil", i)
		}
		if seen[m.Name()] {
			return nil, fmt.Errorf("eval: two metrics are named %q", m.Name())
		}
		seen[m.Name()] = true
	}
	if len(r.metrics) == 0 {
		r.warning = "no metrics: only the agent's errors fail a case"
	}
	r.app = appDetails(opts.Agent)
	return r, nil
}

// runCase runs every run of a case, Options.Runs of them at once (as
// Parallel allows), and scores them.
func (r *runner) runCase(ctx context.Context, c *Case) *CaseResult {
	runs := make([]*Run, r.opts.Runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = r.run(ctx, c, i)
		}()
	}
	wg.Wait()
	return newCaseResult(c, runs, r.metrics)
}

// run makes one run of a case and scores it, holding one of Parallel's
// slots.
func (r *runner) run(ctx context.Context, c *Case, index int) *Run {
	run := &Run{Index: index, SessionID: "___eval___session___" + uuid(), UserID: DefaultUserID}
	if c.Session != nil && c.Session.UserID != "" {
		run.UserID = c.Session.UserID
	}
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	case <-ctx.Done():
	}
	if ctx.Err() != nil { // done while waiting, whichever case select chose
		run.Err = fmt.Errorf("eval: not started: %w", context.Cause(ctx))
		r.score(ctx, c, run)
		return run
	}
	began := time.Now()
	runCtx := ctx
	if r.opts.CaseTimeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, r.opts.CaseTimeout,
			fmt.Errorf("eval: the run took longer than the case timeout (%v): %w", r.opts.CaseTimeout, context.DeadlineExceeded))
		defer cancel()
	}
	if c.Scenario != nil {
		r.simulate(runCtx, c, run)
	} else {
		r.converse(runCtx, c, run)
	}
	r.score(ctx, c, run)
	run.Duration = time.Since(began)
	return run
}

// begin returns the conversation a run starts from.
func (r *runner) begin(ctx context.Context, c *Case, run *Run) ([]*genai.Content, error) {
	if r.opts.Start == nil {
		return nil, nil
	}
	start, err := r.opts.Start(ctx, c)
	if err != nil {
		return nil, err
	}
	run.Start = start
	return slices.Clone(start), nil
}

// converse plays a scripted case, turn by turn. After an error, the
// remaining turns are recorded with their user message only.
func (r *runner) converse(ctx context.Context, c *Case, run *Run) {
	history, err := r.begin(ctx, c, run)
	for i := range c.Turns {
		user := c.Turns[i].User
		if err != nil {
			run.Turns = append(run.Turns, Turn{User: user})
			run.Results = append(run.Results, nil)
			run.Latency = append(run.Latency, 0)
			run.notRun++
			continue
		}
		history, err = r.turn(ctx, run, c, i, history, user)
		if err != nil {
			err = fmt.Errorf("turn %d: %w", i+1, err)
		}
	}
	run.Err = err
}

// turn runs the agent on history followed by user, as turn i of case c,
// and records the turn.
func (r *runner) turn(ctx context.Context, run *Run, c *Case, i int, history []*genai.Content, user *genai.Content) ([]*genai.Content, error) {
	input := append(slices.Clip(history), user)
	began := time.Now()
	res, err := withApprover(r.opts.Agent, r.opts.Approve, c, i).Run(ctx, input)
	run.Latency = append(run.Latency, time.Since(began))
	run.Results = append(run.Results, res)
	if res == nil {
		res = &agent.Result{History: input}
	}
	run.Usage = run.Usage.Plus(res.Usage)
	for _, t := range res.Turns {
		run.ModelCalls += t.Attempts
	}
	run.Turns = append(run.Turns, actualTurn(user, res.History[min(len(input), len(res.History)):], r.opts.Agent.Steps().Name(), r.app))
	if err != nil {
		return res.History, fmt.Errorf("the agent failed: %w", err)
	}
	return res.History, nil
}

// actualTurn records what a turn added to the conversation as ADK records
// an invocation: every function call and response, the text the agent
// gave before its final answer, and the final answer, the last model
// content (its thought parts included, as ADK's final response includes
// them).
func actualTurn(user *genai.Content, added []*genai.Content, author string, app []byte) Turn {
	if author == "" {
		author = "agent"
	}
	t := Turn{ID: "e-" + uuid(), User: user, AppDetails: app}
	last := -1
	for i, c := range added {
		if c != nil && c.Role == genai.RoleModel {
			last = i
		}
	}
	for i, c := range added {
		if c == nil {
			continue
		}
		var text []*genai.Part
		for _, p := range c.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				t.ToolCalls = append(t.ToolCalls, p.FunctionCall)
			case p.FunctionResponse != nil:
				t.ToolResponses = append(t.ToolResponses, p.FunctionResponse)
			case p.Text != "" && !p.Thought:
				text = append(text, p)
			}
		}
		if i == last && len(agent.FunctionCalls(c)) == 0 {
			t.Response = c
		} else if len(text) > 0 && c.Role == genai.RoleModel {
			t.Intermediate = append(t.Intermediate, AgentResponse{Author: author, Parts: text})
		}
	}
	return t
}

// score scores a run with every metric, concurrently, and decides its
// status. The metrics score the turns that ran; the turns that never ran
// are not evaluated, and nor is a run none of whose turns ran.
func (r *runner) score(ctx context.Context, c *Case, run *Run) {
	ran := len(run.Turns) - run.notRun
	in := &Input{Case: c, Actual: run.Turns[:ran:ran], Run: run}
	if c.Scenario == nil {
		in.Expected = c.Turns
	}
	skip := run.Skipped
	if skip == "" && ran == 0 && run.Err != nil {
		skip = "no turn ran: an error stopped the run before its first"
	}
	notRun := func(s *Score) *Score {
		for range run.notRun {
			s.Turns = append(s.Turns, TurnScore{Status: NotEvaluated, Reason: "the turn never ran: an error stopped the run before it"})
		}
		return s
	}
	run.Scores = make([]*Score, len(r.metrics))
	var wg sync.WaitGroup
	for i, m := range r.metrics {
		if skip != "" {
			s := &Score{Status: NotEvaluated, Reason: skip}
			finish(s, m, ran)
			run.Scores[i] = notRun(s)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.Scores[i] = notRun(evaluate(ctx, m, in))
		}()
	}
	wg.Wait()
	statuses := make([]Status, len(run.Scores))
	for i, s := range run.Scores {
		statuses[i] = s.Status
	}
	run.Status = combine(statuses)
	if run.Err != nil {
		run.Status = Failed
	}
}

// uuid returns a random version 4 UUID.
func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// appDetails describes the agent as ADK's app_details does: its name, its
// system instruction and its tool declarations, which the judges read.
func appDetails(a *agent.Agent) []byte {
	steps := a.Steps()
	name := steps.Name()
	if name == "" {
		name = "agent"
	}
	details := (&object{}).add("name", name)
	cfg := steps.RequestConfig(0)
	instructions := ""
	if cfg != nil && cfg.SystemInstruction != nil {
		instructions = contentText(cfg.SystemInstruction)
	}
	details.add("instructions", instructions)
	var tools []any
	if cfg != nil {
		for _, t := range cfg.Tools {
			if v, err := genaiObject(t); err == nil {
				tools = append(tools, v)
			}
		}
	}
	if tools == nil {
		tools = []any{}
	}
	details.add("tool_declarations", tools)
	b, err := marshalValue((&object{}).add("agent_details", (&object{}).add(name, details)))
	if err != nil {
		return nil
	}
	return b
}

// caseName returns the subtest name of a case: its ID, slashes replaced,
// since go test reads them as subtest separators.
func caseName(c *Case) string {
	if c.ID == "" {
		return "case"
	}
	return strings.ReplaceAll(c.ID, "/", "_")
}
