package otelagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// errorType returns the error.type of err: a short, low-cardinality class
// (see the package documentation for the list).
func errorType(err error) string {
	if err == nil {
		return ""
	}
	var (
		typed interface{ ErrorType() string }
		api   genai.APIError
		stop  *agent.StopError
		pe    *toolset.PanicError
	)
	switch {
	case errors.As(err, &typed) && typed.ErrorType() != "":
		return typed.ErrorType()
	case errors.As(err, &api) && api.Code != 0:
		return strconv.Itoa(api.Code)
	case errors.Is(err, agent.ErrStopped):
		return "stopped"
	case errors.Is(err, agent.ErrToolTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &stop):
		return stopErrorType(stop.Kind)
	case errors.Is(err, agent.ErrMaxTurns):
		return "max_turns"
	case errors.Is(err, agent.ErrDenied):
		return "denied"
	case errors.Is(err, agent.ErrUnknownTool):
		return "unknown_tool"
	case errors.Is(err, agent.ErrTooManyCalls):
		return "too_many_calls"
	case errors.Is(err, toolset.ErrInvalidArguments):
		return "invalid_arguments"
	case errors.Is(err, toolset.ErrOutputNotJSON):
		return "output_not_json"
	case errors.As(err, &pe):
		return "panic"
	}
	return "_OTHER"
}

// stopErrorType returns the error.type of a StopError of kind k.
func stopErrorType(k error) string {
	switch k {
	case agent.ErrPromptBlocked:
		return "prompt_blocked"
	case agent.ErrUnsafe:
		return "unsafe"
	case agent.ErrMalformedCall:
		return "malformed_function_call"
	case agent.ErrEmptyReply:
		return "empty_reply"
	case agent.ErrMaxTokens:
		return "max_tokens"
	}
	return "_OTHER"
}

// finishReason returns the conventions' name of a Gemini finish reason:
// the output messages' finish_reason values where one fits (tool_call when
// the model called tools, stop, length, content_filter, error), else
// Gemini's own reason in lower case. An empty reason stays empty.
func finishReason(r genai.FinishReason, calls bool) string {
	switch r {
	case "":
		if calls {
			return "tool_call"
		}
		return ""
	case genai.FinishReasonStop:
		if calls {
			return "tool_call"
		}
		return "stop"
	case genai.FinishReasonMaxTokens:
		return "length"
	case genai.FinishReasonSafety, genai.FinishReasonProhibitedContent, genai.FinishReasonBlocklist,
		genai.FinishReasonSPII, genai.FinishReasonRecitation, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return "content_filter"
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall:
		return "error"
	}
	return strings.ToLower(string(r))
}

// errorText describes err on a span: its text, unless content capture is
// off and err is one whose text quotes what the model sent, which may be
// personal data: arguments that fail their tool's input schema (the
// validator quotes the value), a typed answer that fails the output's
// type. Those are described without the values, by the argument's path in
// the schema when the error names one.
func (o *Observer) errorText(err error) string {
	switch {
	case err == nil:
		return ""
	case o.capture:
		return err.Error()
	case errors.Is(err, agent.ErrInvalidOutput):
		var oe *agent.OutputError
		if errors.As(err, &oe) {
			return fmt.Sprintf("%v (strategy %v, %d re-asks): the answer does not match the output type (%s)",
				agent.ErrInvalidOutput, oe.Strategy, oe.Reasks, notRecorded)
		}
		return fmt.Sprintf("%v: the answer was refused (%s)", agent.ErrInvalidOutput, notRecorded)
	case errors.Is(err, toolset.ErrInvalidArguments):
		if path := argumentPath(err.Error()); path != "" {
			return fmt.Sprintf("%v: argument %q does not match the tool's input schema (%s)", toolset.ErrInvalidArguments, path, notRecorded)
		}
		return fmt.Sprintf("%v: they do not match the tool's input schema (%s)", toolset.ErrInvalidArguments, notRecorded)
	}
	return err.Error()
}

// notRecorded says why a failure's description leaves the values out.
const notRecorded = "values not recorded: content capture is off"

// argumentPath returns the path of the argument that an invalid-arguments
// error's text names (toolset writes `invalid arguments: argument "a.b":
// ...`), or "" when it names none. The path is the schema's, never a
// value the model sent.
func argumentPath(msg string) string {
	_, rest, ok := strings.Cut(msg, toolset.ErrInvalidArguments.Error()+": argument ")
	if !ok {
		return ""
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return ""
	}
	path, err := strconv.Unquote(quoted)
	if err != nil {
		return ""
	}
	return path
}
