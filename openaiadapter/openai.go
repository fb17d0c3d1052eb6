package openaiadapter

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/toolnexus/toolnexus-go/internal/toolwire"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// ErrUnknownTool is wrapped by the Result.Err of a call that names a tool
// the set does not have.
var ErrUnknownTool = toolwire.ErrUnknownTool

// Options changes how tools are declared and calls are run. The zero
// Options is what the package-level functions use.
type Options struct {
	// Strict declares each tool in OpenAI's strict mode (Structured
	// Outputs), so that the model's arguments always match the schema,
	// when [StrictParameters] can rewrite the tool's schema for it; a tool
	// it cannot is declared as it is, with strict false. Run the calls
	// with the same Options: in strict mode the model writes null for an
	// optional property it leaves out, which ExecuteChat and
	// ExecuteResponses turn back into an absent property.
	Strict bool
}

// ChatTools returns the value of ChatCompletionNewParams.Tools for tools:
// one function tool per tool, in the order given. No tools give an empty
// (nil) slice, which leaves "tools" out of the request (OpenAI refuses an
// empty one).
//
// A nil tool, an invalid tool, two tools with the same name and a name
// OpenAI refuses are an error.
func ChatTools(tools ...*toolset.Tool) ([]openai.ChatCompletionToolUnionParam, error) {
	return Options{}.ChatTools(tools...)
}

// ResponsesTools returns the value of responses.ResponseNewParams.Tools
// for tools: one function tool per tool, in the order given, each with
// "strict" set, since the Responses API makes a tool strict when it is not
// told. No tools give an empty (nil) slice.
func ResponsesTools(tools ...*toolset.Tool) ([]responses.ToolUnionParam, error) {
	return Options{}.ResponsesTools(tools...)
}

// Function returns the Chat Completions function definition for one tool.
// See [Options.Function].
func Function(t *toolset.Tool) (shared.FunctionDefinitionParam, error) {
	return Options{}.Function(t)
}

