package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// APIError is an error the server sends in the API's error JSON,
// {"error":{"code","message","status","details"}}, with HTTP status Code, so
// that the genai client returns it as a [genai.APIError] with the same fields.
type APIError struct {
	// Code is the HTTP status and the "code" field. A value outside
	// 400..599 is sent as 500.
	Code int
	// Status is the canonical code name ("INVALID_ARGUMENT", "UNAVAILABLE"…).
	// If empty, it is derived from Code as [Error] does.
	Status string
	// Message is the human-readable "message" field.
	Message string
	// Details are sent as the "details" array, in order. Omitted when empty,
	// as the API does.
	Details []map[string]any
	// RetryDelay, when positive, appends a google.rpc.RetryInfo detail whose
	// "retryDelay" is the protobuf Duration string of the delay ("37s",
	// "1.500s"). The genai client never reads it; callers find it in
	// [genai.APIError.Details].
	RetryDelay time.Duration
}

// Detail type URLs of the google.rpc error details this package sends.
const (
	typeRetryInfo    = "type.googleapis.com/google.rpc.RetryInfo"
	typeQuotaFailure = "type.googleapis.com/google.rpc.QuotaFailure"
	typeHelp         = "type.googleapis.com/google.rpc.Help"
	typeBadRequest   = "type.googleapis.com/google.rpc.BadRequest"
	typeErrorInfo    = "type.googleapis.com/google.rpc.ErrorInfo"
)

// statusNames maps HTTP codes to the canonical status the Gemini API sends
// with them.
var statusNames = map[int]string{
	http.StatusBadRequest:          "INVALID_ARGUMENT",
	http.StatusUnauthorized:        "UNAUTHENTICATED",
	http.StatusForbidden:           "PERMISSION_DENIED",
	http.StatusNotFound:            "NOT_FOUND",
	http.StatusRequestTimeout:      "DEADLINE_EXCEEDED",
	http.StatusConflict:            "ABORTED",
	http.StatusTooManyRequests:     "RESOURCE_EXHAUSTED",
	499:                            "CANCELLED",
	http.StatusInternalServerError: "INTERNAL",
	http.StatusNotImplemented:      "UNIMPLEMENTED",
	http.StatusBadGateway:          "UNAVAILABLE",
	http.StatusServiceUnavailable:  "UNAVAILABLE",
	http.StatusGatewayTimeout:      "DEADLINE_EXCEEDED",
}

func (e *APIError) httpCode() int {
	if e.Code < 400 || e.Code > 599 {
		return http.StatusInternalServerError
	}
	return e.Code
}

func (e *APIError) status() string {
	if e.Status != "" {
		return e.Status
	}
	if s, ok := statusNames[e.httpCode()]; ok {
		return s
	}
	return "UNKNOWN"
}

// wire returns the error as the API sends it.
func (e *APIError) wire() map[string]any {
	body := map[string]any{
		"code":    e.httpCode(),
		"message": e.Message,
		"status":  e.status(),
	}
	details := copyDetails(e.Details)
	if e.RetryDelay > 0 {
		details = append(details, map[string]any{"@type": typeRetryInfo, "retryDelay": durationString(e.RetryDelay)})
	}
	if len(details) > 0 {
		body["details"] = details
	}
	return map[string]any{"error": body}
}

// clone returns a deep copy of e.
func (e *APIError) clone() *APIError {
	c := *e
	c.Details = copyDetails(e.Details)
	return &c
}

// copyDetails deep-copies details through JSON; details are JSON data.
func copyDetails(details []map[string]any) []map[string]any {
	if len(details) == 0 {
		return nil
	}
	b, err := json.Marshal(details)
	if err != nil {
		panic(fmt.Sprintf("fake: error details are not JSON: %v", err))
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("fake: error details are not JSON: %v", err))
	}
	return out
}

// durationString formats d as a google.protobuf.Duration in JSON: seconds
// with 0, 3, 6 or 9 fractional digits and an "s" suffix.
func durationString(d time.Duration) string {
	sec, nanos := int64(d/time.Second), int64(d%time.Second)
	switch {
	case nanos == 0:
		return fmt.Sprintf("%ds", sec)
	case nanos%int64(time.Millisecond) == 0:
		return fmt.Sprintf("%d.%03ds", sec, nanos/int64(time.Millisecond))
	case nanos%int64(time.Microsecond) == 0:
		return fmt.Sprintf("%d.%06ds", sec, nanos/int64(time.Microsecond))
	default:
		return fmt.Sprintf("%d.%09ds", sec, nanos)
	}
}
