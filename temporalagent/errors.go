package temporalagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// Errors of durable runs, for errors.Is. A run that fails the way agent.Run
// fails returns the same errors as agent.Run: ErrMaxTurns, a *StopError, a
// *ModelError wrapping the genai.APIError, a context.Canceled error.
var (
	// ErrPayloadTooLarge: the run's conversation outgrew what one Temporal
	// payload may hold (Agent.MaxPayloadBytes).
	ErrPayloadTooLarge = errors.New("temporalagent: conversation too large for a Temporal payload")

	// ErrUnknownApproval: the approval id names no call waiting for a
	// decision.
	ErrUnknownApproval = errors.New("temporalagent: no call waits for approval under this id")

	// ErrDecided: the call was already decided, by a client or by its
	// deadline.
	ErrDecided = errors.New("temporalagent: the call was already decided")
)

// Application error types: how the errors above, and the run's own
// failures, cross Temporal.
const (
	errTypeRun          = "toolnexus.RunFailed"   // the run failed; details: runOutput, failure
	errTypeModel        = "toolnexus.ModelFailed" // a model call failed for good; details: modelFailure
	errTypeModelRetry   = "toolnexus.ModelRetry"  // a model call failed and may be made again
	errTypeHistory      = "toolnexus.HistoryFailed"
	errTypeUnknownAgent = "toolnexus.UnknownAgent"
	errTypeUnknownID    = "toolnexus.UnknownApproval"
	errTypeDecided      = "toolnexus.Decided"
	errTypeBrowser      = "toolnexus.BrowserTools" // a served run's browser tools do not suit the worker's agent
)

// The kinds of failure.
const (
	failMaxTurns = "max_turns"
	failStop     = "stop"
	failModel    = "model"
	failHistory  = "history"
	failPayload  = "payload"
	failAgent    = "unknown_agent"
	failOutput   = "output"
	failCanceled = "canceled"
	failBrowser  = "browser_tools"
)

// failure describes how a run failed, in a form that crosses Temporal;
// err rebuilds the error agent.Run would have returned.
type failure struct {
	Kind         string
	Message      string `json:",omitempty"`
	Turn         int
	Attempts     int                  `json:",omitempty"`
	Stop         string               `json:",omitempty"` // the StopError's kind
	FinishReason genai.FinishReason   `json:",omitempty"`
	BlockReason  genai.BlockedReason  `json:",omitempty"`
	Code         int                  `json:",omitempty"` // the genai.APIError of a model failure, when there was one
	Status       string               `json:",omitempty"`
	MaxTurns     int                  `json:",omitempty"`
	Raw          string               `json:",omitempty"` // the refused answer of an OutputError
	Strategy     agent.OutputStrategy `json:",omitempty"`
	Reasks       int                  `json:",omitempty"`
}

// modelFailure is the detail of a model call that failed for good.
type modelFailure struct {
	Attempt int
	Code    int    `json:",omitempty"`
	Status  string `json:",omitempty"`
	Message string
}

// stopKinds names the kinds of agent.StopError.
var stopKinds = map[string]error{
	"prompt_blocked": agent.ErrPromptBlocked,
	"unsafe":         agent.ErrUnsafe,
	"malformed_call": agent.ErrMalformedCall,
	"empty_reply":    agent.ErrEmptyReply,
	"max_tokens":     agent.ErrMaxTokens,
	"continuation":   agent.ErrContinuation,
	"too_many_calls": agent.ErrTooManyToolCalls,
}

// stopFailure describes a StopError.
func stopFailure(e *agent.StopError) failure {
	f := failure{Kind: failStop, Turn: e.Turn, Attempts: e.Attempts, FinishReason: e.FinishReason,
		BlockReason: e.BlockReason, Message: e.Message}
	for name, kind := range stopKinds {
		if kind == e.Kind {
			f.Stop = name
		}
	}
	return f
}

// modelError returns the failure of a model call, from its details.
func modelError(turn int, m modelFailure) failure {
	return failure{Kind: failModel, Turn: turn, Attempts: m.Attempt, Code: m.Code, Status: m.Status, Message: m.Message}
}

// err returns the error the failure describes.
func (f *failure) err() error {
	switch f.Kind {
	case failMaxTurns:
		return fmt.Errorf("%w (%d)", agent.ErrMaxTurns, f.MaxTurns)
	case failStop:
		return &agent.StopError{Kind: stopKinds[f.Stop], Turn: f.Turn, FinishReason: f.FinishReason,
			BlockReason: f.BlockReason, Message: f.Message, Attempts: f.Attempts}
	case failModel:
		var cause error = errors.New(f.Message)
		if f.Code != 0 {
			cause = genai.APIError{Code: f.Code, Status: f.Status, Message: f.Message}
		}
		return &agent.ModelError{Turn: f.Turn, Attempts: f.Attempts, Err: cause}
	case failPayload:
		return fmt.Errorf("%w: %s", ErrPayloadTooLarge, f.Message)
	case failAgent:
		return fmt.Errorf("%w %s", ErrUnknownAgent, f.Message)
	case failCanceled:
		return fmt.Errorf("agent: run stopped in turn %d: %w", f.Turn, context.Canceled)
	case failOutput:
		return &agent.OutputError{Strategy: f.Strategy, Raw: f.Raw, Err: errors.New(f.Message), Reasks: f.Reasks}
	}
	return errors.New(f.Message)
}
