package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"google.golang.org/genai"
)

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultMaxSessions        = 64
	DefaultMaxSessionsPerUser = 2
	DefaultMaxMessageBytes    = 64 << 10
	DefaultIdleTimeout        = time.Minute
	DefaultMaxDuration        = 15 * time.Minute
)

// The close codes a session ends with, besides 1000 (the browser closed
// it, or Handler.Close ended it: 1001).
const (
	// CloseBadInput (1007): a frame the route does not take: audio that
	// is not raw 16-bit PCM, JSON that is not a message, a text too long.
	CloseBadInput = websocket.CloseInvalidFramePayloadData
	// CloseLimit (1008): the session was idle for Config.IdleTimeout, or
	// lasted Config.MaxDuration.
	CloseLimit = websocket.ClosePolicyViolation
	// CloseTooBig (1009): a frame over Config.MaxMessageBytes.
	CloseTooBig = websocket.CloseMessageTooBig
	// CloseModelError (1011): the model's session failed (it could not be
	// opened, or its connection was lost and could not be resumed).
	CloseModelError = websocket.CloseInternalServerErr
)

// maxOutputShown bounds the JSON of a tool's output sent to the browser.
const maxOutputShown = 8 << 10

// maxEarlyBytes bounds what the route keeps of what the browser sends
// before the model's session is open (8 s of audio); beyond, the route
// reads no more until it is.
const maxEarlyBytes = 256 << 10

// Config configures a [Handler]. Only Client is required.
type Config struct {
	// Client dials Gemini's Live API (client.Live): the server's client,
	// whose key never reaches the browser.
	Client *genai.Client

	// Agent is the agent of the live sessions: its model must be a Live
	// model (gemini-3.8-live, gemini-2.5-flash-native-audio-…). Nil means
	// the server's agent. Its tools, approvals and observer serve the
	// sessions as they serve runs.
	Agent *agent.Agent

	// Session configures each session (voice, activity detection,
	// NON_BLOCKING tools, compression, the setup's deadline
	// SetupTimeout, the reconnections…); its Handle and Logger are the
	// route's own.
	Session geminilive.Config

	// MaxSessions bounds the sessions open at once (503 beyond); zero
	// means DefaultMaxSessions (64), negative no bound.
	MaxSessions int

	// MaxSessionsPerUser bounds the sessions of one user open at once (429
	// beyond); zero means DefaultMaxSessionsPerUser (2), negative no
	// bound. A thread has one live session at a time (409).
	MaxSessionsPerUser int

	// MaxMessageBytes bounds a frame the browser sends (1009 beyond):
	// zero means DefaultMaxMessageBytes (64 KiB, 2 s of 16 kHz audio).
	MaxMessageBytes int64

	// IdleTimeout ends a session (1008) when the browser sends nothing
	// for that long; a page keeps its microphone streaming, or sends
	// {"type":"ping"}. Zero means DefaultIdleTimeout (1 minute).
	IdleTimeout time.Duration

	// MaxDuration ends a session (1008) that lasts that long. Zero means
	// DefaultMaxDuration (15 minutes, the Live API's own limit for audio
	// without compression).
	MaxDuration time.Duration
}

// A Handler serves live sessions of a [agentserver.Server]'s agent to
// browsers, over websockets: see the package documentation.
type Handler struct {
	srv     *agentserver.Server
	cfg     Config
	agent   *agent.Agent
	logger  *slog.Logger
	upgr    websocket.Upgrader
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	closing bool
	total   int
	perUser map[string]int
	threads map[string]bool // user + "\x00" + thread, with a session
}

