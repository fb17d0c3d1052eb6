package geminilive

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// ErrClosed is returned by the methods of a Session that was closed, or
// that ended with an error.
var ErrClosed = errors.New("geminilive: session closed")

// ErrNoApproval is returned by [Session.Decide] for a call id that waits
// for no decision: unknown, already decided, or cancelled.
var ErrNoApproval = errors.New("geminilive: no call waits for approval")

// AudioMIMEType is the MIME type of the audio [Session.SendAudio] sends:
// 16-bit little-endian mono PCM at 16 kHz.
const AudioMIMEType = "audio/pcm;rate=16000"

// Config configures a live session. The zero value asks for audio
// answers with both transcriptions, session resumption on, every tool
// BLOCKING, up to 3 reconnections in a row without a model turn, and 30
// seconds for each connection's setup.
type Config struct {
	// ResponseModalities are what the model answers with; nil means audio
	// (genai.ModalityAudio), the only modality native-audio models take.
	ResponseModalities []genai.Modality

	// SpeechConfig chooses the voice; nil takes the agent's
	// GenerateConfig.SpeechConfig, if any.
	SpeechConfig *genai.SpeechConfig

	// NoTranscription turns off the transcriptions of what the user and
	// the model say (EventInputTranscript, EventOutputTranscript).
	NoTranscription bool

	// RealtimeInput configures voice activity detection; nil keeps the
	// service's (automatic detection). Activity signals
	// ([Session.ActivityStart]) need automatic detection disabled here.
	RealtimeInput *genai.RealtimeInputConfig

	// Compression, when set, lets the service shorten the context window
	// as it fills (a sliding window from TriggerTokens down to
	// TargetTokens), lifting the session's length limits (without it
	// about 15 minutes of audio, 2 of audio and video).
	Compression *genai.ContextWindowCompressionConfig

	// NoResumption turns session resumption off: a goAway or a dropped
	// connection then ends the session with an error.
	NoResumption bool

	// Handle resumes an earlier session: a handle [Session.Handle]
	// returned (the Gemini API keeps them two hours after a session ends).
	Handle string

	// NonBlocking names the tools declared NON_BLOCKING: the model goes on
	// talking while they run. The others are BLOCKING.
	NonBlocking []string

	// Scheduling is sent with the responses of NON_BLOCKING calls:
	// genai.FunctionResponseSchedulingInterrupt, …WhenIdle or …Silent.
	// Empty sends none: the service then takes WHEN_IDLE.
	Scheduling genai.FunctionResponseScheduling

	// MaxReconnects bounds the reconnections in a row that lead to no
	// model turn (content, a transcription, a tool call): once that many
	// reconnections in a row have each failed, or found the connection
	// lost again, the session ends with [ErrTooManyReconnects]. A model
	// turn, or a connection that lasted [StableConnection], starts a new
	// count. Zero means DefaultMaxReconnects (3); negative, none: a lost
	// connection ends the session.
	MaxReconnects int

	// ReconnectDelay is the wait before the second reconnection of a row
	// (the first is at once), doubled for each one after it up to
	// [MaxReconnectDelay], each wait moved at random by up to half of
	// itself; Close ends a wait at once. Zero means
	// DefaultReconnectDelay (500 ms).
	ReconnectDelay time.Duration

	// SetupTimeout bounds the opening of each connection, Connect's (as
	// does Connect's context) and each reconnection's: the dial, the
	// websocket handshake and the wait for the service's setupComplete.
	// Zero means DefaultSetupTimeout (30 seconds).
	SetupTimeout time.Duration

	// ProgressInterval paces the progress reports of a call
	// (EventToolProgress): at most one per interval, the latest kept;
	// zero hands each on as soon as the consumer takes it.
	ProgressInterval time.Duration

	// Logger logs the reconnections; nil means slog.Default().
	Logger *slog.Logger
}

