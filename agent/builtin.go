package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Built-in tools: Gemini's own tools (Google Search, code execution, URL
// context, file search, Maps), which the API runs during the model call,
// beside the functions the loop runs. What the model content says of them
// (toolCall and toolResponse parts on the Gemini API with
// includeServerSideToolInvocations, executableCode and codeExecutionResult
// parts for code execution) goes back to the API exactly as received, like
// every other part; the loop only reports it (EventServerToolCall,
// EventServerToolResult) and never runs it.

// checkBuiltin says why t cannot be one of Config.BuiltinTools, if it
// cannot.
func checkBuiltin(t *genai.Tool) error {
	switch {
	case t == nil:
		return errors.New("nil tool")
	case len(t.FunctionDeclarations) > 0:
		return errors.New("it declares functions: give the loop's tools in Config.Tools, where it runs them")
	case t.ComputerUse != nil:
		return errors.New("computer use calls functions that the client runs: it is not a built-in tool the API runs")
	case !isBuiltin(t):
		return errors.New("it sets no built-in tool (GoogleSearch, CodeExecution, URLContext, FileSearch, GoogleMaps…)")
	}
	return nil
}

// isBuiltin reports whether t is a tool the API runs itself: it sets a
// field other than FunctionDeclarations and ComputerUse.
func isBuiltin(t *genai.Tool) bool {
	if t == nil {
		return false
	}
	q := *t
	q.FunctionDeclarations, q.ComputerUse = nil, nil
	return !reflect.ValueOf(q).IsZero()
}

// hasBuiltin reports whether tools hold a built-in tool.
func hasBuiltin(tools []*genai.Tool) bool {
	for _, t := range tools {
		if isBuiltin(t) {
			return true
		}
	}
	return false
}

// serverCall and serverResult report whether p is the API's invocation of
// a built-in tool, or its result.
func serverCall(p *genai.Part) bool   { return p.ToolCall != nil || p.ExecutableCode != nil }
func serverResult(p *genai.Part) bool { return p.ToolResponse != nil || p.CodeExecutionResult != nil }

// ServerToolName returns the name of the built-in tool a part of a model
// content is the invocation or the result of, as the API's tool fields
// name it: "google_search" (toolType GOOGLE_SEARCH_WEB),
// "google_search_image", "url_context", "google_maps", "file_search",
// "media_processing", "code_execution" (executableCode and
// codeExecutionResult parts), or the toolType in lower case for one this
// package does not know. It returns "" for a part that is neither.
func ServerToolName(p *genai.Part) string {
	if p == nil {
		return ""
	}
	var tt genai.ToolType
	switch {
	case p.ExecutableCode != nil || p.CodeExecutionResult != nil:
		return "code_execution"
	case p.ToolCall != nil:
		tt = p.ToolCall.ToolType
	case p.ToolResponse != nil:
		tt = p.ToolResponse.ToolType
	default:
		return ""
	}
	switch tt {
	case genai.ToolTypeGoogleSearchWeb:
		return "google_search"
	case "", genai.ToolTypeUnspecified:
		return "server_tool"
	}
	return strings.ToLower(string(tt))
}

// ServerToolID returns the id the API gave the built-in tool invocation a
// part belongs to, "" when it gave none.
func ServerToolID(p *genai.Part) string {
	switch {
	case p == nil:
	case p.ToolCall != nil:
		return p.ToolCall.ID
	case p.ToolResponse != nil:
		return p.ToolResponse.ID
	case p.ExecutableCode != nil:
		return p.ExecutableCode.ID
	case p.CodeExecutionResult != nil:
		return p.CodeExecutionResult.ID
	}
	return ""
}

// serverEvent is the event that reports p, a part of the model content of
// turn, when p is a built-in tool's invocation or result; nil otherwise.
func serverEvent(turn int, p *genai.Part) *Event {
	switch {
	case p == nil:
	case serverCall(p):
		return &Event{Kind: EventServerToolCall, Turn: turn, Part: p}
	case serverResult(p):
		return &Event{Kind: EventServerToolResult, Turn: turn, Part: p}
	}
	return nil
}

// serverEvents reports the built-in tools the API ran in a turn whose
// content did not stream (Run): one event per invocation and result, in
// the content's order.
func (r *run) serverEvents(ctx context.Context, turn int, c *genai.Content) {
	for _, p := range c.Parts {
		if e := serverEvent(turn, p); e != nil {
			r.emit(ctx, e)
		}
	}
}

// unexpectedCalls answers the calls of a turn the API ended with
// UNEXPECTED_TOOL_CALL: the model called a function it was not given
// (Vertex AI sends the call, with the finish message "Unexpected tool call:
// Model tried to call an undeclared function: NAME"). None of them runs:
// the call of an unknown tool gets the answer any unknown tool gets, which
// lists the tools the model may call, and a call of a known one (which the
// API refused all the same) is told it was refused, so that the model can
// correct itself on its next turn, as the real traffic shows it doing. The
// calls are reported as any others are (EventToolCall, EventToolResult).
func (r *run) unexpectedCalls(turn int, calls []*genai.FunctionCall, message string) []ToolResult {
	results := make([]ToolResult, len(calls))
	for i, call := range calls {
		tool, answer := r.plan(i, len(calls), call)
		if answer == nil {
			answer = UnexpectedCall(call, message)
		}
		p := &callPlan{ctx: r.ctx, tool: tool, answer: answer}
		if r.emitting {
			e := &Event{Kind: EventToolCall, Turn: turn, Index: i, Call: call, Tool: tool}
			p.ctx = r.startContext(r.ctx, e)
			r.emit(p.ctx, e)
		}
		start := time.Now()
		results[i] = ToolResult{Call: call, Result: checkedAnswer(call, *answer), Duration: time.Since(start)}
		r.toolDone(turn, i, p, &results[i])
	}
	return results
}

// UnexpectedCall returns the answer to a call of a known tool in a turn
// the API ended with finish reason UNEXPECTED_TOOL_CALL (message is the
// turn's finish message, if any): the tool is not run, and the model
// receives {"error": …} saying the API refused the call. Its Err is
// [ErrUnexpectedCall]. A call of an unknown tool in such a turn is answered
// as any unknown tool is ([Steps.PlanCall]).
func UnexpectedCall(call *genai.FunctionCall, message string) *toolset.Result {
	why := "the API refused it (finish reason UNEXPECTED_TOOL_CALL)"
	if message != "" {
		why += ": " + message
	}
	return &toolset.Result{IsError: true, Err: fmt.Errorf("%w: %s", ErrUnexpectedCall, call.Name),
		Output: fmt.Sprintf("tool %s was not run: %s", call.Name, why)}
}

// ErrUnexpectedCall is the Err of the answer to a call the API refused
// (finish reason UNEXPECTED_TOOL_CALL): see [UnexpectedCall].
var ErrUnexpectedCall = errors.New("agent: the API refused the function call")