// New returns a Handler of srv's live sessions.
func New(srv *agentserver.Server, cfg Config) (*Handler, error) {
	if srv == nil {
		return nil, errors.New("live: the server is nil")
	}
	if cfg.Client == nil {
		return nil, errors.New("live: Config.Client is nil")
	}
	if cfg.MaxMessageBytes < 0 || cfg.IdleTimeout < 0 || cfg.MaxDuration < 0 {
		return nil, errors.New("live: a negative limit in Config")
	}
	cfg.MaxSessions = or(cfg.MaxSessions, DefaultMaxSessions)
	cfg.MaxSessionsPerUser = or(cfg.MaxSessionsPerUser, DefaultMaxSessionsPerUser)
	cfg.MaxMessageBytes = or(cfg.MaxMessageBytes, DefaultMaxMessageBytes)
	cfg.IdleTimeout = or(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.MaxDuration = or(cfg.MaxDuration, DefaultMaxDuration)
	a := cfg.Agent
	if a == nil {
		a = srv.Agent()
	}
	if err := a.Steps().Err(); err != nil {
		return nil, fmt.Errorf("live: Config.Agent: %w", err)
	}
	h := &Handler{srv: srv, cfg: cfg, agent: a, logger: srv.Config().Logger,
		perUser: map[string]int{}, threads: map[string]bool{}}
	h.upgr = websocket.Upgrader{
		HandshakeTimeout: srv.Config().BodyTimeout,
		ReadBufferSize:   4096, WriteBufferSize: 4096,
		CheckOrigin: srv.OriginAllowed,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			srv.WriteError(w, r, agentserver.BadRequest(status, "bad_upgrade", "%s", reason.Error()))
		},
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

func or[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Close ends every session (1001, going away; each saves its
// transcript) and refuses new ones (503); it returns once they have
// ended, or ctx is done. Call it before the server's Close.
func (h *Handler) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	h.cancel()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP opens a live session: GET with ?thread=ID, upgraded to a
// websocket.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		h.srv.WriteError(w, r, agentserver.MethodNotAllowed(w, http.MethodGet))
		return
	}
	user, err := h.srv.User(r)
	if err != nil {
		h.srv.WriteError(w, r, err)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		h.srv.WriteError(w, r, agentserver.BadRequest(http.StatusBadRequest, "not_websocket", "this route takes websocket upgrades only"))
		return
	}
	thread := r.URL.Query().Get("thread")
	if err := h.srv.AppendThread(r.Context(), user, thread, nil); err != nil {
		h.srv.WriteError(w, r, err)
		return
	}
	if !h.srv.OriginAllowed(r) {
		h.srv.WriteError(w, r, &agentserver.Error{Status: http.StatusForbidden, Code: "bad_origin",
			Message: "pages of this origin may not open live sessions here", Err: agentserver.ErrUnauthenticated})
		return
	}
	release, err := h.acquire(user, thread)
	if err != nil {
		h.srv.WriteError(w, r, err)
		return
	}
	defer release()
	ws, err := h.upgr.Upgrade(w, r, nil)
	if err != nil {
		return // the Upgrader answered
	}
	c := &conn{h: h, ws: ws, user: user, thread: thread, timers: map[string]*time.Timer{}, opened: make(chan struct{})}
	c.serve()
}

// acquire counts a session of user on thread, or refuses it.
func (h *Handler) acquire(user, thread string) (func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := user + "\x00" + thread
	switch {
	case h.closing:
		return nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "closing", Err: agentserver.ErrClosed,
			Message: "the server is shutting down"}
	case h.threads[key]:
		return nil, &agentserver.Error{Status: http.StatusConflict, Code: "busy", Err: agentserver.ErrBusy,
			Message: "the thread has a live session already"}
	case h.cfg.MaxSessionsPerUser >= 0 && h.perUser[user] >= h.cfg.MaxSessionsPerUser:
		return nil, &agentserver.Error{Status: http.StatusTooManyRequests, Code: "too_many_sessions", Err: ErrTooManySessions,
			Message: fmt.Sprintf("you have %d live sessions open, as many as the server allows one user", h.perUser[user])}
	case h.cfg.MaxSessions >= 0 && h.total >= h.cfg.MaxSessions:
		return nil, &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "too_many_sessions", Err: ErrTooManySessions,
			Message: "the server has as many live sessions open as it allows"}
	}
	h.total++
	h.perUser[user]++
	h.threads[key] = true
	h.wg.Add(1)
	return func() {
		h.mu.Lock()
		h.total--
		if h.perUser[user]--; h.perUser[user] == 0 {
			delete(h.perUser, user)
		}
		delete(h.threads, key)
		h.mu.Unlock()
		h.wg.Done()
	}, nil
}

