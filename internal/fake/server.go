package fake

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/genai"
)

// The credentials and the Vertex AI project the clients of
// [Server.ClientConfig] and [Server.VertexClientConfig] use. The server
// accepts any non-empty key or token, and any project and location.
const (
	// APIKey is the Gemini API key.
	APIKey = "fake-api-key"
	// AccessToken is the OAuth bearer token sent to Vertex AI.
	AccessToken = "fake-access-token"
	// VertexProject and VertexLocation name the Vertex AI project.
	VertexProject  = "fake-project"
	VertexLocation = "us-central1"
)

// Server is a fake Gemini API and Vertex AI server on a loopback port.
// Create it with [NewServer] and stop it with [Server.Close]. All methods
// are safe for concurrent use.
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
	now       func() time.Time
	advanced  time.Duration // see AdvanceTime
	records   []*record
	ids       int // function-call ids, signatures and response ids issued

	inputTokenLimit int // see SetInputTokenLimit; 0: none

	tokens map[string]*issuedToken           // the continuation tokens sent (continuation.go)
	lookup func([]byte) (*issuedToken, bool) // issued, made once

	// The Interactions API's state (interactions.go).
	interactions  map[string]*storedInteraction
	signatures    map[string]bool               // thought signatures sent to clients
	ixTokens      map[string]string             // continuation tokens issued by interactions, to the interaction that issued them
	ixCheckpoints map[string]*storedInteraction // the interactions whose stream a checkpoint token is of

	// The Live API's state (live.go).
	liveQueue     []*LiveReply
	liveFunc      func(*LiveMessage) *LiveReply
	liveSetupFunc func(*LiveMessage) *LiveReply
	liveRecords   []*LiveMessage
	liveConns     int                      // connections accepted, to number them
	liveHandles   map[string]*liveSession  // resumption handles issued
	liveWS        map[*websocket.Conn]bool // connections open, which Close closes
	liveWG        sync.WaitGroup           // their handlers, which Close waits for

	// The Files API (files.go).
	files   map[string]*storedFile    // by id
	uploads map[string]*uploadSession // in progress, by upload id
	fileSeq int                       // uploads started and files made

	// Embeddings (embed.go): the replies queued for them.
	embedQueue []*Reply

	// Context caching (caches.go).
	caches   map[string]*storedCache // by resource name
	cacheSeq int                     // caches created
	implicit map[implicitKey]time.Time
}

// NewServer starts a server on a loopback port and returns it. The caller
// must call Close when done, typically with t.Cleanup(srv.Close).
func NewServer() *Server {
	s := &Server{closing: make(chan struct{})}
	s.lookup = s.issued
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down. Like httptest.Server.Close it blocks until
// every request in flight has ended, but it first aborts what could keep
// one waiting: pending [Reply.Delay] and [Reply.EventDelay] waits end, and
// every client connection is closed, Live websockets included, so requests,
// streams and Live sessions in flight fail on the client instead of
// completing. Close may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.closeLive() // hijacked connections, which httptest no longer tracks
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
	return newClient(s.ClientConfig())
}

// VertexClientConfig returns a new client configuration for this server as
// Vertex AI: the Vertex AI backend, the project [VertexProject] in
// [VertexLocation], HTTPOptions.BaseURL set to URL, and an HTTP client that
// sends the bearer token [AccessToken], as the client genai builds from
// Google credentials does. Requests go to
// /v1beta1/projects/fake-project/locations/us-central1/publishers/google/models/{model}:….
// With an HTTP client given, genai.NewClient looks up no credentials
// (Application Default Credentials are read only without one); it reads
// the API key variables of the environment only to log that the project
// wins over them. Each call returns a fresh configuration; the HTTP client
// is shared.
func (s *Server) VertexClientConfig() *genai.ClientConfig {
	base := s.srv.Client()
	return &genai.ClientConfig{
		Backend:     genai.BackendVertexAI,
		Project:     VertexProject,
		Location:    VertexLocation,
		HTTPClient:  &http.Client{Transport: bearer{base: base.Transport, token: AccessToken}},
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL},
	}
}

