package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"google.golang.org/genai"
)

// The Live API's routes (genai v1.77.0 live.go:75-121): the Gemini API
// serves GenerativeService.BidiGenerateContent, and
// BidiGenerateContentConstrained for ephemeral tokens, under
// /ws/google.ai.generativelanguage.{version}.; Vertex AI serves
// /ws/google.cloud.aiplatform.{version}.LlmBidiService/BidiGenerateContent.
// A run of slashes counts as one, as for the other routes.
var (
	liveGeminiRoute = regexp.MustCompile(`^/ws/google\.ai\.generativelanguage\.(v1beta|v1alpha)\.GenerativeService\.(BidiGenerateContent|BidiGenerateContentConstrained)$`)
	liveVertexRoute = regexp.MustCompile(`^/ws/google\.cloud\.aiplatform\.(v1|v1beta1)\.LlmBidiService/BidiGenerateContent$`)
)

// liveRoute returns the backend and API version of a Live route, and false
// when the path is not one.
func liveRoute(u *url.URL) (backend genai.Backend, version string, ok bool) {
	path := slashes.ReplaceAllString(u.Path, "/")
	if m := liveGeminiRoute.FindStringSubmatch(path); m != nil {
		return genai.BackendGeminiAPI, m[1], true
	}
	if m := liveVertexRoute.FindStringSubmatch(path); m != nil {
		return genai.BackendVertexAI, m[1], true
	}
	return genai.BackendUnspecified, "", false
}

// The close codes the Live API ends a session with (RFC 6455 section
// 7.4.1), as ../shared/notes/live.md section 5 lists them.
const (
	// LiveInvalidArgument (1007) closes a session for a message the
	// service refuses.
	LiveInvalidArgument = websocket.CloseInvalidFramePayloadData
	// LivePolicyViolation (1008) closes a session for a model or session
	// that is not found, or an operation the service does not support.
	LivePolicyViolation = websocket.ClosePolicyViolation
	// LiveInternalError (1011) closes a session for an internal error, and
	// one whose time ran out.
	LiveInternalError = websocket.CloseInternalServerErr
)

// maxCloseReason is the longest close reason the service sends: it cuts
// longer ones at 123 bytes (livekit/agents#4414), the most a close frame
// holds (RFC 6455 section 5.5).
const maxCloseReason = 123

// LiveReply is what the server sends in answer to one client message of a
// Live session: Messages, in order, then, when CloseCode is set, a close
// frame with that code and CloseReason (cut at 123 bytes) that ends the
// connection, as the service ends one (a fault, a session whose time ran
// out). The server completes the messages as the package documentation
// says ("Live"). Build replies with [LiveTurn], [LiveText], [LiveAudio],
// [LiveCalls] or [LiveMessages].
type LiveReply struct {
	Messages    []*genai.LiveServerMessage
	CloseCode   int
	CloseReason string
	// NoCallIDs sends the function calls of Messages without ids, as
	// Vertex AI's 2.5 native-audio models do (googleapis/js-genai#1210):
	// the server then takes a response without an id as the answer to the
	// earliest unanswered id-less call of its name (see the rule
	// "live-tool-response"). Set it with [LiveReply.WithoutCallIDs].
	NoCallIDs bool
}

// WithClose returns r closing the connection with code and reason after its
// messages.
func (r *LiveReply) WithClose(code int, reason string) *LiveReply {
	r.CloseCode, r.CloseReason = code, reason
	return r
}

// WithoutCallIDs returns r sending its function calls without ids, as
// Vertex AI's 2.5 native-audio models do (see LiveReply.NoCallIDs).
func (r *LiveReply) WithoutCallIDs() *LiveReply {
	r.NoCallIDs = true
	return r
}

// LiveMessages returns a reply that sends exactly msgs.
func LiveMessages(msgs ...*genai.LiveServerMessage) *LiveReply {
	return &LiveReply{Messages: msgs}
}

