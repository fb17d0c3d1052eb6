package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// Defaults of the Judge fields whose zero value means "the default", ADK's.
const (
	DefaultJudgeModel   = "gemini-2.5-flash"
	DefaultJudgeSamples = 5
)

// A Judge is a Gemini model that grades answers and trajectories for the
// judged metrics ([FinalResponseMatch], [ResponseQuality],
// [ToolUseQuality]). Each turn is judged Samples times and the verdicts
// are combined by majority, as ADK does, because a model does not judge
// the same way twice. The judge answers with a typed verdict, through
// [agent.RunTyped]: an answer that is not a verdict is asked again, and
// then the sample is not counted. Its tokens are counted apart from the
// agent's (Score.Usage, Report.JudgeUsage).
//
// Only Models is required. A Judge is safe for concurrent use.
type Judge struct {
	// Models makes the judge's model calls: client.Models of a
	// *genai.Client.
	Models agent.Models
	// Model is the judge model. Zero means the criterion's judge_model
	// when the metric comes from a criteria file, else DefaultJudgeModel.
	Model string
	// Backend is the backend Models talks to (see agent.Config.Backend).
	Backend genai.Backend
	// Samples is how many times each turn is judged. Zero means the
	// criterion's num_samples, else DefaultJudgeSamples.
	Samples int
	// Timeout bounds one sample, its re-asks included; zero means none. A
	// sample that times out is not counted.
	Timeout time.Duration
	// GenerateConfig is sent with every judge call (sampling, thinking…);
	// the judge's instructions replace its system instruction. Zero means
	// the criterion's judge_model_config.
	GenerateConfig *genai.GenerateContentConfig
	// Retry says how failed judge calls are retried.
	Retry agent.RetryPolicy
}

// forCriterion returns the judge a criterion's metric uses: j, with the
// criterion's judge_model_options where j leaves them zero.
func (j *Judge) forCriterion(cr *Criterion) *Judge {
	if j == nil {
		return nil
	}
	out := *j
	if o := cr.Judge; o != nil {
		if out.Model == "" {
			out.Model = o.Model
		}
		if out.Samples == 0 {
			out.Samples = o.Samples
		}
		if out.GenerateConfig == nil {
			out.GenerateConfig = o.Config
		}
	}
	return &out
}

func (j *Judge) model() string {
	if j.Model == "" {
		return DefaultJudgeModel
	}
	return j.Model
}

func (j *Judge) samples() int {
	if j.Samples <= 0 {
		return DefaultJudgeSamples
	}
	return j.Samples
}

// agent returns the agent a judge's samples run on.
func (j *Judge) agent(instructions string) (*agent.Agent, error) {
	if name := strings.TrimPrefix(j.model(), "models/"); strings.Contains(name, "/") {
		// ADK's judge_model may name any LiteLLM model: "groq/llama-3.3-70b-versatile".
		return nil, fmt.Errorf("judge model %q is not a Gemini model: set Judge.Model to the Gemini model to judge with", j.model())
	}
	cfg := &genai.GenerateContentConfig{}
	if j.GenerateConfig != nil {
		*cfg = *j.GenerateConfig
	}
	cfg.SystemInstruction = genai.NewContentFromText(instructions, genai.RoleUser)
	return agent.New(agent.Config{Models: j.Models, Model: j.model(), Backend: j.Backend, Name: "judge",
		GenerateConfig: cfg, MaxTurns: 1, Retry: j.Retry})
}

// A sample is one judgement: the verdict, or why there is none.
type sample[T any] struct {
	verdict T
	ok      bool
	reason  string
}

// judgement is the outcome of a turn's samples, and what they cost.
type judgement[T any] struct {
	samples []sample[T]
	usage   agent.Usage
	calls   int
}

// judge asks the judge for a verdict on prompt Samples times, at once.
func judge[T any](ctx context.Context, j *Judge, a *agent.Agent, prompt string) judgement[T] {
	n := j.samples()
	out := judgement[T]{samples: make([]sample[T], n)}
	results := make([]*agent.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx := ctx
			if j.Timeout > 0 {
				var cancel context.CancelFunc
				sctx, cancel = context.WithTimeout(ctx, j.Timeout)
				defer cancel()
			}
			v, res, err := agent.RunTyped[T](sctx, a, genai.Text(prompt))
			results[i] = res
			if err != nil {
				out.samples[i] = sample[T]{reason: judgeFailure(err, j.Timeout, sctx)}
				return
			}
			out.samples[i] = sample[T]{verdict: v, ok: true}
		}()
	}
	wg.Wait()
	for _, res := range results {
		if res == nil {
			continue
		}
		out.usage = out.usage.Plus(res.Usage)
		for _, t := range res.Turns {
			out.calls += t.Attempts
		}
	}
	return out
}