// A Session is a live session of an agent: see the package documentation.
// Its methods are safe for concurrent use; [Session.Events] has one
// consumer.
type Session struct {
	tun    *tunnel
	a      *agent.Agent
	steps  agent.Steps
	cfg    Config
	setup  *genai.LiveConnectConfig
	logger *slog.Logger
	sem    chan struct{} // MaxParallel tool calls at a time

	ctx      context.Context // the session's: cancelled by Close and by a failure
	cancel   context.CancelCauseFunc
	done     chan struct{} // closed by Close
	events   chan item
	wg       sync.WaitGroup // the reader and the calls
	finished chan struct{}  // closed once they, and the tunnel, have ended

	writeMu    sync.Mutex // serializes every write, and swaps conn
	conn       *genai.Session
	connClosed bool                      // by a failure or Close
	unsent     []*genai.FunctionResponse // responses a lost connection did not take

	mu     sync.Mutex
	calls  map[string]*call
	ids    int // the ids given to calls that came without one
	handle string
	closed bool
	err    error
}

// call is one function call of the session, until it is answered or
// cancelled.
type call struct {
	fc        *genai.FunctionCall // with the session's own id when it came without one
	tool      *toolset.Tool
	index     int
	ctx       context.Context
	cancel    context.CancelCauseFunc
	waiting   bool // for a decision
	cancelled bool

	// A call that came without an id is answered without one, after the
	// earlier calls of its toolCall that came without one: the service
	// matches such responses to calls by name and order.
	inOrder *inOrder
	pos     int // in inOrder
}

// inOrder holds the responses of the calls of one toolCall that came
// without ids until each can be sent in call order. The session's
// writeMu guards it.
type inOrder struct {
	frs  []*genai.FunctionResponse
	done []bool // answered, or nothing to send
	next int    // the first call not sent yet
}

