package agentserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultApprovalTimeout = 10 * time.Minute
	DefaultKeepAlive       = 15 * time.Second
	DefaultWriteTimeout    = 15 * time.Second
	DefaultKeepFinished    = time.Minute
	DefaultMaxBodyBytes    = 4 << 20
	DefaultMaxMessages     = 1000
	DefaultMaxParts        = 100
	DefaultMaxTools        = 64
)

// Config configures a [Server]. Only Agent is required.
type Config struct {
	// Agent runs every run. A typed agent (agent.Typed) gives runs a typed
	// answer, in Done.Output.
	Agent *agent.Agent

	// Store keeps the threads. Nil means a new session.Memory.
	Store session.Store

	// Authenticate names the user a request comes from, or refuses it
	// with an error: 401, unless the error is an [*Error] that says
	// otherwise (its Message is shown; other errors' text never is).
	// Every thread and run belongs to one user, and no user reaches
	// another's. Nil means one anonymous user, "local", for every request:
	// for a server on localhost only. Such a server refuses (403) a
	// request that reached it on a loopback address for a host that is
	// not localhost or a loopback address: that is how a page of another
	// site, its name rebound to 127.0.0.1, would reach it (DNS
	// rebinding).
	Authenticate func(*http.Request) (user string, err error)

	// Runner hosts the runs. Nil means in this process (see [Runner]).
	Runner Runner

	// Observer sees every event of every run, after the agent's own
	// observer, with contexts that [RunID] reads the run's id from (and
	// agent.Conversation the thread's).
	Observer agent.Observer

	// Logger receives runs that fail (Warn) and end early (Info), and
	// requests refused for a reason the client is not told (Error). Nil
	// means slog.Default().
	Logger *slog.Logger

	// ApprovalTimeout is how long a run waits for the decision about a
	// call that needs approval, or for a browser tool's result; then the
	// call is denied, and the model told why. Zero means
	// DefaultApprovalTimeout (10 minutes).
	ApprovalTimeout time.Duration

	// RunTimeout bounds a whole run, its waits for decisions included.
	// Zero means no bound.
	RunTimeout time.Duration

	// KeepAlive is the interval of the comments sent on a stream that has
	// nothing else to send, so that proxies keep it open. Zero means
	// DefaultKeepAlive (15 s).
	KeepAlive time.Duration

	// WriteTimeout bounds each write of a stream: a client that reads
	// nothing for that long is dropped (its run goes on). Zero means
	// DefaultWriteTimeout (15 s).
	WriteTimeout time.Duration

	// KeepFinished is how long a run that is over can still be looked up
	// and read by its id. Zero means DefaultKeepFinished (1 minute).
	KeepFinished time.Duration

	// MaxRuns bounds the runs in flight; more are refused with 503. Zero
	// means no bound.
	MaxRuns int

	// MaxRunsPerUser bounds the runs in flight of one user, those that
	// wait for decisions included; more are refused with 429, so that one
	// user cannot take every run MaxRuns allows. Zero means no bound. A
	// Runner of another kind than the in-process one applies its own.
	MaxRunsPerUser int

	// The limits of a request: a larger body is refused with 413, more
	// messages, parts in a message, or browser tools with 400. Zero means
	// the Default constant of the same name (4 MiB, 1000, 100, 64).
	MaxBodyBytes int64
	MaxMessages  int
	MaxParts     int
	MaxTools     int

	// AllowedOrigins are the origins (scheme://host[:port]) whose pages
	// may call the server from another origin (a dev server on another
	// port, an app on another host), through [Server.CORS], which every
	// protocol handler is wrapped in: each is trusted as the server's own
	// pages are, cookies included. "*" allows every origin, without
	// credentials, and needs Authenticate. Nil allows none: the browser
	// keeps other origins' pages from calling.
	AllowedOrigins []string
}

