package toolset

import (
	"errors"
	"fmt"
)

// ErrInvalidMedia is wrapped by [Result.Err] when a tool returns media
// without a MIME type, or with neither data nor a URI.
var ErrInvalidMedia = errors.New("invalid media")

// Media is binary content a tool hands back besides its output, such as an
// image it drew or fetched, or an audio clip, for a model that can look at
// or listen to it. It carries the content itself (Data), or names it
// (URI): a file kept elsewhere, such as an artifact (see package
// artifact), which the history then holds by reference rather than byte
// for byte.
type Media struct {
	// MIMEType is the IANA media type of the content: "image/png",
	// "audio/wav", "application/pdf"...
	MIMEType string

	// Data is the content itself: raw bytes, not base64. Empty when URI
	// names the content.
	Data []byte

	// URI names the content when Data does not hold it: an artifact's
	// reference ("artifact:chart.png?version=2"), or a file the model's
	// API reads itself (a Gemini Files API URI). Whoever sends it to a
	// model makes of it what the model takes (see agent.Config.Files).
	URI string

	// Name is the file's name, for people and frontends ("chart.png"):
	// optional.
	Name string
}

// MediaOutput is what a Run returns to hand back media besides its output:
// [Tool.Execute] puts Output in [Result.Output] and Media in [Result.Media].
// Output must be encodable as JSON, as every output must; it may be nil when
// the media say it all. A *MediaOutput is accepted too.
type MediaOutput struct {
	Output any
	Media  []Media
}

// splitMedia takes the media out of a Run's output, checking each medium.
func splitMedia(name string, out any) (any, []Media, *Result) {
	var mo MediaOutput
	switch v := out.(type) {
	case MediaOutput:
		mo = v
	case *MediaOutput:
		if v == nil {
			return nil, nil, nil
		}
		mo = *v
	default:
		return out, nil, nil
	}
	for i, m := range mo.Media {
		var problem string
		switch {
		case m.MIMEType == "":
			problem = "has no MIME type"
		case len(m.Data) == 0 && m.URI == "":
			problem = "is empty"
		default:
			continue
		}
		r := errorResult(fmt.Errorf("tool %s: %w: medium %d %s", name, ErrInvalidMedia, i+1, problem),
			"tool %s failed: medium %d of its output %s", name, i+1, problem)
		return nil, nil, &r
	}
	return mo.Output, mo.Media, nil
}