// ready records the response of the call at pos (nil: nothing to send)
// and returns the responses now sendable, in order.
func (o *inOrder) ready(pos int, fr *genai.FunctionResponse) []*genai.FunctionResponse {
	o.frs[pos], o.done[pos] = fr, true
	var out []*genai.FunctionResponse
	for ; o.next < len(o.done) && o.done[o.next]; o.next++ {
		if f := o.frs[o.next]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

type item struct {
	ev  *Event
	err error
}

// Connect opens a live session of a on client's Live API: the setup says
// the agent's model, system instruction, tools and generation config, with
// cfg. It returns once the service has accepted the setup, or when ctx
// ends or Config.SetupTimeout passes before, with an error that wraps
// ctx's (context.DeadlineExceeded…); no connection is left open then. The
// session lives until [Session.Close], ctx's end, or an error it cannot
// survive.
func Connect(ctx context.Context, client *genai.Client, a *agent.Agent, cfg Config) (*Session, error) {
	steps := a.Steps()
	if err := steps.Err(); err != nil {
		return nil, err
	}
	setup, err := liveConfig(steps, &cfg)
	if err != nil {
		return nil, err
	}
	tun, err := newTunnel(client)
	if err != nil {
		return nil, fmt.Errorf("geminilive: connect: %w", err)
	}
	s := &Session{tun: tun, a: a, steps: steps, cfg: cfg, setup: setup,
		logger: cfg.Logger, handle: cfg.Handle,
		sem:  make(chan struct{}, steps.Limits().MaxParallel),
		done: make(chan struct{}), events: make(chan item, 64), finished: make(chan struct{}), calls: map[string]*call{}}
	if s.conn, err = tun.dial(ctx, steps.Model(), setup, s.setupTimeout()); err != nil {
		tun.close()
		return nil, fmt.Errorf("geminilive: connect: %w", err)
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.ctx, s.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { s.Close() })
	s.wg.Add(1)
	go s.read(newReconnects(&cfg, time.Now()))
	go func() {
		s.wg.Wait()
		s.tun.close() // no connection outlives the session
		stop()
		close(s.events)
		close(s.finished)
	}()
	return s, nil
}

// setupTimeout returns Config.SetupTimeout, or its default.
func (s *Session) setupTimeout() time.Duration {
	if s.cfg.SetupTimeout > 0 {
		return s.cfg.SetupTimeout
	}
	return DefaultSetupTimeout
}

// liveConfig returns the setup of a session of the agent steps drives.
func liveConfig(steps agent.Steps, cfg *Config) (*genai.LiveConnectConfig, error) {
	gc := steps.RequestConfig(1) // no forced calls: Live has no tool config
	lc := &genai.LiveConnectConfig{
		ResponseModalities:       cfg.ResponseModalities,
		SpeechConfig:             cfg.SpeechConfig,
		RealtimeInputConfig:      cfg.RealtimeInput,
		ContextWindowCompression: cfg.Compression,
	}
	if lc.ResponseModalities == nil {
		lc.ResponseModalities = []genai.Modality{genai.ModalityAudio}
	}
	if !cfg.NoTranscription {
		lc.InputAudioTranscription = &genai.AudioTranscriptionConfig{}
		lc.OutputAudioTranscription = &genai.AudioTranscriptionConfig{}
	}
	if !cfg.NoResumption {
		lc.SessionResumption = &genai.SessionResumptionConfig{Handle: cfg.Handle}
	}
	if gc != nil {
		lc.SystemInstruction = gc.SystemInstruction
		lc.Temperature, lc.TopP, lc.TopK = gc.Temperature, gc.TopP, gc.TopK
		lc.MaxOutputTokens, lc.Seed = gc.MaxOutputTokens, gc.Seed
		lc.ThinkingConfig, lc.SafetySettings, lc.MediaResolution = gc.ThinkingConfig, gc.SafetySettings, gc.MediaResolution
		if lc.SpeechConfig == nil {
			lc.SpeechConfig = gc.SpeechConfig
		}
		for _, t := range gc.Tools {
			t2 := *t
			t2.FunctionDeclarations = nil
			for _, d := range t.FunctionDeclarations {
				d2 := *d
				if slices.Contains(cfg.NonBlocking, d.Name) {
					d2.Behavior = genai.BehaviorNonBlocking
				}
				t2.FunctionDeclarations = append(t2.FunctionDeclarations, &d2)
			}
			lc.Tools = append(lc.Tools, &t2)
		}
	}
	for _, name := range cfg.NonBlocking {
		if _, ok := steps.Tools().Lookup(name); !ok {
			return nil, fmt.Errorf("geminilive: Config.NonBlocking names %q, which is not one of the agent's tools", name)
		}
	}
	return lc, nil
}

// Events returns the session's events, in the order they happen, until
// the session ends: after [Session.Close] the sequence ends; after a
// failure it yields the error (wrapping the *websocket.CloseError the
// service closed the connection with, when it did) and ends. Call it
// once; a consumer that stops reading holds the session's messages back.
func (s *Session) Events() iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		for it := range s.events {
			if !yield(it.ev, it.err) {
				return
			}
		}
	}
}

// Handle returns the latest resumption handle the service gave, empty
// before the first: [Config.Handle] resumes the session with it.
func (s *Session) Handle() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handle
}

// SendText sends text as realtime input: it ends the user's turn.
func (s *Session) SendText(text string) error {
	return s.send(func(c *genai.Session) error { return c.SendRealtimeInput(genai.LiveRealtimeInput{Text: text}) })
}

// SendContent sends turns as client content, ending the user's turn when
// turnComplete is set.
func (s *Session) SendContent(turns []*genai.Content, turnComplete bool) error {
	return s.send(func(c *genai.Session) error {
		return c.SendClientContent(genai.LiveClientContentInput{Turns: turns, TurnComplete: &turnComplete})
	})
}

// SendAudio sends a chunk of the user's speech: 16-bit little-endian mono
// PCM at 16 kHz ([AudioMIMEType]).
func (s *Session) SendAudio(pcm []byte) error {
	return s.send(func(c *genai.Session) error {
		return c.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: AudioMIMEType, Data: pcm}})
	})
}

// AudioStreamEnd says the microphone was turned off (automatic activity
// detection only).
func (s *Session) AudioStreamEnd() error {
	return s.send(func(c *genai.Session) error {
		return c.SendRealtimeInput(genai.LiveRealtimeInput{AudioStreamEnd: true})
	})
}

