package agent

import (
	"errors"
	"fmt"

	"google.golang.org/genai"
)

// ErrMaxTurns is returned, wrapped, when a run reaches Config.MaxTurns model
// turns and the model still asks for tools. The partial Result comes with
// it; its History ends with the answers to the last turn's calls, so passing
// it to Run again continues the conversation.
var ErrMaxTurns = errors.New("agent: maximum number of model turns reached")

// The kinds of [StopError], for errors.Is.
var (
	// ErrPromptBlocked: the API refused the prompt (promptFeedback.blockReason).
	ErrPromptBlocked = errors.New("agent: prompt blocked")

	// ErrUnsafe: the model stopped for safety, prohibited content, a
	// blocklist, sensitive personal information or recitation.
	ErrUnsafe = errors.New("agent: response stopped for safety")

	// ErrMalformedCall: the model kept producing invalid function calls
	// (MALFORMED_FUNCTION_CALL or UNEXPECTED_TOOL_CALL) after every re-ask.
	ErrMalformedCall = errors.New("agent: model produced malformed function calls")

	// ErrEmptyReply: the model answered with no candidate or no parts,
	// and asking again did not help (it is asked again, up to
	// RetryPolicy.MaxReasks times, when the finish reason is STOP, OTHER or
	// none) or could not (LANGUAGE, TOO_MANY_TOOL_CALLS…: see
	// StopError.FinishReason).
	ErrEmptyReply = errors.New("agent: model returned an empty reply")

	// ErrMaxTokens: the model reached its output token limit
	// (maxOutputTokens) before it finished: the answer in Result.Text is
	// cut short, or there is none at all when thinking used the whole
	// budget. Such a reply is never asked again, since the same budget
	// runs out the same way: raise GenerateConfig.MaxOutputTokens or lower
	// the thinking budget. A cut answer is in Result.History, so the
	// conversation can go on ("continue").
	ErrMaxTokens = errors.New("agent: model reached its output token limit")

	// ErrContinuation: the API cut the answer at its per-request output
	// limit (finish reason CONTINUATION) and it was not continued: the
	// API sent no continuation token or one it had sent before, the
	// answer reached Config.MaxContinuations, or continuation is off
	// (GenerateConfig.AutomaticContinuation false, or a negative
	// MaxContinuations). StopError.Message says which. The cut answer is
	// in Result.Text and in the history, as for ErrMaxTokens; the last
	// turn's Response holds the token, if any.
	ErrContinuation = errors.New("agent: the answer was cut and not continued")

	// ErrTooManyToolCalls: the model called the API's built-in tools too
	// many times in a row and the API stopped it (finish reason
	// TOO_MANY_TOOL_CALLS). It is never asked again: the same request
	// would go the same way. What the model produced is in the history
	// (its function calls, if any, answered, so that it can go on) and in
	// Result.Text.
	ErrTooManyToolCalls = errors.New("agent: the model called too many tools in a row")
)

// A StopError reports a model turn that ended without anything the loop can
// use. Match its kind with errors.Is against [ErrPromptBlocked],
// [ErrUnsafe], [ErrMalformedCall], [ErrEmptyReply], [ErrMaxTokens],
// [ErrContinuation] or [ErrTooManyToolCalls], and read the reason with
// errors.As.
type StopError struct {
	Kind         error               // one of the Err* kinds above
	Turn         int                 // the model turn, from 0
	FinishReason genai.FinishReason  // the candidate's finish reason, if any
	BlockReason  genai.BlockedReason // the prompt's block reason, if blocked
	Message      string              // the API's explanation, when it gave one
	Attempts     int                 // model calls made for the turn
}

// Error says the kind, the turn, the reason and the API's message.
func (e *StopError) Error() string {
	msg := fmt.Sprintf("%v (turn %d", e.Kind, e.Turn)
	switch {
	case e.BlockReason != "":
		msg += ", block reason " + string(e.BlockReason)
	case e.FinishReason != "":
		msg += ", finish reason " + string(e.FinishReason)
	}
	if e.Attempts > 1 {
		msg += fmt.Sprintf(", %d attempts", e.Attempts)
	}
	msg += ")"
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Is reports whether target is e's kind.
func (e *StopError) Is(target error) bool { return target == e.Kind }

// A ModelError is a model call that failed for good: a permanent API error,
// or a transient one that outlasted the retry policy. It wraps the cause,
// so errors.As still finds the [genai.APIError] (a value type: match it
// with var e genai.APIError).
type ModelError struct {
	Turn     int   // the model turn, from 0
	Attempts int   // model calls made for the turn
	Err      error // the last call's error
}

// Error says which turn failed, after how many attempts, and why.
func (e *ModelError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("agent: model call for turn %d failed after %d attempts: %v", e.Turn, e.Attempts, e.Err)
	}
	return fmt.Sprintf("agent: model call for turn %d failed: %v", e.Turn, e.Err)
}

// Unwrap returns the last call's error.
func (e *ModelError) Unwrap() error { return e.Err }