// ErrTooManySessions: Config.MaxSessions sessions are open, or
// Config.MaxSessionsPerUser of the request's user.
var ErrTooManySessions = errors.New("live: too many live sessions")

// Message is a JSON message of the route, in a text frame: what the
// browser sends (Type "text", "decide", "audio_end", "ping") and what
// the server sends (the other types). See the package documentation.
type Message struct {
	Type string `json:"type"`
	// Text: "text" (both ways), "input_transcript", "output_transcript".
	Text string `json:"text,omitempty"`
	// Finished: a transcript is complete.
	Finished bool `json:"finished,omitempty"`
	// ID and Name: the call of "tool_call", "approval", "tool_result",
	// "tool_cancelled"; ID the call "decide" decides.
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Args: the call's arguments ("tool_call", "approval").
	Args map[string]any `json:"args,omitempty"`
	// Output: the result's output, as JSON ("tool_result"), cut at 8 KiB.
	Output json.RawMessage `json:"output,omitempty"`
	// IsError: the call failed ("tool_result").
	IsError bool `json:"is_error,omitempty"`
	// Approved: the decision ("decide").
	Approved bool `json:"approved,omitempty"`
	// Thread, AudioIn and AudioOut: "ready" names the thread and the
	// MIME types of the audio each way.
	Thread   string `json:"thread,omitempty"`
	AudioIn  string `json:"audio_in,omitempty"`
	AudioOut string `json:"audio_out,omitempty"`
	// Code and Message: "error", a stable code and a message for people.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// conn is one live session: a browser's websocket and the model's session.
type conn struct {
	h            *Handler
	ws           *websocket.Conn
	user, thread string
	ls           *geminilive.Session // set before opened is closed; nil if it could not be opened
	stop         func()              // ends the model's session, or its setup

	writeMu sync.Mutex

	// takeMu hands the browser's input to the model one at a time, in
	// the order it came: what came during the setup first.
	takeMu     sync.Mutex
	opened     chan struct{} // closed once the model's session is open, or could not be
	early      []input       // what the browser sent before (c.mu)
	earlyBytes int

	mu     sync.Mutex
	ended  bool
	code   int
	reason string
	timers map[string]*time.Timer // approvals' deadlines

	userText, modelText strings.Builder // the turn's transcript, not yet saved
}

// input is a frame of the browser's: audio, or a message.
type input struct {
	audio []byte
	m     Message
}

// end records why the session ends (the first reason wins) and ends the
// model's session (or its setup), which ends its events.
func (c *conn) end(code int, reason string) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.code, c.reason = true, code, reason
	for _, t := range c.timers {
		t.Stop()
	}
	c.mu.Unlock()
	// The browser hears at once, even while a tool outlives its
	// cancellation (the model's session waits for it to return); serve
	// waits for the model's session to end.
	c.closeBrowser(code, reason)
	c.stop() // geminilive closes the session, on its own goroutine
}

// isEnded reports whether the session is ending.
func (c *conn) isEnded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

func (c *conn) closeBrowser(code int, reason string) {
	if len(reason) > 120 { // a close frame's reason is at most 123 bytes
		reason = strings.ToValidUTF8(reason[:120], "")
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	c.ws.Close() // the reader's next read fails
}

// write sends one frame to the browser within the server's WriteTimeout.
func (c *conn) write(kind int, data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(c.h.srv.Config().WriteTimeout))
	return c.ws.WriteMessage(kind, data)
}

func (c *conn) send(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.write(websocket.TextMessage, b)
}