// ChatTools is [ChatTools] with these options.
func (o Options) ChatTools(tools ...*toolset.Tool) ([]openai.ChatCompletionToolUnionParam, error) {
	var out []openai.ChatCompletionToolUnionParam
	err := toolwire.EachTool("openaiadapter", tools, func(t *toolset.Tool) error {
		f, err := o.Function(t)
		if err == nil {
			out = append(out, openai.ChatCompletionFunctionTool(f))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ResponsesTools is [ResponsesTools] with these options.
func (o Options) ResponsesTools(tools ...*toolset.Tool) ([]responses.ToolUnionParam, error) {
	var out []responses.ToolUnionParam
	err := toolwire.EachTool("openaiadapter", tools, func(t *toolset.Tool) error {
		f, err := o.Function(t)
		if err == nil {
			out = append(out, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
				Name: f.Name, Description: f.Description, Parameters: f.Parameters,
				Strict: param.NewOpt(f.Strict.Value), // always said: the API's default is strict
			}})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Function returns the function definition for one tool: Name and
// Description as they are, and InputSchema as Parameters (see
// [Parameters]). With Strict, the parameters are [StrictParameters] and
// Strict is true when the schema can be strict; otherwise Strict is left
// unset, which Chat Completions takes as false.
func (o Options) Function(t *toolset.Tool) (shared.FunctionDefinitionParam, error) {
	if o.Strict {
		if p, err := StrictParameters(t); err == nil {
			return definition(t, p, true), nil
		} else if !errors.Is(err, ErrNotStrict) {
			return shared.FunctionDefinitionParam{}, err
		}
	}
	p, err := Parameters(t)
	if err != nil {
		return shared.FunctionDefinitionParam{}, err
	}
	return definition(t, p, false), nil
}

func definition(t *toolset.Tool, p map[string]any, strict bool) shared.FunctionDefinitionParam {
	d := shared.FunctionDefinitionParam{Name: t.Name, Parameters: p}
	if t.Description != "" {
		d.Description = param.NewOpt(t.Description)
	}
	if strict {
		d.Strict = param.NewOpt(true)
	}
	return d
}

// check reports whether OpenAI can be given t.
func check(t *toolset.Tool) error {
	if t == nil {
		return fmt.Errorf("openaiadapter: tool is nil")
	}
	if err := t.Check(); err != nil {
		return err
	}
	if err := toolwire.CheckName("OpenAI", t.Name); err != nil {
		return fmt.Errorf("openaiadapter: %w", err)
	}
	return nil
}

// ExecuteChat runs a Chat Completions tool call: it resolves the call's
// function name in set, decodes its arguments (a JSON object in a string)
// and runs the tool with [toolset.Tool.Execute], which validates them. An
// unknown name (its Err wraps [ErrUnknownTool]), arguments that are not a
// JSON object and a call that is not a function call come back as error
// results, never as a panic or a Go error: send them back to the model
// with [ToolMessage] like any other result.
func ExecuteChat(ctx context.Context, set *toolset.Set, call openai.ChatCompletionMessageToolCallUnion) toolset.Result {
	return Options{}.ExecuteChat(ctx, set, call)
}

// ExecuteResponses runs a Responses API function call, as [ExecuteChat]
// runs a Chat Completions one.
func ExecuteResponses(ctx context.Context, set *toolset.Set, call responses.ResponseFunctionToolCall) toolset.Result {
	return Options{}.ExecuteResponses(ctx, set, call)
}

// ExecuteChat is [ExecuteChat] with these options.
func (o Options) ExecuteChat(ctx context.Context, set *toolset.Set, call openai.ChatCompletionMessageToolCallUnion) toolset.Result {
	if call.Type != "" && call.Type != "function" {
		return toolset.Result{IsError: true, Err: fmt.Errorf("%w: a %s tool call", ErrUnknownTool, call.Type),
			Output: fmt.Sprintf("%s tool calls are not supported; call a function", call.Type)}
	}
	return o.execute(ctx, set, call.Function.Name, call.Function.Arguments)
}

// ExecuteResponses is [ExecuteResponses] with these options.
func (o Options) ExecuteResponses(ctx context.Context, set *toolset.Set, call responses.ResponseFunctionToolCall) toolset.Result {
	return o.execute(ctx, set, call.Name, call.Arguments)
}

func (o Options) execute(ctx context.Context, set *toolset.Set, name, arguments string) toolset.Result {
	var prepare func(*toolset.Tool, map[string]any)
	if o.Strict {
		prepare = func(t *toolset.Tool, args map[string]any) {
			s := t.Schema()
			dropNulls(s, s, args, 0)
		}
	}
	return toolwire.Execute(ctx, set, name, []byte(arguments), prepare)
}

// ToolMessage returns the message that answers a Chat Completions tool
// call with r: a "tool" role message carrying the call's ID, whose content
// is the output (a string as it is, anything else as JSON), or
// {"error": message} when r.IsError, since the message has no error flag
// ({"error": message, "denied": true} for a call refused rather than run,
// whose r.Err wraps toolset.ErrDenied).
// A tool message holds only text: media in r are described in it instead
// (the model learns what it cannot see).
func ToolMessage(call openai.ChatCompletionMessageToolCallUnion, r toolset.Result) openai.ChatCompletionMessageParamUnion {
	r = toolwire.Describe(r, nil, "Chat Completions takes no media from tools")
	return openai.ToolMessage(resultText(r), call.ID)
}

// FunctionCallOutput returns the input item that answers a Responses API
// function call with r: a function_call_output carrying the call's
// CallID, whose output is the text ToolMessage would send. Images (PNG,
// JPEG, WebP, GIF) and PDF files among r.Media go along with it, as
// input_image and input_file items of the output; other media are
// described in the text.
func FunctionCallOutput(call responses.ResponseFunctionToolCall, r toolset.Result) responses.ResponseInputItemUnionParam {
	r = toolwire.Describe(r, responsesMedia, "the Responses API takes only images and PDF files from tools")
	var item responses.ResponseInputItemUnionParam
	if len(r.Media) == 0 {
		item = responses.ResponseInputItemParamOfFunctionCallOutput(resultText(r))
	} else {
		var parts responses.ResponseFunctionCallOutputItemListParam
		if text := resultText(r); text != "" {
			parts = append(parts, responses.ResponseFunctionCallOutputItemParamOfInputText(text))
		}
		for i, m := range r.Media {
			data := "data:" + m.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(m.Data)
			if strings.HasPrefix(m.MIMEType, "image/") {
				parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{
					OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: param.NewOpt(data)}})
			} else {
				parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{
					OfInputFile: &responses.ResponseInputFileContentParam{FileData: param.NewOpt(data),
						Filename: param.NewOpt(fmt.Sprintf("%s-%d.pdf", call.Name, i+1))}})
			}
		}
		item = responses.ResponseInputItemParamOfFunctionCallOutput(parts)
	}
	item.OfFunctionCallOutput.CallID = param.NewOpt(call.CallID)
	return item
}

// responsesMedia reports whether the Responses API takes m in a function
// call's output.
func responsesMedia(m toolset.Media) bool {
	switch m.MIMEType {
	case "image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf":
		return true
	}
	return false
}

// resultText is r as the text of an answer without an error flag.
func resultText(r toolset.Result) string {
	if r.IsError {
		return toolwire.ErrorText(r)
	}
	return toolwire.Text(r.Output)
}
