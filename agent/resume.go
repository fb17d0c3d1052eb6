package agent

import (
	"errors"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// PendingCalls returns the function calls nobody answered yet at the end
// of contents: the calls of the last content, when it is a model content
// (role "model") that has calls. A history saved as a run went holds them
// when the process running it stopped while they ran. A run given such
// contents answers these calls before it calls the model (see the package
// documentation, "Resuming a run"). It returns nil for any other contents.
func PendingCalls(contents []*genai.Content) []*genai.FunctionCall {
	if len(contents) == 0 {
		return nil
	}
	last := contents[len(contents)-1]
	if last == nil || last.Role != genai.RoleModel {
		return nil
	}
	return functionCalls(last)
}

// ErrInterrupted is the Err of a result made by [Interrupted].
var ErrInterrupted = errors.New("agent: tool call interrupted")

// Interrupted returns the answer to a call that was running when the
// process running it stopped, a crash or a kill, so that nobody knows
// whether it took effect: the model receives {"error": "tool NAME was
// interrupted: …, so it may or may not have run; …"}, which tells it to
// check, or ask the user, before it calls again, and the result's Err is
// [ErrInterrupted]. A runtime that resumes such a run answers these calls
// with it, from its Interceptor, unless their tool is safe to repeat
// ([toolset.Tool.SafeToRepeat]): it is every runtime's standard text.
func Interrupted(call *genai.FunctionCall) *toolset.Result {
	return &toolset.Result{IsError: true, Err: ErrInterrupted,
		Output: "tool " + call.Name + " was interrupted: the process running it stopped before it returned, " +
			"so it may or may not have run; check whether it took effect before calling it again, or ask the user"}
}