// LiveTurn returns a reply that sends msgs and ends the model's turn:
// generationComplete, then turnComplete, as the service ends a turn that
// was not interrupted (genai types.go:8118-8128).
func LiveTurn(msgs ...*genai.LiveServerMessage) *LiveReply {
	return LiveMessages(append(msgs, LiveGenerationComplete(), LiveTurnComplete())...)
}

// LiveText returns a reply whose turn is text, in one part.
func LiveText(text string) *LiveReply {
	return LiveTurn(LiveModelText(text))
}

// LiveAudio returns a reply whose turn is audio: one message per chunk of
// 24 kHz 16-bit little-endian mono PCM, then the transcription of what it
// says when transcript is not empty.
func LiveAudio(transcript string, chunks ...[]byte) *LiveReply {
	var msgs []*genai.LiveServerMessage
	for _, c := range chunks {
		msgs = append(msgs, LiveModelAudio(c))
	}
	if transcript != "" {
		msgs = append(msgs, LiveOutputTranscription(transcript, true))
	}
	return LiveTurn(msgs...)
}

// LiveCalls returns a reply that asks for calls in one toolCall message;
// the server gives each call without an ID one.
func LiveCalls(calls ...*genai.FunctionCall) *LiveReply {
	return LiveMessages(LiveToolCall(calls...))
}

// LiveSetupComplete returns the message that accepts a setup; on Vertex AI
// the server fills in the session's id. A setup function
// ([Server.SetLiveSetupFunc]) sends it in its reply where the setup
// completes.
func LiveSetupComplete() *genai.LiveServerMessage {
	return &genai.LiveServerMessage{SetupComplete: &genai.LiveServerSetupComplete{}}
}

// LiveModelText returns a serverContent message of one text part.
func LiveModelText(text string) *genai.LiveServerMessage {
	return modelTurn(&genai.Part{Text: text})
}

// LiveAudioMIMEType is the MIME type of the audio the model speaks: 16-bit
// little-endian mono PCM at 24 kHz.
const LiveAudioMIMEType = "audio/pcm;rate=24000"

// LiveModelAudio returns a serverContent message of one audio chunk, pcm
// being 24 kHz 16-bit little-endian mono PCM ([LiveAudioMIMEType]).
func LiveModelAudio(pcm []byte) *genai.LiveServerMessage {
	return modelTurn(&genai.Part{InlineData: &genai.Blob{MIMEType: LiveAudioMIMEType, Data: pcm}})
}

func modelTurn(p *genai.Part) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{
		ModelTurn: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}}}
}

// LiveInputTranscription returns a message with a transcription of what the
// user said; finished marks the transcription's last piece.
func LiveInputTranscription(text string, finished bool) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{
		InputTranscription: &genai.Transcription{Text: text, Finished: finished}}}
}

// LiveOutputTranscription returns a message with a transcription of what
// the model said; finished marks the transcription's last piece.
func LiveOutputTranscription(text string, finished bool) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{
		OutputTranscription: &genai.Transcription{Text: text, Finished: finished}}}
}

// LiveToolCall returns a toolCall message asking for calls. The server
// gives each call without an ID one ("fc-N") when it sends the message.
func LiveToolCall(calls ...*genai.FunctionCall) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ToolCall: &genai.LiveServerToolCall{FunctionCalls: calls}}
}

// LiveCancellation returns a toolCallCancellation message for the calls of
// ids; with no ids, the server cancels every call of the session that has
// not been answered and has an id, filling in their ids when it sends the
// message (a call sent without an id cannot be named).
func LiveCancellation(ids ...string) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ToolCallCancellation: &genai.LiveServerToolCallCancellation{IDs: ids}}
}

// LiveInterrupted returns the message that says the user interrupted the
// model: the model's turn then ends with [LiveTurnComplete] and no
// generationComplete.
func LiveInterrupted() *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{Interrupted: true}}
}

// LiveGenerationComplete returns the message that says the model is done
// generating.
func LiveGenerationComplete() *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{GenerationComplete: true}}
}