// A Server serves an agent to clients: threads kept in a store, one run
// at a time per thread, runs that outlive their requests, approvals and
// browser tools decided across requests. Protocol packages (agui, aisdk)
// make HTTP handlers of it. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	runner  Runner
	workers *workers // the goroutines that start requests (see Stream)
	origins origins  // Config.AllowedOrigins, read

	mu      sync.Mutex
	streams int           // ServeEvents calls in flight
	drained chan struct{} // closed when streams drops to 0, for Close
	closing bool
	// stopStreams ends every stream at once, when Close runs out of time.
	stopStreams context.Context
	stop        context.CancelFunc
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Agent == nil {
		return nil, errors.New("agentserver: Config.Agent is nil")
	}
	if err := cfg.Agent.Steps().Err(); err != nil {
		return nil, fmt.Errorf("agentserver: Config.Agent: %w", err)
	}
	if cfg.ApprovalTimeout < 0 || cfg.RunTimeout < 0 || cfg.KeepAlive < 0 || cfg.WriteTimeout < 0 || cfg.KeepFinished < 0 ||
		cfg.MaxRuns < 0 || cfg.MaxRunsPerUser < 0 || cfg.MaxBodyBytes < 0 || cfg.MaxMessages < 0 || cfg.MaxParts < 0 || cfg.MaxTools < 0 {
		return nil, errors.New("agentserver: a negative limit in Config")
	}
	if cfg.Store == nil {
		cfg.Store = session.NewMemory()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.ApprovalTimeout = or(cfg.ApprovalTimeout, DefaultApprovalTimeout)
	cfg.KeepAlive = or(cfg.KeepAlive, DefaultKeepAlive)
	cfg.WriteTimeout = or(cfg.WriteTimeout, DefaultWriteTimeout)
	cfg.KeepFinished = or(cfg.KeepFinished, DefaultKeepFinished)
	cfg.MaxBodyBytes = or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxMessages = or(cfg.MaxMessages, DefaultMaxMessages)
	cfg.MaxParts = or(cfg.MaxParts, DefaultMaxParts)
	cfg.MaxTools = or(cfg.MaxTools, DefaultMaxTools)
	origins, err := parseOrigins(cfg.AllowedOrigins, cfg.Authenticate != nil)
	if err != nil {
		return nil, err
	}
	cfg.AllowedOrigins = slices.Clone(cfg.AllowedOrigins)
	s := &Server{cfg: cfg, runner: cfg.Runner, workers: newWorkers(), origins: origins}
	if s.runner == nil {
		s.runner = newLocalRunner(&s.cfg)
	}
	s.stopStreams, s.stop = context.WithCancel(context.Background())
	return s, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Config returns the server's configuration, defaults applied.
func (s *Server) Config() Config { return s.cfg }

// Agent returns the agent the server runs.
func (s *Server) Agent() *agent.Agent { return s.cfg.Agent }

// Runner returns the runner that hosts the server's runs.
func (s *Server) Runner() Runner { return s.runner }

// Close stops taking requests (they get 503), and ends the runs: runs
// that wait for decisions are cancelled at once, the others may finish
// until ctx is done, when they are cancelled; every run is saved, as far
// as it went. Streams end with their run's end, as the protocol says it;
// once ctx is done they are cut at once, each ending with the protocol's
// error event. Close returns when every run and stream has ended (a
// client that reads nothing holds its stream for Config.WriteTimeout at
// most); the error is ctx's when it had to cancel runs or cut streams.
// A request whose run started before Close, and whose stream begins after
// it, is answered with what the run's log holds (its end, the run
// cancelled and saved), not refused: nothing it started goes untold.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	err := s.runner.Close(ctx)
	if werr := s.waitStreams(ctx); werr != nil {
		err = werr
		s.stop()
		s.waitStreams(context.Background()) // each ends at once, or at its write deadline
	}
	s.stop()
	s.workers.close()
	return err
}

// waitStreams waits until no stream is in flight, or ctx is done.
func (s *Server) waitStreams(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.streams == 0 {
			s.mu.Unlock()
			return nil
		}
		if s.drained == nil {
			s.drained = make(chan struct{})
		}
		drained := s.drained
		s.mu.Unlock()
		select {
		case <-drained:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// closed returns ErrClosed once Close was called.
func (s *Server) closed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return newError(http.StatusServiceUnavailable, "closing", ErrClosed, "the server is shutting down")
	}
	return nil
}

// Request is what a client's request contributes to a thread, once its
// protocol has read it: a new user message, or decisions about the calls
// its run waits for. Nothing else of what a client sends is taken: its
// copy of the history is never trusted.
type Request struct {
	// Thread names the thread, as the client names it.
	Thread string
	// Message is the new user message; nil when the request only decides.
	Message *genai.Content
	// Decisions decide calls the thread's run waits for. One for a call
	// that does not wait (unknown, decided, expired) fails the request.
	Decisions []Decision
	// Results are decisions the client's copy of the history implies
	// (browser tools' results, an approval the client cancelled): those
	// for calls the run waits for are taken as decisions, the others
	// ignored, since they answer calls of the past.
	Results []Decision
	// Tools are the browser tools the request declares; a run that
	// starts gets them (a run that goes on keeps those it started with).
	Tools []ToolDecl
	// KeepLog keeps the whole log of the run that starts for as long as
	// the server keeps the run (Config.KeepFinished), rather than letting
	// it be cut to its last record once its end was read: for a protocol
	// whose clients look a run's whole story up after they have read its
	// end (A2A's tasks/get). Once the run is over and nobody reads it, the
	// pieces of each turn's text and thoughts are joined into one record
	// each, so that a kept log holds little more than what the run added
	// to its thread. A run that goes on keeps the choice it started with.
	KeepLog bool
}

