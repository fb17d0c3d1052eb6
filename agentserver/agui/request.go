package agui

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"google.golang.org/genai"
)

// runAgentInput is AG-UI's request.
type runAgentInput struct {
	ThreadID        string                 `json:"threadId"`
	RunID           string                 `json:"runId"`
	ProtocolVersion string                 `json:"protocolVersion"`
	Messages        []message              `json:"messages"`
	Tools           []agentserver.ToolDecl `json:"tools"` // their schemas decoded by agentserver.DecodeToolSchema
	Context         []contextEntry         `json:"context"`
	Resume          []resumeEntry          `json:"resume"`
}

type message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"toolCallId"`
	Error      string          `json:"error"`
}

type contextEntry struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

type resumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

// contentPart is a part of a user message's content.
type contentPart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	} `json:"source"`
	// Metadata may name the file ({"filename": …}): the name of its
	// artifact, on a server that keeps files.
	Metadata struct {
		Filename any `json:"filename"`
	} `json:"metadata"`
}

var roles = map[string]bool{"user": true, "assistant": true, "tool": true, "system": true, "developer": true, "reasoning": true, "activity": true}

func bad(code, format string, args ...any) error {
	return agentserver.BadRequest(0, code, format, args...)
}

// read reads a RunAgentInput into what it contributes to its thread.
func read(s *agentserver.Server, r *http.Request) (*runAgentInput, agentserver.Request, error) {
	var in runAgentInput
	if err := s.DecodeJSON(r, &in); err != nil {
		return nil, agentserver.Request{}, err
	}
	maxMessages, maxParts := s.Limits()
	switch {
	case in.ThreadID == "":
		return nil, agentserver.Request{}, bad("missing_field", "the request has no threadId")
	case in.RunID == "":
		return nil, agentserver.Request{}, bad("missing_field", "the request has no runId")
	case in.Messages == nil:
		return nil, agentserver.Request{}, bad("missing_field", "the request has no messages")
	case len(in.Messages) > maxMessages:
		return nil, agentserver.Request{}, bad("too_many_messages", "%d messages; at most %d are taken", len(in.Messages), maxMessages)
	case len(in.Resume) > maxMessages:
		return nil, agentserver.Request{}, bad("too_many_resume", "%d resume entries; at most %d are taken", len(in.Resume), maxMessages)
	case in.ProtocolVersion != "" && in.ProtocolVersion != "1" && !strings.HasPrefix(in.ProtocolVersion, "1."):
		return nil, agentserver.Request{}, bad("unsupported_version", "protocol version %q is not supported; this server speaks AG-UI 1", in.ProtocolVersion)
	}
	if err := agentserver.CheckThreadID(in.ThreadID); err != nil {
		return nil, agentserver.Request{}, err
	}
	req := agentserver.Request{Thread: in.ThreadID}
	for i, m := range in.Messages {
		if m.ID == "" || !roles[m.Role] {
			return nil, agentserver.Request{}, bad("bad_message", "message %d needs an id and a known role (got %q)", i, m.Role)
		}
		if n := countParts(m.Content); n > maxParts {
			return nil, agentserver.Request{}, bad("too_many_parts", "message %d has %d parts; at most %d are taken", i, n, maxParts)
		}
	}
	req.Tools = in.Tools
	// The messages after the last assistant message are the new ones: a
	// user message, the results of browser tools.
	for i := len(in.Messages) - 1; i >= 0 && in.Messages[i].Role != "assistant"; i-- {
		m := in.Messages[i]
		switch m.Role {
		case "user":
			if req.Message == nil && i == len(in.Messages)-1 {
				c, err := userContent(m, in.Context)
				if err != nil {
					return nil, agentserver.Request{}, err
				}
				req.Message = c
			}
		case "tool":
			req.Results = append(req.Results, toolResult(m))
		}
	}
	for i, e := range in.Resume {
		d, strict, err := resumeDecision(e)
		if err != nil {
			return nil, agentserver.Request{}, bad("bad_resume", "resume entry %d: %v", i, err)
		}
		if strict {
			req.Decisions = append(req.Decisions, d)
		} else {
			req.Results = append(req.Results, d)
		}
	}
	return &in, req, nil
}

// countParts counts the parts of a message's content: 1 for a string.
func countParts(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return 1
	}
	var parts []json.RawMessage
	json.Unmarshal(raw, &parts)
	return len(parts)
}

// userContent returns the new user message, and the context entries as
// text.
func userContent(m message, ctx []contextEntry) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleUser}
	var text string
	if err := json.Unmarshal(m.Content, &text); err == nil {
		if text != "" {
			c.Parts = append(c.Parts, genai.NewPartFromText(text))
		}
	} else {
		var parts []contentPart
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return nil, bad("bad_message", "the new message's content must be a string or an array of parts")
		}
		for i, p := range parts {
			part, err := mediaPart(p)
			if err != nil {
				return nil, bad("bad_part", "part %d of the new message: %v", i, err)
			}
			if part != nil {
				c.Parts = append(c.Parts, part)
			}
		}
	}
	if len(c.Parts) == 0 {
		return nil, bad("no_message", "the new message is empty")
	}
	if len(ctx) > 0 {
		var b strings.Builder
		b.WriteString("Context from the application:")
		for _, e := range ctx {
			b.WriteString("\n- " + e.Description + ": " + e.Value)
		}
		c.Parts = append(c.Parts, genai.NewPartFromText(b.String()))
	}
	return c, nil
}

// mediaPart converts a content part: text, or media sent inline (source
// type "data", base64) or as a Gemini file (source type "file"), which
// Server.Submit refuses unless the server's Config.AllowFileURI allows
// it. A URL is refused: the server fetches nothing.
func mediaPart(p contentPart) (*genai.Part, error) {
	switch p.Type {
	case "text":
		if p.Text == "" {
			return nil, nil
		}
		return genai.NewPartFromText(p.Text), nil
	case "image", "audio", "video", "document":
	default:
		return nil, errorString("unknown part type " + p.Type)
	}
	src := p.Source
	switch {
	case src == nil:
		return nil, errorString("a " + p.Type + " part needs a source")
	case src.Type == "data":
		b, err := base64.StdEncoding.DecodeString(src.Value)
		if err != nil {
			return nil, errorString("the data is not valid base64")
		}
		if src.MimeType == "" {
			return nil, errorString("the data has no mimeType")
		}
		part := genai.NewPartFromBytes(b, src.MimeType)
		part.InlineData.DisplayName, _ = p.Metadata.Filename.(string)
		return part, nil
	case src.Type == "file":
		if src.MimeType == "" {
			return nil, errorString("a file source needs a mimeType for Gemini")
		}
		return genai.NewPartFromURI(src.Value, src.MimeType), nil
	case src.Type == "url":
		return nil, errorString("url sources are not taken: the server fetches no URL; send the data")
	}
	return nil, errorString("unknown source type " + src.Type)
}

type errorString string

func (e errorString) Error() string { return string(e) }

// toolResult reads a tool message as a browser tool's result: its content,
// JSON when it parses as JSON, else the string; or its error.
func toolResult(m message) agentserver.Decision {
	d := agentserver.Decision{CallID: m.ToolCallID}
	if m.Error != "" {
		d.Error = m.Error
		return d
	}
	var text string
	if err := json.Unmarshal(m.Content, &text); err == nil {
		if json.Valid([]byte(text)) {
			d.Output = json.RawMessage(text)
		} else {
			d.Output, _ = json.Marshal(text)
		}
		return d
	}
	if len(bytes.TrimSpace(m.Content)) == 0 {
		d.Output = json.RawMessage(`""`)
		return d
	}
	d.Output = m.Content // parts: given to the model as they came
	return d
}

// resumeDecision reads a resume entry. A resolved entry is strict: it
// must decide a pending call; a cancelled one denies the call if it still
// waits, and is ignored if not (the client cancels interrupts that
// expired).
func resumeDecision(e resumeEntry) (agentserver.Decision, bool, error) {
	d := agentserver.Decision{CallID: e.InterruptID}
	if e.InterruptID == "" {
		return d, false, errorString("no interruptId")
	}
	switch e.Status {
	case "cancelled":
		d.Reason = "the user cancelled this call"
		return d, false, nil
	case "resolved":
	default:
		return d, false, errorString(`status must be "resolved" or "cancelled"`)
	}
	var p struct {
		Approved   *bool           `json:"approved"`
		Reason     string          `json:"reason"`
		EditedArgs json.RawMessage `json:"editedArgs"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil || p.Approved == nil {
		return d, false, errorString(`a resolved interrupt needs the payload {"approved": true|false}`)
	}
	if len(p.EditedArgs) > 0 && string(p.EditedArgs) != "null" {
		return d, false, errorString("editing a call's arguments is not supported: approve or deny it")
	}
	d.Approved, d.Reason = *p.Approved, p.Reason
	return d, true, nil
}