// LiveTurnComplete returns the message that ends the model's turn.
func LiveTurnComplete() *genai.LiveServerMessage {
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{TurnComplete: true}}
}

// LiveGoAway returns the message that says the connection ends in
// timeLeft: the client should reconnect, resuming the session with its
// latest handle.
func LiveGoAway(timeLeft time.Duration) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{GoAway: &genai.LiveServerGoAway{TimeLeft: timeLeft}}
}

// LiveResumptionUpdate returns a sessionResumptionUpdate message with a
// resumable handle, which the server issues when it sends the message: a
// later connection that sends it in its setup resumes the session. Set
// Resumable to false in the returned message for the update the service
// sends while the session cannot be resumed (no handle).
func LiveResumptionUpdate() *genai.LiveServerMessage {
	return &genai.LiveServerMessage{SessionResumptionUpdate: &genai.LiveServerSessionResumptionUpdate{Resumable: true}}
}

// LiveUsage returns a usageMetadata message with these token counts and
// their sum as the total.
func LiveUsage(prompt, response int32) *genai.LiveServerMessage {
	return &genai.LiveServerMessage{UsageMetadata: &genai.UsageMetadata{
		PromptTokenCount: prompt, ResponseTokenCount: response, TotalTokenCount: prompt + response}}
}

// LiveRealtimeInput is a realtimeInput message as it reaches the server:
// one of its fields is set.
type LiveRealtimeInput struct {
	MediaChunks    []*genai.Blob        `json:"mediaChunks,omitempty"` // deprecated; what genai sends for Media
	Audio          *genai.Blob          `json:"audio,omitempty"`
	Video          *genai.Blob          `json:"video,omitempty"`
	Text           string               `json:"text,omitempty"`
	AudioStreamEnd bool                 `json:"audioStreamEnd,omitempty"`
	ActivityStart  *genai.ActivityStart `json:"activityStart,omitempty"`
	ActivityEnd    *genai.ActivityEnd   `json:"activityEnd,omitempty"`
}

// LiveMessage is one message a client sent on a Live connection, decoded:
// one of Setup, ClientContent, RealtimeInput, ToolResponse and
// ContextUpdate is set, unless the message could not be decoded (see
// Rejection). A connection refused before its first message (credentials)
// is recorded as a message with none set.
//
// Values returned by [Server.LiveMessages] and passed to the live reply
// function are copies the caller owns.
type LiveMessage struct {
	// Seq numbers the messages of the server from 1 in order of arrival.
	Seq int
	// Session is the ID of the session the message belongs to; "" before a
	// setup was accepted. A resumed session keeps its ID.
	Session string
	// Conn numbers the server's Live connections from 1.
	Conn int
	// Backend and APIVersion are those of the connection's route.
	Backend    genai.Backend
	APIVersion string
	// Model is the session's model, without "models/" or the Vertex AI
	// prefix; "" before a setup named one.
	Model string
	// Header holds the connection's handshake headers; APIKey and Token are
	// its credentials, as for [Request].
	Header http.Header
	APIKey string
	Token  string

	Setup         *genai.LiveClientSetup
	ClientContent *genai.LiveClientContent
	RealtimeInput *LiveRealtimeInput
	ToolResponse  *genai.LiveClientToolResponse
	ContextUpdate *genai.LiveClientContextUpdate

	// Raw is the message as received.
	Raw []byte
	// Rejection is set when the server refused the message and closed the
	// connection: the rule, and the close code and reason it sent.
	Rejection *LiveRejection
	// Unscripted is set when the message ended a user turn, nothing was
	// scripted to answer it, and the server closed the connection saying so.
	Unscripted bool
}

// LiveRejection records a refused Live message: the rule it broke (see
// the variable liveRules in live_rules.go) and the close frame sent for it
// (the reason cut at 123 bytes, as sent), or, for credentials refused at
// the handshake, the HTTP error.
type LiveRejection struct {
	Rule   string
	Code   int    // the close code; the HTTP status for a refused handshake
	Reason string // the close reason; the error message for a refused handshake
}