// An Attachment is what a request did to its thread: the run, and the
// response's cursor on its log.
type Attachment struct {
	Run RunInfo
	// Cursor reads the run's log from where the request's effect starts:
	// the run's first record for a run that starts, the first decision
	// for a run that goes on. It is attached before anything is added, so
	// that the response misses nothing. Read it to its end, or close it.
	Cursor Cursor
	// Continued is set when the request decided calls of a run that was
	// waiting, rather than starting one.
	Continued bool
}

// Submit applies a request to user's thread: it starts a run on the
// new message, or hands the decisions to the thread's run that waits for
// them. It is refused, and changes nothing, when the thread has a run in
// progress and the request decides nothing of it (ErrBusy), when it
// decides calls that do not wait (ErrUnknownCall, ErrDecided,
// ErrExpired), when its browser tools are invalid, or when it brings
// nothing to do.
func (s *Server) Submit(ctx context.Context, user string, req Request) (Attachment, error) {
	if err := s.closed(); err != nil {
		return Attachment{}, err
	}
	thread, err := threadKey(user, req.Thread)
	if err != nil {
		return Attachment{}, err
	}
	if err := checkTools(s.cfg.Agent, req.Tools, s.cfg.MaxTools); err != nil {
		return Attachment{}, err
	}
	cur, err := s.runner.Latest(ctx, thread)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Attachment{}, err
	case cur.State.Over():
		if len(req.Decisions) > 0 {
			// Decisions for the calls of a run that is over: its
			// answer says whether they were decided or expired.
			c, err := s.runner.Decide(ctx, cur.ID, req.Decisions)
			if err != nil {
				return Attachment{}, err
			}
			c.Close() // not reached: a run that is over takes no decision
		}
	case cur.State == StateWaiting:
		ds := slices.Clone(req.Decisions)
		if len(req.Results) > 0 {
			// A set of the calls decided, so that many results and
			// decisions cost what they weigh, not their product.
			decided := make(map[string]bool, len(ds))
			for _, d := range ds {
				decided[d.CallID] = true
			}
			for _, d := range req.Results {
				if !decided[d.CallID] && slices.ContainsFunc(cur.Pending, func(p Pending) bool { return p.Call.ID == d.CallID }) {
					decided[d.CallID] = true
					ds = append(ds, d)
				}
			}
		}
		if req.Message != nil {
			return Attachment{}, newError(http.StatusConflict, "busy", ErrBusy,
				"the thread's run waits for decisions about %s; send them before a new message", callList(cur.Pending))
		}
		if len(ds) == 0 {
			return Attachment{}, newError(http.StatusConflict, "busy", ErrBusy,
				"the thread's run waits for decisions about %s", callList(cur.Pending))
		}
		c, err := s.runner.Decide(ctx, cur.ID, ds)
		if err != nil {
			return Attachment{}, err
		}
		cur.State, cur.Pending = StateRunning, nil
		return Attachment{Run: cur, Cursor: c, Continued: true}, nil
	default:
		if len(req.Decisions) > 0 {
			return Attachment{}, newError(http.StatusConflict, "busy", ErrBusy, "the thread's run is in progress and waits for no decision")
		}
		return Attachment{}, newError(http.StatusConflict, "busy", ErrBusy, "thread %q has a run in progress", req.Thread)
	}
	if len(req.Decisions) > 0 {
		return Attachment{}, newError(http.StatusConflict, "unknown_call", ErrUnknownCall, "no call of thread %q waits for a decision", req.Thread)
	}
	if req.Message == nil || len(req.Message.Parts) == 0 {
		return Attachment{}, BadRequest(0, "no_message", "the request has no new user message")
	}
	info, c, err := s.runner.Start(ctx, &Input{Thread: thread, Conversation: req.Thread, User: user, Message: req.Message, Tools: req.Tools, KeepLog: req.KeepLog})
	if err != nil {
		return Attachment{}, err
	}
	return Attachment{Run: info, Cursor: c}, nil
}

