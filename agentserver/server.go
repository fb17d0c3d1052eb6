package agentserver

import (
	"cmp"
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
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultMaxRuns           = 256
	DefaultMaxRunsPerUser    = 8
	DefaultRunTimeout        = 30 * time.Minute
	DefaultMaxThreadsPerUser = 1000
	DefaultMaxBytesPerUser   = 64 << 20
	DefaultApprovalTimeout   = 10 * time.Minute
	DefaultKeepAlive         = 15 * time.Second
	DefaultWriteTimeout      = 15 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultKeepFinished      = time.Minute
	DefaultRunLease          = 30 * time.Second
	DefaultMaxBodyBytes      = 4 << 20
	DefaultMaxMessages       = 1000
	DefaultMaxParts          = 100
	DefaultMaxTools          = 64
)

// Defaults of the bounds of the request bodies in flight (see
// Config.MaxBodyBytesInFlight).
const (
	DefaultMaxBodyBytesInFlight        = 64 << 20
	DefaultMaxBodyBytesInFlightPerUser = 16 << 20
)

// Config configures a [Server]. Only Agent is required.
type Config struct {
	// Agent runs every run. A typed agent (agent.Typed) gives runs a typed
	// answer, in Done.Output.
	Agent *agent.Agent

	// Store keeps the threads. Nil means a new session.Memory, which holds
	// session.DefaultMemoryMaxBytes (512 MiB) at most and forgets the
	// threads appended to least recently beyond that. A session.Lister
	// (Memory, sqlitestore, pgstore) lists and totals a user's threads
	// from its index; another Store is read whole for that. A
	// session.Journaler (Memory, sqlitestore, pgstore) keeps each run's
	// steps as they happen, and New recovers the runs it holds unfinished
	// (see the package documentation, "Durable runs"); another Store
	// saves a run when it ends.
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

	// Artifacts, when set, keeps the files of the server's threads (see
	// package artifact): the files tools make (their media) and those
	// users send (the inline files of new messages) are saved as
	// versioned files of the thread, the thread's history refers to them
	// rather than holding their bytes, and the model reads them as the
	// Keeper resolves them (inline, or uploaded with the Files API).
	// The agent runs with it as its agent.Config.Files. Calls' results
	// list the files they made (CallResult.Files), which the protocols
	// send as links to [Server.ArtifactsHandler]'s routes, mounted at
	// ArtifactsPath. A new message's files past the user's quota are
	// refused with 429 (artifact_quota). Nil keeps files inline, in the
	// history, as they came.
	Artifacts *artifact.Keeper

	// ArtifactsPath is where the application mounts
	// [Server.ArtifactsHandler], from which the links to files are made.
	// Empty means DefaultArtifactsPath ("/artifacts/").
	ArtifactsPath string

	// MaxUploadBytes bounds the body of a PUT to the artifacts routes.
	// Zero means DefaultMaxUploadBytes (32 MiB).
	MaxUploadBytes int64

	// AllowFileURI decides whether user may have the model read the file
	// at uri: a file the new message names by URI rather than sends
	// (AG-UI's source type "file", an A2A file part with a uri, an AI SDK
	// file part whose url is not a data: URL). Gemini fetches such a file
	// with the server's credentials: on Vertex AI any gs:// object the
	// service account can read, on the Gemini API any file of the
	// project's Files API, other users' uploads included. So a request
	// that names one is refused (400, code bad_part) unless AllowFileURI
	// returns nil for each of its URIs. An error refuses the request: an
	// [*Error] is answered as it is, any other with 400 (its text is not
	// shown). Nil refuses every file URI: clients send files inline
	// (base64), which always works.
	AllowFileURI func(ctx context.Context, user, uri string) error

	// Runner hosts the runs. Nil means in this process (see [Runner]).
	Runner Runner

	// Observer sees every event of every run, after the agent's own
	// observer, with contexts that [RunID] reads the run's id from (and
	// agent.Conversation the thread's).
	Observer agent.Observer

	// Remember, when set, is called after each run is saved to its thread,
	// with the run's context (RunID, RunUser and agent.Conversation read
	// it), the user, the thread's id as the client names it, the thread's
	// contents as saved, and the index of the first content the run added:
	// what a memory of the user's conversations needs to remember them
	// across threads (memory.Service's RememberRun is one). It is called
	// before the run's end is told to its readers, on the run's goroutine:
	// it should return quickly, and do slow work (embeddings, a model that
	// reads the conversation) in the background. A run that is not saved
	// (one left waiting to the next Server on the store, a save that
	// failed) is not remembered. The in-process runner calls it; a Runner
	// of another kind saves runs itself.
	Remember func(ctx context.Context, user, thread string, contents []*genai.Content, from int)

	// Logger receives runs that fail (Warn) and end early (Info), and
	// requests refused for a reason the client is not told (Error). Nil
	// means slog.Default().
	Logger *slog.Logger

	// ApprovalTimeout is how long a run waits for the decision about a
	// call that needs approval, or for a browser tool's result, from its
	// pause (the deadline is stored with the pause, and kept by whichever
	// server takes the run); then the call is denied, and the model told
	// why. Zero means DefaultApprovalTimeout (10 minutes).
	ApprovalTimeout time.Duration

	// RunTimeout bounds a whole run, from its start, its waits for
	// decisions included, whichever server runs it on: then it is
	// cancelled, and saved as far as it went. Zero means
	// DefaultRunTimeout (30 minutes); less than zero, no bound. A Runner
	// of another kind than the in-process one applies its own.
	RunTimeout time.Duration

	// KeepAlive is the interval of the comments sent on a stream that has
	// nothing else to send, so that proxies keep it open. Zero means
	// DefaultKeepAlive (15 s).
	KeepAlive time.Duration

	// WriteTimeout bounds each write of a stream: a client that reads
	// nothing for that long is dropped (its run goes on). It counts wall
	// time from just before the write, the server's own delays included:
	// on a machine so starved of CPU that the server's goroutines wait
	// that long to run, a client that reads is dropped too. Zero means
	// DefaultWriteTimeout (15 s).
	WriteTimeout time.Duration

	// BodyTimeout bounds the reading of a request's body, from the moment
	// a protocol's handler takes the request (through
	// http.ResponseController: the connection's read deadline, lifted
	// once the body is read, so that the stream that answers is not cut):
	// a client that sends part of its body and stalls is answered 408
	// (code body_timeout) and its connection closed, rather than holding
	// a goroutine, a connection and the body read so far for as long as
	// it likes; a body refused unread, which net/http drains before it
	// answers, is drained within it too. Zero means DefaultBodyTimeout
	// (30 s).
	BodyTimeout time.Duration

	// KeepFinished is how long a run that is over can still be looked up
	// and read by its id. Zero means DefaultKeepFinished (1 minute).
	KeepFinished time.Duration

	// RunLease is, on a store that is a session.Journaler, how often
	// (every third of it) the in-process runner looks in the store for
	// runs to pick up (those a dead server left, parked ones whose
	// deadline it must keep). On a session.LiveJournaler (Memory,
	// sqlitestore on Unix, pgstore) the runner's claims last as long as
	// its life on the store: a server that dies loses them at once, and
	// the next Server to look takes its runs. On another Journaler, it is
	// also how long a claim lasts: the runner renews the claims of the
	// runs it runs every third of it, and another Server takes a run over
	// once its claim has run out, within RunLease and a third. Zero means
	// DefaultRunLease (30 seconds). See Durable runs.
	RunLease time.Duration

	// MaxRuns bounds the runs in flight: those this process runs (a run
	// that waits for decisions is parked, and holds no goroutine: it does
	// not count). More are refused with 503 (too_many_runs); a run that
	// goes on (a decision, a run picked up from the store) is never
	// refused. Zero means DefaultMaxRuns (256); less than zero, no bound.
	MaxRuns int

	// MaxRunsPerUser bounds the runs in flight of one user (as MaxRuns
	// counts them); more are refused with 429 (too_many_runs), so that
	// one user cannot take every run MaxRuns allows. A user's runs that
	// wait are bounded by their threads (MaxThreadsPerUser: one run per
	// thread) and stored bytes. Zero means DefaultMaxRunsPerUser (8);
	// less than zero, no bound. A Runner of another kind than the
	// in-process one applies its own. Without Authenticate every request
	// is one user's.
	MaxRunsPerUser int

	// MaxThreadsPerUser bounds the threads of one user the store keeps:
	// a run on a new thread of a user who has that many is refused with
	// 429 (thread_quota); their existing threads go on. A thread counts
	// once its first run is saved, so a user may exceed it by the runs in
	// flight on new threads (MaxRunsPerUser at most). Zero means
	// DefaultMaxThreadsPerUser (1000); less than zero, no bound.
	MaxThreadsPerUser int

	// MaxBytesPerUser bounds the size of one user's threads in the store
	// (their contents as the store encodes them, session.Info.Bytes, and
	// on a session.Journaler the journals of their runs in progress,
	// session.Journal.Bytes):
	// once they hold that much, every new run of the user is refused with
	// 429 (storage_quota). It is checked when a run is accepted, so the
	// run accepted last may take the user over it. Zero means
	// DefaultMaxBytesPerUser (64 MiB); less than zero, no bound.
	MaxBytesPerUser int64

	// The limits of a request: a larger body is refused with 413, more
	// messages, parts in a message, or browser tools with 400. Zero means
	// the Default constant of the same name (4 MiB, 1000, 100, 64).
	MaxBodyBytes int64
	MaxMessages  int
	MaxParts     int
	MaxTools     int

	// MaxBodyBytesInFlight bounds the bytes of the request bodies the
	// server reads and decodes at once (see [Server.DecodeJSON]): a body
	// counts for its Content-Length (its buffer's size as it grows, when
	// sent without one) from the moment its reading starts until it is
	// decoded, and one that would take the total past the bound is refused
	// at once, unread, with 503 (too_many_bodies), so that clients that
	// send bodies slowly (each within BodyTimeout) cannot make the server
	// hold more. MaxBodyBytesInFlightPerUser bounds those of one user
	// (429, too_many_bodies), so that one user cannot take them all. Zero
	// means DefaultMaxBodyBytesInFlight (64 MiB) and
	// DefaultMaxBodyBytesInFlightPerUser (16 MiB: four bodies of
	// DefaultMaxBodyBytes); less than zero, no bound. Either, when
	// bounded, must be at least MaxBodyBytes. Without Authenticate every
	// request is one user's.
	MaxBodyBytesInFlight        int64
	MaxBodyBytesInFlightPerUser int64

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
	cross   *http.CrossOriginProtection
	bodies  bodies // the request bodies being read

	mu      sync.Mutex
	streams int           // ServeEvents calls in flight
	drained chan struct{} // closed when streams drops to 0, for Close
	closing bool
	// stopStreams ends every stream at once, when Close runs out of time.
	stopStreams context.Context
	stop        context.CancelFunc
}