// Error returns the rejection as the client sees it.
func (r *LiveRejection) Error() string {
	return fmt.Sprintf("fake: live rule %q: %d %s", r.Rule, r.Code, r.Reason)
}

func (m *LiveMessage) clone() *LiveMessage {
	c := *m
	c.Header = m.Header.Clone()
	c.Raw = bytes.Clone(m.Raw)
	if m.Rejection != nil {
		r := *m.Rejection
		c.Rejection = &r
	}
	// The decoded fields are decoded again from Raw, so that the caller owns them.
	c.Setup, c.ClientContent, c.RealtimeInput, c.ToolResponse, c.ContextUpdate = nil, nil, nil, nil, nil
	if w, reason := decodeLive(m.Raw); reason == "" {
		w.fill(&c)
	}
	return &c
}

// liveWire is a client message as the wire spells it.
type liveWire struct {
	Setup         *genai.LiveClientSetup         `json:"setup"`
	ClientContent *genai.LiveClientContent       `json:"clientContent"`
	RealtimeInput *LiveRealtimeInput             `json:"realtimeInput"`
	ToolResponse  *genai.LiveClientToolResponse  `json:"toolResponse"`
	ContextUpdate *genai.LiveClientContextUpdate `json:"contextUpdate"`
}

func (w *liveWire) fill(m *LiveMessage) {
	m.Setup, m.ClientContent, m.RealtimeInput, m.ToolResponse, m.ContextUpdate =
		w.Setup, w.ClientContent, w.RealtimeInput, w.ToolResponse, w.ContextUpdate
}

// decodeLive decodes a client message; the top level must be one known
// field (the rule "live-json"). When it cannot, it returns the reason the
// connection is closed with.
func decodeLive(raw []byte) (w *liveWire, reason string) {
	const invalidJSON = "Invalid JSON payload received. "
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, invalidJSON + err.Error()
	}
	for k := range top {
		switch k {
		case "setup", "clientContent", "realtimeInput", "toolResponse", "contextUpdate":
		default:
			return nil, invalidJSON + fmt.Sprintf("Unknown name %q: Cannot find field.", k)
		}
	}
	if len(top) != 1 {
		return nil, invalidJSON + fmt.Sprintf("A message sets exactly one of setup, clientContent, realtimeInput, "+
			"toolResponse and contextUpdate, not %d.", len(top))
	}
	w = new(liveWire)
	if err := json.Unmarshal(raw, w); err != nil {
		return nil, invalidJSON + err.Error()
	}
	return w, ""
}

// liveSession is the state of a Live session, which outlives its
// connections when it issued a resumption handle.
type liveSession struct {
	id      string
	backend genai.Backend
	model   string // the setup's model as sent
	short   string // without its prefix
	setup   *genai.LiveClientSetup

	mu        sync.Mutex // guards what follows, as connections of one session may overlap
	pending   map[string]pendingCall
	cancelled map[string]bool
	order     []string      // pending ids in the order the calls were sent
	anon      []pendingCall // pending calls sent without an id, in the order they were sent
}

type pendingCall struct {
	name     string
	blocking bool
}

// blockingLeft reports whether a BLOCKING call is pending; the caller
// holds ls.mu.
func (ls *liveSession) blockingLeft() bool {
	for _, c := range ls.pending {
		if c.blocking {
			return true
		}
	}
	for _, c := range ls.anon {
		if c.blocking {
			return true
		}
	}
	return false
}

// blocking reports whether the function name is declared BLOCKING in the
// session's setup: behavior unset means BLOCKING, except on gemini-3.8-live
// models, whose functions are NON_BLOCKING unless declared otherwise
// (../shared/notes/live.md section 3).
func (ls *liveSession) blocking(name string) bool {
	for _, t := range ls.setup.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name != name {
				continue
			}
			switch d.Behavior {
			case genai.BehaviorBlocking:
				return true
			case genai.BehaviorNonBlocking:
				return false
			}
		}
	}
	return !strings.HasPrefix(ls.short, "gemini-3.8-live")
}

