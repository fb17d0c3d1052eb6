package geminitest

import (
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The credentials and the Vertex AI project the clients of
// [Server.ClientConfig] and [Server.VertexClientConfig] use. The server
// accepts any non-empty key or token, and any project and location.
const (
	// APIKey is the Gemini API key.
	APIKey = fake.APIKey
	// AccessToken is the OAuth bearer token sent to Vertex AI.
	AccessToken = fake.AccessToken
	// VertexProject and VertexLocation name the Vertex AI project.
	VertexProject  = fake.VertexProject
	VertexLocation = fake.VertexLocation
)

// Server is a fake Gemini API and Vertex AI server on a loopback port.
// Create it with [NewServer] or [Start] and stop it with [Server.Close].
// All methods are safe for concurrent use, also while requests are in
// flight.
type Server struct {
	// URL is the base URL of the server, "http://127.0.0.1:port", with no
	// trailing slash. Use it as genai.HTTPOptions.BaseURL.
	URL string

	srv *fake.Server
}

// NewServer starts a server on a loopback port and returns it. The caller
// must call Close when done. It needs no testing.TB, so that a program (a
// demo, an offline mode) can run on it too; in a test, [Start] also closes
// it and checks the protocol.
func NewServer() *Server {
	s := fake.NewServer()
	return &Server{URL: s.URL, srv: s}
}

// Start starts a server for the test tb: it logs one line per request to
// tb, and when tb ends it closes the server and fails tb for every request
// and Live message the server rejected because it broke the API's protocol
// (see [Server.Rejections] and [Server.LiveRejections]). Replies left unused and unscripted requests are not
// checked at the end: call [Server.AssertComplete] where they matter.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := NewServer()
	s.SetLogger(tb.Logf)
	tb.Cleanup(func() {
		s.Close()
		for _, r := range s.Rejections() {
			tb.Errorf("geminitest: request #%d broke the protocol (rule %s): %d %s", r.Seq, r.Rule, r.Err.Code, r.Err.Message)
		}
		for _, m := range s.LiveRejections() {
			tb.Errorf("geminitest: live message #%d broke the protocol (rule %s): %d %s", m.Seq, m.Rejection.Rule, m.Rejection.Code, m.Rejection.Reason)
		}
	})
	return s
}

// Close shuts the server down. Like httptest.Server.Close it blocks until
// every request in flight has ended, but it first aborts pending delays and
// closes client connections, so requests and streams in flight fail on the
// client. Close may be called more than once.
func (s *Server) Close() { s.srv.Close() }

// ClientConfig returns a new client configuration for this server as the
// Gemini API: the key [APIKey], HTTPOptions.BaseURL set to URL and an HTTP
// client whose idle connections Close closes. With it, genai.NewClient
// consults no environment variable, credential file or network service.
// genai.NewClient modifies the config it is given; each call returns a
// fresh one. The HTTP client is shared: replace it rather than modify it.
func (s *Server) ClientConfig() *genai.ClientConfig { return s.srv.ClientConfig() }

// Client returns a genai client that talks to this server as the Gemini
// API, built from [Server.ClientConfig].
func (s *Server) Client() *genai.Client { return s.srv.Client() }

// VertexClientConfig returns a new client configuration for this server as
// Vertex AI: the project [VertexProject] in [VertexLocation], HTTPOptions.BaseURL
// set to URL, and an HTTP client that sends the bearer token
// [AccessToken], as the client genai builds from Google credentials does.
// Requests go to
// /v1beta1/projects/fake-project/locations/us-central1/publishers/google/models/{model}:….
// genai.NewClient looks up no credentials with it.
func (s *Server) VertexClientConfig() *genai.ClientConfig { return s.srv.VertexClientConfig() }

// VertexClient returns a genai client that talks to this server as Vertex
// AI, built from [Server.VertexClientConfig].
func (s *Server) VertexClient() *genai.Client { return s.srv.VertexClient() }

// Enqueue appends replies to the script. Each request, unary or streaming,
// on either backend, takes the first reply of the queue; rejected requests
// take none. The server never modifies a Reply.
func (s *Server) Enqueue(replies ...*Reply) { s.srv.Enqueue(replies...) }

// Pending returns the number of queued replies not yet taken.
func (s *Server) Pending() int { return s.srv.Pending() }

// SetReplyFunc installs f, which computes the reply to a request when the
// queue is empty; nil uninstalls it. f receives a copy of the request that
// it owns. It is called from the server's handler goroutines, possibly
// concurrently, so it must be safe for concurrent use; it may call the
// server's methods except Close. If f returns nil, the request is
// unscripted (see the package documentation).
func (s *Server) SetReplyFunc(f func(*Request) *Reply) { s.srv.SetReplyFunc(f) }

// SetLogger makes the server log one line per request, and why it was
// rejected, with logf; nil, the default, logs nothing. testing.T's Logf
// satisfies it. logf may be called concurrently.
func (s *Server) SetLogger(logf func(format string, args ...any)) { s.srv.SetLogger(logf) }

// SetTimeNowFunc makes the server read the time from now, which must be
// safe for concurrent use; nil restores time.Now. The time is sent as the
// createTime of Vertex AI responses and as the times of caches, and it
// decides when caches expire and how long implicit caching remembers a
// prompt (see also [Server.AdvanceTime]).
func (s *Server) SetTimeNowFunc(now func() time.Time) { s.srv.SetTimeNowFunc(now) }

// Requests returns copies of all requests received so far, rejected ones
// included, in order of arrival. The caller owns them.
func (s *Server) Requests() []*Request { return s.srv.Requests() }

// LastRequest returns a copy of the most recent request, or nil if there
// has been none.
func (s *Server) LastRequest() *Request { return s.srv.LastRequest() }

// Rejections returns copies of the rejections of all requests that broke
// the API's protocol, in order of arrival; a client that speaks it
// correctly causes none. Requests to routes the server does not serve are
// rejected too, by the rule "route".
func (s *Server) Rejections() []*Rejection { return s.srv.Rejections() }

// Unscripted returns how many requests found neither a queued reply nor a
// reply function, and were answered with the "no reply scripted" error.
func (s *Server) Unscripted() int { return s.srv.Unscripted() }

// ExpireInteractions forgets the Interactions API's stored interactions
// with these ids, or all of them when none is given, as the API's retention
// does: a request that names one as its previous_interaction_id is then
// answered 404 NOT_FOUND, as an unknown id is. A test proves with it that
// code which continues interactions copes when the server no longer holds
// them.
func (s *Server) ExpireInteractions(ids ...string) { s.srv.ExpireInteractions(ids...) }

// InteractionIDs returns the ids of the interactions the server keeps (those
// created with store, the API's default, and not deleted or expired), in
// the order they were created.
func (s *Server) InteractionIDs() []string { return s.srv.InteractionIDs() }

// SetInputTokenLimit makes the server refuse a request whose prompt is
// larger than n tokens, counted as its usage would count it (about 4
// bytes a token), with the API's 400 INVALID_ARGUMENT; 0, the default,
// sets no limit. On the Interactions API the prompt is the whole
// conversation, the previous interactions' included.
func (s *Server) SetInputTokenLimit(n int) { s.srv.SetInputTokenLimit(n) }
