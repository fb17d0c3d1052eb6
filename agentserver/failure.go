package agentserver

import (
	"context"
	"errors"
	"net"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// errRunTimeout is the cause of a run stopped by Config.RunTimeout.
var errRunTimeout = errors.New("agentserver: the run took longer than Config.RunTimeout")

// outcome says how a run ended, for clients: its state and a safe
// failure. runErr is the agent's own error (nil when the agent finished,
// or never ran), err the error the run ended with (the agent's, joined
// with the store's), ran whether the agent ran at all, and cause the
// cause of the run's context.
func outcome(runErr, err error, ran bool, cause error) (State, *Failure) {
	if err == nil {
		return StateDone, nil
	}
	switch {
	case errors.Is(cause, errTakenOver):
		return StateCancelled, takenOver
	case errors.Is(cause, errStepNotStored), errors.Is(cause, errNoProof):
		return StateFailed, &Failure{"store_error", "the server could not store the run's next step, so it stopped before it; the conversation was saved as far as it went"}
	case errors.Is(cause, ErrClosed):
		return StateCancelled, &Failure{"server_closing", "the server is shutting down; the conversation was saved as far as it went"}
	case errors.Is(cause, ErrCancelled):
		return StateCancelled, &Failure{"cancelled", "the run was cancelled"}
	case errors.Is(cause, errRunTimeout):
		return StateFailed, &Failure{"timeout", "the run took too long"}
	case !ran:
		return StateFailed, &Failure{"store_error", "the conversation could not be loaded"}
	case runErr == nil:
		return StateFailed, &Failure{"store_error", "the conversation could not be saved"}
	}
	return StateFailed, failureOf(runErr)
}

// FailureOf returns the Failure a client is shown for err, an agent's
// error (what agent.Run returned): a stable code and a short message that
// hold nothing of the error's text. A [Runner] of another kind than the
// in-process one ends its runs' logs with it, so that every runner tells
// clients the same.
func FailureOf(err error) *Failure { return failureOf(err) }

// failureOf returns the safe failure of an agent's error.
func failureOf(err error) *Failure {
	var apiErr genai.APIError
	switch {
	case errors.Is(err, agent.ErrMaxTurns):
		return &Failure{"max_turns", "the agent stopped: it reached its limit of model turns"}
	case errors.Is(err, agent.ErrMaxTokens):
		return &Failure{"max_tokens", "the answer was cut: it reached the model's output limit"}
	case errors.Is(err, agent.ErrPromptBlocked):
		return &Failure{"blocked", "the model refused the request"}
	case errors.Is(err, agent.ErrUnsafe):
		return &Failure{"unsafe", "the model stopped for safety reasons"}
	case errors.Is(err, agent.ErrMalformedCall):
		return &Failure{"malformed_call", "the model could not produce a valid tool call"}
	case errors.Is(err, agent.ErrEmptyReply):
		return &Failure{"empty_reply", "the model sent an empty reply"}
	case errors.Is(err, agent.ErrInvalidOutput):
		return &Failure{"invalid_output", "the model's answer did not have the expected form"}
	case errors.As(err, &apiErr):
		switch {
		case apiErr.Code == 429:
			return &Failure{"rate_limited", "the model is over its rate limit; try again later"}
		case apiErr.Code == 401 || apiErr.Code == 403:
			return &Failure{"model_unauthorized", "the server could not authenticate with the model"}
		case apiErr.Code >= 400 && apiErr.Code < 500:
			return &Failure{"model_rejected", "the model refused the request"}
		}
		return &Failure{"model_unavailable", "the model could not be reached"}
	case errors.Is(err, context.DeadlineExceeded):
		return &Failure{"timeout", "the run took too long"}
	}
	var me *agent.ModelError
	if errors.As(err, &me) {
		return &Failure{"model_unavailable", "the model could not be reached"}
	}
	return &Failure{"internal", "the run failed"}
}

// retryReason says why a model call is made again, in a few words.
func retryReason(err error) string {
	var apiErr genai.APIError
	var netErr net.Error
	switch {
	case errors.Is(err, agent.ErrInvalidOutput):
		return "the answer did not have the expected form"
	case errors.Is(err, agent.ErrMalformedCall):
		return "the model produced a malformed tool call"
	case errors.Is(err, agent.ErrEmptyReply):
		return "the model sent an empty reply"
	case errors.As(err, &apiErr):
		switch apiErr.Code {
		case 429:
			return "rate limited"
		case 408, 504:
			return "the model timed out"
		}
		return "the model's service is unavailable"
	case errors.As(err, &netErr):
		return "the connection to the model failed"
	}
	return "the model call failed"
}