// SendVideo sends one video frame, an image of type mimeType
// ("image/jpeg", "image/png"); about one a second is what the service
// takes.
func (s *Session) SendVideo(frame []byte, mimeType string) error {
	return s.send(func(c *genai.Session) error {
		return c.SendRealtimeInput(genai.LiveRealtimeInput{Video: &genai.Blob{MIMEType: mimeType, Data: frame}})
	})
}

// ActivityStart says the user started speaking (with automatic activity
// detection disabled: Config.RealtimeInput).
func (s *Session) ActivityStart() error {
	return s.send(func(c *genai.Session) error {
		return c.SendRealtimeInput(genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}})
	})
}

// ActivityEnd says the user stopped speaking: it ends the user's turn.
func (s *Session) ActivityEnd() error {
	return s.send(func(c *genai.Session) error {
		return c.SendRealtimeInput(genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}})
	})
}

// send writes with the session's connection, one write at a time; during
// a reconnection (its waits included) it waits for the new connection.
func (s *Session) send(write func(*genai.Session) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.failed(); err != nil {
		return err
	}
	if err := write(s.conn); err != nil {
		return fmt.Errorf("geminilive: send: %w", err)
	}
	return nil
}

// failed returns the error that ended the session, ErrClosed after Close,
// nil while it lives.
func (s *Session) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, s.err)
	}
	if s.closed {
		return ErrClosed
	}
	return nil
}

// Decide answers the approval a call waits for (EventApproval), callID
// being the event's Call.ID (the session's own id for a call that came
// without one): approved, the call runs; not, the model is told it was
// not run.
func (s *Session) Decide(callID string, approved bool) error {
	s.mu.Lock()
	if s.closed || s.err != nil {
		s.mu.Unlock()
		return ErrClosed
	}
	c, ok := s.calls[callID]
	if !ok || !c.waiting {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoApproval, callID)
	}
	c.waiting = false
	s.wg.Add(1)
	s.mu.Unlock()
	if approved {
		go s.run(c, true)
		return nil
	}
	go func() {
		defer s.wg.Done()
		s.answer(c, agent.ToolResult{Call: c.fc, Result: *agent.NotApproved(c.fc, "it was denied")})
	}()
	return nil
}

// Close ends the session: the calls running are cancelled, the connection
// closed (also one being opened: a reconnection stops, whatever it was
// waiting for), and Close returns once every goroutine of the session
// has ended and no connection of it is left; Events then ends.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel(ErrClosed) // first: a reader whose emit fails finds the session closing
	close(s.done)
	var err error
	s.writeMu.Lock() // a reconnection holds it until its wait or dial ends, which the cancel does
	if !s.connClosed {
		err = s.conn.Close()
		s.connClosed = true
	}
	s.writeMu.Unlock()
	<-s.finished
	if err != nil && !errors.Is(err, websocket.ErrCloseSent) && !errors.Is(err, net.ErrClosed) { // closed by a reconnection
		return fmt.Errorf("geminilive: close: %w", err)
	}
	return nil
}

// emit hands e (or err) to Events; false once the session is closed.
func (s *Session) emit(e *Event, err error) bool {
	select {
	case s.events <- item{e, err}:
		return true
	case <-s.done:
		return false
	}
}

// errGoAway is why a session reconnects after a goAway.
var errGoAway = errors.New("the service sent goAway")

// read receives the server's messages until the session ends; r paces
// its reconnections.
func (s *Session) read(r *reconnects) {
	defer s.wg.Done()
	for {
		s.writeMu.Lock()
		conn := s.conn
		s.writeMu.Unlock()
		msg, err := conn.Receive()
		if s.ctx.Err() != nil {
			return // closed, or failed
		}
		if err == nil {
			if isProgress(msg) {
				r.progress()
			}
			goAway := s.handleMessage(msg)
			if s.ctx.Err() != nil {
				return // closed while its events were handed on
			}
			if !goAway || s.Handle() == "" {
				continue // without a handle, the connection serves until it ends
			}
			err = errGoAway
		}
		if err := s.resume(r, err); err != nil {
			if s.ctx.Err() == nil {
				s.fail(err)
			}
			return
		}
		s.emit(&Event{Kind: EventReconnected}, nil)
	}
}

