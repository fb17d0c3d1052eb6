package offline

import (
	"fmt"
	"slices"
	"sync"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// LiveModelName is the Live model the fake serves as the offline model:
// the fake takes a name with "live" in it as a Live model, and this one,
// not a gemini-3.8-live name, declares functions BLOCKING by default and
// may answer in text as well as in audio.
const LiveModelName = "gemini-3-offline-demo-live"

// liveChunk is the audio of an answer spoken in audio: 100 ms of silence
// (24 kHz, 16-bit mono PCM). The transcription carries the words.
var liveChunk = make([]byte, 4800)

// live keeps the conversation of each Live session of a server, as the
// service does, so that the offline model answers it by the same rules as
// a generateContent request: [Answer] reads it as the request's contents.
type live struct {
	srv *fake.Server

	mu       sync.Mutex
	sessions map[string]*liveConversation
}

// liveConversation is one Live session's conversation: its turns, and
// the responses of the calls the model is waiting for.
type liveConversation struct {
	contents  []*genai.Content
	asked     []string // ids of the last toolCall's calls, in order
	pending   []string // those not answered yet
	responses map[string]*genai.FunctionResponse
	calls     int  // the calls made, numbering their ids
	heard     bool // audio came since the last spoken turn
}

// ServeLive makes srv answer Live sessions as the offline model (it
// installs a live reply function): a text the user sends (realtime input
// or client content) gets the calls or the text [Answer] gives for the
// conversation so far, and the responses to every call of a toolCall get
// the answer that sums them up. Calls carry ids ("offline-N"). The answer
// is text when the setup asks for TEXT, otherwise audio (silence) with
// the words as its output transcription when the setup asks for one.
// Audio the user sends is heard but not understood: a spoken turn is
// answered as [SpokenQuestion].
func ServeLive(srv *fake.Server) {
	l := &live{srv: srv, sessions: map[string]*liveConversation{}}
	srv.SetLiveReplyFunc(l.reply)
}

// SpokenQuestion is what the offline model takes any speech for: it hears
// audio but understands no words, so a spoken turn (audio, then the
// microphone's stream or the user's activity ended) is answered as this
// question, and its input transcription says so.
const SpokenQuestion = "What is the weather in Paris?"

// spokenTranscript is the input transcription of a spoken turn.
const spokenTranscript = SpokenQuestion + " (the offline model hears speech but no words: it takes any for this question)"

func (l *live) reply(m *fake.LiveMessage) *fake.LiveReply {
	var user *genai.Content
	spoken := false
	switch in := m.RealtimeInput; {
	case in != nil && in.Audio != nil && len(in.Audio.Data) > 0:
		l.mu.Lock()
		l.conversation(m.Session).heard = true
		l.mu.Unlock()
		return nil
	case in != nil && (in.AudioStreamEnd || in.ActivityEnd != nil):
		l.mu.Lock()
		conv := l.conversation(m.Session)
		spoken, conv.heard = conv.heard, false
		l.mu.Unlock()
		if !spoken {
			return nil
		}
		user = genai.NewContentFromText(SpokenQuestion, genai.RoleUser)
	case m.RealtimeInput != nil && m.RealtimeInput.Text != "":
		user = genai.NewContentFromText(m.RealtimeInput.Text, genai.RoleUser)
	case m.ClientContent != nil && m.ClientContent.TurnComplete:
		user = &genai.Content{Role: genai.RoleUser}
		for _, c := range m.ClientContent.Turns {
			user.Parts = append(user.Parts, c.Parts...)
		}
	case m.ToolResponse == nil:
		return nil
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	conv := l.conversation(m.Session)
	if user == nil { // a tool response
		for _, r := range m.ToolResponse.FunctionResponses {
			if i := slices.Index(conv.pending, r.ID); i >= 0 {
				conv.pending = slices.Delete(conv.pending, i, i+1)
				conv.responses[r.ID] = r
			}
		}
		if len(conv.pending) > 0 || len(conv.responses) == 0 {
			return nil
		}
		user = &genai.Content{Role: genai.RoleUser}
		for _, id := range conv.asked { // in the order of the calls, as generateContent sends them
			user.Parts = append(user.Parts, &genai.Part{FunctionResponse: conv.responses[id]})
		}
		conv.asked, conv.responses = nil, nil
	}
	conv.contents = append(conv.contents, user)

	setup := l.setup(m.Session)
	req := &fake.Request{Model: m.Model, Contents: conv.contents}
	if setup != nil {
		req.Tools = setup.Tools
	}
	calls, text := Answer(req)
	reply := l.answer(conv, setup, calls, text)
	if spoken {
		reply.Messages = append([]*genai.LiveServerMessage{fake.LiveInputTranscription(spokenTranscript, true)}, reply.Messages...)
	}
	return reply
}

// conversation returns the session's conversation, made on first use;
// l.mu is held.
func (l *live) conversation(session string) *liveConversation {
	conv := l.sessions[session]
	if conv == nil {
		conv = &liveConversation{}
		l.sessions[session] = conv
	}
	return conv
}

// answer is the reply that gives calls, or text, to the conversation;
// l.mu is held.
func (l *live) answer(conv *liveConversation, setup *genai.LiveClientSetup, calls []*genai.FunctionCall, text string) *fake.LiveReply {
	if len(calls) > 0 {
		model := &genai.Content{Role: genai.RoleModel}
		conv.responses = map[string]*genai.FunctionResponse{}
		for _, c := range calls {
			conv.calls++
			c.ID = fmt.Sprintf("offline-%d", conv.calls)
			conv.pending = append(conv.pending, c.ID)
			conv.asked = append(conv.asked, c.ID)
			model.Parts = append(model.Parts, &genai.Part{FunctionCall: c})
		}
		conv.contents = append(conv.contents, model)
		return fake.LiveCalls(calls...)
	}
	conv.contents = append(conv.contents, genai.NewContentFromText(text, genai.RoleModel))
	if setup != nil && setup.GenerationConfig != nil && slices.Contains(setup.GenerationConfig.ResponseModalities, genai.ModalityText) {
		return fake.LiveText(text)
	}
	transcript := ""
	if setup != nil && setup.OutputAudioTranscription != nil {
		transcript = text
	}
	return fake.LiveAudio(transcript, liveChunk)
}

// setup returns the latest setup of the session (a resumed session's
// replaces the first), or nil.
func (l *live) setup(session string) *genai.LiveClientSetup {
	msgs := l.srv.LiveMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Session == session && msgs[i].Setup != nil {
			return msgs[i].Setup
		}
	}
	return nil
}
