package interactionswire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// toolTypes maps the prefix of a built-in tool's step types
// ("google_search" in google_search_call) to the tool type of the
// toolCall and toolResponse parts generateContent uses for it
// (genai types.go:912-929; the tools generateContent lacks get a name of
// their own).
var toolTypes = map[string]genai.ToolType{
	"google_search":   genai.ToolTypeGoogleSearchWeb,
	"url_context":     genai.ToolTypeURLContext,
	"google_maps":     genai.ToolTypeGoogleMaps,
	"file_search":     genai.ToolTypeFileSearch,
	"processing":      genai.ToolTypeMediaProcessing,
	"mcp_server_tool": "MCP_SERVER_TOOL",
	"retrieval":       "RETRIEVAL",
}

// stepPrefix returns the step type prefix of a tool type.
func stepPrefix(t genai.ToolType) (string, bool) {
	if t == genai.ToolTypeGoogleSearchImage {
		return "google_search", true
	}
	for prefix, tt := range toolTypes {
		if tt == t {
			return prefix, true
		}
	}
	return "", false
}

// builtin reports whether p is a built-in tool's call or result.
func builtin(p *genai.Part) bool {
	_, raw := p.PartMetadata[StepKey].(string)
	return raw || p.ToolCall != nil || p.ToolResponse != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil
}

// Builtin reports whether p is a built-in tool's call or result, a part
// that the server made and that goes back unchanged.
func Builtin(p *genai.Part) bool { return p != nil && builtin(p) }

// builtinStep returns the step of a built-in tool's part: the step it was
// made from, as it came, or one built from the part's toolCall,
// toolResponse, executableCode or codeExecutionResult.
func builtinStep(p *genai.Part) (Step, error) {
	if raw, ok := p.PartMetadata[StepKey].(string); ok {
		var s Step
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return Step{}, fmt.Errorf("PartMetadata[%q] is not a step: %w", StepKey, err)
		}
		// Exactly as it came, modeled type or not.
		b, err := Canonical([]byte(raw))
		if err != nil {
			return Step{}, fmt.Errorf("PartMetadata[%q] is not a step: %w", StepKey, err)
		}
		s.Raw = b
		return s, nil
	}
	var s Step
	if len(p.ThoughtSignature) > 0 {
		sig := string(p.ThoughtSignature)
		s.Signature = &sig
	}
	var err error
	switch {
	case p.ExecutableCode != nil:
		e := p.ExecutableCode
		s.Type, s.ID = TypeCodeExecutionCall, e.ID
		s.Arguments, err = json.Marshal(map[string]string{"code": e.Code, "language": strings.ToLower(string(e.Language))})
	case p.CodeExecutionResult != nil:
		r := p.CodeExecutionResult
		s.Type, s.CallID = TypeCodeExecutionResult, r.ID
		s.IsError = r.Outcome != "" && r.Outcome != genai.OutcomeOK
		s.Result, err = json.Marshal(r.Output)
	case p.ToolCall != nil:
		prefix, ok := stepPrefix(p.ToolCall.ToolType)
		if !ok {
			return Step{}, fmt.Errorf("a toolCall of type %q has no Interactions step", p.ToolCall.ToolType)
		}
		s.Type, s.ID = prefix+"_call", p.ToolCall.ID
		s.Arguments, err = json.Marshal(orEmpty(p.ToolCall.Args))
	case p.ToolResponse != nil:
		prefix, ok := stepPrefix(p.ToolResponse.ToolType)
		if !ok {
			return Step{}, fmt.Errorf("a toolResponse of type %q has no Interactions step", p.ToolResponse.ToolType)
		}
		s.Type, s.CallID = prefix+"_result", p.ToolResponse.ID
		// The API's results are a list ({"result": [{"search_suggestions":
		// …}]}), generateContent's response one object of them.
		var result any = []any{orEmpty(p.ToolResponse.Response)}
		if r, ok := p.ToolResponse.Response["result"]; ok && len(p.ToolResponse.Response) == 1 {
			result = r
		}
		s.Result, err = json.Marshal(result)
	}
	if err != nil {
		return Step{}, err
	}
	s.Raw, err = Canonical(appendStep(nil, &s))
	return s, err
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// builtinPart returns the part of a built-in tool's step, or of a step of
// a type this package does not know: the part generateContent uses for it,
// where it has one, holding the step as it came in PartMetadata.
func builtinPart(s Step) (*genai.Part, error) {
	raw := s.Raw
	if len(raw) == 0 {
		var err error
		if raw, err = Canonical(appendStep(nil, &s)); err != nil {
			return nil, err
		}
	}
	p := &genai.Part{PartMetadata: map[string]any{StepKey: string(raw)}}
	if s.Signature != nil && *s.Signature != "" {
		p.ThoughtSignature = []byte(*s.Signature)
	}
	switch {
	case s.Type == TypeCodeExecutionCall:
		var args struct{ Code, Language string }
		if len(s.Arguments) > 0 {
			if err := json.Unmarshal(s.Arguments, &args); err != nil {
				return nil, fmt.Errorf("code execution call: arguments: %w", err)
			}
		}
		p.ExecutableCode = &genai.ExecutableCode{ID: s.ID, Code: args.Code, Language: genai.Language(strings.ToUpper(args.Language))}
	case s.Type == TypeCodeExecutionResult:
		out := string(s.Result)
		var text string
		if json.Unmarshal(s.Result, &text) == nil {
			out = text
		}
		outcome := genai.OutcomeOK
		if s.IsError {
			outcome = genai.OutcomeFailed
		}
		p.CodeExecutionResult = &genai.CodeExecutionResult{ID: s.CallID, Output: out, Outcome: outcome}
	case strings.HasSuffix(s.Type, "_call"):
		if tt, ok := toolTypes[strings.TrimSuffix(s.Type, "_call")]; ok {
			p.ToolCall = &genai.ToolCall{ID: s.ID, ToolType: tt, Args: object(s.Arguments)}
		}
	case strings.HasSuffix(s.Type, "_result"):
		if tt, ok := toolTypes[strings.TrimSuffix(s.Type, "_result")]; ok {
			var result any
			if len(s.Result) > 0 {
				_ = json.Unmarshal(s.Result, &result)
			}
			response := map[string]any{"result": result}
			if list, ok := result.([]any); ok && len(list) == 1 {
				if one, ok := list[0].(map[string]any); ok {
					response = one // one result: generateContent's response
				}
			}
			p.ToolResponse = &genai.ToolResponse{ID: s.CallID, ToolType: tt, Response: response}
		}
	}
	return p, nil
}

// object decodes a JSON object, nil for anything else.
func object(b json.RawMessage) map[string]any {
	var m map[string]any
	if len(bytes.TrimSpace(b)) > 0 && json.Unmarshal(b, &m) == nil {
		return m
	}
	return nil
}
