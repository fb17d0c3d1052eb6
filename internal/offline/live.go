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
	calls     int // the calls made, numbering their ids
}

// ServeLive makes srv answer Live sessions as the offline model (it
// installs a live reply function): a text the user sends (realtime input
// or client content) gets the calls or the text [Answer] gives for the
// conversation so far, and the responses to every call of a toolCall get
// the answer that sums them up. Calls carry ids ("offline-N"). The answer
// is text when the setup asks for TEXT, otherwise audio (silence) with
// the words as its output transcription when the setup asks for one.
// Audio the user sends is not understood: only text is.
func ServeLive(srv *fake.Server) {
	l := &live{srv: srv, sessions: map[string]*liveConversation{}}
	srv.SetLiveReplyFunc(l.reply)
}

func (l *live) reply(m *fake.LiveMessage) *fake.LiveReply {
	var user *genai.Content
	switch {
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
	conv := l.sessions[m.Session]
	if conv == nil {
		conv = &liveConversation{}
		l.sessions[m.Session] = conv
	}
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
