package eval

import (
	"encoding/json"
	"strings"

	"google.golang.org/genai"
)

// A Set is an eval set: cases that each describe a conversation with the
// agent and what it should do. It is ADK's EvalSet, field for field, so
// that a set written by ADK loads here and a set saved here loads in ADK
// (see [LoadFile] and [Set.WriteFile]). Build one in Go or load one.
type Set struct {
	// ID identifies the set (eval_set_id); it names the set's subtest and
	// its results.
	ID string
	// Name and Description describe it.
	Name        string
	Description string
	// Cases are the set's cases, in file order.
	Cases []Case
	// Created is creation_timestamp: seconds since the Unix epoch, as ADK
	// writes it (a float); zero when unknown.
	Created float64

	// Criteria are the metrics and thresholds read from a test_config.json
	// file: the file itself, when LoadFile was given one, or the
	// test_config.json beside the eval set file, as ADK's AgentEvaluator
	// reads it. Nil when there was none; the runner then uses
	// [DefaultCriteria] unless Options.Metrics says otherwise. It is not
	// part of the eval set file: [Criteria.WriteFile] writes it.
	Criteria *Criteria

	// Extra holds the keys of the file that ADK's format does not define,
	// as written, so that they are saved again (ADK keeps them too).
	Extra map[string]json.RawMessage
}

// A Case is one eval case (ADK's EvalCase): a scripted conversation, turn
// by turn, with what the agent is expected to do at each turn, or a
// scenario that a simulated user plays out.
type Case struct {
	// ID identifies the case in its set (eval_id): it names the case's
	// subtest.
	ID string
	// Turns is the scripted conversation (conversation): each turn's user
	// message and what the agent should answer and call. Exactly one of
	// Turns and Scenario is set.
	Turns []Turn
	// Scenario is a conversation a simulated user plays out
	// (conversation_scenario); see [Options].Simulator.
	Scenario *Scenario
	// Session is ADK's session_input: the app, the user and the session
	// state an ADK agent starts with. The runner hands it to
	// Options.Start, which decides what a run starts from.
	Session *SessionInput
	// Rubrics apply to every turn of the case (rubrics): the rubric-based
	// judged metrics grade the turns against them.
	Rubrics []Rubric
	// FinalState is ADK's final_session_state: the session state expected
	// at the end. No metric reads it, in ADK or here.
	FinalState map[string]any
	// Created is creation_timestamp (see [Set].Created).
	Created float64
	// Extra holds the case's keys that ADK's format does not define.
	Extra map[string]json.RawMessage
}

// A Turn is one exchange of a conversation (ADK's Invocation): the user's
// message, the agent's final answer, and what happened in between. In a
// case it says what is expected; in a [Run] it records what the agent did.
type Turn struct {
	// ID identifies the turn (invocation_id); optional.
	ID string
	// User is the user's message (user_content). Required.
	User *genai.Content
	// Response is the agent's final answer (final_response); nil when the
	// case does not say.
	Response *genai.Content

	// ToolCalls are the tool calls of the turn, in order
	// (intermediate_data.tool_uses).
	ToolCalls []*genai.FunctionCall
	// ToolResponses are the tools' responses, in order
	// (intermediate_data.tool_responses).
	ToolResponses []*genai.FunctionResponse
	// Intermediate are the answers given before the final one, by the
	// agent or its sub-agents (intermediate_data.intermediate_responses).
	Intermediate []AgentResponse
	// Events is the other form ADK gives intermediate_data, the one it
	// records for actual runs (intermediate_data.invocation_events): the
	// turn's events in order, tool calls and responses as function_call and
	// function_response parts. A turn has Events or the three fields above,
	// not both; [Turn.Calls] and [Turn.Responses] read either.
	Events []Event
	// DataExtra holds intermediate_data's keys that ADK does not define.
	DataExtra map[string]json.RawMessage

	// Rubrics apply to this turn only (rubrics).
	Rubrics []Rubric
	// AppDetails is app_details as written: the agents of the app, their
	// instructions and tool declarations, which the judges read.
	AppDetails json.RawMessage
	// Created is creation_timestamp (see [Set].Created).
	Created float64
	// Extra holds the turn's keys that ADK's format does not define
	// (newer ADK versions add inference_call_count and duration here).
	Extra map[string]json.RawMessage
}

