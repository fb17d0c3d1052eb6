package agentserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// anonymous is the user of every request when Config.Authenticate is nil.
const anonymous = "local"

// User returns the user r comes from, as Config.Authenticate names it.
// A request it refuses gets an error whose status is 401 (or the
// [*Error]'s own); a user name that is empty or longer than 256 bytes is
// refused too. Without Config.Authenticate every request is the anonymous
// user's, except one that reached a loopback address naming a host that
// is not a loopback one (403): what a page of another site sends once it
// has rebound its name to 127.0.0.1 (DNS rebinding), to reach a server
// on localhost as its own origin.
func (s *Server) User(r *http.Request) (string, error) {
	if s.cfg.Authenticate == nil {
		if !localHost(r) {
			s.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "agentserver: an anonymous request on a loopback address named another host (DNS rebinding?)",
				slog.String("host", r.Host))
			return "", newError(http.StatusForbidden, "bad_host", ErrUnauthenticated,
				"this server takes requests for localhost only: the Host header names another host")
		}
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

// localHost reports whether r, when it reached a loopback address, names
// a loopback host: a page of another site whose name was rebound to
// 127.0.0.1 (DNS rebinding) is the same origin as the server for the
// browser, but its requests name the site's host.
func localHost(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !loopback(local.String()) {
		return true // not served on a loopback address: its hosts are not ours to know
	}
	return r.Host == "" || loopback(r.Host) // (an HTTP/1.0 client may name no host; a browser always does)
}

// loopback reports whether hostport (a host, or host:port) is a loopback
// name or address.
func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// truncate cuts s to at most n bytes, for a message that quotes a client.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// DecodeJSON reads r's body, a JSON value, into v: it must be sent as
// application/json (a Content-Type header says so: a request without one
// is refused, since another site's page may send that one without asking
// the browser, as it may send a form), within Config.MaxBodyBytes, and hold one well-formed
// JSON value of v's shape. Under [Server.Stream], the body must arrive
// within Config.BodyTimeout (408 otherwise). The error says what is
// wrong, for the client (see [BadRequest]).
func (s *Server) DecodeJSON(r *http.Request, v any) error {
	// A body of no type is refused too: a page of another site can post
	// one (or a form) without asking, application/json it cannot.
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return BadRequest(http.StatusUnsupportedMediaType, "bad_content_type", "the body must be sent as application/json (a Content-Type header)")
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return BadRequest(http.StatusUnsupportedMediaType, "bad_content_type", "the body must be application/json, not %q", truncate(ct, 100))
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return BadRequest(http.StatusRequestEntityTooLarge, "too_large", "the body is larger than %d bytes", s.cfg.MaxBodyBytes)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return BadRequest(http.StatusRequestTimeout, "body_timeout", "the body did not arrive within %s", s.cfg.BodyTimeout)
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
