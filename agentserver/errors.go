package agentserver

import (
	"errors"
	"fmt"
	"net/http"
)

// Errors a Server's methods and a [Runner] return, wrapped in an [*Error]
// that says how a request is answered. Match them with errors.Is.
var (
	// ErrNotFound: no such thread or run for this user. Another user's
	// thread or run is not found either: the answer never tells them
	// apart.
	ErrNotFound = errors.New("agentserver: not found")
	// ErrBusy: the thread has a run that is not over.
	ErrBusy = errors.New("agentserver: the thread has a run in progress")
	// ErrUnknownCall: a decision names a call the run never held pending.
	ErrUnknownCall = errors.New("agentserver: no such pending call")
	// ErrDecided: a decision names a call that was decided already.
	ErrDecided = errors.New("agentserver: the call was decided already")
	// ErrExpired: a decision names a call whose deadline passed; it was
	// denied.
	ErrExpired = errors.New("agentserver: the call's deadline passed")
	// ErrClosed: the server is closing and takes no more runs.
	ErrClosed = errors.New("agentserver: the server is closing")
	// ErrCancelled is the cause of a run stopped by Cancel.
	ErrCancelled = errors.New("agentserver: the run was cancelled")
	// ErrTooManyRuns: Config.MaxRuns runs are in flight, or
	// Config.MaxRunsPerUser runs of the request's user.
	ErrTooManyRuns = errors.New("agentserver: too many runs in flight")
	// ErrQuota: the user's threads are at Config.MaxThreadsPerUser (a
	// new thread is refused) or Config.MaxBytesPerUser (every new run is).
	ErrQuota = errors.New("agentserver: over the user's quota")
	// ErrTooManyBodies: the request bodies being read hold
	// Config.MaxBodyBytesInFlight bytes, or those of the request's user
	// Config.MaxBodyBytesInFlightPerUser.
	ErrTooManyBodies = errors.New("agentserver: too many request bodies in flight")
	// ErrTooManyReaders: MaxReaders cursors read the run already.
	ErrTooManyReaders = errors.New("agentserver: too many readers of the run")
	// ErrBadRequest: the request is malformed or breaks a limit.
	ErrBadRequest = errors.New("agentserver: bad request")
	// ErrElsewhere: another server on the store holds the run (it runs
	// it, or is taking a decision about it): this one can describe it,
	// not read, decide or cancel it. Answered 503, with Retry-After: the
	// request may reach the other server, or find the run parked.
	ErrElsewhere = errors.New("agentserver: another server holds the run")
	// ErrUnauthenticated: Config.Authenticate refused the request.
	ErrUnauthenticated = errors.New("agentserver: unauthenticated")
)

// An Error is how a request that fails is answered: an HTTP status, a
// stable code and a message safe to show the client. Err is the cause,
// for errors.Is; it is never shown.
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// newError returns an *Error with a formatted message.
func newError(status int, code string, cause error, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// BadRequest returns the error a malformed request or one over a limit
// gets: status 400, unless status says otherwise (413 for a body too
// large, 415 for a wrong content type, 408 for a body too slow), and a
// message saying what is
// wrong with it. Protocol packages answer bad input with it.
func BadRequest(status int, code, format string, args ...any) *Error {
	if status == 0 {
		status = http.StatusBadRequest
	}
	return newError(status, code, ErrBadRequest, format, args...)
}

// errorOf returns the *Error err is or wraps; an error that is not one is
// an internal error, whose text is never shown.
func errorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error", Err: err}
}