// judgeFailure says why a sample gave no verdict.
func judgeFailure(err error, timeout time.Duration, ctx context.Context) string {
	var stop *agent.StopError
	var output *agent.OutputError
	var model *agent.ModelError
	switch {
	case timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the judge timed out (%v)", timeout)
	case errors.As(err, &output):
		return fmt.Sprintf("the judge answered no verdict (%v): %s", output.Err, oneLine(output.Raw, 200))
	case errors.As(err, &stop):
		return fmt.Sprintf("the judge refused: %v", stop)
	case errors.As(err, &model):
		return fmt.Sprintf("the judge model failed: %v", model.Err)
	}
	return fmt.Sprintf("the judge failed: %v", err)
}

// firstReason returns the reason of the first sample without a verdict.
func firstReason[T any](samples []sample[T]) string {
	for _, s := range samples {
		if !s.ok {
			return s.reason
		}
	}
	return ""
}

// validity is the final_response_match_v2 judge's verdict.
type validity struct {
	Reasoning string `json:"reasoning" jsonschema:"why the agent's answer is valid or not, checked against the reference answer"`
	Valid     bool   `json:"is_the_agent_response_valid" jsonschema:"true when the agent's answer is valid, false when it is not"`
}

const responseMatchInstructions = `You rate the answers of an AI agent that uses tools to answer its users. ` +
	`You get a user's message, the agent's answer, and a reference answer a person wrote, which is correct. ` +
	`Decide whether the agent's answer is valid: whether it gives what the reference gives.

Rules:
- Judge what the answer says, not its form: an abbreviation and the full name, a list and sentences, 1000000 and 1,000,000 are the same, unless the user asked for one form.
- The reference may give only the key facts: an answer that has them and says more is valid.
- Trust the reference's facts, arithmetic and dates; do not compute them again yourself.
- Units matter: 100 miles is not 100 km.
- An answer that says it cannot help, or lacks the data, when the reference answers, is not valid.
- Numbers rounded differently are valid when the rounding follows the usual precision for that kind of number and the user asked for none.
- Tables: look for the entities and values the user asked for; their layout does not matter.

Answer with your reasoning and your verdict.`

// FinalResponseMatch is ADK's final_response_match_v2: a judge decides, at
// each turn, whether the agent's final answer is valid against the
// expected one; a turn scores 1 when the majority of the judge's samples
// say valid (a tie is invalid), 0 otherwise, and a run scores the fraction
// of valid turns among those judged. A turn none of whose samples gave a
// verdict is not evaluated, nor a run with no such turn.
//
// It needs expected turns: a scenario case is not evaluated.
type FinalResponseMatch struct {
	Judge     *Judge
	Threshold float64
}

// Name returns "final_response_match_v2".
func (FinalResponseMatch) Name() string { return MetricFinalResponseMatch }