// serve runs the session until it ends, and saves its transcript.
func (c *conn) serve() {
	h := c.h
	ctx, cancel := context.WithTimeout(agentserver.WithUser(h.ctx, c.user), h.cfg.MaxDuration)
	defer cancel()
	// The model's session (and its setup) ends when c.end is called,
	// which says why to the browser: when ctx ends (the AfterFunc below),
	// when the browser leaves (the reader), or when the session fails.
	lctx, lcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer lcancel()
	c.stop = lcancel
	stop := context.AfterFunc(ctx, func() {
		if h.ctx.Err() != nil {
			c.end(websocket.CloseGoingAway, "closing: the server is shutting down")
		} else {
			c.end(CloseLimit, fmt.Sprintf("duration_limit: a live session lasts %v at most", h.cfg.MaxDuration))
		}
	})
	defer stop()
	readerDone := make(chan struct{})
	go func() { // from now on: a browser that leaves during the setup ends it
		defer close(readerDone)
		c.read()
	}()
	cfg := h.cfg.Session
	cfg.Handle, cfg.Logger = "", h.logger
	ls, err := geminilive.Connect(lctx, h.cfg.Client, h.agent, cfg) // within cfg.SetupTimeout
	if err != nil {
		if !c.isEnded() {
			h.logger.LogAttrs(ctx, slog.LevelWarn, "live: the model's session could not be opened", slog.Any("error", err))
		}
		c.end(CloseModelError, "model_error: the model's session could not be opened")
		c.open(nil)
		<-readerDone
		return
	}
	c.open(ls)
	if err := c.send(Message{Type: "ready", Thread: c.thread, AudioIn: geminilive.AudioMIMEType, AudioOut: "audio/pcm;rate=24000"}); err != nil {
		c.end(websocket.CloseGoingAway, "") // the browser is gone (1006 is never sent)
	}
	for e, err := range ls.Events() {
		if err != nil {
			h.logger.LogAttrs(ctx, slog.LevelWarn, "live: the model's session failed", slog.Any("error", err))
			c.end(CloseModelError, "model_error: the model's session ended")
			break
		}
		if err := c.forward(ctx, e); err != nil {
			c.end(websocket.CloseGoingAway, "") // the browser is gone (1006 is never sent)
		}
	}
	c.end(websocket.CloseNormalClosure, "")
	ls.Close()
	for range ls.Events() { // ends once every goroutine of the session has (a tool that outlives its cancellation too)
	}
	<-readerDone
	c.save(context.WithoutCancel(ctx))
}

// forward hands one event to the browser, and keeps the transcript.
func (c *conn) forward(ctx context.Context, e *geminilive.Event) error {
	switch e.Kind {
	case geminilive.EventAudio:
		return c.write(websocket.BinaryMessage, e.Audio)
	case geminilive.EventInputTranscript:
		c.mu.Lock()
		c.userText.WriteString(e.Text)
		c.mu.Unlock()
		return c.send(Message{Type: "input_transcript", Text: e.Text, Finished: e.Finished})
	case geminilive.EventOutputTranscript, geminilive.EventText:
		c.mu.Lock()
		c.modelText.WriteString(e.Text)
		c.mu.Unlock()
		typ := "output_transcript"
		if e.Kind == geminilive.EventText {
			typ = "text"
		}
		return c.send(Message{Type: typ, Text: e.Text, Finished: e.Finished})
	case geminilive.EventToolCall:
		return c.send(Message{Type: "tool_call", ID: e.Call.ID, Name: e.Call.Name, Args: e.Call.Args})
	case geminilive.EventApproval:
		id := e.Call.ID
		c.mu.Lock()
		if !c.ended {
			ls := c.ls
			c.timers[id] = time.AfterFunc(c.h.srv.Config().ApprovalTimeout, func() {
				ls.Decide(id, false) // ErrNoApproval once decided
			})
		}
		c.mu.Unlock()
		return c.send(Message{Type: "approval", ID: id, Name: e.Call.Name, Args: e.Call.Args})
	case geminilive.EventToolResult:
		out, err := json.Marshal(e.Result.Output)
		if err != nil || len(out) > maxOutputShown {
			out, _ = json.Marshal(fmt.Sprintf("(%d bytes of output)", len(out)))
		}
		return c.send(Message{Type: "tool_result", ID: e.Call.ID, Name: e.Call.Name, Output: out, IsError: e.Result.IsError})
	case geminilive.EventToolCancelled:
		return c.send(Message{Type: "tool_cancelled", ID: e.Call.ID, Name: e.Call.Name})
	case geminilive.EventInterrupted:
		return c.send(Message{Type: "interrupted"})
	case geminilive.EventTurnComplete:
		c.save(context.WithoutCancel(ctx))
		return c.send(Message{Type: "turn_complete"})
	}
	return nil
}