// liveConn is one Live connection being served.
type liveConn struct {
	srv     *Server
	ws      *websocket.Conn
	seq     int
	backend genai.Backend
	version string
	header  http.Header
	creds   credentials
	sess    *liveSession
	setups  int
}

var liveUpgrader = websocket.Upgrader{
	// Clients other than browsers send no Origin; a browser test's page is
	// served from another loopback port.
	CheckOrigin: func(*http.Request) bool { return true },
}

// serveLive serves a Live connection: it checks the credentials, upgrades
// the connection, then reads the client's messages until the connection
// ends, answering each in turn.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request, backend genai.Backend, version string) {
	c := &liveConn{srv: s, backend: backend, version: version, header: r.Header.Clone(), creds: credentialsOf(r)}
	if strings.HasSuffix(r.URL.Path, "Constrained") && c.creds.token == "" {
		// An ephemeral token: "Authorization: Token auth_tokens/…" (genai live.go:101-110).
		if scheme, token, ok := strings.Cut(c.creds.authorization, " "); ok && strings.EqualFold(scheme, "Token") {
			c.creds.token = strings.TrimSpace(token)
		}
	}
	s.mu.Lock()
	s.liveConns++
	c.seq = s.liveConns
	s.mu.Unlock()
	if err := checkAuth(&input{backend: backend, version: version, creds: c.creds}); err != nil {
		rej := &LiveRejection{Rule: "live-auth", Code: err.httpCode(), Reason: err.Message}
		s.recordLive(c, nil, nil, rej)
		s.log("fake: live #%d: rejected by rule %q: %d %s", c.seq, rej.Rule, rej.Code, rej.Reason)
		writeError(w, &input{backend: backend}, err)
		return
	}
	ws, err := liveUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	c.ws = ws
	ws.SetReadLimit(maxBody) // as for a request's body; a larger message is closed 1009 by the websocket library
	if !s.trackLive(ws, true) {
		ws.Close()
		return
	}
	defer s.trackLive(ws, false)
	defer ws.Close()
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if !c.handle(raw) {
			return
		}
	}
}

// trackLive adds a connection to those Close ends, or removes it; adding
// fails once the server is closing.
func (s *Server) trackLive(ws *websocket.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.liveWS, ws)
		s.liveWG.Done()
		return true
	}
	select {
	case <-s.closing:
		return false
	default:
	}
	if s.liveWS == nil {
		s.liveWS = make(map[*websocket.Conn]bool)
	}
	s.liveWS[ws] = true
	s.liveWG.Add(1)
	return true
}

// closeLive closes every Live connection and waits for their handlers.
func (s *Server) closeLive() {
	s.mu.Lock()
	for ws := range s.liveWS {
		ws.NetConn().Close()
	}
	s.mu.Unlock()
	s.liveWG.Wait()
}

