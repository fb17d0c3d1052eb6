package temporalagent

// What crosses Temporal: the workflow's input and output and the
// activities' inputs and outputs, all encoded as JSON by the default data
// converter. None of them holds a credential, a tool or a Go error.

import (
	"encoding/json"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Input is the workflow's input, for callers that start the workflow
// themselves rather than through Client.Start: as a child workflow of
// their own, or in the SDK's test environment.
//
//	workflow.ExecuteChildWorkflow(ctx, temporalagent.WorkflowName,
//		temporalagent.Input{Agent: "weather", Contents: contents})
type Input struct {
	// Agent names the agent, as registered on the workers.
	Agent string

	// Contents is the conversation, as for agent.Run.
	Contents []*genai.Content

	// Context is what an Observer of the starting process carries from
	// its context (see agent.Carrier), for the run to continue: with
	// otelagent's, the span the run's span starts under. Client.Start
	// fills it in with the Client's observer (see WithObserver); a
	// workflow that starts the run as a child fills it in with its own:
	// obs.Carry(ctx). Nil starts the run with nothing carried.
	Context map[string]string `json:",omitempty"`
}

// Output is the workflow's result, for callers that run the workflow
// themselves: decode the workflow's result into it, and hand it to
// [RunResult] with the workflow's error.
type Output struct{ o runOutput }

// MarshalJSON encodes the output as the workflow returns it.
func (o Output) MarshalJSON() ([]byte, error) { return json.Marshal(o.o) }

// UnmarshalJSON decodes the output the workflow returned.
func (o *Output) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &o.o) }

// RunResult returns the Result and error of a run whose workflow returned
// out (nil when it failed) and err, as [Run.Result] returns them: the
// partial result of a failed run comes from err.
func RunResult(out *Output, err error) (*agent.Result, error) {
	var o runOutput
	if out != nil {
		o = out.o
	}
	return outcome(err, &o)
}

// runInput is the workflow's input: a new run (the fields of Input), or
// the continuation of one that continued as new.
type runInput struct {
	Agent    string
	Contents []*genai.Content  // the history so far: at first, the run's input
	State    *carried          `json:",omitempty"` // nil for a new run
	Context  map[string]string `json:",omitempty"` // a new run's Input.Context
	Served   *servedInput      `json:",omitempty"` // a run a Runner serves
}

// carried is what a run carries over a continue-as-new, besides its
// history.
type carried struct {
	Settings     settings
	Turns        []turnRecord
	Usage        agent.Usage
	Agents       map[string]agent.Usage `json:",omitempty"` // of the agents the calls ran (AsTool), by name
	Typed        agent.TypedState       // a typed run's state
	Working      []*genai.Content       `json:",omitempty"` // the shortened history PrepareHistory made, if it did
	PromptTokens int
	Decided      []string       `json:",omitempty"` // the approval ids decided so far, in order
	Cache        agent.CacheRef `json:",omitempty"` // the cache the last model call named
	Served       *servedLog     `json:",omitempty"` // a served run's log
}

// runOutput is the workflow's result, and the partial result a failed run
// carries in its failure: the history and the turns, compacted.
type runOutput struct {
	History []*genai.Content
	Turns   []turnRecord
	Usage   agent.Usage            // the run's own
	Name    string                 `json:",omitempty"` // the agent's Config.Name
	Agents  map[string]agent.Usage `json:",omitempty"` // of the agents the calls ran (AsTool), by name
	Output  json.RawMessage        `json:",omitempty"` // a typed run's answer
	// Served is a served run's final view, read once the workflow is
	// closed without any worker (closed.go).
	Served *finalLog `json:",omitempty"`
}

// turnRecord is an agent.Turn without what the history already holds: the
// model's content and the calls are history[At], and the results are the
// function responses of history[At+1].
type turnRecord struct {
	Response     *genai.GenerateContentResponse // the first candidate's content left out when At >= 0
	At           int                            // the model content's index in the history; -1 when it is not there
	Durations    []time.Duration                // of the calls, in call order
	Usage        agent.Usage
	FinishReason genai.FinishReason `json:",omitempty"`
	Attempts     int
	Latency      time.Duration
	ToolTime     time.Duration

	Continuations int `json:",omitempty"`
}

// modelInput is the model activity's input.
type modelInput struct {
	Agent        string
	Turn         int              // the turn, from 0, over the whole run
	Contents     []*genai.Content // the working history
	PromptTokens int              // of the previous model call
	Attempt      int              // the turn's attempt that this activity's first attempt is, from 1
	Reasks       int              // re-asks made so far in the turn
	MaxReasks    int
	Start        time.Time         // when the turn's model calls began
	Usage        agent.Usage       // the turn's usage so far (re-asked responses)
	Typed        agent.TypedState  // a typed run's state
	Run          map[string]string `json:",omitempty"` // what the agent's Observer carries of the run
	Cache        agent.CacheRef    `json:",omitempty"` // the cache the run's last model call named (Config.Cache)
	// Browser declares the browser tools of a served run, which the call
	// adds to the agent's tools (see browser.go).
	Browser []agentserver.ToolDecl `json:",omitempty"`

	// A continuation hop of an answer the API cut (see continuation.go):
	// which one, the token it sends, and the calls of the hops before it.
	Hop         int    `json:",omitempty"`
	Token       []byte `json:",omitempty"`
	CallsBefore int    `json:",omitempty"`
}

// modelOutput is the model activity's result.
type modelOutput struct {
	Response *genai.GenerateContentResponse
	Attempt  int              // the turn's attempt that succeeded
	Plans    []callPlan       // one per function call of the response, when it is usable
	Working  []*genai.Content `json:",omitempty"` // what PrepareHistory returned, when it shortened the history
	Model    string           `json:",omitempty"` // the model called, which the answers to its calls are made for
	Cache    agent.CacheRef   `json:",omitempty"` // the cache the call named, if any
}

