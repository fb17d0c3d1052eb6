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
	"sync"
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
	// A request that came through a handler wrapped in CORS (every
	// protocol's) is authenticated once: DecodeJSON asks again, for the
	// user whose bodies it counts.
	st, _ := r.Context().Value(requestKey{}).(*requestState)
	if st == nil {
		return s.user(r)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.named {
		st.user, st.err = s.user(r)
		st.named = true
	}
	return st.user, st.err
}

// requestKey is the context key of a request's requestState.
type requestKey struct{}

// requestState is what a Server learns of a request once: its user.
type requestState struct {
	mu    sync.Mutex
	named bool
	user  string
	err   error
}

// user names the user r comes from (see User).
func (s *Server) user(r *http.Request) (string, error) {
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
//
// The bytes of the bodies being read and decoded are bounded, in all
// (Config.MaxBodyBytesInFlight, 503 beyond) and per user
// (Config.MaxBodyBytesInFlightPerUser, 429 beyond; the user is the one
// [Server.User] names, asked once per request that came through a
// handler wrapped in [Server.CORS]): a body is counted for its
// Content-Length from the moment its reading starts (one larger than
// MaxBodyBytes is refused at once, unread), or, sent without a length,
// for the buffer it has grown to, until it is decoded into v (v's own
// decoding included: the protocols decode browser tools' schemas there,
// with [DecodeToolSchema]), so that the bytes being decoded at once are
// bounded too. A body whose client went away while it was read is not
// decoded.
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
	user, err := s.User(r)
	if err != nil {
		return err
	}
	body, release, err := s.readBody(r, user)
	if err != nil {
		return err
	}
	defer release()
	if r.Context().Err() != nil {
		return clientGone() // nobody reads the answer: the body is not worth decoding
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e // a value's own refusal (a browser tool's schema)
		}
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

// clientGone is the error of a request whose client went away before
// its work began.
func clientGone() *Error {
	return newError(http.StatusRequestTimeout, "client_gone", ErrBadRequest, "the client went away")
}

// firstBodyBuffer is the buffer a body sent without a Content-Length is
// read into first; it doubles as it fills.
const firstBodyBuffer = 4 << 10

// readBody reads r's body, within Config.MaxBodyBytes, counting its bytes
// among those in flight (user's, and all users') until release is
// called: its Content-Length's worth from the start (the buffer is that
// size), or, without one, the buffer's size as it grows.
func (s *Server) readBody(r *http.Request, user string) (body []byte, release func(), err error) {
	limit := s.cfg.MaxBodyBytes
	tooLarge := func() error {
		return BadRequest(http.StatusRequestEntityTooLarge, "too_large", "the body is larger than %d bytes", limit)
	}
	if r.ContentLength > limit {
		return nil, nil, tooLarge()
	}
	var held int64
	release = func() { s.bodies.give(user, held) }
	take := func(n int64) error {
		if err := s.bodies.take(user, n-held); err != nil {
			return err
		}
		held = n
		return nil
	}
	readErr := func(err error) error {
		release()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return BadRequest(http.StatusRequestTimeout, "body_timeout", "the body did not arrive within %s", s.cfg.BodyTimeout)
		}
		return BadRequest(0, "bad_body", "the body could not be read")
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, func() {}, nil
	}
	if n := r.ContentLength; n >= 0 {
		if err := take(n); err != nil {
			return nil, nil, err
		}
		body = make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, nil, readErr(err)
		}
		// Read to its end, which lifts the read deadline (bodytimeout).
		var one [1]byte
		if m, err := r.Body.Read(one[:]); m > 0 {
			release()
			return nil, nil, BadRequest(0, "bad_body", "the body is longer than its Content-Length")
		} else if err != nil && err != io.EOF {
			return nil, nil, readErr(err)
		}
		return body, release, nil
	}
	for {
		if len(body) == cap(body) {
			if int64(len(body)) > limit {
				release()
				return nil, nil, tooLarge()
			}
			size := min(max(2*int64(cap(body)), firstBodyBuffer), limit+1)
			if err := take(size); err != nil {
				release()
				return nil, nil, err
			}
			body = append(make([]byte, 0, size), body...)
		}
		m, err := r.Body.Read(body[len(body):cap(body)])
		body = body[:len(body)+m]
		if err == io.EOF {
			if int64(len(body)) > limit {
				release()
				return nil, nil, tooLarge()
			}
			return body, release, nil
		}
		if err != nil {
			return nil, nil, readErr(err)
		}
	}
}

// bodies counts the bytes of the request bodies being read and decoded,
// in all and per user: Config.MaxBodyBytesInFlight and
// MaxBodyBytesInFlightPerUser bound them (0: no bound).
type bodies struct {
	max, perUser int64

	mu    sync.Mutex
	total int64
	users map[string]int64
}

// take counts n more bytes of user's in flight, or refuses them.
func (b *bodies) take(user string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.perUser > 0 && b.users[user]+n > b.perUser {
		return newError(http.StatusTooManyRequests, "too_many_bodies", ErrTooManyBodies,
			"your requests being read hold %d bytes, as many as the server reads of one user at once: send this one when they are answered",
			b.users[user])
	}
	if b.max > 0 && b.total+n > b.max {
		return newError(http.StatusServiceUnavailable, "too_many_bodies", ErrTooManyBodies,
			"the server is reading as many request bodies as it takes at once; try again shortly")
	}
	b.total += n
	if b.users == nil {
		b.users = map[string]int64{}
	}
	b.users[user] += n
	return nil
}

// give counts n bytes of user's out.
func (b *bodies) give(user string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total -= n
	if b.users[user] -= n; b.users[user] <= 0 {
		delete(b.users, user)
	}
}

// BodyBytesInFlight returns the bytes of the request bodies being read
// and decoded (see [Server.DecodeJSON]): in all, and of user's requests.
func (s *Server) BodyBytesInFlight(user string) (total, ofUser int64) {
	s.bodies.mu.Lock()
	defer s.bodies.mu.Unlock()
	return s.bodies.total, s.bodies.users[user]
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