// resume reconnects after the connection ended with why (a goAway, or
// its loss), trying again after a failed reconnection, as r allows; it
// returns the error that ends the session when it cannot. Sends wait
// meanwhile; Close stops it.
func (s *Session) resume(r *reconnects, why error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.conn.Close()
	r.lost(time.Now())
	for {
		if s.ctx.Err() != nil {
			return ErrClosed
		}
		if !resumable(why) {
			return why
		}
		if s.cfg.NoResumption || s.Handle() == "" {
			return fmt.Errorf("geminilive: connection ended with no resumption handle: %w", why)
		}
		wait, ok := r.next()
		switch {
		case !ok && r.max == 0:
			return fmt.Errorf("geminilive: connection ended, and Config.MaxReconnects turns reconnections off: %w", why)
		case !ok:
			return fmt.Errorf("%w (%d in a row): %w", ErrTooManyReconnects, r.max, why)
		}
		s.logger.LogAttrs(s.ctx, slog.LevelInfo, "geminilive: reconnecting", slog.String("why", why.Error()),
			slog.Int("attempt", r.n), slog.Duration("wait", wait))
		if wait > 0 && !s.sleep(wait) {
			return ErrClosed
		}
		err := s.reconnect()
		if err == nil {
			r.connected(time.Now())
			return nil
		}
		why = err
	}
}

// sleep waits d, or until the session ends: false then.
func (s *Session) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// resumable says whether a connection lost with err is resumed: not when
// the service refused what the session sent (1007, 1008).
func resumable(err error) bool {
	var ce *websocket.CloseError
	return !errors.As(err, &ce) || ce.Code != websocket.CloseInvalidFramePayloadData && ce.Code != websocket.ClosePolicyViolation
}

// reconnect resumes the session on a new connection with the latest
// handle, and sends there the responses the old one did not take. The
// caller holds writeMu.
func (s *Session) reconnect() error {
	if s.connClosed {
		return ErrClosed
	}
	setup := *s.setup
	setup.SessionResumption = &genai.SessionResumptionConfig{Handle: s.Handle()}
	conn, err := s.tun.dial(s.ctx, s.steps.Model(), &setup, s.setupTimeout())
	if err != nil {
		return fmt.Errorf("geminilive: reconnect: %w", err)
	}
	s.conn = conn
	unsent := s.unsent
	s.unsent = nil
	if len(unsent) > 0 {
		if err := conn.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: unsent}); err != nil {
			s.unsent = unsent // the next connection sends them
		}
	}
	return nil
}

// fail ends the session with err: the calls are cancelled, Events yields
// err and ends.
func (s *Session) fail(err error) {
	err = fmt.Errorf("geminilive: connection lost: %w", err)
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.cancel(err)
	s.writeMu.Lock()
	s.conn.Close()
	s.connClosed = true
	s.writeMu.Unlock()
	s.emit(nil, err)
}