// handle checks and answers one client message; it reports whether the
// connection stays open.
func (c *liveConn) handle(raw []byte) bool {
	s := c.srv
	in := &liveInput{conn: c, raw: raw, handles: s.liveHandle}
	rej := checkLive(in)
	if rej == nil && in.msg.Setup != nil {
		c.setups++
		c.sess = in.resumed
		if c.sess != nil {
			c.sess.mu.Lock()
			c.sess.setup = in.msg.Setup // all of the setup but the model may change on resume
			c.sess.mu.Unlock()
		} else {
			c.sess = &liveSession{id: fmt.Sprintf("live-session-%d", s.nextID()), backend: c.backend,
				model: in.msg.Setup.Model, short: in.model, setup: in.msg.Setup,
				pending: map[string]pendingCall{}, cancelled: map[string]bool{}}
		}
	}
	m := s.recordLive(c, raw, in.msg, rej)
	if rej != nil {
		s.log("fake: live #%d: message #%d rejected by rule %q: %d %s", c.seq, m.Seq, rej.Rule, rej.Code, rej.Reason)
		c.close(rej.Code, rej.Reason)
		return false
	}
	if in.msg.Setup != nil {
		reply := s.liveSetupReply(m)
		if reply == nil {
			return c.send(LiveSetupComplete(), false)
		}
		return c.sendReply(reply)
	}
	reply, ends := s.liveReply(m, in.endsTurn)
	if reply == nil {
		if !ends {
			return true
		}
		s.mu.Lock()
		m.Unscripted = true
		s.mu.Unlock()
		reason := fmt.Sprintf("fake: no reply scripted for live message #%d", m.Seq)
		s.log("fake: live #%d: %s", c.seq, reason)
		c.close(LiveInternalError, reason)
		return false
	}
	return c.sendReply(reply)
}

// sendReply sends reply's messages, then its close frame if it has one;
// it reports whether the connection stays open.
func (c *liveConn) sendReply(reply *LiveReply) bool {
	for _, msg := range reply.Messages {
		if !c.send(msg, reply.NoCallIDs) {
			return false
		}
	}
	if reply.CloseCode != 0 {
		c.close(reply.CloseCode, reply.CloseReason)
		return false
	}
	return true
}

// liveSetupReply returns what the setup function answers the setup m
// with, nil when there is none or it returned nil.
func (s *Server) liveSetupReply(m *LiveMessage) *LiveReply {
	s.mu.Lock()
	f := s.liveSetupFunc
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(m.clone())
}

// liveReply returns the reply to m: for a message that ends a user turn,
// the first one queued with EnqueueLive, else the live reply function's
// (called for every message); nil when there is none.
func (s *Server) liveReply(m *LiveMessage, endsTurn bool) (reply *LiveReply, ends bool) {
	s.mu.Lock()
	if endsTurn && len(s.liveQueue) > 0 {
		reply = s.liveQueue[0]
		s.liveQueue = s.liveQueue[1:]
		s.mu.Unlock()
		return reply, true
	}
	f := s.liveFunc
	var copied *LiveMessage
	if f != nil {
		copied = m.clone()
	}
	s.mu.Unlock()
	if f != nil {
		reply = f(copied)
	}
	return reply, endsTurn
}

// send completes msg for the session and writes it as the service does: as
// JSON in a binary frame (../shared/notes/live.md section 1, "Frames");
// noIDs sends its calls without ids.
func (c *liveConn) send(msg *genai.LiveServerMessage, noIDs bool) bool {
	body, err := c.complete(msg, noIDs)
	if err != nil {
		c.srv.log("fake: live #%d: %v", c.seq, err)
		c.close(LiveInternalError, "fake: "+err.Error())
		return false
	}
	return c.ws.WriteMessage(websocket.BinaryMessage, body) == nil
}