// callPlan is what the worker decided about one function call: its
// answer, when it needs no tool, or how it runs.
type callPlan struct {
	Answer    *answer       `json:",omitempty"`
	Approval  bool          `json:",omitempty"`
	Browser   bool          `json:",omitempty"` // a browser tool's call: the run waits for its result
	Timeout   time.Duration `json:",omitempty"` // start-to-close
	Heartbeat time.Duration `json:",omitempty"`
	Attempts  int           `json:",omitempty"`
	Local     bool          `json:",omitempty"` // a local activity
}

// answer is a toolset.Result without its Go error, but for whether it
// was a denial (agent.ErrDenied), which the history marks.
type answer struct {
	Output  any
	IsError bool `json:",omitempty"`
	Denied  bool `json:",omitempty"`
}

// result is the toolset.Result a stands for.
func (a *answer) result() toolset.Result {
	r := toolset.Result{Output: a.Output, IsError: a.IsError}
	if a.Denied {
		r.Err = agent.ErrDenied
	}
	return r
}

// toolInput is the tool activity's input.
type toolInput struct {
	Agent    string
	Turn     int
	Index    int
	Call     *genai.FunctionCall
	Approved bool              `json:",omitempty"`
	Run      map[string]string `json:",omitempty"` // what the agent's Observer carries of the run
}

// toolOutput is the tool activity's result.
type toolOutput struct {
	Output   any
	IsError  bool                   `json:",omitempty"`
	Media    []toolset.Media        `json:",omitempty"`
	Agents   map[string]agent.Usage `json:",omitempty"` // of the agents the call ran (AsTool), by name
	Duration time.Duration
}

// compact returns turns as records, given the history they are in.
func compact(history []*genai.Content, turns []agent.Turn, at []int) []turnRecord {
	out := make([]turnRecord, len(turns))
	for i, t := range turns {
		r := turnRecord{At: at[i], Usage: t.Usage, FinishReason: t.FinishReason, Attempts: t.Attempts,
			Latency: t.Latency, ToolTime: t.ToolTime, Continuations: t.Continuations}
		r.Response = t.Response
		if r.At >= 0 && t.Response != nil && len(t.Response.Candidates) > 0 && t.Response.Candidates[0] != nil {
			resp := *t.Response
			resp.Candidates = append([]*genai.Candidate(nil), resp.Candidates...)
			c := *resp.Candidates[0]
			c.Content = nil
			resp.Candidates[0] = &c
			r.Response = &resp
		}
		for _, res := range t.Results {
			r.Durations = append(r.Durations, res.Duration)
		}
		out[i] = r
	}
	return out
}

// expand returns the turns records stand for, and where each turn's model
// content is in history.
func expand(history []*genai.Content, records []turnRecord) ([]agent.Turn, []int) {
	turns := make([]agent.Turn, len(records))
	at := make([]int, len(records))
	for i, r := range records {
		t := agent.Turn{Response: r.Response, Usage: r.Usage, FinishReason: r.FinishReason, Attempts: r.Attempts,
			Latency: r.Latency, ToolTime: r.ToolTime, Continuations: r.Continuations}
		at[i] = r.At
		if r.At >= 0 && r.At < len(history) {
			content := history[r.At]
			if r.Response != nil && len(r.Response.Candidates) > 0 && r.Response.Candidates[0] != nil {
				resp := *r.Response
				resp.Candidates = append([]*genai.Candidate(nil), resp.Candidates...)
				c := *resp.Candidates[0]
				c.Content = content
				resp.Candidates[0] = &c
				t.Response = &resp
			}
			t.Calls = agent.FunctionCalls(content)
			if len(t.Calls) > 0 && r.At+1 < len(history) {
				t.Results = results(t.Calls, history[r.At+1], r.Durations)
			}
		}
		turns[i] = t
	}
	return turns, at
}

// results reads the answers to calls back from the content that answered
// them: a denied call's (geminiadapter.Denied) with Err agent.ErrDenied.
func results(calls []*genai.FunctionCall, answers *genai.Content, durations []time.Duration) []agent.ToolResult {
	out := make([]agent.ToolResult, len(calls))
	for i, call := range calls {
		out[i].Call = call
		if i < len(durations) {
			out[i].Duration = durations[i]
		}
		if i >= len(answers.Parts) || answers.Parts[i] == nil || answers.Parts[i].FunctionResponse == nil {
			continue
		}
		fr := answers.Parts[i].FunctionResponse
		if reason, denied := geminiadapter.Denied(fr); denied {
			out[i].Result = toolset.Result{Output: reason, IsError: true, Err: agent.ErrDenied}
		} else if msg, ok := fr.Response["error"]; ok {
			out[i].Result = toolset.Result{Output: msg, IsError: true}
		} else {
			out[i].Result = toolset.Result{Output: fr.Response["result"]}
		}
		for _, p := range fr.Parts {
			if p != nil && p.InlineData != nil {
				out[i].Media = append(out[i].Media, toolset.Media{MIMEType: p.InlineData.MIMEType, Data: p.InlineData.Data})
			}
		}
	}
	return out
}

// result is the agent.Result o stands for.
func (o *runOutput) result() *agent.Result {
	if o == nil {
		return &agent.Result{}
	}
	turns, _ := expand(o.History, o.Turns)
	res := agent.NewResult(o.History, turns, o.Usage, o.Name, o.Agents)
	if len(o.Output) > 0 {
		_ = json.Unmarshal(o.Output, &res.Output) // the workflow encoded it
	}
	return res
}
