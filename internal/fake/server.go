package fake

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"time"

	"google.golang.org/genai"
)

// APIKey is the API key [Server.ClientConfig] and [Server.Client] use. The
// server accepts any non-empty key.
const APIKey = "fake-api-key"

// Server is a fake Gemini API server on a loopback port. Create it with
// [NewServer] and stop it with [Server.Close]. All methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port", with no
	// trailing slash. Use it as genai.HTTPOptions.BaseURL.
	URL string

	srv       *httptest.Server
	closing   chan struct{} // closed by Close: aborts waits and streams
	closeOnce sync.Once

	mu        sync.Mutex
	queue     []*Reply
	replyFunc func(*Request) *Reply
	logf      func(format string, args ...any)
	records   []*record
	ids       int // function-call ids, signatures and response ids issued

	inputTokenLimit int // see SetInputTokenLimit; 0: none
}

// NewServer starts a server on a loopback port and returns it. The caller
// must call Close when done, typically with t.Cleanup(srv.Close).
func NewServer() *Server {
	s := &Server{closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down. Like httptest.Server.Close it blocks until
// every request in flight has ended, but it first aborts what could keep
// one waiting: pending [Reply.Delay] and [Reply.EventDelay] waits end, and
// every client connection is closed, so requests and streams in flight fail
// on the client instead of completing. Close may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// ClientConfig returns a new client configuration for this server: the API
// key [APIKey], the Gemini API backend, HTTPOptions.BaseURL set to URL and an
// HTTP client whose idle connections Close closes. With it, genai.NewClient
// consults no environment variable, credential file or network service.
// genai.NewClient modifies the config it is given; each call returns a
// fresh one. The HTTP client is shared by all of them: replace it rather
// than modify it.
func (s *Server) ClientConfig() *genai.ClientConfig {
	return &genai.ClientConfig{
		APIKey:      APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  s.srv.Client(),
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL},
	}
}

// Client returns a genai client that talks to this server, built from
// [Server.ClientConfig]. It panics if genai.NewClient fails, which it does
// not with that configuration.
func (s *Server) Client() *genai.Client {
	c, err := genai.NewClient(context.Background(), s.ClientConfig())
	if err != nil {
		panic("fake: genai.NewClient: " + err.Error())
	}
	return c
}

// Enqueue appends replies to the script. Each request, unary or streaming,
// takes the first reply of the queue; rejected requests take none.
func (s *Server) Enqueue(replies ...*Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending returns the number of queued replies not yet taken.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// SetReplyFunc installs f, which computes the reply to a request when the
// queue is empty; nil uninstalls it. f receives a copy of the request that
// it owns. It is called from the server's handler goroutines, possibly
// concurrently, so it must be safe for concurrent use; it may call the
// server's methods except Close. If f returns nil, the request is
// unscripted (see the package documentation).
func (s *Server) SetReplyFunc(f func(*Request) *Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replyFunc = f
}

// SetLogger makes the server log one line per request, and why it was
// rejected, with logf; nil, the default, logs nothing. testing.T's Logf
// satisfies it. logf may be called concurrently.
func (s *Server) SetLogger(logf func(format string, args ...any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logf = logf
}

func (s *Server) log(format string, args ...any) {
	s.mu.Lock()
	logf := s.logf
	s.mu.Unlock()
	if logf != nil {
		logf(format, args...)
	}
}

// maxBody is the largest request body the server reads.
const maxBody = 64 << 20

// route matches the paths the server serves: /{version}/models/{model}:{method}.
var route = regexp.MustCompile(`^/(v1|v1beta|v1alpha)/models/([^/:]+):([A-Za-z]+)$`)

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request{Header: r.Header.Clone(), APIKey: r.Header.Get("X-Goog-Api-Key")}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req.Body = body
	var rej *Rejection
	in := &input{apiKey: req.APIKey, body: body, inputTokenLimit: s.tokenLimit()}
	if m := route.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost &&
		(m[3] == string(MethodGenerateContent) || m[3] == string(MethodStreamGenerateContent)) {
		req.APIVersion, req.Model, req.Method = m[1], m[2], Method(m[3])
		in.model = req.Model
	}
	switch {
	case req.Method == "":
		rej = &Rejection{Rule: "route", Err: APIError{Code: http.StatusNotFound, Status: "NOT_FOUND",
			Message: fmt.Sprintf("Requested entity was not found. (fake: nothing is served at %s %s)", r.Method, r.URL.Path)}}
	case req.Method == MethodStreamGenerateContent && r.URL.Query().Get("alt") != "sse":
		rej = &Rejection{Rule: "route", Err: *invalidArgument("fake: streamGenerateContent is served only with alt=sse, which the SDK always sends")}
	case err != nil:
		rej = &Rejection{Rule: "route", Err: *invalidArgument(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxBody))}
	default:
		rej = check(in)
	}

	s.mu.Lock()
	rec := &record{req: req, canonical: in.canonical}
	rec.req.Seq = len(s.records) + 1
	s.records = append(s.records, rec)
	var reply *Reply
	var fn func(*Request) *Reply
	var fnReq *Request
	switch {
	case rej != nil:
		rej.Seq = rec.req.Seq
		rec.req.Rejection = rej
	case len(s.queue) > 0:
		reply = s.queue[0]
		s.queue = s.queue[1:]
	case s.replyFunc != nil:
		fn, fnReq = s.replyFunc, rec.request()
	}
	s.mu.Unlock()

	seq := rec.req.Seq
	if rej != nil {
		s.log("fake: #%d %s %s: rejected by rule %q: %d %s", seq, r.Method, r.URL.Path, rej.Rule, rej.Err.httpCode(), rej.Err.Message)
		writeError(w, &rej.Err)
		return
	}
	if fn != nil {
		reply = fn(fnReq)
	}
	if reply == nil {
		s.mu.Lock()
		rec.req.Unscripted = true
		s.mu.Unlock()
		err := &APIError{Code: http.StatusBadRequest, Status: "FAILED_PRECONDITION",
			Message: fmt.Sprintf("fake: no reply scripted for request #%d", seq)}
		s.log("fake: #%d %s %s: %s", seq, req.Method, req.Model, err.Message)
		writeError(w, err)
		return
	}
	s.log("fake: #%d %s %s: %s", seq, req.Method, req.Model, describe(reply))
	s.answer(w, r, req.Method, in, reply)
}

// describe summarizes a reply for the log.
func describe(r *Reply) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("error %d %s", r.Err.httpCode(), r.Err.status())
	case r.Fault != FaultNone:
		return r.Fault.String()
	case r.StreamErr != nil:
		return fmt.Sprintf("stream error %d after %d events", r.StreamErr.httpCode(), r.CutAfter)
	case r.Body != nil:
		return fmt.Sprintf("raw body of %d bytes", len(r.Body))
	case len(r.Chunks) > 0:
		return fmt.Sprintf("%d chunks", len(r.Chunks))
	}
	return "response"
}