// save appends the transcript not yet saved to the thread: the user's
// words, then the model's.
func (c *conn) save(ctx context.Context) {
	c.mu.Lock()
	user, model := strings.TrimSpace(c.userText.String()), strings.TrimSpace(c.modelText.String())
	c.userText.Reset()
	c.modelText.Reset()
	c.mu.Unlock()
	var contents []*genai.Content
	if user != "" {
		contents = append(contents, genai.NewContentFromText(user, genai.RoleUser))
	}
	if model != "" {
		contents = append(contents, genai.NewContentFromText(model, genai.RoleModel))
	}
	if len(contents) == 0 {
		return
	}
	if err := c.h.srv.AppendThread(ctx, c.user, c.thread, contents); err != nil {
		c.h.logger.LogAttrs(ctx, slog.LevelWarn, "live: the transcript could not be saved", slog.String("thread", c.thread), slog.Any("error", err))
		var e *agentserver.Error
		code := "not_saved"
		if errors.As(err, &e) {
			code = e.Code
		}
		c.send(Message{Type: "error", Code: code, Message: "the transcript of the turn was not saved to the thread"})
	}
}

// open hands the browser's input to ls, the model's session (nil: it
// could not be opened), from now on: what came during the setup first.
func (c *conn) open(ls *geminilive.Session) {
	c.takeMu.Lock()
	defer c.takeMu.Unlock()
	c.mu.Lock()
	c.ls = ls
	early := c.early
	c.early, c.earlyBytes = nil, 0
	c.mu.Unlock()
	close(c.opened)
	for _, in := range early {
		if code, reason := c.deliver(in); code != 0 {
			c.end(code, reason)
			return
		}
	}
}

// read takes the browser's frames until the session ends.
func (c *conn) read() {
	h := c.h
	c.ws.SetReadLimit(h.cfg.MaxMessageBytes)
	for {
		c.ws.SetReadDeadline(time.Now().Add(h.cfg.IdleTimeout))
		kind, data, err := c.ws.ReadMessage()
		if err != nil {
			var ne interface{ Timeout() bool }
			switch {
			case errors.Is(err, websocket.ErrReadLimit):
				c.end(CloseTooBig, fmt.Sprintf("too_big: a frame is %d bytes at most", h.cfg.MaxMessageBytes))
			case errors.As(err, &ne) && ne.Timeout():
				c.end(CloseLimit, fmt.Sprintf("idle: nothing received for %v", h.cfg.IdleTimeout))
			default:
				c.end(websocket.CloseNormalClosure, "") // the browser closed, or went away
			}
			return
		}
		in, code, reason := parse(kind, data)
		if code == 0 {
			code, reason = c.take(in)
		}
		if code != 0 {
			c.end(code, reason)
			return
		}
	}
}

// parse reads a frame of the browser's; a frame the route refuses
// returns the close code and reason.
func parse(kind int, data []byte) (input, int, string) {
	if kind == websocket.BinaryMessage {
		if why := badAudio(data); why != "" {
			return input{}, CloseBadInput, "bad_audio: " + why
		}
		return input{audio: data}, 0, ""
	}
	var m Message
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || dec.More() {
		return input{}, CloseBadInput, "bad_message: not a JSON message of this route"
	}
	switch m.Type {
	case "ping", "audio_end", "decide":
	case "text":
		if strings.TrimSpace(m.Text) == "" || !utf8.ValidString(m.Text) {
			return input{}, CloseBadInput, "bad_message: a text message needs text (UTF-8)"
		}
	default:
		return input{}, CloseBadInput, fmt.Sprintf("bad_message: unknown type %q", truncate(m.Type, 32))
	}
	return input{m: m}, 0, ""
}

