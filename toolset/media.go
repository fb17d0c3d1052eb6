package toolset

import (
	"errors"
	"fmt"
)

// ErrInvalidMedia is wrapped by [Result.Err] when a tool returns media
// without a MIME type or without data.
var ErrInvalidMedia = errors.New("invalid media")

// Media is binary content a tool hands back besides its output, such as an
// image it drew or fetched, or an audio clip, for a model that can look at
// or listen to it.
type Media struct {
	// MIMEType is the IANA media type of Data: "image/png", "audio/wav",
	// "application/pdf"...
	MIMEType string

	// Data is the content itself: raw bytes, not base64.
	Data []byte
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
		case len(m.Data) == 0:
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
