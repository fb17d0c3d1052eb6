package aisdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"google.golang.org/genai"
)

// UIMessage is a message as useChat keeps it (the AI SDK's UIMessage),
// as the messages route sends it: what useChat's messages option takes.
type UIMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []UIPart `json:"parts"`
}

// UIPart is a part of a [UIMessage]: text, reasoning, file, step-start,
// or a tool part ("tool-" and the tool's name). Each kind sets its own
// fields.
type UIPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	State      string          `json:"state,omitempty"`
	MediaType  string          `json:"mediaType,omitempty"`
	URL        string          `json:"url,omitempty"`
	Filename   string          `json:"filename,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	ErrorText  string          `json:"errorText,omitempty"`
	Approval   *Approval       `json:"approval,omitempty"`
}

// Approval is a tool part's approval. Reason is why a call was denied,
// the message the model read (on an output-denied part only).
type Approval struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
}

// messages answers GET {id}/messages: the chat's stored history as
// UIMessage[], and the question of its run in progress
// (agentserver.RunInfo.Message) as its last user message; [] for a chat
// nothing was stored for and nothing runs on (a new one, or another
// user's).
func (h *handler) messages(w http.ResponseWriter, r *http.Request, path string) {
	out, err := func() ([]UIMessage, error) {
		user, err := h.s.User(r)
		if err != nil {
			return nil, err
		}
		id, err := chatID(path)
		if err != nil {
			return nil, err
		}
		history, err := h.s.History(r.Context(), user, id)
		if err != nil && !errors.Is(err, agentserver.ErrNotFound) {
			return nil, err
		}
		// The question of the run in progress, which the history holds
		// once the run is saved: where it will be stored, with the id it
		// will have then. Resuming the run adds its answer after it.
		if info, err := h.s.Current(r.Context(), user, id); err == nil && info.Message != nil {
			history = append(history, info.Message)
		} else if err != nil && !errors.Is(err, agentserver.ErrNotFound) {
			return nil, err
		}
		return messages(r.Context(), h.s.Agent(), history, func(uri string) (string, bool) { return h.s.FileURL(id, uri) }), nil
	}()
	if err != nil {
		h.s.WriteError(w, r, err)
		return
	}
	h.s.WriteJSON(w, r, http.StatusOK, out)
}

// Messages turns a thread's stored history (agentserver.Server.History)
// into the AI SDK's UIMessage[]: a user message per question (its text
// and files; files as data: URLs, or their URI; the handler's messages
// route links a thread's artifacts to their download route), and an
// assistant message
// per run, as the stream builds it: a step-start for each model turn, its
// reasoning (thought summaries), text, and tool parts, each in the state
// its stored answer gives (output-available; output-error with its
// text; output-denied, approval {approved: false, reason}, for a call
// refused rather than run, as geminiadapter.Denied reads its answer;
// input-available when nothing answered it). a tells which calls needed
// approval (its Config.NeedsApproval): those that ran carry approval
// {approved: true}. Ids are derived from positions in the history:
// the same on every load (a call's id too: not the one the run's stream
// gave it, which the history does not keep).
func Messages(ctx context.Context, a *agent.Agent, history []*genai.Content) []UIMessage {
	return messages(ctx, a, history, nil)
}

// messages is Messages, with link turning a file's URI into the URL a
// frontend fetches it from (Server.FileURL); nil, or a link it does not
// make, keeps the URI. A function response's files become file parts of
// the assistant message, after the tool part they answer.
func messages(ctx context.Context, a *agent.Agent, history []*genai.Content, link func(uri string) (string, bool)) []UIMessage {
	linked := func(uri string) string {
		if link != nil {
			if u, ok := link(uri); ok {
				return u
			}
		}
		return uri
	}
	steps := a.Steps()
	out := []UIMessage{}
	open := -1                 // the index in out of the assistant message open, -1 when none
	calls := map[string]call{} // its calls unanswered, by id
	var anonymous []call       // its calls without an id, unanswered, in call order
	for i, c := range history {
		if c == nil {
			continue
		}
		if c.Role == genai.RoleModel {
			if open < 0 {
				out = append(out, UIMessage{ID: "h" + strconv.Itoa(i), Role: "assistant", Parts: []UIPart{}})
				open = len(out) - 1
				clear(calls)
				anonymous = anonymous[:0]
			}
			m := &out[open]
			m.Parts = append(m.Parts, UIPart{Type: "step-start"})
			fcs := agent.FunctionCalls(c)
			n := 0
			for j, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					fc := p.FunctionCall
					// The stream's ids are the run's, which the history
					// does not keep: ids of positions, unique in the thread.
					id := "h" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
					_, approval := steps.PlanCall(ctx, n, len(fcs), fc)
					n++
					pc := call{part: len(m.Parts), approval: approval}
					if fc.ID != "" {
						calls[fc.ID] = pc
					} else {
						anonymous = append(anonymous, pc)
					}
					m.Parts = append(m.Parts, UIPart{Type: "tool-" + fc.Name, ToolCallID: id, State: "input-available", Input: argsJSON(fc.Args)})
				case p.Text != "" && p.Thought:
					m.Parts = appendText(m.Parts, "reasoning", p.Text)
				case p.Text != "":
					m.Parts = appendText(m.Parts, "text", p.Text)
				}
			}
			continue
		}
		user := UIMessage{ID: "h" + strconv.Itoa(i), Role: "user", Parts: []UIPart{}}
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				pc, ok := calls[fr.ID]
				if ok {
					delete(calls, fr.ID)
				} else if fr.ID == "" && len(anonymous) > 0 {
					pc, anonymous, ok = anonymous[0], anonymous[1:], true
				}
				if ok && open >= 0 {
					answer(&out[open].Parts[pc.part], pc.approval, fr)
					for _, rp := range fr.Parts {
						if rp != nil && rp.FileData != nil {
							out[open].Parts = append(out[open].Parts, UIPart{Type: "file", MediaType: rp.FileData.MIMEType, URL: linked(rp.FileData.FileURI)})
						}
					}
				}
			case p.Text != "" && !p.Thought:
				user.Parts = appendText(user.Parts, "text", p.Text)
			case p.InlineData != nil:
				user.Parts = append(user.Parts, UIPart{Type: "file", MediaType: p.InlineData.MIMEType,
					URL: "data:" + p.InlineData.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.InlineData.Data)})
			case p.FileData != nil:
				user.Parts = append(user.Parts, UIPart{Type: "file", MediaType: p.FileData.MIMEType, URL: linked(p.FileData.FileURI), Filename: p.FileData.DisplayName})
			}
		}
		if len(user.Parts) > 0 {
			out = append(out, user)
			open = -1
		}
	}
	return out
}

// call is a call of the assistant message open, waiting for its answer:
// the index of its part, and whether it needed approval.
type call struct {
	part     int
	approval bool
}

// appendText appends text to the last part when it is of the same type,
// or as a new part.
func appendText(parts []UIPart, typ, text string) []UIPart {
	if n := len(parts); n > 0 && parts[n-1].Type == typ {
		parts[n-1].Text += text
		return parts
	}
	return append(parts, UIPart{Type: typ, Text: text, State: "done"})
}

// answer sets a tool part's state from the response that answered it;
// approval says the call needed approval.
func answer(p *UIPart, approval bool, fr *genai.FunctionResponse) {
	if reason, ok := geminiadapter.Denied(fr); ok {
		p.State, p.Approval = "output-denied", &Approval{ID: p.ToolCallID, Reason: reason}
		return
	}
	if msg, ok := fr.Response["error"]; ok {
		p.State, p.ErrorText = "output-error", fmt.Sprint(msg)
		return
	}
	var out any = fr.Response
	if res, ok := fr.Response["result"]; ok {
		out = res
	}
	b, err := json.Marshal(out)
	if err != nil {
		b = []byte("null")
	}
	p.State, p.Output = "output-available", b
	if approval {
		p.Approval = &Approval{ID: p.ToolCallID, Approved: true}
	}
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
