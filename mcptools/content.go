package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A ToolError is the error of a call the server answered with isError: the
// tool ran and failed. Its message is the server's own text, which is what
// the model reads.
type ToolError struct {
	Message string
}

// Error returns the server's message.
func (e *ToolError) Error() string { return e.Message }

// Output turns a server's answer to a call into what the tool returns, as
// the tools of a [Client] do unless [Options.MapResult] says otherwise:
//
//   - isError: a [*ToolError] whose message is the result's text, followed
//     by its structured content as JSON when it has some, so that the
//     model reads why the tool failed;
//   - structured content, when the server gives it: that value, or, when
//     the result also has text that is not merely the structured content
//     again as JSON (the form the protocol asks servers to add), a map
//     holding both, {"structuredContent": value, "text": text}, so that
//     neither is lost;
//   - otherwise the result's text, "" when there is none (an empty answer
//     is a success, not an error);
//   - images and audio, and embedded resources of an image, audio, video or
//     PDF type: [toolset.Media] next to that output, in a
//     [toolset.MediaOutput].
//
// The text joins, one per line, every text content, the text of embedded
// resources (after a line naming the resource's URI), and a short line for
// each resource link and each binary resource that is not media, so that
// nothing the server sent is silently lost.
func Output(res *mcp.CallToolResult) (any, error) {
	if res == nil {
		return "", nil
	}
	var lines []string
	var media []toolset.Media
	structured := normalJSON(res.StructuredContent)
	addMedia := func(kind, mimeType string, data []byte) {
		if mimeType == "" || len(data) == 0 {
			// Not something a model can be given: say so rather than
			// fail the whole call.
			lines = append(lines, fmt.Sprintf("[%s: %d bytes of %s, not shown]", kind, len(data), orUnknown(mimeType)))
			return
		}
		media = append(media, toolset.Media{MIMEType: mimeType, Data: data})
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if structured != nil && sameJSON(c.Text, structured) {
				continue // the structured content again, as text
			}
			lines = append(lines, c.Text)
		case *mcp.ImageContent:
			addMedia("image", c.MIMEType, c.Data)
		case *mcp.AudioContent:
			addMedia("audio", c.MIMEType, c.Data)
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Blob == nil:
				lines = append(lines, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			case isMedia(r.MIMEType):
				addMedia("resource "+r.URI, r.MIMEType, r.Blob)
			case strings.HasPrefix(r.MIMEType, "text/") && utf8.Valid(r.Blob):
				lines = append(lines, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Blob))
			default:
				lines = append(lines, fmt.Sprintf("[resource %s: %d bytes of %s, not shown]", r.URI, len(r.Blob), orUnknown(r.MIMEType)))
			}
		case *mcp.ResourceLink:
			lines = append(lines, resourceLink(c))
		default:
			lines = append(lines, fmt.Sprintf("[%T content, not shown]", c))
		}
	}
	text := strings.Join(lines, "\n")
	if res.IsError {
		if structured != nil {
			if b, err := json.Marshal(res.StructuredContent); err == nil {
				text = strings.TrimLeft(text+"\n"+string(b), "\n")
			}
		}
		if text == "" {
			text = "the tool failed and gave no reason"
		}
		return nil, &ToolError{Message: text}
	}
	var out any = text
	switch {
	case res.StructuredContent == nil:
	case text == "":
		out = res.StructuredContent
	default:
		out = map[string]any{"structuredContent": res.StructuredContent, "text": text}
	}
	if len(media) > 0 {
		return toolset.MediaOutput{Output: out, Media: media}, nil
	}
	return out, nil
}

// normalJSON returns v as encoding/json decodes it into an any, nil when
// v is nil or cannot be encoded.
func normalJSON(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var n any
	if json.Unmarshal(b, &n) != nil {
		return nil
	}
	return n
}

// sameJSON reports whether text is a JSON encoding of the value v, which
// normalJSON returned.
func sameJSON(text string, v any) bool {
	var n any
	return json.Unmarshal([]byte(text), &n) == nil && reflect.DeepEqual(n, v)
}

// isMedia reports whether a resource of this MIME type goes to the model as
// media rather than as a line of text.
func isMedia(mimeType string) bool {
	for _, p := range []string{"image/", "audio/", "video/"} {
		if strings.HasPrefix(mimeType, p) {
			return true
		}
	}
	return mimeType == "application/pdf"
}

func resourceLink(l *mcp.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[resource link %s", l.URI)
	for _, f := range []struct{ k, v string }{{"name", l.Name}, {"title", l.Title}, {"type", l.MIMEType}, {"description", l.Description}} {
		if f.v != "" {
			fmt.Fprintf(&b, "; %s: %s", f.k, f.v)
		}
	}
	b.WriteString("]")
	return b.String()
}

func orUnknown(mimeType string) string {
	if mimeType == "" {
		return "an unknown type"
	}
	return mimeType
}