func callList(ps []Pending) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Call.ID + " (" + p.Call.Name + ")"
	}
	return strings.Join(names, ", ")
}

// Current describes user's thread's run that is not over: ErrNotFound
// when there is none (or the thread is another user's).
func (s *Server) Current(ctx context.Context, user, thread string) (RunInfo, error) {
	key, err := threadKey(user, thread)
	if err != nil {
		return RunInfo{}, err
	}
	info, err := s.runner.Latest(ctx, key)
	if err == nil && info.State.Over() {
		return RunInfo{}, notFound("no run in progress on this thread")
	}
	return info, err
}

// Run describes user's run id: its state, the calls it waits for, how it
// ended. Another user's run is ErrNotFound.
func (s *Server) Run(ctx context.Context, user, id string) (RunInfo, error) {
	info, err := s.runner.Lookup(ctx, id)
	if err == nil && info.User != user {
		return RunInfo{}, notFound("run %q not found", id)
	}
	return info, err
}

// Attach returns a cursor on user's run id's log, at offset.
func (s *Server) Attach(ctx context.Context, user, id string, offset int64) (Cursor, error) {
	if _, err := s.Run(ctx, user, id); err != nil {
		return nil, err
	}
	return s.runner.Attach(ctx, id, offset)
}

// Cancel stops user's run id and its tools; it is saved as far as it
// went, and ends in StateCancelled.
func (s *Server) Cancel(ctx context.Context, user, id string) error {
	if _, err := s.Run(ctx, user, id); err != nil {
		return err
	}
	return s.runner.Cancel(ctx, id)
}

// ThreadInfo describes a thread.
type ThreadInfo struct {
	ID      string    `json:"id"`
	Len     int       `json:"len"` // the contents stored
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Run is the id of the thread's run that is not over; "" when none.
	Run string `json:"run,omitempty"`
}

// Threads lists user's threads, the most recently updated first.
func (s *Server) Threads(ctx context.Context, user string) ([]ThreadInfo, error) {
	prefix, err := userPrefix(user)
	if err != nil {
		return nil, err
	}
	all, err := s.cfg.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []ThreadInfo
	for _, c := range all {
		id, ok := strings.CutPrefix(c.ID, prefix)
		if !ok {
			continue
		}
		t := ThreadInfo{ID: id, Len: c.Len, Created: c.Created, Updated: c.Updated}
		if cur, err := s.runner.Latest(ctx, c.ID); err == nil && !cur.State.Over() {
			t.Run = cur.ID
		}
		out = append(out, t)
	}
	return out, nil
}

// History returns user's thread's stored contents, oldest first: what its
// runs saved (a run in progress is saved when it ends). A thread never
// written to, or another user's, is ErrNotFound.
func (s *Server) History(ctx context.Context, user, thread string) ([]*genai.Content, error) {
	key, err := threadKey(user, thread)
	if err != nil {
		return nil, err
	}
	h, err := s.cfg.Store.Load(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return nil, notFound("thread %q not found", thread)
	}
	return h, err
}

// Limits of the ids a Server takes.
const (
	maxUserBytes   = 256
	maxThreadBytes = 200
)

// storePrefix starts the store id of every thread: a store may hold other
// conversations too.
const storePrefix = "agentserver/"

// userPrefix returns the start of the store ids of user's threads: the
// user escaped, so that no user's prefix is another's.
func userPrefix(user string) (string, error) {
	if user == "" || len(user) > maxUserBytes || !utf8.ValidString(user) {
		return "", newError(http.StatusInternalServerError, "internal", ErrUnauthenticated, "internal error")
	}
	return storePrefix + url.PathEscape(user) + "/", nil
}

// threadKey returns the store id of user's thread.
func threadKey(user, thread string) (string, error) {
	prefix, err := userPrefix(user)
	if err != nil {
		return "", err
	}
	if err := CheckThreadID(thread); err != nil {
		return "", err
	}
	return prefix + thread, nil
}

// CheckThreadID returns the error a request naming thread id gets: an id
// is 1 to 200 bytes of UTF-8 without control characters.
func CheckThreadID(id string) error {
	if id == "" {
		return BadRequest(0, "bad_thread", "the thread id is empty")
	}
	if len(id) > maxThreadBytes {
		return BadRequest(0, "bad_thread", "the thread id is longer than %d bytes", maxThreadBytes)
	}
	if !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return BadRequest(0, "bad_thread", "the thread id must be UTF-8 without control characters")
	}
	return nil
}