// VertexClient returns a genai client that talks to this server as Vertex
// AI, built from [Server.VertexClientConfig]. It panics if genai.NewClient
// fails, which it does not with that configuration.
func (s *Server) VertexClient() *genai.Client {
	return newClient(s.VertexClientConfig())
}

func newClient(cfg *genai.ClientConfig) *genai.Client {
	c, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		panic("fake: genai.NewClient: " + err.Error())
	}
	return c
}

// bearer is a transport that authenticates with an OAuth bearer token.
type bearer struct {
	base  http.RoundTripper
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
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

// SetTimeNowFunc makes the server read the time from now, which must be
// safe for concurrent use; nil restores time.Now. The time is sent as the
// createTime of Vertex AI responses and as the times of caches, and it
// decides when caches expire and how long implicit caching remembers a
// prompt: a test that moves it forward expires them without waiting.
func (s *Server) SetTimeNowFunc(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// AdvanceTime moves the server's clock forward by d, on top of the time
// source (time.Now, or the function given to [Server.SetTimeNowFunc]):
// caches whose expiry it passes are gone, and prompts remembered for
// implicit caching longer ago than [ImplicitCacheLifetime] are forgotten,
// as if d had passed. A negative d is ignored.
func (s *Server) AdvanceTime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanced += max(d, 0)
}

func (s *Server) timeNow() time.Time {
	s.mu.Lock()
	now, advanced := s.now, s.advanced
	s.mu.Unlock()
	if now == nil {
		return time.Now().Add(advanced)
	}
	return now().Add(advanced)
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

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if backend, version, ok := liveRoute(r.URL); ok && r.Method == http.MethodGet {
		s.serveLive(w, r, backend, version)
		return
	}
	if rt, id, ok := parseInteractionRoute(r.Method, r.URL); ok {
		s.serveInteraction(w, r, rt, id)
		return
	}
	if rt, id, ok := parseCacheRoute(r.Method, r.URL); ok {
		s.serveCache(w, r, rt, id)
		return
	}
	if rt, id, ok := parseFilesRoute(r.Method, r.URL); ok {
		s.serveFiles(w, r, rt, id)
		return
	}
	if rt, ok := parseEmbedRoute(r.Method, r.URL); ok {
		s.serveEmbed(w, r, rt)
		return
	}
	creds := credentialsOf(r)
	req := Request{Header: r.Header.Clone(), Query: r.URL.Query(), APIKey: creds.apiKey, Token: creds.token}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req.Body = body
	rt, served := parseRoute(r.Method, r.URL)
	in := &input{backend: rt.backend, version: rt.version, model: rt.model, method: rt.method, project: rt.project,
		creds: creds, body: body, inputTokenLimit: s.tokenLimit(), tokens: s.lookup, caches: s.lookupCache, files: s.lookupFile}
	var rej *Rejection
	if served {
		req.Backend, req.APIVersion, req.Model, req.Method = rt.backend, rt.version, rt.model, rt.method
		req.Project, req.Location = rt.project, rt.location
	}
	format, formatOK := streamFormatOf(req.Query)
	in.format = format
	switch {
	case !served:
		rej = &Rejection{Rule: "route", Err: APIError{Code: http.StatusNotFound, Status: "NOT_FOUND",
			Message: fmt.Sprintf("Requested entity was not found. (fake: nothing is served at %s %s)", r.Method, r.URL.Path)}}
	case rt.method == MethodStreamGenerateContent && !formatOK:
		rej = &Rejection{Rule: "route", Err: *invalidArgument(fmt.Sprintf(
			"fake: streamGenerateContent is served with alt=sse, alt=json or no alt, not alt=%s", req.Query.Get("alt")+req.Query.Get("$alt")))}
	case err != nil:
		rej = &Rejection{Rule: "route", Err: *invalidArgument(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxBody))}
	default:
		rej = check(in)
	}
	if rej == nil && in.cache == nil {
		in.cachedTokens = s.implicitHit(in)
	}

	var given *Reply
	if in.resume != nil {
		// A stream resumed from a checkpoint: the rest of that stream.
		given = &Reply{Chunks: in.resume}
	}
	rec := &record{req: req, canonical: in.canonical}
	reply := s.take(rec, rej, true, given)
	seq := rec.req.Seq
	if rej != nil {
		s.log("fake: #%d %s %s: rejected by rule %q: %d %s", seq, r.Method, r.URL.Path, rej.Rule, rej.Err.httpCode(), rej.Err.Message)
		writeError(w, in, &rej.Err)
		return
	}
	if reply == nil {
		writeError(w, in, s.unscripted(rec))
		return
	}
	s.log("fake: #%d %s %s: %s", seq, req.Method, req.Model, describe(reply))
	s.answer(w, r, req.Method, in, reply)
}

