package aisdk

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"google.golang.org/genai"
)

// chatRequest is the body DefaultChatTransport sends, with the browser
// tools an application adds to it.
type chatRequest struct {
	ID        string      `json:"id"`
	Messages  []uiMessage `json:"messages"`
	Trigger   string      `json:"trigger"`
	MessageID string      `json:"messageId"`
	Tools     []toolDecl  `json:"tools"`
}

type uiMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []uiPart `json:"parts"`
}

// uiPart holds the fields of the parts the server reads; the others are
// ignored.
type uiPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	MediaType  string          `json:"mediaType"`
	URL        string          `json:"url"`
	Filename   string          `json:"filename"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Approval   *struct {
		ID       string `json:"id"`
		Approved *bool  `json:"approved"`
		Reason   string `json:"reason"`
	} `json:"approval"`
}

// toolDecl is a browser tool: its schema, inputSchema, is decoded by
// agentserver.DecodeToolSchema, as the body is (while its bytes count
// among those in flight).
type toolDecl struct{ agentserver.ToolDecl }

func (d *toolDecl) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p, err := agentserver.DecodeToolSchema(raw.Name, raw.InputSchema)
	if err != nil {
		return err
	}
	d.ToolDecl = agentserver.ToolDecl{Name: raw.Name, Description: raw.Description, Parameters: p}
	return nil
}

func bad(code, format string, args ...any) error {
	return agentserver.BadRequest(0, code, format, args...)
}

// read reads a chat request into what it contributes to its thread.
func read(s *agentserver.Server, r *http.Request) (agentserver.Request, error) {
	var body chatRequest
	if err := s.DecodeJSON(r, &body); err != nil {
		return agentserver.Request{}, err
	}
	maxMessages, maxParts := s.Limits()
	switch {
	case body.ID == "":
		return agentserver.Request{}, bad("missing_field", "the request has no id (the chat's id)")
	case body.Trigger == "regenerate-message":
		return agentserver.Request{}, bad("unsupported_trigger",
			"regenerate-message is not supported: the thread's history is kept on the server and only grows; send the question again")
	case body.Trigger != "" && body.Trigger != "submit-message":
		return agentserver.Request{}, bad("bad_trigger", "unknown trigger %q", body.Trigger)
	case len(body.Messages) == 0:
		return agentserver.Request{}, bad("missing_field", "the request has no messages")
	case len(body.Messages) > maxMessages:
		return agentserver.Request{}, bad("too_many_messages", "%d messages; at most %d are taken", len(body.Messages), maxMessages)
	}
	if err := agentserver.CheckThreadID(body.ID); err != nil {
		return agentserver.Request{}, err
	}
	for i, m := range body.Messages {
		switch {
		case m.ID == "":
			return agentserver.Request{}, bad("bad_message", "message %d has no id", i)
		case m.Role != "user" && m.Role != "assistant" && m.Role != "system":
			return agentserver.Request{}, bad("bad_message", "message %d has role %q; want user, assistant or system", i, m.Role)
		case m.Parts == nil:
			return agentserver.Request{}, bad("bad_message", "message %d has no parts", i)
		case len(m.Parts) > maxParts:
			return agentserver.Request{}, bad("too_many_parts", "message %d has %d parts; at most %d are taken", i, len(m.Parts), maxParts)
		}
		for j, p := range m.Parts {
			if p.Type == "" {
				return agentserver.Request{}, bad("bad_part", "part %d of message %d has no type", j, i)
			}
		}
	}
	req := agentserver.Request{Thread: body.ID}
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.ToolDecl)
	}
	last := body.Messages[len(body.Messages)-1]
	switch last.Role {
	case "user":
		msg, err := userContent(last)
		if err != nil {
			return agentserver.Request{}, err
		}
		req.Message = msg
	case "assistant":
		if err := decisions(last, &req); err != nil {
			return agentserver.Request{}, err
		}
	}
	return req, nil
}

// userContent returns the new user message: its text and file parts.
// Other parts (data-*, step-start, the application's own) are not sent to
// the model.
func userContent(m uiMessage) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleUser}
	for i, p := range m.Parts {
		switch {
		case p.Type == "text":
			if p.Text != "" {
				c.Parts = append(c.Parts, genai.NewPartFromText(p.Text))
			}
		case p.Type == "file":
			part, err := filePart(p)
			if err != nil {
				return nil, bad("bad_part", "part %d of the new message: %v", i, err)
			}
			c.Parts = append(c.Parts, part)
		case strings.HasPrefix(p.Type, "data-"), p.Type == "step-start", p.Type == "source-url", p.Type == "source-document":
		default:
			return nil, bad("bad_part", "part %d of the new message has type %q; a user message takes text and file parts", i, p.Type)
		}
	}
	if len(c.Parts) == 0 {
		return nil, bad("no_message", "the new message has no text and no file")
	}
	return c, nil
}

// filePart reads a file part: a data: URL (base64) is the file's data,
// sent inline; any other URL names a file the model reads (a gs:// object,
// a Files API URI), which Server.Submit refuses unless the server's
// Config.AllowFileURI allows it. The server fetches no URL.
func filePart(p uiPart) (*genai.Part, error) {
	rest, ok := strings.CutPrefix(p.URL, "data:")
	if !ok {
		if p.URL == "" || p.MediaType == "" {
			return nil, errorString("a file needs its url and its mediaType")
		}
		return genai.NewPartFromURI(p.URL, p.MediaType), nil
	}
	meta, data, ok := strings.Cut(rest, ",")
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 {
		return nil, errorString("a file's data: URL must be base64")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, errorString("a file's data: URL is not valid base64")
	}
	if p.MediaType != "" {
		mediaType = p.MediaType
	}
	if mediaType == "" {
		return nil, errorString("a file has no media type")
	}
	part := genai.NewPartFromBytes(b, mediaType)
	part.InlineData.DisplayName = p.Filename // the artifact's name, on a server that keeps files
	return part, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// decisions reads the decisions an assistant message carries: the
// approvals a person responded to, and the browser tools' outputs.
func decisions(m uiMessage, req *agentserver.Request) error {
	for i, p := range m.Parts {
		if p.Type != "dynamic-tool" && !strings.HasPrefix(p.Type, "tool-") {
			continue
		}
		switch p.State {
		case "approval-responded":
			a := p.Approval
			if a == nil || a.Approved == nil || a.ID == "" {
				return bad("bad_part", "part %d: an approval-responded tool part needs approval.id and approval.approved", i)
			}
			if a.ID != p.ToolCallID {
				return newUnknownApproval(a.ID)
			}
			req.Decisions = append(req.Decisions, agentserver.Decision{CallID: a.ID, Approved: *a.Approved, Reason: a.Reason})
		case "output-available":
			out := p.Output
			if len(out) == 0 {
				out = json.RawMessage("null")
			}
			req.Results = append(req.Results, agentserver.Decision{CallID: p.ToolCallID, Output: out})
		case "output-error":
			req.Results = append(req.Results, agentserver.Decision{CallID: p.ToolCallID, Error: cmpOr(p.ErrorText, "the tool failed")})
		}
	}
	return nil
}

func newUnknownApproval(id string) error {
	return &agentserver.Error{Status: http.StatusConflict, Code: "unknown_call", Message: "no call waits for approval " + id, Err: agentserver.ErrUnknownCall}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