// complete fills what the server issues into a copy of msg (call ids,
// cancelled ids, resumption handles, the session id of a setupComplete on
// Vertex AI), keeps the session's state, and returns the message in the
// backend's JSON; noIDs sends its calls without ids.
func (c *liveConn) complete(msg *genai.LiveServerMessage, noIDs bool) ([]byte, error) {
	if msg == nil {
		return nil, fmt.Errorf("a scripted live message is nil")
	}
	m := *msg
	if sess := c.sess; sess != nil {
		if sc := m.SetupComplete; sc != nil && sc.SessionID == "" && c.backend == genai.BackendVertexAI {
			m.SetupComplete = &genai.LiveServerSetupComplete{SessionID: sess.id}
		}
		if tc := m.ToolCall; tc != nil {
			calls := make([]*genai.FunctionCall, len(tc.FunctionCalls))
			sess.mu.Lock()
			for i, fc := range tc.FunctionCalls {
				call := *fc
				if noIDs {
					call.ID = ""
					sess.anon = append(sess.anon, pendingCall{name: call.Name, blocking: sess.blocking(call.Name)})
					calls[i] = &call
					continue
				}
				if call.ID == "" {
					call.ID = fmt.Sprintf("fc-%d", c.srv.nextID())
				}
				if _, ok := sess.pending[call.ID]; !ok {
					sess.order = append(sess.order, call.ID)
				}
				sess.pending[call.ID] = pendingCall{name: call.Name, blocking: sess.blocking(call.Name)}
				calls[i] = &call
			}
			sess.mu.Unlock()
			m.ToolCall = &genai.LiveServerToolCall{FunctionCalls: calls}
		}
		if cc := m.ToolCallCancellation; cc != nil {
			sess.mu.Lock()
			ids := cc.IDs
			if len(ids) == 0 {
				for _, id := range sess.order {
					if _, ok := sess.pending[id]; ok {
						ids = append(ids, id)
					}
				}
			}
			for _, id := range ids {
				sess.resolve(id)
				sess.cancelled[id] = true
			}
			sess.mu.Unlock()
			m.ToolCallCancellation = &genai.LiveServerToolCallCancellation{IDs: ids}
		}
		if u := m.SessionResumptionUpdate; u != nil && u.Resumable && u.NewHandle == "" {
			h := fmt.Sprintf("live-handle-%d", c.srv.nextID())
			c.srv.mu.Lock()
			if c.srv.liveHandles == nil {
				c.srv.liveHandles = make(map[string]*liveSession)
			}
			c.srv.liveHandles[h] = sess
			c.srv.mu.Unlock()
			m.SessionResumptionUpdate = &genai.LiveServerSessionResumptionUpdate{NewHandle: h, Resumable: true,
				LastConsumedClientMessageIndex: u.LastConsumedClientMessageIndex}
		}
	}
	body, err := json.Marshal(&m)
	if err != nil || c.backend != genai.BackendVertexAI || m.UsageMetadata == nil {
		return body, err
	}
	// Vertex AI counts the answer's tokens in candidatesTokenCount, which
	// genai reads into ResponseTokenCount (live_converters.go, usageMetadataFromVertex).
	var tree map[string]any
	if err := json.Unmarshal(body, &tree); err != nil {
		return nil, err
	}
	usage := tree["usageMetadata"].(map[string]any)
	for from, to := range map[string]string{"responseTokenCount": "candidatesTokenCount", "responseTokensDetails": "candidatesTokensDetails"} {
		if v, ok := usage[from]; ok {
			delete(usage, from)
			usage[to] = v
		}
	}
	return json.Marshal(tree)
}

// resolve removes id from the pending calls; the caller holds ls.mu.
func (ls *liveSession) resolve(id string) {
	delete(ls.pending, id)
	for i, o := range ls.order {
		if o == id {
			ls.order = append(ls.order[:i], ls.order[i+1:]...)
			break
		}
	}
}

// cutReason cuts a close reason as the service does.
func cutReason(reason string) string {
	if len(reason) > maxCloseReason {
		return reason[:maxCloseReason]
	}
	return reason
}

// close ends the connection as the service does: a close frame with code
// and reason, then, so that the close frame is read before the socket
// goes, it waits a little for the client's answering close.
func (c *liveConn) close(code int, reason string) {
	reason = cutReason(reason)
	deadline := time.Now().Add(time.Second)
	if c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), deadline) != nil {
		return
	}
	c.ws.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		if _, _, err := c.ws.NextReader(); err != nil {
			return
		}
	}
}

