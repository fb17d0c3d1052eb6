// Package toolwire holds what the OpenAI and Anthropic adapters share: a
// tool call whose arguments arrive as JSON text, resolved to its tool and
// run, the names both APIs accept, and a tool's output as text.
//
// It is pure translation around [toolset.Tool.Execute], which does all the
// validation: nothing here checks arguments against a schema. The adapters
// are modules of their own (so that the core module never requires their
// SDKs) that import this internal package of the core by its path, as
// gopls does x/tools': a change here is a change to them, made together.
package toolwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// ErrUnknownTool is wrapped by the Result.Err of a call that names a tool
// the set does not have.
var ErrUnknownTool = errors.New("unknown tool")

// Execute runs the call of the tool called name in set, with args the JSON
// object the model wrote: OpenAI's arguments string, Anthropic's input.
// Empty args (or JSON null) are no arguments. An unknown name and args that
// are not a JSON object come back as error results, as every failure of
// [toolset.Tool.Execute] does, so that the model is told and can correct
// itself. prepare, when not nil, may change the decoded arguments before
// they are validated; they are a fresh copy, the caller's to change.
func Execute(ctx context.Context, set *toolset.Set, name string, args []byte,
	prepare func(t *toolset.Tool, args map[string]any)) toolset.Result {
	tool, ok := set.Lookup(name)
	if !ok {
		avail := "none"
		if names := set.Names(); len(names) > 0 {
			avail = strings.Join(names, ", ")
		}
		return toolset.Result{IsError: true, Err: fmt.Errorf("%w %q", ErrUnknownTool, name),
			Output: fmt.Sprintf("unknown tool %q; available tools: %s", name, avail)}
	}
	decoded, err := decodeArgs(args)
	if err != nil {
		return toolset.Result{IsError: true, Err: fmt.Errorf("%w: %v", toolset.ErrInvalidArguments, err),
			Output: fmt.Sprintf("invalid arguments for %s: %v", name, err)}
	}
	if prepare != nil && decoded != nil {
		prepare(tool, decoded)
	}
	return tool.Execute(ctx, decoded)
}

// decodeArgs decodes a JSON object as encoding/json does for Gemini's
// arguments: numbers become float64, which is what toolset expects.
func decodeArgs(args []byte) (map[string]any, error) {
	var v any
	if len(bytes.TrimSpace(args)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, fmt.Errorf("they are not valid JSON: %v", err)
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("they must be a JSON object, not %s", jsonKind(v))
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// EachTool calls f for each of tools in order, after refusing a nil tool
// and a name given twice; pkg prefixes the errors, which wrap
// [toolset.ErrDuplicateTool] for a name given twice.
func EachTool(pkg string, tools []*toolset.Tool, f func(*toolset.Tool) error) error {
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("%s: tool %d is nil", pkg, i)
		}
		if seen[t.Name] {
			return fmt.Errorf("%s: %w: %q is given twice", pkg, toolset.ErrDuplicateTool, t.Name)
		}
		seen[t.Name] = true
		if err := f(t); err != nil {
			return err
		}
	}
	return nil
}

// CheckName reports whether OpenAI and Anthropic accept name as a tool
// name: both allow only ASCII letters, digits, '_' and '-' (OpenAI
// ^[a-zA-Z0-9_-]{1,64}$, Anthropic ^[a-zA-Z0-9_-]{1,128}$). toolset's rule,
// Gemini's, also allows '.' and ':', and caps the length at 64. The error
// names the provider and wraps [toolset.ErrInvalidTool].
func CheckName(provider, name string) error {
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("%w: %s takes tool names of letters, digits, '_' and '-' only: %q has %q",
				toolset.ErrInvalidTool, provider, name, r)
		}
	}
	return nil
}

// Text is a tool's output as the text of a tool result: a string as it is,
// anything else as JSON, nothing for nil. Execute has checked that the
// output encodes.
func Text(out any) string {
	switch out := out.(type) {
	case nil:
		return ""
	case string:
		return out
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Sprint(out)
	}
	return string(b)
}

// ErrorText is a failed call's message as JSON, {"error": message}, for the
// APIs whose tool results have no error flag: the model reads that the
// call failed, and why, as it does from Gemini's functionResponse. A call
// refused rather than run (r.Err wraps toolset.ErrDenied) is marked as
// geminiadapter.Response marks it: {"error": message, "denied": true}.
func ErrorText(r toolset.Result) string {
	b, _ := json.Marshal(struct {
		Error  string `json:"error"`
		Denied bool   `json:"denied,omitempty"`
	}{Text(r.Output), errors.Is(r.Err, toolset.ErrDenied)})
	return string(b)
}

// Describe returns r with the media that keep rejects (all of them when
// keep is nil) replaced by a short description, saying why in reason: the
// model learns that the tool returned, say, an image/png of 48213 bytes,
// and that it cannot see it. The description becomes the output when there
// is none, follows a string output on a line of its own, and sits next to
// any other output as {"output": output, "media": description}.
func Describe(r toolset.Result, keep func(toolset.Media) bool, reason string) toolset.Result {
	var kept, dropped []toolset.Media
	for _, m := range r.Media {
		if keep != nil && keep(m) {
			kept = append(kept, m)
		} else {
			dropped = append(dropped, m)
		}
	}
	if len(dropped) == 0 {
		return r
	}
	var b strings.Builder
	b.WriteString("[media not shown, ")
	b.WriteString(reason)
	b.WriteString(": ")
	for i, m := range dropped {
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case len(m.Data) == 0 && m.Name != "":
			fmt.Fprintf(&b, "%s, the file %q", m.MIMEType, m.Name)
		case len(m.Data) == 0:
			fmt.Fprintf(&b, "%s, %s", m.MIMEType, m.URI)
		default:
			fmt.Fprintf(&b, "%s, %d bytes", m.MIMEType, len(m.Data))
		}
	}
	b.WriteString("]")
	desc := b.String()
	switch out := r.Output.(type) {
	case nil:
		r.Output = desc
	case string:
		if out == "" {
			r.Output = desc
		} else {
			r.Output = out + "\n" + desc
		}
	default:
		r.Output = map[string]any{"output": out, "media": desc}
	}
	r.Media = kept
	return r
}
