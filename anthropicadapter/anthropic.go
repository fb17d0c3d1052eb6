package anthropicadapter

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/toolnexus/toolnexus-go/internal/toolwire"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// ErrUnknownTool is wrapped by the Result.Err of a call that names a tool
// the set does not have.
var ErrUnknownTool = toolwire.ErrUnknownTool

// ErrUnsupportedSchema is wrapped by the error for a tool whose input
// schema the Messages API refuses: one with oneOf, allOf or anyOf at its
// top level ("input_schema does not support oneOf, allOf, or anyOf at the
// top level").
var ErrUnsupportedSchema = errors.New("input schema not supported by Anthropic")

// Tools returns the value of MessageNewParams.Tools for tools: one tool
// definition per tool, in the order given. No tools give an empty (nil)
// slice, which leaves "tools" out of the request.
//
// A nil tool, an invalid tool, two tools with the same name, a name
// Anthropic refuses and a schema it refuses are an error.
func Tools(tools ...*toolset.Tool) ([]anthropic.ToolUnionParam, error) {
	var out []anthropic.ToolUnionParam
	err := toolwire.EachTool("anthropicadapter", tools, func(t *toolset.Tool) error {
		tp, err := Tool(t)
		if err == nil {
			out = append(out, anthropic.ToolUnionParam{OfTool: &tp})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Tool returns the tool definition for one tool: Name and Description as
// they are, and InputSchema as input_schema, unchanged: its properties and
// required list in the SDK's fields, every other keyword beside them,
// property order kept. A tool without parameters gets
// {"type": "object", "properties": {}}. Strict is left unset (see the
// package doc).
func Tool(t *toolset.Tool) (anthropic.ToolParam, error) {
	if t == nil {
		return anthropic.ToolParam{}, fmt.Errorf("anthropicadapter: tool is nil")
	}
	if err := t.Check(); err != nil {
		return anthropic.ToolParam{}, err
	}
	if err := toolwire.CheckName("Anthropic", t.Name); err != nil {
		return anthropic.ToolParam{}, fmt.Errorf("anthropicadapter: %w", err)
	}
	s := t.Schema()
	for _, c := range []struct {
		kw  string
		set bool
	}{{"oneOf", s.OneOf != nil}, {"allOf", s.AllOf != nil}, {"anyOf", s.AnyOf != nil}} {
		if c.set {
			return anthropic.ToolParam{}, fmt.Errorf("anthropicadapter: tool %s: %w: %q at the top level of input_schema",
				t.Name, ErrUnsupportedSchema, c.kw)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return anthropic.ToolParam{}, fmt.Errorf("anthropicadapter: tool %s: encoding schema: %w", t.Name, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return anthropic.ToolParam{}, fmt.Errorf("anthropicadapter: tool %s: encoding schema: %w", t.Name, err)
	}
	in := anthropic.ToolInputSchemaParam{Properties: json.RawMessage("{}"), Required: s.Required}
	if p, ok := raw["properties"]; ok {
		in.Properties = p
	}
	delete(raw, "properties")
	delete(raw, "required")
	delete(raw, "type") // the SDK writes "object", which is what toolset requires
	if len(raw) > 0 {
		in.ExtraFields = make(map[string]any, len(raw))
		for k, v := range raw {
			in.ExtraFields[k] = v
		}
	}
	tp := anthropic.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return tp, nil
}

// Execute runs a tool_use block's call: it resolves the block's name in
// set and runs the tool on its input with [toolset.Tool.Execute], which
// validates it. An unknown name (its Err wraps [ErrUnknownTool]) and input
// that is not a JSON object come back as error results, never as a panic
// or a Go error: send them back with [ToolResult] like any other result.
func Execute(ctx context.Context, set *toolset.Set, block anthropic.ToolUseBlock) toolset.Result {
	return toolwire.Execute(ctx, set, block.Name, block.Input, nil)
}

// ToolResult returns the tool_result block that answers block with r, to
// send in the next user message: its tool_use_id is the block's ID, its
// content the output as text (a string as it is, anything else as JSON),
// and is_error is true when r.IsError, with the message as the text.
// Images (JPEG, PNG, GIF, WebP) and PDF documents among r.Media follow the
// text as image and document blocks; other media are described in the
// text.
func ToolResult(block anthropic.ToolUseBlock, r toolset.Result) anthropic.ContentBlockParamUnion {
	r = toolwire.Describe(r, claudeMedia, "Claude takes only images and PDF documents from tools")
	res := &anthropic.ToolResultBlockParam{ToolUseID: block.ID}
	if r.IsError {
		res.IsError = param.NewOpt(true)
	}
	if text := toolwire.Text(r.Output); text != "" {
		res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: text}})
	}
	for _, m := range r.Media {
		data := base64.StdEncoding.EncodeToString(m.Data)
		if m.MIMEType == "application/pdf" {
			res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfDocument: &anthropic.DocumentBlockParam{
				Source: anthropic.DocumentBlockParamSourceUnion{OfBase64: &anthropic.Base64PDFSourceParam{Data: data}}}})
			continue
		}
		res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
			Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
				Data: data, MediaType: anthropic.Base64ImageSourceMediaType(m.MIMEType)}}}})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: res}
}

// claudeMedia reports whether Claude takes m in a tool result.
func claudeMedia(m toolset.Media) bool {
	switch m.MIMEType {
	case "image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf":
		return true
	}
	return false
}
