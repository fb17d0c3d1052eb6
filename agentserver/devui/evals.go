package devui

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/runctx"
	"github.com/toolnexus/toolnexus-go/eval"
	"google.golang.org/genai"
)

// Limits of an eval run from the page: it spends the model's tokens, at
// the server's expense.
const (
	// maxEvalCases bounds the cases of one run.
	maxEvalCases = 20
	// maxEvalTurns bounds the turns of all its cases together.
	maxEvalTurns = 100
	// evalCaseTimeout bounds each case's run.
	evalCaseTimeout = 2 * time.Minute
)

// evalCase answers GET api/threads/{thread}/evalcase: the thread's stored
// conversation as an eval set of one case (ADK's format, package eval),
// each user message a turn, with the tool calls and the final answer the
// agent gave as what is expected.
func (h *handler) evalCase(r *http.Request, user string) (any, error) {
	id := r.PathValue("thread")
	if err := agentserver.CheckThreadID(id); err != nil {
		return nil, err
	}
	contents, err := h.s.History(r.Context(), user, id)
	if errors.Is(err, agentserver.ErrNotFound) {
		return nil, notFound("thread %q not found", id)
	}
	if err != nil {
		return nil, err
	}
	c := caseOf(id, contents)
	if len(c.Turns) == 0 {
		return nil, badRequest("empty_thread", "thread %q holds no user message to make a case of", id)
	}
	return &eval.Set{ID: "devui", Cases: []eval.Case{c}}, nil
}

// caseOf makes an eval case of a stored conversation: a turn per user
// message, with the calls the model made, the tools' responses, and the
// model's last text as the expected answer.
func caseOf(id string, contents []*genai.Content) eval.Case {
	c := eval.Case{ID: id, Created: float64(time.Now().Unix())}
	var turn *eval.Turn
	for _, content := range contents {
		if content == nil {
			continue
		}
		var responses []*genai.FunctionResponse
		var calls []*genai.FunctionCall
		var text strings.Builder
		for _, p := range content.Parts {
			switch {
			case p.FunctionResponse != nil:
				responses = append(responses, p.FunctionResponse)
			case p.FunctionCall != nil:
				calls = append(calls, p.FunctionCall)
			case p.Text != "" && !p.Thought:
				text.WriteString(p.Text)
			}
		}
		switch {
		case content.Role != genai.RoleModel && len(responses) == 0:
			c.Turns = append(c.Turns, eval.Turn{User: userOnly(content)})
			turn = &c.Turns[len(c.Turns)-1]
		case turn == nil:
			// Contents before the first user message: not a turn.
		case content.Role == genai.RoleModel:
			turn.ToolCalls = append(turn.ToolCalls, calls...)
			if text.Len() > 0 {
				turn.Response = genai.NewContentFromText(text.String(), genai.RoleModel)
			}
		default:
			turn.ToolResponses = append(turn.ToolResponses, responses...)
		}
	}
	return c
}

// userOnly returns a user message without its thought signatures, which
// are the model's and mean nothing in another conversation.
func userOnly(c *genai.Content) *genai.Content {
	out := &genai.Content{Role: genai.RoleUser}
	for _, p := range c.Parts {
		q := *p
		q.ThoughtSignature = nil
		out.Parts = append(out.Parts, &q)
	}
	return out
}

// evalReportJSON is the answer of an eval run.
type evalReportJSON struct {
	SetID        string         `json:"setId"`
	Status       string         `json:"status"`
	Passed       int            `json:"passed"`
	Failed       int            `json:"failed"`
	NotEvaluated int            `json:"notEvaluated"`
	Metrics      []string       `json:"metrics"`
	Cases        []evalCaseJSON `json:"cases"`
	DurationMs   float64        `json:"durationMs"`
}

type evalCaseJSON struct {
	ID      string           `json:"id"`
	Status  string           `json:"status"`
	Error   string           `json:"error,omitempty"`
	Metrics []evalMetricJSON `json:"metrics"`
}

type evalMetricJSON struct {
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Status    string  `json:"status"`
	// Reason is the metric's explanation of its score: why it was not
	// evaluated, or what failed.
	Reason string `json:"reason,omitempty"`
	// Turns are its scores of each turn, with their explanations.
	Turns []evalTurnJSON `json:"turns,omitempty"`
}