// Evaluate scores a run.
func (m FinalResponseMatch) Evaluate(ctx context.Context, in *Input) (*Score, error) {
	switch {
	case m.Judge == nil:
		return NotEvaluatedScore(m.Threshold, "%s needs a judge: set Options.Judge, or the metric's Judge", m.Name()), nil
	case in.Expected == nil:
		return NotEvaluatedScore(m.Threshold, "%s needs expected turns; the case is a scenario", m.Name()), nil
	}
	a, err := m.Judge.agent(responseMatchInstructions)
	if err != nil {
		return NotEvaluatedScore(m.Threshold, "the judge cannot run: %v", err), nil
	}
	s := &Score{Threshold: m.Threshold}
	var valid, judged int
	for i := range min(len(in.Actual), len(in.Expected)) {
		actual, expected := &in.Actual[i], &in.Expected[i]
		prompt := fmt.Sprintf("<user_message>\n%s\n</user_message>\n\n<agent_answer>\n%s\n</agent_answer>\n\n<reference_answer>\n%s\n</reference_answer>",
			orNone(expected.UserText()), orNone(actual.ResponseText()), orNone(expected.ResponseText()))
		jr := judge[validity](ctx, m.Judge, a, prompt)
		s.Usage, s.JudgeCalls = s.Usage.Plus(jr.usage), s.JudgeCalls+jr.calls
		var yes, no []validity
		for _, smp := range jr.samples {
			switch {
			case smp.ok && smp.verdict.Valid:
				yes = append(yes, smp.verdict)
			case smp.ok:
				no = append(no, smp.verdict)
			}
		}
		ts := TurnScore{}
		switch {
		case len(yes)+len(no) == 0:
			ts = TurnScore{Status: NotEvaluated, Reason: firstReason(jr.samples)}
		case len(yes) > len(no):
			ts.Value = 1
			ts.Reason = fmt.Sprintf("valid (%d of %d samples): %s", len(yes), len(jr.samples), yes[0].Reasoning)
		default:
			ts.Reason = fmt.Sprintf("invalid (%d of %d samples): %s", len(no), len(jr.samples), no[0].Reasoning)
			ts.Detail = fmt.Sprintf("expected answer: %s\nactual answer:   %s", quote(expected.ResponseText()), quote(actual.ResponseText()))
		}
		if ts.Status != NotEvaluated {
			judged++
			valid += int(ts.Value)
		}
		s.Turns = append(s.Turns, ts)
	}
	if judged == 0 {
		s.Status = NotEvaluated
		s.Reason = "no turn was judged"
		if len(s.Turns) > 0 {
			s.Reason += ": " + s.Turns[0].Reason
		}
		return s, nil
	}
	s.Value = float64(valid) / float64(judged)
	return s, nil
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// rubricVerdicts is the rubric judges' verdict.
type rubricVerdicts struct {
	Verdicts []rubricVerdict `json:"verdicts" jsonschema:"one verdict per property, in the order given"`
}

type rubricVerdict struct {
	ID        string `json:"property_id" jsonschema:"the property's id, as given"`
	Rationale string `json:"rationale" jsonschema:"why the property holds or not"`
	Holds     bool   `json:"holds" jsonschema:"true when the property holds, false when it does not"`
}

const responseQualityInstructions = `You check the turn of an AI agent against properties its developer requires. ` +
	`You get the agent's instructions, the tools it has, the user's message, the tool calls the agent made with their results, and its final answer. ` +
	`For each property, decide whether the agent's final answer has it.

Rules:
- Trust a tool result that came back without an error as fact, when the call was a sound one for the user's message; do not trust a result the agent misread or a call with wrong arguments.
- Judge the final answer, using the tool calls and results as evidence of what the agent knew.
- A property that does not apply to this turn holds.
- Give every property a verdict, with the property's id.`

const toolUseInstructions = `You check how an AI agent used its tools, against properties its developer requires. ` +
	`You get the tools the agent has, the user's message, and the tool calls the agent made with their results. ` +
	`For each property, decide whether the agent's tool use has it.

Rules:
- Judge the calls: which tools, in which order, with which arguments, and how the agent reacted to their results.
- A property that does not apply to this turn holds.
- Give every property a verdict, with the property's id.`

// ResponseQuality is ADK's rubric_based_final_response_quality_v1: a judge
// checks the agent's final answer at each turn against rubrics (the
// metric's own, and the case's and turn's rubrics of type
// FINAL_RESPONSE_QUALITY; as in ADK, those without a type are left out).
// Each rubric's verdict is the majority of the judge's samples (a tie is
// no); a turn scores the mean of its rubrics, and a run the mean of all its
// turns' rubric verdicts.
//
// It needs no expected turns: scenario cases are judged too.
type ResponseQuality struct {
	Judge     *Judge
	Threshold float64
	Rubrics   []Rubric
}

// Name returns "rubric_based_final_response_quality_v1".
func (ResponseQuality) Name() string { return MetricRubricResponseQuality }

// Evaluate scores a run.
func (m ResponseQuality) Evaluate(ctx context.Context, in *Input) (*Score, error) {
	return rubricMetric{name: m.Name(), judge: m.Judge, threshold: m.Threshold, rubrics: m.Rubrics,
		kind: RubricFinalResponse, instructions: responseQualityInstructions}.evaluate(ctx, in)
}

// ToolUseQuality is ADK's rubric_based_tool_use_quality_v1: as
// [ResponseQuality], but the judge checks the agent's tool calls and their
// results, against rubrics of type TOOL_USE_QUALITY.
type ToolUseQuality struct {
	Judge     *Judge
	Threshold float64
	Rubrics   []Rubric
}

// Name returns "rubric_based_tool_use_quality_v1".
func (ToolUseQuality) Name() string { return MetricRubricToolUse }

// Evaluate scores a run.
func (m ToolUseQuality) Evaluate(ctx context.Context, in *Input) (*Score, error) {
	return rubricMetric{name: m.Name(), judge: m.Judge, threshold: m.Threshold, rubrics: m.Rubrics,
		kind: RubricToolUse, instructions: toolUseInstructions, toolUse: true}.evaluate(ctx, in)
}

// rubricMetric is what the two rubric-based metrics share.
type rubricMetric struct {
	name         string
	judge        *Judge
	threshold    float64
	rubrics      []Rubric
	kind         string
	instructions string
	toolUse      bool
}

// effective returns the rubrics a turn is graded against, as ADK's
// create_effective_rubrics_list makes them: the metric's, then the case's
// and the turn's of the metric's type; an ID given twice is an error.
func (m rubricMetric) effective(c *Case, t *Turn, dropped map[string]bool) ([]Rubric, error) {
	var out []Rubric
	seen := map[string]bool{}
	add := func(rs []Rubric, filter bool) error {
		for _, r := range rs {
			if filter && r.Type != m.kind {
				dropped[r.ID] = true
				continue
			}
			if seen[r.ID] {
				return fmt.Errorf("two rubrics have the ID %q", r.ID)
			}
			seen[r.ID] = true
			out = append(out, r)
		}
		return nil
	}
	if err := add(m.rubrics, false); err != nil {
		return nil, err
	}
	if err := add(c.Rubrics, true); err != nil {
		return nil, err
	}
	if t != nil {
		if err := add(t.Rubrics, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (m rubricMetric) evaluate(ctx context.Context, in *Input) (*Score, error) {
	if m.judge == nil {
		return NotEvaluatedScore(m.threshold, "%s needs a judge: set Options.Judge, or the metric's Judge", m.name), nil
	}
	a, err := m.judge.agent(m.instructions)
	if err != nil {
		return NotEvaluatedScore(m.threshold, "the judge cannot run: %v", err), nil
	}
	s := &Score{Threshold: m.threshold}
	type tally struct {
		sum float64
		n   int
	}
	byID := map[string]*tally{}
	var order []string
	var sum float64
	var n int
	dropped := map[string]bool{}
	for i := range in.Actual {
		var expected *Turn
		if i < len(in.Expected) {
			expected = &in.Expected[i]
		}
		rubrics, err := m.effective(in.Case, expected, dropped)
		if err != nil {
			return NotEvaluatedScore(m.threshold, "%v", err), nil
		}
		if len(rubrics) == 0 {
			s.Turns = append(s.Turns, TurnScore{Status: NotEvaluated, Reason: "no rubrics to grade the turn against"})
			continue
		}
		jr := judge[rubricVerdicts](ctx, m.judge, a, m.prompt(&in.Actual[i], rubrics))
		s.Usage, s.JudgeCalls = s.Usage.Plus(jr.usage), s.JudgeCalls+jr.calls
		ts := m.majority(rubrics, jr.samples)
		for _, rs := range ts.Rubrics {
			if !rs.Scored {
				continue
			}
			sum += rs.Value
			n++
			t := byID[rs.ID]
			if t == nil {
				t = &tally{}
				byID[rs.ID] = t
				order = append(order, rs.ID)
			}
			t.sum += rs.Value
			t.n++
		}
		s.Turns = append(s.Turns, ts)
	}
	for _, id := range order {
		t := byID[id]
		s.Rubrics = append(s.Rubrics, RubricScore{ID: id, Value: t.sum / float64(t.n), Scored: true,
			Rationale: "the mean of the turns' verdicts; each turn has its own rationale"})
	}
	if len(dropped) > 0 {
		s.Reason = fmt.Sprintf("case and turn rubrics of another type than %s, or of none, are left out, as ADK leaves them out: %s",
			m.kind, strings.Join(sortedKeys(dropped), ", "))
	}
	if n == 0 {
		s.Status = NotEvaluated
		reason := "no rubric got a verdict"
		for _, t := range s.Turns {
			if t.Reason != "" {
				reason += ": " + t.Reason
				break
			}
		}
		s.Reason = strings.TrimPrefix(s.Reason+"; "+reason, "; ")
		return s, nil
	}
	s.Value = sum / float64(n)
	return s, nil
}

// majority combines a turn's samples rubric by rubric, as ADK's
// MajorityVotePerInvocationResultsAggregator does: yes when more samples
// say yes than no; no otherwise; no verdict when no sample gave one.
func (m rubricMetric) majority(rubrics []Rubric, samples []sample[rubricVerdicts]) TurnScore {
	ts := TurnScore{}
	var failing []string
	var sum float64
	var n int
	for _, r := range rubrics {
		var yes, no []rubricVerdict
		for _, smp := range samples {
			if !smp.ok {
				continue
			}
			for _, v := range smp.verdict.Verdicts {
				if strings.TrimSpace(v.ID) != r.ID {
					continue
				}
				if v.Holds {
					yes = append(yes, v)
				} else {
					no = append(no, v)
				}
				break
			}
		}
		rs := RubricScore{ID: r.ID}
		switch {
		case len(yes)+len(no) == 0:
		case len(yes) > len(no):
			rs.Value, rs.Scored, rs.Rationale = 1, true, yes[0].Rationale
		default:
			rs.Scored, rs.Rationale = true, no[0].Rationale
			failing = append(failing, fmt.Sprintf("%s (%q): %s", r.ID, oneLine(r.Text, 80), no[0].Rationale))
		}
		if rs.Scored {
			sum += rs.Value
			n++
		}
		ts.Rubrics = append(ts.Rubrics, rs)
	}
	if n == 0 {
		reason := firstReason(samples)
		if reason == "" {
			reason = "the judge gave no verdict on any rubric"
		}
		return TurnScore{Status: NotEvaluated, Reason: reason, Rubrics: ts.Rubrics}
	}
	ts.Value = sum / float64(n)
	ts.Reason = fmt.Sprintf("%d of %d rubrics hold", int(sum), n)
	if len(failing) > 0 {
		ts.Detail = "rubrics that do not hold:\n  " + strings.Join(failing, "\n  ")
	}
	return ts
}

// prompt writes what the rubric judge reads about a turn.
func (m rubricMetric) prompt(t *Turn, rubrics []Rubric) string {
	var b strings.Builder
	instructions, tools := appInfo(t.AppDetails)
	if !m.toolUse {
		fmt.Fprintf(&b, "<developer_instructions>\n%s\n</developer_instructions>\n\n", orNone(instructions))
	}
	fmt.Fprintf(&b, "<available_tools>\n%s\n</available_tools>\n\n", tools)
	fmt.Fprintf(&b, "<user_message>\n%s\n</user_message>\n\n", orNone(t.UserText()))
	fmt.Fprintf(&b, "<tool_calls>\n%s\n</tool_calls>\n\n", toolSteps(t))
	if !m.toolUse {
		fmt.Fprintf(&b, "<final_answer>\n%s\n</final_answer>\n\n", orNone(t.ResponseText()))
	}
	b.WriteString("<properties>\n")
	for _, r := range rubrics {
		fmt.Fprintf(&b, "- id %s: %s\n", r.ID, r.Text)
	}
	b.WriteString("</properties>")
	return b.String()
}

// appInfo reads the instructions of the app's first agent, and every
// agent's tool declarations, from app_details.
func appInfo(raw json.RawMessage) (instructions, tools string) {
	tools = "The agent has no tools."
	if len(raw) == 0 {
		return "", tools
	}
	var app struct {
		AgentDetails map[string]struct {
			Instructions     string            `json:"instructions"`
			ToolDeclarations []json.RawMessage `json:"tool_declarations"`
		} `json:"agent_details"`
	}
	if err := json.Unmarshal(raw, &app); err != nil {
		return "", tools
	}
	decls := map[string][]json.RawMessage{}
	for _, name := range sortedKeys(app.AgentDetails) {
		d := app.AgentDetails[name]
		if instructions == "" {
			instructions = d.Instructions
		}
		if len(d.ToolDeclarations) > 0 {
			decls[name] = d.ToolDeclarations
		}
	}
	if len(decls) > 0 {
		if b, err := json.MarshalIndent(map[string]any{"tool_declarations": decls}, "", "  "); err == nil {
			tools = string(b)
		}
	}
	return instructions, tools
}

// toolSteps writes a turn's tool calls, each with its response (matched by
// id, else by position), as numbered JSON steps.
func toolSteps(t *Turn) string {
	calls, responses := t.Calls(), t.Responses()
	if len(calls) == 0 {
		return "No tool was called."
	}
	byID := map[string]*genai.FunctionResponse{}
	for _, r := range responses {
		if r.ID != "" {
			byID[r.ID] = r
		}
	}
	type step struct {
		Step     int                     `json:"step"`
		Call     *genai.FunctionCall     `json:"tool_call"`
		Response *genai.FunctionResponse `json:"tool_response,omitempty"`
	}
	steps := make([]step, len(calls))
	for i, c := range calls {
		steps[i] = step{Step: i, Call: c, Response: byID[c.ID]}
		if c.ID == "" && i < len(responses) && responses[i].Name == c.Name {
			steps[i].Response = responses[i]
		}
	}
	b, err := json.MarshalIndent(steps, "", "  ")
	if err != nil {
		return fmt.Sprint(steps)
	}
	return string(b)
}