// take hands the browser's input on to the model; before the model's
// session is open it is kept (up to maxEarlyBytes; beyond, take waits).
// A failure returns the close code and reason.
func (c *conn) take(in input) (int, string) {
	if in.audio == nil && in.m.Type == "ping" {
		return 0, "" // nothing to hand on
	}
	c.takeMu.Lock()
	c.mu.Lock()
	size := len(in.audio) + len(in.m.Text) + len(in.m.ID) + 64 // a message's keep counts too
	if c.ls == nil && c.earlyBytes+size <= maxEarlyBytes {
		select {
		case <-c.opened: // could not be opened
		default:
			c.early = append(c.early, in)
			c.earlyBytes += size
			c.mu.Unlock()
			c.takeMu.Unlock()
			return 0, ""
		}
	}
	c.mu.Unlock()
	c.takeMu.Unlock()
	<-c.opened
	c.takeMu.Lock()
	defer c.takeMu.Unlock()
	return c.deliver(in)
}

// deliver hands input on to the model's session, open or failed to open.
func (c *conn) deliver(in input) (int, string) {
	c.mu.Lock()
	ls := c.ls
	c.mu.Unlock()
	if ls == nil {
		return c.sendFailed(geminilive.ErrClosed)
	}
	if in.audio != nil {
		if err := ls.SendAudio(in.audio); err != nil {
			return c.sendFailed(err)
		}
		return 0, ""
	}
	m := in.m
	var err error
	switch m.Type {
	case "text":
		c.mu.Lock()
		c.userText.WriteString(m.Text + "\n")
		c.mu.Unlock()
		err = ls.SendText(m.Text)
	case "audio_end":
		err = ls.AudioStreamEnd()
	case "decide":
		c.mu.Lock()
		if t := c.timers[m.ID]; t != nil {
			t.Stop()
			delete(c.timers, m.ID)
		}
		c.mu.Unlock()
		if err := ls.Decide(m.ID, m.Approved); errors.Is(err, geminilive.ErrNoApproval) {
			c.send(Message{Type: "error", Code: "unknown_call", Message: fmt.Sprintf("no call %q waits for a decision", truncate(m.ID, 64))})
			return 0, ""
		} else if err != nil {
			return c.sendFailed(err)
		}
	}
	if err != nil {
		return c.sendFailed(err)
	}
	return 0, ""
}

// sendFailed is the end of a session whose model no longer takes input:
// its events say why, and end the session.
func (c *conn) sendFailed(err error) (int, string) {
	if errors.Is(err, geminilive.ErrClosed) {
		return CloseModelError, "model_error: the model's session ended"
	}
	c.h.logger.LogAttrs(context.Background(), slog.LevelWarn, "live: a send to the model failed", slog.Any("error", err))
	return CloseModelError, "model_error: the model's session ended"
}

// badAudio says why a binary frame is not raw 16-bit PCM; "" when it may
// be.
func badAudio(data []byte) string {
	switch {
	case len(data) == 0:
		return "an empty audio frame"
	case len(data)%2 != 0:
		return "an odd number of bytes: audio is 16-bit PCM (2 bytes a sample)"
	case bytes.HasPrefix(data, []byte("RIFF")):
		return "a WAV file: send raw 16-bit PCM at 16 kHz, without a header"
	case bytes.HasPrefix(data, []byte("OggS")):
		return "Ogg audio: send raw 16-bit PCM at 16 kHz"
	case bytes.HasPrefix(data, []byte{0x1a, 0x45, 0xdf, 0xa3}):
		return "WebM audio (MediaRecorder's): send raw 16-bit PCM at 16 kHz"
	case bytes.HasPrefix(data, []byte("ID3")), bytes.HasPrefix(data, []byte("fLaC")):
		return "compressed audio: send raw 16-bit PCM at 16 kHz"
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
