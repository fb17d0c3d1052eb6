package a2aagent

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"google.golang.org/genai"
)

func invalidParams(format string, args ...any) *rpcError {
	return newRPCError(codeInvalidParams, format, args...)
}

// checkMessage checks what every message must be: from the user, with
// parts, within the server's limit of parts.
func checkMessage(m *a2a.Message, maxParts int) error {
	switch {
	case m == nil:
		return invalidParams("params.message is missing")
	case m.Role != a2a.MessageRoleUser:
		return invalidParams(`the message's role must be "user", not %q`, m.Role)
	case len(m.Parts) == 0:
		return invalidParams("the message has no parts")
	case len(m.Parts) > maxParts:
		return invalidParams("the message has %d parts; at most %d are taken", len(m.Parts), maxParts)
	}
	if m.ContextID != "" {
		if err := agentserver.CheckThreadID(m.ContextID); err != nil {
			return invalidParams("contextId: %v", err)
		}
	}
	return nil
}

// content reads a message that starts a task: its text, its files
// (inline bytes, or a URI the model fetches, which Server.Submit refuses
// unless the server's Config.AllowFileURI allows it: this server fetches
// nothing) and its data parts (given to the model as their JSON).
func content(m *a2a.Message) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleUser}
	for i, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			if p.Text != "" {
				c.Parts = append(c.Parts, genai.NewPartFromText(p.Text))
			}
		case a2a.FilePart:
			part, err := filePart(p)
			if err != nil {
				return nil, invalidParams("part %d: %v", i, err)
			}
			c.Parts = append(c.Parts, part)
		case a2a.DataPart:
			if t, _ := p.Metadata[metaType].(string); t == typeFunctionCall || t == typeFunctionResponse {
				return nil, invalidParams("part %d: a %s answers the call of a task that waits for input: send it with the task's taskId", i, t)
			}
			b, err := json.Marshal(p.Data)
			if err != nil {
				return nil, invalidParams("part %d: the data is not JSON", i)
			}
			c.Parts = append(c.Parts, genai.NewPartFromText(string(b)))
		}
	}
	if len(c.Parts) == 0 {
		return nil, invalidParams("the message has no content: its text parts are empty")
	}
	return c, nil
}

func filePart(p a2a.FilePart) (*genai.Part, error) {
	switch f := p.File.(type) {
	case a2a.FileBytes:
		if f.MimeType == "" {
			return nil, errorString("a file needs its mimeType")
		}
		b, err := base64.StdEncoding.DecodeString(f.Bytes)
		if err != nil {
			return nil, errorString("the file's bytes are not valid base64")
		}
		part := genai.NewPartFromBytes(b, f.MimeType)
		part.InlineData.DisplayName = f.Name // the artifact's name, on a server that keeps files
		return part, nil
	case a2a.FileURI:
		if f.MimeType == "" {
			return nil, errorString("a file needs its mimeType")
		}
		return genai.NewPartFromURI(f.URI, f.MimeType), nil
	}
	return nil, errorString("a file needs bytes or a uri")
}

type errorString string

func (e errorString) Error() string { return string(e) }

// decisions reads the message that answers a task waiting for input: a
// function_response for each call it decides, which names the call by its
// id. For a call that needs approval the response is {"confirmed": bool}
// (or {"approved": bool}, or ADK web's {"response": "<that JSON>"}), with
// an optional reason; the message's text, if any, is the reason of a
// denial that gives none. For a browser tool's call the response is the
// tool's result, or {"error": message}. A decision for a call that does
// not wait is passed on, for the server to say why it is refused.
func decisions(m *a2a.Message, pending []agentserver.Pending) ([]agentserver.Decision, error) {
	var text []string
	var out []agentserver.Decision
	for i, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			if strings.TrimSpace(p.Text) != "" {
				text = append(text, p.Text)
			}
		case a2a.DataPart:
			if t, _ := p.Metadata[metaType].(string); t != typeFunctionResponse {
				continue
			}
			id, _ := p.Data["id"].(string)
			if id == "" {
				return nil, invalidParams("part %d: the function_response has no id: it must name the call it answers", i)
			}
			response, _ := p.Data["response"].(map[string]any)
			kind := agentserver.WaitApproval
			for _, pc := range pending {
				if pc.Call.ID == id {
					kind = pc.Kind
				}
			}
			d := agentserver.Decision{CallID: id}
			if kind == agentserver.WaitBrowser {
				if msg, ok := response["error"].(string); ok && len(response) == 1 {
					d.Error = msg
				} else {
					b, err := json.Marshal(response)
					if err != nil || response == nil {
						return nil, invalidParams("part %d: the function_response for call %s has no response", i, id)
					}
					d.Output = b
				}
				out = append(out, d)
				continue
			}
			approved, reason, ok := confirmation(response)
			if !ok {
				return nil, invalidParams(`part %d: the function_response for call %s needs the response {"confirmed": true} or {"confirmed": false}`, i, id)
			}
			d.Approved, d.Reason = approved, reason
			out = append(out, d)
		}
	}
	for i := range out {
		if !out[i].Approved && out[i].Reason == "" && len(text) > 0 && out[i].Output == nil && out[i].Error == "" {
			out[i].Reason = strings.Join(text, "\n")
		}
	}
	return out, nil
}

// confirmation reads the response that decides a call needing approval.
func confirmation(response map[string]any) (approved bool, reason string, ok bool) {
	if s, isString := response["response"].(string); isString && len(response) == 1 {
		// ADK web sends the confirmation as a JSON string.
		var inner map[string]any
		if json.Unmarshal([]byte(s), &inner) != nil {
			return false, "", false
		}
		response = inner
	}
	reason, _ = response["reason"].(string)
	if v, isBool := response["confirmed"].(bool); isBool {
		return v, reason, true
	}
	if v, isBool := response["approved"].(bool); isBool {
		return v, reason, true
	}
	return false, "", false
}
