package otelagent

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// The shapes below are those of the conventions' JSON schemas for
// gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions
// and gen_ai.tool.definitions (semantic conventions v1.41.0).

// message is a ChatMessage, or an OutputMessage when FinishReason is set.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// part is one message part: text, reasoning, tool_call,
// tool_call_response, blob, uri, or a part of Gemini's own
// (executable_code, code_execution_result) in the generic shape.
type part struct {
	Type      string `json:"type"`
	Content   any    `json:"content,omitempty"` // text, reasoning: the text; blob: the bytes (base64 in JSON)
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Response  any    `json:"response,omitempty"`
	MIMEType  string `json:"mime_type,omitempty"`
	Modality  string `json:"modality,omitempty"`
	URI       string `json:"uri,omitempty"`
	Language  string `json:"language,omitempty"`
	Code      string `json:"code,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Output    string `json:"output,omitempty"`
}

// toolDefinition is a FunctionToolDefinition, or a GenericToolDefinition
// for Gemini's built-in tools (google_search, code_execution…).
type toolDefinition struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// inputMessages returns the JSON of contents as gen_ai.input.messages.
func inputMessages(contents []*genai.Content) string {
	msgs := make([]message, 0, len(contents))
	for _, c := range contents {
		if c == nil {
			continue
		}
		msgs = append(msgs, message{Role: role(c), Parts: parts(c.Parts)})
	}
	return encode(msgs)
}

// outputMessages returns the JSON of a response's candidates as
// gen_ai.output.messages.
func outputMessages(resp *genai.GenerateContentResponse) string {
	msgs := make([]message, 0, len(resp.Candidates))
	for _, c := range resp.Candidates {
		if c == nil {
			continue
		}
		m := message{Role: "assistant", Parts: []part{}}
		calls := false
		if c.Content != nil {
			m.Parts = parts(c.Content.Parts)
			calls = hasCalls(c.Content)
		}
		m.FinishReason = finishReason(c.FinishReason, calls)
		if m.FinishReason == "" {
			m.FinishReason = "stop"
		}
		msgs = append(msgs, m)
	}
	return encode(msgs)
}

// systemInstructions returns the JSON of a system instruction as
// gen_ai.system_instructions, or "" when there is none.
func systemInstructions(si *genai.Content) string {
	if si == nil || len(si.Parts) == 0 {
		return ""
	}
	return encode(parts(si.Parts))
}

// toolDefinitions returns the JSON of a request's tools as
// gen_ai.tool.definitions, or "" when there are none. Functions are
// described by type, name and description (the conventions advise against
// recording the parameters' schemas by default: they can be large); each
// built-in tool by its name.
func toolDefinitions(tools []*genai.Tool) string {
	var defs []toolDefinition
	for _, t := range tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d != nil {
				defs = append(defs, toolDefinition{Type: "function", Name: d.Name, Description: d.Description})
			}
		}
		for _, name := range builtinTools(t) {
			defs = append(defs, toolDefinition{Type: name, Name: name})
		}
	}
	if len(defs) == 0 {
		return ""
	}
	return encode(defs)
}

// builtinTools returns the names of the built-in tools a genai.Tool turns
// on (googleSearch becomes google_search), sorted.
func builtinTools(t *genai.Tool) []string {
	b, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return nil
	}
	var names []string
	for k := range fields {
		if k != "functionDeclarations" {
			names = append(names, snake(k))
		}
	}
	sort.Strings(names)
	return names
}

// snake turns a camelCase JSON name into snake_case.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// role returns the conventions' role of a content: assistant for the
// model, tool for a user content that only answers function calls, user
// otherwise.
func role(c *genai.Content) string {
	switch c.Role {
	case genai.RoleModel:
		return "assistant"
	case genai.RoleUser, "":
		if len(c.Parts) > 0 && !slices.ContainsFunc(c.Parts, func(p *genai.Part) bool { return p == nil || p.FunctionResponse == nil }) {
			return "tool"
		}
		return "user"
	}
	return c.Role
}

func hasCalls(c *genai.Content) bool {
	return slices.ContainsFunc(c.Parts, func(p *genai.Part) bool { return p != nil && p.FunctionCall != nil })
}

// parts converts genai parts. A part that carries nothing but a thought
// signature is left out: the signature is opaque and no content.
func parts(ps []*genai.Part) []part {
	out := make([]part, 0, len(ps))
	for _, p := range ps {
		if p == nil {
			continue
		}
		switch {
		case p.FunctionCall != nil:
			out = append(out, part{Type: "tool_call", ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: orEmpty(p.FunctionCall.Args)})
		case p.FunctionResponse != nil:
			out = append(out, part{Type: "tool_call_response", ID: p.FunctionResponse.ID, Response: orEmpty(p.FunctionResponse.Response)})
		case p.InlineData != nil:
			out = append(out, part{Type: "blob", MIMEType: p.InlineData.MIMEType, Modality: modality(p.InlineData.MIMEType), Content: p.InlineData.Data})
		case p.FileData != nil:
			out = append(out, part{Type: "uri", MIMEType: p.FileData.MIMEType, Modality: modality(p.FileData.MIMEType), URI: p.FileData.FileURI})
		case p.ToolCall != nil:
			out = append(out, part{Type: "server_tool_call", ID: p.ToolCall.ID, Name: agent.ServerToolName(p), Arguments: orEmpty(p.ToolCall.Args)})
		case p.ToolResponse != nil:
			out = append(out, part{Type: "server_tool_call_response", ID: p.ToolResponse.ID, Name: agent.ServerToolName(p), Response: orEmpty(p.ToolResponse.Response)})
		case p.ExecutableCode != nil:
			out = append(out, part{Type: "executable_code", Language: string(p.ExecutableCode.Language), Code: p.ExecutableCode.Code})
		case p.CodeExecutionResult != nil:
			out = append(out, part{Type: "code_execution_result", Outcome: string(p.CodeExecutionResult.Outcome), Output: p.CodeExecutionResult.Output})
		case p.Text != "" && p.Thought:
			out = append(out, part{Type: "reasoning", Content: p.Text})
		case p.Text != "":
			out = append(out, part{Type: "text", Content: p.Text})
		}
	}
	return out
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// modality returns the modality of a MIME type: image, video or audio, or
// the type's top-level name for others (application/pdf: application).
func modality(mime string) string {
	top, _, _ := strings.Cut(mime, "/")
	return top
}

// encode returns v's JSON, without HTML escaping (it is read by people,
// not put in a page), or "" if v does not encode.
func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