// handleMessage turns msg into events and runs its calls; it returns
// true for a goAway.
func (s *Session) handleMessage(msg *genai.LiveServerMessage) (goAway bool) {
	if u := msg.SessionResumptionUpdate; u != nil && u.Resumable && u.NewHandle != "" {
		s.mu.Lock()
		s.handle = u.NewHandle
		s.mu.Unlock()
	}
	if sc := msg.ServerContent; sc != nil {
		if sc.InputTranscription != nil {
			s.emit(&Event{Kind: EventInputTranscript, Text: sc.InputTranscription.Text, Finished: sc.InputTranscription.Finished, Message: msg}, nil)
		}
		if sc.ModelTurn != nil {
			for _, p := range sc.ModelTurn.Parts {
				switch {
				case p.InlineData != nil:
					s.emit(&Event{Kind: EventAudio, Audio: p.InlineData.Data, MIMEType: p.InlineData.MIMEType, Message: msg}, nil)
				case p.Text != "" && p.Thought:
					s.emit(&Event{Kind: EventThought, Text: p.Text, Message: msg}, nil)
				case p.Text != "":
					s.emit(&Event{Kind: EventText, Text: p.Text, Message: msg}, nil)
				}
			}
		}
		if sc.OutputTranscription != nil {
			s.emit(&Event{Kind: EventOutputTranscript, Text: sc.OutputTranscription.Text, Finished: sc.OutputTranscription.Finished, Message: msg}, nil)
		}
		if sc.Interrupted {
			s.emit(&Event{Kind: EventInterrupted, Message: msg}, nil)
		}
		if sc.GenerationComplete {
			s.emit(&Event{Kind: EventGenerationComplete, Message: msg}, nil)
		}
		if sc.TurnComplete {
			s.emit(&Event{Kind: EventTurnComplete, Message: msg}, nil)
		}
	}
	if tc := msg.ToolCall; tc != nil {
		s.startCalls(tc.FunctionCalls, msg)
	}
	if c := msg.ToolCallCancellation; c != nil {
		s.cancelCalls(c.IDs, msg)
	}
	if u := msg.UsageMetadata; u != nil {
		s.emit(&Event{Kind: EventUsage, Usage: usage(u), Message: msg}, nil)
	}
	if g := msg.GoAway; g != nil {
		s.emit(&Event{Kind: EventGoAway, TimeLeft: g.TimeLeft, Message: msg}, nil)
		return !s.cfg.NoResumption
	}
	return false
}

// usage returns the token counts of a Live usageMetadata.
func usage(m *genai.UsageMetadata) agent.Usage {
	return agent.Usage{PromptTokens: int(m.PromptTokenCount), CandidatesTokens: int(m.ResponseTokenCount),
		ThoughtsTokens: int(m.ThoughtsTokenCount), CachedTokens: int(m.CachedContentTokenCount),
		ToolUsePromptTokens: int(m.ToolUsePromptTokenCount), TotalTokens: int(m.TotalTokenCount)}
}

// startCalls plans the calls of a toolCall as the loop plans a turn's, and
// starts those that can run. A call without an id gets one of the
// session's own ("geminilive-N"), by which the events name it and Decide
// takes it; it is answered without one, in call order.
func (s *Session) startCalls(fcs []*genai.FunctionCall, msg *genai.LiveServerMessage) {
	n := 0 // the calls without an id
	for _, fc := range fcs {
		if fc.ID == "" {
			n++
		}
	}
	order := &inOrder{frs: make([]*genai.FunctionResponse, n), done: make([]bool, n)}
	pos := 0
	for i, fc := range fcs {
		c := &call{}
		if fc.ID == "" {
			c.inOrder, c.pos = order, pos
			pos++
			s.mu.Lock()
			s.ids++
			own := *fc
			own.ID = fmt.Sprintf("geminilive-%d", s.ids)
			s.mu.Unlock()
			fc = &own
		}
		answer, approval := s.steps.PlanCall(s.ctx, i, len(fcs), fc)
		tool, _ := s.steps.Tools().Lookup(fc.Name)
		ae := &agent.Event{Kind: agent.EventToolCall, Index: i, Call: fc, Tool: tool}
		cctx := s.steps.StartContext(s.ctx, ae)
		s.steps.Observe(cctx, ae)
		c.fc, c.tool, c.index, c.waiting = fc, tool, i, approval
		c.ctx, c.cancel = context.WithCancelCause(cctx)
		s.mu.Lock()
		s.calls[fc.ID] = c
		s.wg.Add(1)
		s.mu.Unlock()
		s.emit(&Event{Kind: EventToolCall, Call: fc, Tool: tool, Message: msg}, nil)
		switch {
		case answer != nil:
			go func() {
				defer s.wg.Done()
				s.answer(c, agent.ToolResult{Call: fc, Result: *answer})
			}()
		case approval:
			s.wg.Done() // Decide starts it again
			s.emit(&Event{Kind: EventApproval, Call: fc, Tool: tool, Message: msg}, nil)
		default:
			go s.run(c, false)
		}
	}
}

