package a2aagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// The JSON-RPC error codes: JSON-RPC 2.0's, then those A2A 0.3 adds.
const (
	codeParseError        = -32700
	codeInvalidRequest    = -32600
	codeMethodNotFound    = -32601
	codeInvalidParams     = -32602
	codeInternalError     = -32603
	codeServerError       = -32000
	codeTaskNotFound      = -32001
	codeTaskNotCancelable = -32002
	codePushNotSupported  = -32003
	codeUnsupported       = -32004
	codeNoExtendedCard    = -32007

	// A2A 1.0's (§5.4): the 1.0 bindings refuse a version they do not
	// speak with it.
	codeVersionNotSupported = -32009
)

// rpcError is a JSON-RPC error object. Its message is safe to show the
// client, and so is repeated in data.error, where a2a-go's client reads
// the detail of an error.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
	// status is the HTTP status of a response that is nothing but this
	// error: 0 means 200, as JSON-RPC answers errors.
	status int
	// cause is logged, never shown.
	cause error
}

func (e *rpcError) Error() string { return e.Message }

func newRPCError(code int, format string, args ...any) *rpcError {
	msg := fmt.Sprintf(format, args...)
	return &rpcError{Code: code, Message: msg, Data: map[string]any{"error": msg}}
}

// rpcErrorOf returns how err is answered: an *rpcError as it is, an
// agentserver error by its kind, anything else as an internal error whose
// text is never shown.
func rpcErrorOf(err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	var se *agentserver.Error
	if !errors.As(err, &se) {
		return &rpcError{Code: codeInternalError, Message: "internal error", cause: err}
	}
	var e *rpcError
	switch {
	case errors.Is(err, agentserver.ErrNotFound):
		e = newRPCError(codeTaskNotFound, "%s", se.Message)
	case errors.Is(err, agentserver.ErrBusy):
		e = newRPCError(codeUnsupported, "%s", se.Message)
	case errors.Is(err, agentserver.ErrUnknownCall), errors.Is(err, agentserver.ErrDecided),
		errors.Is(err, agentserver.ErrExpired), errors.Is(err, agentserver.ErrBadRequest):
		e = newRPCError(codeInvalidParams, "%s", se.Message)
	case errors.Is(err, agentserver.ErrClosed), errors.Is(err, agentserver.ErrTooManyRuns), errors.Is(err, agentserver.ErrTooManyReaders),
		errors.Is(err, agentserver.ErrQuota), errors.Is(err, agentserver.ErrTooManyBodies):
		e = newRPCError(codeServerError, "%s", se.Message)
		e.status = se.Status     // 503, or 429 for a user's too many or over a quota
		e.Data["code"] = se.Code // too_many_runs, thread_quota, storage_quota…
	case errors.Is(err, agentserver.ErrUnauthenticated):
		e = newRPCError(codeServerError, "%s", se.Message)
		e.status = se.Status
	default:
		return &rpcError{Code: codeInternalError, Message: "internal error", cause: err}
	}
	e.cause = err
	return e
}

// rpcRequest is a JSON-RPC request.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
}

// nullID is the id of a response to a request whose id is unknown.
var nullID = json.RawMessage("null")

// decodeRequest reads a JSON-RPC request from r's body, within the
// server's limits. A request that cannot be read is answered with the
// error it returns; its id is the request's when it could be read.
func decodeRequest(s *agentserver.Server, r *http.Request) (*rpcRequest, *rpcError) {
	var raw json.RawMessage
	if err := s.DecodeJSON(r, &raw); err != nil {
		if errors.Is(err, agentserver.ErrTooManyBodies) {
			return nil, rpcErrorOf(err) // 503 or 429, and its code
		}
		e := newRPCError(codeParseError, "%s", err.Error())
		var se *agentserver.Error
		if errors.As(err, &se) && se.Status != http.StatusBadRequest {
			e.Code, e.status = codeInvalidRequest, se.Status // too large, not JSON
		}
		return nil, e
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		if len(raw) > 0 && raw[0] == '[' {
			return nil, newRPCError(codeInvalidRequest, "batch requests are not supported: send one request at a time")
		}
		return nil, newRPCError(codeInvalidRequest, "a JSON-RPC request is a JSON object")
	}
	var req rpcRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		// A field of the wrong type: the id may still be readable.
		var id struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(raw, &id)
		e := newRPCError(codeInvalidRequest, "not a JSON-RPC request: %v", err)
		return &rpcRequest{ID: validID(id.ID)}, e
	}
	req.ID = validID(req.ID)
	switch {
	case req.ID == nil:
		return &rpcRequest{ID: nullID}, newRPCError(codeInvalidRequest, "the request's id must be a string, a number or null, of at most %d bytes of UTF-8 as JSON", maxIDBytes)
	case req.JSONRPC != "2.0":
		return &req, newRPCError(codeInvalidRequest, `the request's jsonrpc must be "2.0"`)
	case req.Method == "":
		return &req, newRPCError(codeInvalidRequest, "the request has no method")
	}
	return &req, nil
}

// maxIDBytes bounds a request's id, as JSON: every event of a stream
// repeats it.
const maxIDBytes = 256

// validID returns the id to answer with: the request's when it is a
// string, a number or null (null when absent) of at most maxIDBytes of
// UTF-8, nil when it is none of them.
func validID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nullID
	}
	if len(id) > maxIDBytes || !utf8.Valid(id) {
		return nil // (a response repeats the id's bytes as they came)
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9', string(id) == "null":
		return id
	}
	return nil
}

// appendResponse appends a JSON-RPC response: a result, or an error.
func appendResponse(b []byte, id json.RawMessage, result any, e *rpcError) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	var v []byte
	var err error
	if e != nil {
		b = append(b, `,"error":`...)
		v, err = json.Marshal(e)
	} else {
		b = append(b, `,"result":`...)
		if b, ok := appendEvent(b, result); ok {
			return append(b, '}'), nil
		}
		v, err = json.Marshal(result)
	}
	if err != nil {
		return b, err
	}
	b = append(b, v...)
	return append(b, '}'), nil
}

// writeResponse answers a request with a JSON-RPC response.
func (h *handler) writeResponse(w http.ResponseWriter, r *http.Request, id json.RawMessage, result any, e *rpcError) {
	if id == nil {
		id = nullID
	}
	status := http.StatusOK
	if e != nil {
		h.logError(r, e)
		if e.status != 0 {
			status = e.status
		}
	}
	body, err := appendResponse(make([]byte, 0, 512), id, result, e)
	if err != nil {
		h.logError(r, &rpcError{Code: codeInternalError, cause: err})
		body, _ = appendResponse(body[:0], id, nil, &rpcError{Code: codeInternalError, Message: "internal error"})
		status = http.StatusInternalServerError
	}
	body = append(body, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

// writeStreamError answers a streaming method that failed before its
// stream began: an HTTP error when the error has a status of its own,
// otherwise a stream of one event, the error, as A2A servers send it (a
// client that reads the body as a stream would read no JSON body).
func (h *handler) writeStreamError(w http.ResponseWriter, r *http.Request, id json.RawMessage, e *rpcError) {
	if e.status != 0 {
		h.writeResponse(w, r, id, nil, e)
		return
	}
	h.logError(r, e)
	b, _ := appendResponse([]byte("data: "), id, nil, e)
	b = append(b, '\n', '\n')
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// logError logs an error whose cause the client is not told.
func (h *handler) logError(r *http.Request, e *rpcError) {
	if e.Code == codeInternalError && e.cause != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelError, "a2aagent: request failed", slog.Any("error", e.cause))
	}
}