type evalTurnJSON struct {
	Value  float64 `json:"value"`
	Status string  `json:"status"`
	Reason string  `json:"reason,omitempty"`
	// Detail shows what was compared: the expected tool calls against
	// the actual ones, the expected answer against the actual one.
	Detail string `json:"detail,omitempty"`
}

// runEvals answers POST api/evals/run: it runs an eval set (ADK's
// format, as the body) against the agent with package eval's default
// criteria, once per case, and answers each case's scores.
func (h *handler) runEvals(r *http.Request, user string) (any, error) {
	var raw json.RawMessage
	if err := h.s.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	set, err := eval.Parse(raw, "the eval set")
	if err != nil {
		return nil, badRequest("bad_eval_set", "%v", err)
	}
	if len(set.Cases) == 0 {
		return nil, badRequest("bad_eval_set", "the eval set has no cases")
	}
	if len(set.Cases) > maxEvalCases {
		return nil, badRequest("bad_eval_set", "%d cases; the dev UI runs at most %d at once", len(set.Cases), maxEvalCases)
	}
	turns := 0
	for i, c := range set.Cases {
		if c.Scenario != nil {
			return nil, badRequest("bad_eval_set", "case %d (%s) is a scenario: it needs a user simulator, which the dev UI does not run", i, c.ID)
		}
		turns += len(c.Turns)
	}
	if turns > maxEvalTurns {
		return nil, badRequest("bad_eval_set", "%d turns; the dev UI runs at most %d at once", turns, maxEvalTurns)
	}
	if !h.startEval(user) {
		return nil, &agentserver.Error{Status: http.StatusTooManyRequests, Code: "eval_busy",
			Message: "an eval run of yours goes on: the dev UI runs one at a time", Err: agentserver.ErrTooManyRuns}
	}
	defer h.endEval(user)
	// The agent runs as it runs for the user (agentserver.RunUser); its
	// calls that need approval are decided as the case records they were
	// (eval.ReplayDecisions, Options.Approve's default): nobody is there
	// to decide.
	ctx := runctx.WithUser(r.Context(), user)
	rep, err := eval.Evaluate(ctx, set, eval.Options{Agent: h.s.Agent(), Runs: 1, Parallel: 1, CaseTimeout: evalCaseTimeout})
	if err != nil {
		return nil, err
	}
	out := &evalReportJSON{SetID: set.ID, Status: rep.Status.String(), Passed: rep.Passed, Failed: rep.Failed,
		NotEvaluated: rep.NotEvaluated, Metrics: rep.Metrics, Cases: []evalCaseJSON{},
		DurationMs: float64(rep.Duration.Microseconds()) / 1000}
	for _, cr := range rep.Cases {
		cj := evalCaseJSON{ID: cr.Case.ID, Status: cr.Status.String(), Metrics: []evalMetricJSON{}}
		for _, run := range cr.Runs {
			if run.Err != nil && cj.Error == "" {
				cj.Error = run.Err.Error()
			}
		}
		for i, m := range cr.Metrics {
			mj := evalMetricJSON{Metric: m.Metric, Value: m.Value, Threshold: m.Threshold, Status: m.Status.String(), Reason: m.Reason}
			// One run per case: its score explains the metric's.
			if len(cr.Runs) == 1 && i < len(cr.Runs[0].Scores) && cr.Runs[0].Scores[i] != nil {
				sc := cr.Runs[0].Scores[i]
				if mj.Reason == "" {
					mj.Reason = sc.Reason
				}
				for _, ts := range sc.Turns {
					mj.Turns = append(mj.Turns, evalTurnJSON{Value: ts.Value, Status: ts.Status.String(), Reason: ts.Reason, Detail: ts.Detail})
				}
			}
			cj.Metrics = append(cj.Metrics, mj)
		}
		out.Cases = append(out.Cases, cj)
	}
	return out, nil
}

// startEval marks user's eval run as going on; false when one already is.
func (h *handler) startEval(user string) bool {
	h.evalMu.Lock()
	defer h.evalMu.Unlock()
	if h.evaluating[user] {
		return false
	}
	if h.evaluating == nil {
		h.evaluating = map[string]bool{}
	}
	h.evaluating[user] = true
	return true
}

func (h *handler) endEval(user string) {
	h.evalMu.Lock()
	delete(h.evaluating, user)
	h.evalMu.Unlock()
}