// recordLive records a message of c (nil raw: a refused handshake) and
// returns the record.
func (s *Server) recordLive(c *liveConn, raw []byte, w *liveWire, rej *LiveRejection) *LiveMessage {
	m := &LiveMessage{Conn: c.seq, Backend: c.backend, APIVersion: c.version, Header: c.header,
		APIKey: c.creds.apiKey, Token: c.creds.token, Raw: raw, Rejection: rej}
	if c.sess != nil {
		m.Session, m.Model = c.sess.id, c.sess.short
	}
	if w != nil {
		w.fill(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.liveRecords = append(s.liveRecords, m)
	m.Seq = len(s.liveRecords)
	return m
}

// liveHandle returns the session a resumption handle the server issued
// resumes.
func (s *Server) liveHandle(h string) (*liveSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.liveHandles[h]
	return sess, ok
}

// EnqueueLive appends replies to the Live script. Each client message that
// ends a user turn takes the first one (see the package documentation,
// "Live"); refused messages take none.
func (s *Server) EnqueueLive(replies ...*LiveReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.liveQueue = append(s.liveQueue, replies...)
}

// PendingLive returns the number of queued Live replies not yet taken.
func (s *Server) PendingLive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.liveQueue)
}

// SetLiveSetupFunc installs f, which is called with every setup the server
// accepts (a new session's or a resumed one's) and returns what the server
// answers it with instead of setupComplete: its messages
// ([LiveSetupComplete] where the setup completes), then its close frame,
// if any; a reply with neither sends nothing, and the connection waits
// for the client's next message (a setup that never completes). A nil
// reply answers setupComplete as usual; nil uninstalls f. f receives a
// copy of the message that it owns; it is called from the connections'
// goroutines, possibly concurrently, so it must be safe for concurrent
// use.
func (s *Server) SetLiveSetupFunc(f func(*LiveMessage) *LiveReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.liveSetupFunc = f
}

// SetLiveReplyFunc installs f, which is called with every accepted client
// message of a Live session but the setup and the messages the queue
// answers, and returns what the server sends in answer, or nil to send
// nothing; nil uninstalls it. f receives a copy of the message that it
// owns. It is called from the connections' goroutines, possibly
// concurrently (one call at a time per connection), so it must be safe for
// concurrent use; it may call the server's methods except Close.
func (s *Server) SetLiveReplyFunc(f func(*LiveMessage) *LiveReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.liveFunc = f
}

// LiveMessages returns a copy of every message Live clients sent, in order
// of arrival, refused ones included.
func (s *Server) LiveMessages() []*LiveMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*LiveMessage, len(s.liveRecords))
	for i, m := range s.liveRecords {
		out[i] = m.clone()
	}
	return out
}

// LiveRejections returns a copy of the Live messages the server refused,
// in order of arrival.
func (s *Server) LiveRejections() []*LiveMessage {
	var out []*LiveMessage
	for _, m := range s.LiveMessages() {
		if m.Rejection != nil {
			out = append(out, m)
		}
	}
	return out
}

// LiveClientConfig returns a new client configuration for the Live API of
// this server on the Gemini API: [Server.ClientConfig] with the base URL
// "ws://127.0.0.1:port", as genai dials a websocket with the base URL's
// scheme only when it is ws or wss (live.go:68-72). A client made from it
// serves client.Live; its other services would fail on the ws scheme.
func (s *Server) LiveClientConfig() *genai.ClientConfig {
	cfg := s.ClientConfig()
	cfg.HTTPOptions.BaseURL = s.liveURL()
	return cfg
}

// LiveVertexClientConfig returns a new client configuration for the Live
// API of this server as Vertex AI: [Server.VertexClientConfig] with the
// base URL "ws://127.0.0.1:port" and the bearer token [AccessToken] in
// HTTPOptions.Headers, as genai's Live client sends only those headers
// (and a token of Credentials, which it reads only when set).
func (s *Server) LiveVertexClientConfig() *genai.ClientConfig {
	cfg := s.VertexClientConfig()
	cfg.HTTPOptions.BaseURL = s.liveURL()
	cfg.HTTPOptions.Headers = http.Header{"Authorization": {"Bearer " + AccessToken}}
	return cfg
}

func (s *Server) liveURL() string {
	return "ws://" + strings.TrimPrefix(s.URL, "http://")
}
