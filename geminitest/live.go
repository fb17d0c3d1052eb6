package geminitest

import (
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// LiveReply is what the server sends in answer to one client message of a
// Live session: Messages in order, then, when CloseCode is set, a close
// frame with CloseCode and CloseReason that ends the connection (see
// WithClose). Build one with [LiveText], [LiveAudio], [LiveCalls],
// [LiveTurn] or [LiveMessages] from the message builders ([LiveModelText],
// [LiveToolCall], [LiveGoAway]…). The server completes the messages it
// sends (call ids, cancelled ids, resumption handles) in copies: it never
// modifies a LiveReply.
type LiveReply = fake.LiveReply

// LiveMessage is one message a Live client sent, decoded: Seq (from 1, in
// order of arrival over all connections), Session (the session's id,
// which a resumed session keeps), Conn (the connection, from 1), Backend,
// APIVersion and Model, the handshake's Header, APIKey and Token, one of
// Setup, ClientContent, RealtimeInput, ToolResponse and ContextUpdate, Raw
// (as received), Rejection (the rule that refused it and the close frame
// sent) and Unscripted (a turn nothing answered).
type LiveMessage = fake.LiveMessage

// LiveRealtimeInput is a realtimeInput message as it reaches the server:
// Audio, Video, Text, AudioStreamEnd, ActivityStart, ActivityEnd, or the
// deprecated MediaChunks genai sends for LiveRealtimeInput.Media.
type LiveRealtimeInput = fake.LiveRealtimeInput

// LiveRejection records a refused Live message: Rule, and the Code and
// Reason of the close frame (the HTTP status and message for credentials
// refused at the handshake).
type LiveRejection = fake.LiveRejection

// The close codes the Live API ends a session with. genai's Session.Receive
// (and Live.Connect, wrapped) returns them as a *websocket.CloseError of
// github.com/gorilla/websocket.
const (
	// LiveInvalidArgument (1007): a message the service refuses.
	LiveInvalidArgument = fake.LiveInvalidArgument
	// LivePolicyViolation (1008): a model or session not found.
	LivePolicyViolation = fake.LivePolicyViolation
	// LiveInternalError (1011): an internal error; a session out of time;
	// a turn nothing was scripted to answer.
	LiveInternalError = fake.LiveInternalError
)

// LiveAudioMIMEType is the MIME type of the audio the model speaks: 16-bit
// little-endian mono PCM at 24 kHz.
const LiveAudioMIMEType = fake.LiveAudioMIMEType

// LiveMessages returns a reply that sends exactly msgs.
func LiveMessages(msgs ...*genai.LiveServerMessage) *LiveReply { return fake.LiveMessages(msgs...) }

// LiveTurn returns a reply that sends msgs, then generationComplete and
// turnComplete, as a turn that was not interrupted ends.
func LiveTurn(msgs ...*genai.LiveServerMessage) *LiveReply { return fake.LiveTurn(msgs...) }

// LiveText returns a reply whose turn is text, in one part.
func LiveText(text string) *LiveReply { return fake.LiveText(text) }

// LiveAudio returns a reply whose turn is audio, one message per chunk of
// 24 kHz 16-bit little-endian mono PCM, then the output transcription
// transcript unless it is empty.
func LiveAudio(transcript string, chunks ...[]byte) *LiveReply {
	return fake.LiveAudio(transcript, chunks...)
}

// LiveCalls returns a reply that asks for calls in one toolCall message;
// the server gives each call without an ID one, unless the reply is sent
// [LiveReply.WithoutCallIDs], as Vertex AI's 2.5 native-audio models send
// calls: the server then takes a response without an id as the answer to
// the earliest unanswered id-less call of its name.
func LiveCalls(calls ...*genai.FunctionCall) *LiveReply { return fake.LiveCalls(calls...) }

// LiveSetupComplete returns the message that accepts a setup, for the
// replies of a setup function ([Server.SetLiveSetupFunc]).
func LiveSetupComplete() *genai.LiveServerMessage { return fake.LiveSetupComplete() }

// LiveModelText returns a serverContent message of one text part.
func LiveModelText(text string) *genai.LiveServerMessage { return fake.LiveModelText(text) }

// LiveModelAudio returns a serverContent message of one chunk of 24 kHz
// 16-bit little-endian mono PCM.
func LiveModelAudio(pcm []byte) *genai.LiveServerMessage { return fake.LiveModelAudio(pcm) }

// LiveInputTranscription returns a message transcribing what the user said.
func LiveInputTranscription(text string, finished bool) *genai.LiveServerMessage {
	return fake.LiveInputTranscription(text, finished)
}

// LiveOutputTranscription returns a message transcribing what the model said.
func LiveOutputTranscription(text string, finished bool) *genai.LiveServerMessage {
	return fake.LiveOutputTranscription(text, finished)
}

// LiveToolCall returns a toolCall message; the server gives each call
// without an ID one ("fc-N").
func LiveToolCall(calls ...*genai.FunctionCall) *genai.LiveServerMessage {
	return fake.LiveToolCall(calls...)
}

// LiveCancellation returns a toolCallCancellation message for ids; with
// none, for every call of the session not yet answered.
func LiveCancellation(ids ...string) *genai.LiveServerMessage { return fake.LiveCancellation(ids...) }

// LiveInterrupted returns the message that says the user interrupted the
// model; the turn then ends with [LiveTurnComplete] alone.
func LiveInterrupted() *genai.LiveServerMessage { return fake.LiveInterrupted() }

// LiveGenerationComplete returns the message that says the model is done
// generating.
func LiveGenerationComplete() *genai.LiveServerMessage { return fake.LiveGenerationComplete() }

// LiveTurnComplete returns the message that ends the model's turn.
func LiveTurnComplete() *genai.LiveServerMessage { return fake.LiveTurnComplete() }

// LiveGoAway returns the message that says the connection ends in timeLeft.
func LiveGoAway(timeLeft time.Duration) *genai.LiveServerMessage { return fake.LiveGoAway(timeLeft) }

// LiveResumptionUpdate returns a sessionResumptionUpdate message whose
// handle the server issues when it sends it; a later connection that
// sends the handle in its setup resumes the session.
func LiveResumptionUpdate() *genai.LiveServerMessage { return fake.LiveResumptionUpdate() }

// LiveUsage returns a usageMetadata message with these token counts.
func LiveUsage(prompt, response int32) *genai.LiveServerMessage {
	return fake.LiveUsage(prompt, response)
}

// LiveClientConfig returns a new client configuration for the server's
// Live API on the Gemini API: [Server.ClientConfig] with the base URL
// "ws://127.0.0.1:port", since genai dials a websocket with the base URL's
// scheme only when it is ws or wss. Use the client's Live service only;
// its other services fail on the ws scheme.
func (s *Server) LiveClientConfig() *genai.ClientConfig { return s.srv.LiveClientConfig() }

// LiveVertexClientConfig returns a new client configuration for the
// server's Live API as Vertex AI: [Server.VertexClientConfig] with the base
// URL "ws://127.0.0.1:port" and the bearer token in HTTPOptions.Headers,
// the headers genai's Live client sends.
func (s *Server) LiveVertexClientConfig() *genai.ClientConfig { return s.srv.LiveVertexClientConfig() }

// EnqueueLive appends replies to the Live script. Each client message that
// ends a user turn takes the first one: a clientContent with turnComplete,
// a realtimeInput of text, activityEnd or audioStreamEnd, and a
// toolResponse that answers the last pending BLOCKING call or a
// NON_BLOCKING one with a scheduling other than SILENT.
func (s *Server) EnqueueLive(replies ...*LiveReply) { s.srv.EnqueueLive(replies...) }

// PendingLive returns the number of queued Live replies not yet taken.
func (s *Server) PendingLive() int { return s.srv.PendingLive() }

// SetLiveReplyFunc installs f, called with a copy of every accepted client
// message of a Live session but the setups and the messages the queue
// answers; what it returns is sent in answer, nil sending nothing. A turn
// that neither answers ends the session with 1011 "fake: no reply scripted
// for live message #N". f may be called concurrently.
func (s *Server) SetLiveReplyFunc(f func(*LiveMessage) *LiveReply) { s.srv.SetLiveReplyFunc(f) }

// SetLiveSetupFunc installs f, called with a copy of every setup the
// server accepts (a new session's, or a resumed one's: its
// Setup.SessionResumption names the handle); what it returns is sent
// instead of setupComplete: [LiveSetupComplete] where the setup completes,
// then the reply's close frame, if any. A reply with no message and no
// close never completes the setup (an endpoint that hangs); nil answers as
// usual. f may be called concurrently.
func (s *Server) SetLiveSetupFunc(f func(*LiveMessage) *LiveReply) { s.srv.SetLiveSetupFunc(f) }

// LiveMessages returns copies of every message Live clients sent, refused
// ones included, in order of arrival.
func (s *Server) LiveMessages() []*LiveMessage { return s.srv.LiveMessages() }

// LiveRejections returns copies of the Live messages the server refused
// for breaking the protocol; a client that speaks it correctly causes none.
func (s *Server) LiveRejections() []*LiveMessage { return s.srv.LiveRejections() }
