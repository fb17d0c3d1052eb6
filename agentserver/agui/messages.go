package agui

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"google.golang.org/genai"
)

// Message is an AG-UI message as the messages route sends it: a user
// message (Content: a string, or parts when it holds media), a reasoning
// message, an assistant message (its text and tool calls), or a tool
// message (a call's result).
type Message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    any             `json:"content,omitempty"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Error      string          `json:"error,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// ToolCall is a tool call of an assistant [Message].
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"` // "function"
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // JSON
	} `json:"function"`
}

// outPart is a part of a user or tool message's content, when it holds
// media.
type outPart struct {
	Type   string `json:"type"`
	Text   string `json:"text,omitempty"`
	Source *struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	} `json:"source,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// snapshot is the messages route's answer: a MESSAGES_SNAPSHOT event.
type snapshot struct {
	Type     string    `json:"type"`
	Messages []Message `json:"messages"`
}

// messages answers GET {path}/messages?threadId=…: the thread's stored
// history as a MESSAGES_SNAPSHOT event, and the question of its run in
// progress (agentserver.RunInfo.Message) as its last user message; no
// messages for a thread nothing was stored for and nothing runs on (a
// new one, or another user's).
func (h *handler) messages(w http.ResponseWriter, r *http.Request) {
	out, err := func() ([]Message, error) {
		user, err := h.s.User(r)
		if err != nil {
			return nil, err
		}
		thread := r.URL.Query().Get("threadId")
		history, err := h.s.History(r.Context(), user, thread)
		if err != nil && !errors.Is(err, agentserver.ErrNotFound) {
			return nil, err
		}
		// The question of the run in progress, which the history holds
		// once the run is saved: where it will be stored, with the id it
		// will have then.
		if info, err := h.s.Current(r.Context(), user, thread); err == nil && info.Message != nil {
			history = append(history, info.Message)
		} else if err != nil && !errors.Is(err, agentserver.ErrNotFound) {
			return nil, err
		}
		return messages(history, func(uri string) (string, bool) { return h.s.FileURL(thread, uri) }), nil
	}()
	if err != nil {
		h.s.WriteError(w, r, err)
		return
	}
	h.s.WriteJSON(w, r, http.StatusOK, snapshot{Type: "MESSAGES_SNAPSHOT", Messages: out})
}

// Messages turns a thread's stored history (agentserver.Server.History)
// into AG-UI messages, as a run's stream shows them: a user message per
// question (its text, and media as data, or as a Gemini file); per model
// turn a reasoning message (its thought summaries), an assistant message
// (its text and tool calls), and a tool message per call that was
// answered (content: the result's JSON, or the error's text, then also
// in error, with metadata {isError: true}, and {isError: true, denied:
// true} for a call refused rather than run, as geminiadapter.Denied reads
// its answer: the stream's metadata). Ids are derived from positions in the history:
// the same on every load (a call's id too: not the one the run's stream
// gave it, which the history does not keep).
func Messages(history []*genai.Content) []Message {
	return messages(history, nil)
}

// messages is Messages, with link turning a file's URI into the URL a
// frontend fetches it from (Server.FileURL): such a file is a media part
// whose source is of type "url"; a URI it does not link (or with link
// nil) stays a "file" source, the model's provider's handle. A tool
// message whose response refers to files has parts: its result's JSON,
// then the files.
func messages(history []*genai.Content, link func(uri string) (string, bool)) []Message {
	file := func(mimeType, uri string) outPart {
		if link != nil {
			if u, ok := link(uri); ok {
				p := media(mimeType, "url", u)
				if name, _, _, err := artifact.ParseURI(uri); err == nil {
					p.Metadata = map[string]string{"filename": name}
				}
				return p
			}
		}
		return media(mimeType, "file", uri)
	}
	out := []Message{}
	calls := map[string]string{} // the ids of the turn's calls, by the model's id
	var anonymous []string       // the ids of its calls without one, in call order
	for i, c := range history {
		if c == nil {
			continue
		}
		at := "h" + strconv.Itoa(i)
		if c.Role == genai.RoleModel {
			clear(calls)
			anonymous = anonymous[:0]
			var text, thought strings.Builder
			m := Message{ID: at, Role: "assistant"}
			for j, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					fc := p.FunctionCall
					tc := ToolCall{ID: at + "-" + strconv.Itoa(j), Type: "function"}
					tc.Function.Name, tc.Function.Arguments = fc.Name, string(argsJSON(fc.Args))
					m.ToolCalls = append(m.ToolCalls, tc)
					if fc.ID != "" {
						calls[fc.ID] = tc.ID
					} else {
						anonymous = append(anonymous, tc.ID)
					}
				case p.Text != "" && p.Thought:
					thought.WriteString(p.Text)
				case p.Text != "":
					text.WriteString(p.Text)
				}
			}
			if thought.Len() > 0 {
				out = append(out, Message{ID: at + "-r", Role: "reasoning", Content: thought.String()})
			}
			if text.Len() > 0 {
				m.Content = text.String()
			}
			if m.Content != nil || len(m.ToolCalls) > 0 {
				out = append(out, m)
			}
			continue
		}
		var text strings.Builder
		var parts []outPart
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				id, ok := calls[fr.ID]
				if ok {
					delete(calls, fr.ID)
				} else if fr.ID == "" && len(anonymous) > 0 {
					id, anonymous, ok = anonymous[0], anonymous[1:], true
				}
				if ok {
					m := toolMessage(id, fr)
					if text, isText := m.Content.(string); isText && m.Error == "" {
						content := []outPart{{Type: "text", Text: text}}
						for _, rp := range fr.Parts {
							if rp != nil && rp.FileData != nil {
								content = append(content, file(rp.FileData.MIMEType, rp.FileData.FileURI))
							}
						}
						if len(content) > 1 {
							m.Content = content
						}
					}
					out = append(out, m)
				}
			case p.Text != "" && !p.Thought:
				if text.Len() > 0 {
					text.WriteString("\n")
				}
				text.WriteString(p.Text)
				parts = append(parts, outPart{Type: "text", Text: p.Text})
			case p.InlineData != nil:
				parts = append(parts, media(p.InlineData.MIMEType, "data", base64.StdEncoding.EncodeToString(p.InlineData.Data)))
			case p.FileData != nil:
				parts = append(parts, file(p.FileData.MIMEType, p.FileData.FileURI))
			}
		}
		switch {
		case len(parts) == 0:
		case allText(parts):
			out = append(out, Message{ID: at, Role: "user", Content: text.String()})
		default:
			out = append(out, Message{ID: at, Role: "user", Content: parts})
		}
	}
	return out
}

func allText(parts []outPart) bool {
	for _, p := range parts {
		if p.Type != "text" {
			return false
		}
	}
	return true
}

// media returns the part of a user message's content that holds media of
// mimeType: an image, audio, video, or else a document.
func media(mimeType, source, value string) outPart {
	typ := "document"
	for _, kind := range []string{"image", "audio", "video"} {
		if strings.HasPrefix(mimeType, kind+"/") {
			typ = kind
		}
	}
	p := outPart{Type: typ}
	p.Source = &struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	}{source, value, mimeType}
	return p
}

// toolMessage is the tool message of the call id, answered by fr.
func toolMessage(id string, fr *genai.FunctionResponse) Message {
	m := Message{ID: id + "-result", Role: "tool", ToolCallID: id}
	if msg, ok := fr.Response["error"]; ok {
		m.Content = fmt.Sprint(msg)
		m.Error = fmt.Sprint(msg)
		m.Metadata = json.RawMessage(`{"isError":true}`)
		if _, denied := geminiadapter.Denied(fr); denied {
			m.Metadata = json.RawMessage(`{"isError":true,"denied":true}`)
		}
		return m
	}
	var out any = fr.Response
	if res, ok := fr.Response["result"]; ok {
		out = res
	}
	b, err := json.Marshal(out)
	if err != nil {
		b = []byte("null")
	}
	m.Content = string(b)
	return m
}

// argsJSON returns a call's arguments as JSON: an object, {} when none.
func argsJSON(args map[string]any) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