// An AgentResponse is an answer an agent gave before the final one: its
// author (an agent's name) and its parts.
type AgentResponse struct {
	Author string
	Parts  []*genai.Part
}

// An Event is one event of a turn, as ADK records it: its author (the user
// or an agent) and its content.
type Event struct {
	Author  string
	Content *genai.Content
}

// SessionInput is ADK's session_input: what an ADK session starts with.
type SessionInput struct {
	AppName string
	UserID  string
	// State is the session state; ADK agents read it.
	State map[string]any
	// Extra holds keys that ADK's format does not define.
	Extra map[string]json.RawMessage
}

// A Scenario is a conversation that a simulated user plays out
// (conversation_scenario): it opens with StartingPrompt, then follows
// Plan, turn by turn, until it is done.
type Scenario struct {
	StartingPrompt string
	Plan           string
	// Persona is user_persona as written: a persona object, or the id of
	// one of ADK's prebuilt personas ("NOVICE", "EXPERT"…). The simulator
	// describes it to its model.
	Persona json.RawMessage
	// Extra holds keys that ADK's format does not define.
	Extra map[string]json.RawMessage
}

// A Rubric is one property a judge checks an answer or a trajectory for.
type Rubric struct {
	// ID identifies the rubric (rubric_id).
	ID string
	// Text is the property (rubric_content.text_property): "The answer
	// gives the temperature in Celsius."
	Text string
	// Description says how to read the rubric's results; optional.
	Description string
	// Type is RubricFinalResponse, RubricToolUse, or empty: a
	// rubric-based metric grades the case's and turns' rubrics of its own
	// type, and those without a type.
	Type string
	// Extra holds keys that ADK's format does not define.
	Extra map[string]json.RawMessage
}

// The rubric types the rubric-based metrics read.
const (
	RubricFinalResponse = "FINAL_RESPONSE_QUALITY"
	RubricToolUse       = "TOOL_USE_QUALITY"
)

// Calls returns the turn's tool calls: ToolCalls, or the function calls of
// its Events, in order.
func (t *Turn) Calls() []*genai.FunctionCall {
	if t.Events == nil {
		return t.ToolCalls
	}
	var out []*genai.FunctionCall
	for _, e := range t.Events {
		if e.Content == nil {
			continue
		}
		for _, p := range e.Content.Parts {
			if p != nil && p.FunctionCall != nil {
				out = append(out, p.FunctionCall)
			}
		}
	}
	return out
}

// Responses returns the turn's tool responses: ToolResponses, or the
// function responses of its Events, in order.
func (t *Turn) Responses() []*genai.FunctionResponse {
	if t.Events == nil {
		return t.ToolResponses
	}
	var out []*genai.FunctionResponse
	for _, e := range t.Events {
		if e.Content == nil {
			continue
		}
		for _, p := range e.Content.Parts {
			if p != nil && p.FunctionResponse != nil {
				out = append(out, p.FunctionResponse)
			}
		}
	}
	return out
}

// UserText returns the text of the user's message.
func (t *Turn) UserText() string { return contentText(t.User) }

// ResponseText returns the text of the final answer as ADK reads it: the
// text of every part that has some, joined by newlines.
func (t *Turn) ResponseText() string { return contentText(t.Response) }

// contentText returns the text of c's parts that have text, joined by
// newlines, as ADK's evaluators read a content (thought parts included,
// as ADK includes them).
func contentText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var texts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// UserTurn returns a turn whose user message is text: a convenience for
// writing cases in Go.
//
//	eval.Case{ID: "paris", Turns: []eval.Turn{
//		eval.UserTurn("What's the weather in Paris?").
//			WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}).
//			WithResponse("It is sunny in Paris."),
//	}}
func UserTurn(text string) Turn {
	return Turn{User: genai.NewContentFromText(text, genai.RoleUser)}
}

// WithCalls returns t expecting these tool calls.
func (t Turn) WithCalls(calls ...*genai.FunctionCall) Turn {
	t.ToolCalls = calls
	return t
}

// WithResponse returns t expecting this final answer.
func (t Turn) WithResponse(text string) Turn {
	t.Response = genai.NewContentFromText(text, genai.RoleModel)
	return t
}