// New returns a Server for cfg. With the in-process runner on a
// session.Journaler, it first recovers the runs the store holds
// unfinished (see the package documentation, "Durable runs"), and fails
// when it cannot read them.
func New(cfg Config) (*Server, error) {
	if cfg.Agent == nil {
		return nil, errors.New("agentserver: Config.Agent is nil")
	}
	if err := cfg.Agent.Steps().Err(); err != nil {
		return nil, fmt.Errorf("agentserver: Config.Agent: %w", err)
	}
	if cfg.ApprovalTimeout < 0 || cfg.KeepAlive < 0 || cfg.WriteTimeout < 0 || cfg.BodyTimeout < 0 || cfg.KeepFinished < 0 || cfg.RunLease < 0 ||
		cfg.MaxBodyBytes < 0 || cfg.MaxMessages < 0 || cfg.MaxParts < 0 || cfg.MaxTools < 0 {
		return nil, errors.New("agentserver: a negative limit in Config")
	}
	if cfg.Store == nil {
		cfg.Store = session.NewMemory()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.MaxRuns = or(cfg.MaxRuns, DefaultMaxRuns)
	cfg.MaxRunsPerUser = or(cfg.MaxRunsPerUser, DefaultMaxRunsPerUser)
	cfg.RunTimeout = or(cfg.RunTimeout, DefaultRunTimeout)
	cfg.MaxThreadsPerUser = or(cfg.MaxThreadsPerUser, DefaultMaxThreadsPerUser)
	cfg.MaxBytesPerUser = or(cfg.MaxBytesPerUser, DefaultMaxBytesPerUser)
	cfg.ApprovalTimeout = or(cfg.ApprovalTimeout, DefaultApprovalTimeout)
	cfg.KeepAlive = or(cfg.KeepAlive, DefaultKeepAlive)
	cfg.WriteTimeout = or(cfg.WriteTimeout, DefaultWriteTimeout)
	cfg.BodyTimeout = or(cfg.BodyTimeout, DefaultBodyTimeout)
	cfg.KeepFinished = or(cfg.KeepFinished, DefaultKeepFinished)
	cfg.RunLease = or(cfg.RunLease, DefaultRunLease)
	cfg.MaxBodyBytes = or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxMessages = or(cfg.MaxMessages, DefaultMaxMessages)
	cfg.MaxParts = or(cfg.MaxParts, DefaultMaxParts)
	cfg.MaxTools = or(cfg.MaxTools, DefaultMaxTools)
	cfg.ArtifactsPath = or(cfg.ArtifactsPath, DefaultArtifactsPath)
	if !strings.HasSuffix(cfg.ArtifactsPath, "/") {
		cfg.ArtifactsPath += "/"
	}
	cfg.MaxUploadBytes = or(cfg.MaxUploadBytes, DefaultMaxUploadBytes)
	if cfg.Artifacts != nil {
		cfg.Agent = cfg.Agent.With(agent.Overrides{Files: cfg.Artifacts})
	}
	cfg.MaxBodyBytesInFlight = or(cfg.MaxBodyBytesInFlight, DefaultMaxBodyBytesInFlight)
	cfg.MaxBodyBytesInFlightPerUser = or(cfg.MaxBodyBytesInFlightPerUser, DefaultMaxBodyBytesInFlightPerUser)
	for _, n := range []int64{cfg.MaxBodyBytesInFlight, cfg.MaxBodyBytesInFlightPerUser} {
		if n > 0 && n < cfg.MaxBodyBytes {
			return nil, fmt.Errorf("agentserver: Config.MaxBodyBytesInFlight and MaxBodyBytesInFlightPerUser (%d) must be at least MaxBodyBytes (%d): no body of that size could be read", n, cfg.MaxBodyBytes)
		}
	}
	origins, err := parseOrigins(cfg.AllowedOrigins, cfg.Authenticate != nil)
	if err != nil {
		return nil, err
	}
	cfg.AllowedOrigins = slices.Clone(cfg.AllowedOrigins)
	s := &Server{cfg: cfg, runner: cfg.Runner, workers: newWorkers(), origins: origins, cross: crossOrigin(origins),
		bodies: bodies{max: max(cfg.MaxBodyBytesInFlight, 0), perUser: max(cfg.MaxBodyBytesInFlightPerUser, 0)}}
	if s.runner == nil {
		l := newLocalRunner(&s.cfg)
		// The runs a stopped process left in the store go on now, not when
		// their thread is next touched: a run that waits for a decision is
		// listed at once (Current), one cut mid-answer finishes it for when
		// its user comes back.
		if err := l.open(context.Background()); err != nil {
			l.Close(context.Background())
			return nil, err
		}
		s.runner = l
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
// that wait for decisions end at once here (on a session.Journaler they
// are parked in the store, as they wait, for any Server on it; otherwise
// they are cancelled, and saved with their calls not run), the others
// may finish until ctx is done, when they are cancelled; every run
// cancelled is saved, as far as it went (see the package documentation,
// Durable runs). Streams end with their run's end, as the protocol says it;
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

// Done returns a channel that is closed once Close has ended the runs
// and streams (or given up waiting for them): work a protocol does in the
// background for a run (a2aagent's push notifications) stops then.
func (s *Server) Done() <-chan struct{} { return s.stopStreams.Done() }

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
// ErrExpired), when its browser tools are invalid, when its message names
// a file by a URI Config.AllowFileURI does not allow user, or when it
// brings nothing to do.
func (s *Server) Submit(ctx context.Context, user string, req Request) (Attachment, error) {
	if err := s.closed(); err != nil {
		return Attachment{}, err
	}
	thread, err := threadKey(user, req.Thread)
	if err != nil {
		return Attachment{}, err
	}
	if req.Message != nil {
		// A run would start: the user's quotas first, which cost a look at
		// the store's index, before the browser tools, each of which is
		// measured and converted.
		if err := s.checkQuotas(ctx, user, thread); err != nil {
			return Attachment{}, err
		}
	}
	if err := checkTools(ctx, s.cfg.Agent, req.Tools, s.cfg.MaxTools); err != nil {
		return Attachment{}, err
	}
	if err := s.checkFiles(ctx, user, req.Thread, req.Message); err != nil {
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
	msg, err := s.keepUploads(ctx, user, req.Thread, req.Message)
	if err != nil {
		return Attachment{}, err
	}
	info, c, err := s.runner.Start(ctx, &Input{Thread: thread, Conversation: req.Thread, User: user, Message: msg, Tools: req.Tools, KeepLog: req.KeepLog})
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

// Runs lists user's runs that the server keeps (in progress, or over for
// less than Config.KeepFinished), the latest started first: those a
// protocol can still look up. A Runner that is not a [RunLister] lists
// none: Runs fails with an error matching errors.ErrUnsupported.
func (s *Server) Runs(ctx context.Context, user string) ([]RunInfo, error) {
	l, ok := s.runner.(RunLister)
	if !ok {
		return nil, fmt.Errorf("agentserver: the server's Runner does not list runs: %w", errors.ErrUnsupported)
	}
	runs, err := l.Runs(ctx, user)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(runs, func(a, b RunInfo) int {
		return cmp.Or(cmp.Compare(b.Started.UnixNano(), a.Started.UnixNano()), strings.Compare(b.ID, a.ID))
	})
	return runs, nil
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

// checkQuotas refuses a run on user's thread (its store id) when the
// user's threads in the store are over Config.MaxBytesPerUser, or when
// the thread is a new one and they are Config.MaxThreadsPerUser already.
func (s *Server) checkQuotas(ctx context.Context, user, thread string) error {
	maxThreads, maxBytes := s.cfg.MaxThreadsPerUser, s.cfg.MaxBytesPerUser
	if maxThreads < 0 && maxBytes < 0 {
		return nil
	}
	prefix, err := userPrefix(user)
	if err != nil {
		return err
	}
	u, err := session.UsageOf(ctx, s.cfg.Store, prefix)
	if err != nil {
		return fmt.Errorf("agentserver: totalling the threads of the user: %w", err)
	}
	if js, ok := s.cfg.Store.(session.Journaler); ok && maxBytes >= 0 {
		// The journals of the user's runs in progress count too.
		n, err := journalBytes(ctx, js, prefix)
		if err != nil {
			return fmt.Errorf("agentserver: totalling the runs in progress of the user: %w", err)
		}
		u.Bytes += n
	}
	if maxBytes >= 0 && u.Bytes >= maxBytes {
		return newError(http.StatusTooManyRequests, "storage_quota", ErrQuota,
			"your threads hold %d bytes, as much as the server keeps of one user: it takes no more runs of yours", u.Bytes)
	}
	if maxThreads >= 0 && u.Conversations >= maxThreads {
		switch ok, err := stored(ctx, s.cfg.Store, thread); {
		case err != nil:
			return fmt.Errorf("agentserver: looking the thread up: %w", err)
		case !ok:
			return newError(http.StatusTooManyRequests, "thread_quota", ErrQuota,
				"you have %d threads, as many as the server keeps of one user: go on with one of them", u.Conversations)
		}
	}
	return nil
}

// journalBytes returns the size of the journals whose ids start with
// prefix: the runs in progress of a user.
func journalBytes(ctx context.Context, js session.Journaler, prefix string) (int64, error) {
	var n int64
	opts := session.ListOptions{Prefix: prefix, Limit: session.MaxPageSize}
	for {
		p, err := js.ListRuns(ctx, opts)
		if err != nil {
			return 0, err
		}
		for _, j := range p.Journals {
			n += j.Bytes
		}
		if opts.Cursor = p.Next; opts.Cursor == "" {
			return n, nil
		}
	}
}

// stored reports whether store holds the conversation id, from the
// listing of the ids it starts (no content is read).
func stored(ctx context.Context, store session.Store, id string) (bool, error) {
	opts := session.ListOptions{Prefix: id, Limit: session.MaxPageSize}
	for {
		p, err := session.ListPage(ctx, store, opts)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(p.Infos, func(i session.Info) bool { return i.ID == id }) {
			return true, nil
		}
		if opts.Cursor = p.Next; opts.Cursor == "" {
			return false, nil
		}
	}
}

// ThreadInfo describes a thread.
type ThreadInfo struct {
	ID      string    `json:"id"`
	Len     int       `json:"len"`   // the contents stored
	Bytes   int64     `json:"bytes"` // their size, as the store encodes them
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Run is the id of the thread's run that is not over; "" when none.
	Run string `json:"run,omitempty"`
}

// ThreadsOptions selects one page of a user's threads.
type ThreadsOptions struct {
	// Limit is the most threads a page holds: 0 (or less) means
	// session.DefaultPageSize (100); more than session.MaxPageSize (1000)
	// is that.
	Limit int
	// Cursor continues a listing: the Next of its previous page; ""
	// starts it. A cursor the server did not make is refused (400,
	// bad_cursor).
	Cursor string
}

// ThreadPage is one page of a user's threads.
type ThreadPage struct {
	Threads []ThreadInfo `json:"threads"`
	// Next is the cursor of the next page; "" after the last.
	Next string `json:"next,omitempty"`
}

// Threads lists one page of user's threads, the most recently updated
// first, from the store's listing by owner (session.ListPage: an index
// range of a session.Lister, the whole store's List for another Store).
// Threads appended to between two pages may move to an earlier page; no
// thread is listed twice, nor skipped unless it was appended to meanwhile.
func (s *Server) Threads(ctx context.Context, user string, opts ThreadsOptions) (ThreadPage, error) {
	prefix, err := userPrefix(user)
	if err != nil {
		return ThreadPage{}, err
	}
	p, err := session.ListPage(ctx, s.cfg.Store, session.ListOptions{Prefix: prefix, Limit: opts.Limit, Cursor: opts.Cursor})
	if errors.Is(err, session.ErrBadCursor) {
		return ThreadPage{}, BadRequest(0, "bad_cursor", "the cursor is not one this server gave")
	}
	if err != nil {
		return ThreadPage{}, err
	}
	// On a Journaler, the runs in progress are the user's journals: one
	// listing, whichever server runs them, rather than a look per thread.
	var journals map[string]string
	if js, ok := s.cfg.Store.(session.Journaler); ok && len(p.Infos) > 0 {
		journals = map[string]string{}
		opts := session.ListOptions{Prefix: prefix, Limit: session.MaxPageSize}
		for {
			jp, err := js.ListRuns(ctx, opts)
			if err != nil {
				return ThreadPage{}, fmt.Errorf("agentserver: listing the user's runs in progress: %w", err)
			}
			for _, j := range jp.Journals {
				journals[j.ID] = j.Run
			}
			if opts.Cursor = jp.Next; opts.Cursor == "" {
				break
			}
		}
	}
	out := ThreadPage{Threads: make([]ThreadInfo, 0, len(p.Infos)), Next: p.Next}
	for _, c := range p.Infos {
		t := ThreadInfo{ID: strings.TrimPrefix(c.ID, prefix), Len: c.Len, Bytes: c.Bytes, Created: c.Created, Updated: c.Updated}
		if journals != nil {
			t.Run = journals[c.ID]
		} else if cur, err := s.runner.Latest(ctx, c.ID); err == nil && !cur.State.Over() {
			t.Run = cur.ID
		}
		out.Threads = append(out.Threads, t)
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

// UserPrefix returns the start of the store ids of user's threads (the
// Input.Thread of every run of user starts with it, and no other user's
// does): what a [Runner] lists or counts a user's runs under, as
// temporalagent's does. A user the server would not take (empty, longer
// than 256 bytes, or not UTF-8) is an error.
func UserPrefix(user string) (string, error) { return userPrefix(user) }

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