// run runs call c's tool by the loop's code, at most MaxParallel at a
// time, and answers it.
func (s *Session) run(c *call, approved bool) {
	defer s.wg.Done()
	select {
	case s.sem <- struct{}{}:
	case <-c.ctx.Done():
		s.answer(c, agent.ToolResult{Call: c.fc, Result: toolset.Result{IsError: true, Err: context.Cause(c.ctx),
			Output: fmt.Sprintf("tool %s was not run: %v", c.fc.Name, context.Cause(c.ctx))}})
		return
	}
	pp := &toolset.ProgressPacer{Interval: s.cfg.ProgressInterval, To: toolset.ProgressFunc(func(p toolset.Progress) {
		s.steps.Observe(c.ctx, &agent.Event{Kind: agent.EventToolProgress, Index: c.index, Call: c.fc, Tool: c.tool, Progress: &p})
		s.emit(&Event{Kind: EventToolProgress, Call: c.fc, Tool: c.tool, Progress: &p}, nil)
	})}
	res, _ := s.steps.RunCall(toolset.WithProgress(c.ctx, pp), c.fc, approved)
	pp.Close()
	<-s.sem
	s.answer(c, res)
}

// answer sends the response of c, unless it was cancelled, and reports
// its result.
func (s *Session) answer(c *call, res agent.ToolResult) {
	s.steps.Observe(c.ctx, &agent.Event{Kind: agent.EventToolResult, Index: c.index, Call: c.fc, Tool: c.tool,
		ToolResult: &res, Duration: res.Duration})
	s.mu.Lock()
	cancelled := c.cancelled
	delete(s.calls, c.fc.ID)
	s.mu.Unlock()
	c.cancel(nil)
	if cancelled || s.ctx.Err() != nil {
		s.respond(c, nil)
		return
	}
	fr := agent.ResponseContent(s.steps.Model(), []*genai.FunctionCall{c.fc}, []agent.ToolResult{res}).Parts[0].FunctionResponse
	if slices.Contains(s.cfg.NonBlocking, c.fc.Name) {
		fr.Scheduling = s.cfg.Scheduling
	}
	// Reported before it is sent: the model's answer to it comes after.
	s.emit(&Event{Kind: EventToolResult, Call: c.fc, Tool: c.tool, Result: &res}, nil)
	s.respond(c, fr)
}

// respond sends fr, c's response (nil: none), or, for a call that came
// without an id, sends it without one once the earlier such calls of its
// toolCall have been answered, with the later ones it was holding back.
func (s *Session) respond(c *call, fr *genai.FunctionResponse) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	frs := []*genai.FunctionResponse{fr}
	if c.inOrder != nil {
		if fr != nil {
			fr.ID = ""
		}
		frs = c.inOrder.ready(c.pos, fr)
	}
	if len(frs) == 0 || frs[0] == nil || s.ctx.Err() != nil {
		return
	}
	if err := s.conn.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: frs}); err != nil {
		s.unsent = append(s.unsent, frs...) // the next connection sends them
	}
}

// cancelCalls cancels the calls of a toolCallCancellation: their contexts
// end with ErrCancelled and nothing is sent for them.
func (s *Session) cancelCalls(ids []string, msg *genai.LiveServerMessage) {
	for _, id := range ids {
		s.mu.Lock()
		c, ok := s.calls[id]
		if ok {
			c.cancelled, c.waiting = true, false
			delete(s.calls, id)
		}
		s.mu.Unlock()
		if ok {
			c.cancel(ErrCancelled)
			s.emit(&Event{Kind: EventToolCancelled, Call: c.fc, Tool: c.tool, Message: msg}, nil)
		}
	}
}

// ErrCancelled is the cause of the context of a call the model cancelled
// (toolCallCancellation): the user spoke over it.
var ErrCancelled = errors.New("geminilive: call cancelled by the model")