// answer sends reply to a validated request.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, method Method, in *input, reply *Reply) {
	if !s.wait(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler) // the client is gone or the server closing
	}
	if reply.Err != nil {
		writeError(w, reply.Err)
		return
	}
	if reply.Fault == FaultDropConnection {
		dropConnection(w)
		return
	}
	if reply.Body != nil {
		if method == MethodGenerateContent {
			writeJSON(w, http.StatusOK, reply.Body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvent(w, reply.Body)
		return
	}
	if method == MethodGenerateContent {
		s.answerUnary(w, in, reply)
		return
	}
	s.answerStream(w, r, in, reply)
}

// answerUnary sends reply as one JSON response.
func (s *Server) answerUnary(w http.ResponseWriter, in *input, reply *Reply) {
	if reply.StreamErr != nil {
		writeError(w, reply.StreamErr)
		return
	}
	evs, err := s.events(reply, in, false)
	var body []byte
	if err == nil {
		body, err = encodeResponse(evs[0])
	}
	if err != nil {
		writeError(w, &APIError{Code: http.StatusInternalServerError, Message: err.Error()})
		return
	}
	switch reply.Fault {
	case FaultMalformedBody:
		writeJSON(w, http.StatusOK, []byte("this is not JSON"))
	case FaultCutStream, FaultCutMidEvent:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	default:
		writeJSON(w, http.StatusOK, body)
	}
}

// wait waits d and reports whether it did, false if ctx ended or the server
// closed first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.closing:
	}
	return false
}

// dropConnection closes the connection without writing a byte.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// writeError sends e in the API's error JSON with its HTTP status.
func writeError(w http.ResponseWriter, e *APIError) {
	writeJSON(w, e.httpCode(), mustJSON(e.wire()))
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write(body)
}

// nextID returns a number unique within the server, for ids and signatures.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return s.ids
}