// take records rec, which rej rejected or not, and returns the reply that
// answers it when it takes one (scripted and not rejected): given (a
// resumed stream's), else the first one queued, else the reply function's;
// nil when there is none.
func (s *Server) take(rec *record, rej *Rejection, scripted bool, given *Reply) *Reply {
	s.mu.Lock()
	rec.req.Seq = len(s.records) + 1
	s.records = append(s.records, rec)
	var (
		reply *Reply
		fn    func(*Request) *Reply
		fnReq *Request
	)
	switch {
	case rej != nil:
		rej.Seq = rec.req.Seq
		rec.req.Rejection = rej
	case !scripted:
	case given != nil:
		reply = given
	case len(s.queue) > 0:
		reply = s.queue[0]
		s.queue = s.queue[1:]
	case s.replyFunc != nil:
		fn, fnReq = s.replyFunc, rec.request()
	}
	s.mu.Unlock()
	if fn != nil {
		reply = fn(fnReq)
	}
	return reply
}

// unscripted marks rec as a request no reply was scripted for, and
// returns the error that answers it.
func (s *Server) unscripted(rec *record) *APIError {
	s.mu.Lock()
	rec.req.Unscripted = true
	s.mu.Unlock()
	err := &APIError{Code: http.StatusBadRequest, Status: "FAILED_PRECONDITION",
		Message: fmt.Sprintf("fake: no reply scripted for request #%d", rec.req.Seq)}
	s.log("fake: #%d %s %s: %s", rec.req.Seq, rec.req.Method, rec.req.Model, err.Message)
	return err
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
		writeError(w, in, reply.Err)
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
		sw := newStreamWriter(w, in.format)
		sw.element(reply.Body)
		sw.end()
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
		writeError(w, in, reply.StreamErr)
		return
	}
	evs, err := s.events(reply, in, false)
	var body []byte
	if err == nil {
		body, err = s.encodeResponse(evs[0], in)
	}
	if err != nil {
		writeError(w, in, &APIError{Code: http.StatusInternalServerError, Message: err.Error()})
		return
	}
	setServiceTier(w, in)
	writeUnary(w, reply.Fault, body)
}

// writeUnary sends body, a unary answer, with fault: a body that is not
// JSON, or half of body and a cut connection.
func writeUnary(w http.ResponseWriter, fault Fault, body []byte) {
	switch fault {
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

// writeError sends e in the API's error JSON with its HTTP status. A
// stream framed as a JSON array gets the error as the array's one element,
// as the API sends it (dreeveapp/dreeve#894: [{"error": {…}}]).
func writeError(w http.ResponseWriter, in *input, e *APIError) {
	body := mustJSON(e.wire())
	if in.method == MethodStreamGenerateContent && in.format == streamJSONArray {
		body = append(append([]byte("["), body...), ']')
	}
	writeJSON(w, e.httpCode(), body)
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

// setServiceTier sets the header in which the Gemini API says which tier
// served a request that asked for one (vercel/ai#14937; the real traffic's
// adk-go traces carry "X-Gemini-Service-Tier: standard", unary and streamed).
func setServiceTier(w http.ResponseWriter, in *input) {
	if !in.vertex() && in.req != nil && in.req.ServiceTier != "" {
		w.Header().Set("X-Gemini-Service-Tier", string(in.req.ServiceTier))
	}
}
