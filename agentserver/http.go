package agentserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
)

// anonymous is the user of every request when Config.Authenticate is nil.
const anonymous = "local"

// User returns the user r comes from, as Config.Authenticate names it.
// A request it refuses gets an error whose status is 401 (or the
// [*Error]'s own); a user name that is empty or longer than 256 bytes is
// refused too.
func (s *Server) User(r *http.Request) (string, error) {
	if s.cfg.Authenticate == nil {
		return anonymous, nil
	}
	user, err := s.cfg.Authenticate(r)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return "", e
		}
		s.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "agentserver: authentication refused", slog.Any("error", err))
		return "", newError(http.StatusUnauthorized, "unauthenticated", fmt.Errorf("%w: %w", ErrUnauthenticated, err), "authentication required")
	}
	if _, err := userPrefix(user); err != nil {
		s.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "agentserver: Config.Authenticate returned an unusable user name (empty, over 256 bytes or not UTF-8)",
			slog.Int("bytes", len(user)))
		return "", newError(http.StatusUnauthorized, "unauthenticated", ErrUnauthenticated, "authentication required")
	}
	return user, nil
}

// DecodeJSON reads r's body, a JSON value, into v: it must be sent as
// application/json, within Config.MaxBodyBytes, and hold one well-formed
// JSON value of v's shape. The error says what is wrong, for the client
// (see [BadRequest]).
func (s *Server) DecodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return BadRequest(http.StatusUnsupportedMediaType, "bad_content_type", "the body must be application/json, not %q", ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return BadRequest(http.StatusRequestEntityTooLarge, "too_large", "the body is larger than %d bytes", s.cfg.MaxBodyBytes)
		}
		return BadRequest(0, "bad_body", "the body could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return BadRequest(0, "bad_field", "field %s: a JSON %s where %s is expected", typeErr.Field, typeErr.Value, jsonKindOf(typeErr.Type.Kind().String()))
		}
		return BadRequest(0, "bad_json", "the body is not valid JSON: %v", err)
	}
	if dec.More() {
		return BadRequest(0, "bad_json", "the body holds more than one JSON value")
	}
	return nil
}

func jsonKindOf(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// Limits returns the request limits the protocols check messages and
// parts against: Config.MaxMessages and Config.MaxParts, defaults applied.
func (s *Server) Limits() (maxMessages, maxParts int) { return s.cfg.MaxMessages, s.cfg.MaxParts }

// WriteError answers a request that failed with err as JSON:
// {"error":{"code":…,"message":…}}, with the status of the [*Error] err
// is or wraps, or 500 and a message that says nothing for other errors
// (which are logged).
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorOf(err)
	if e.Status >= 500 && e.Code == "internal" {
		s.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "agentserver: request failed", slog.String("path", r.URL.Path), slog.Any("error", err))
	}
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	body, _ := json.Marshal(struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Error: struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{e.Code, e.Message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	w.Write(append(body, '\n'))
}

// MethodNotAllowed returns the error of a request with a method other
// than allow, having set the Allow header.
func MethodNotAllowed(w http.ResponseWriter, allow string) *Error {
	w.Header().Set("Allow", allow)
	return newError(http.StatusMethodNotAllowed, "method_not_allowed", ErrBadRequest, "use %s", allow)
}
