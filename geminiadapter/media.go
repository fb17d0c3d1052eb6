package geminiadapter

import (
	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"github.com/toolnexus/toolnexus-go/internal/toolwire"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// MediaInResponses reports whether model takes media (images, audio,
// documents) inside a function response, as FunctionResponse.Parts: the
// Gemini 3 models and later do; Gemini 2.5 and older answer such a request
// with 400 "function_response.parts is not supported for this model". The
// name may carry a path ("models/gemini-3-flash-preview"). Names it does
// not recognise as Gemini 3 or later, tuned models included, get false:
// a description of the media always goes through, media may not.
func MediaInResponses(model string) bool {
	major, tail, ok := modelname.Major(model)
	return ok && major >= 3 && (tail == "" || tail[0] == '-' || tail[0] == '.')
}

// DescribeMedia returns r with its media replaced by a short description,
// for a model that cannot receive media from tools (see [MediaInResponses]):
// the model learns that the tool returned, say, an image/png of 48213
// bytes, and that it cannot see it. The description becomes the output when
// there is none, follows a string output on a line of its own, and sits
// next to any other output as {"output": output, "media": description}.
// r is returned as it is when it has no media.
func DescribeMedia(r toolset.Result) toolset.Result {
	return toolwire.Describe(r, nil, "this model cannot receive media from tools")
}

// mediaParts returns the function response parts carrying media, or nil:
// inlineData for media that carry their data, fileData for media named by
// a URI.
func mediaParts(media []toolset.Media) []*genai.FunctionResponsePart {
	if len(media) == 0 {
		return nil
	}
	parts := make([]*genai.FunctionResponsePart, len(media))
	for i, m := range media {
		if len(m.Data) == 0 && m.URI != "" {
			parts[i] = &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: m.URI, MIMEType: m.MIMEType}}
			continue
		}
		parts[i] = genai.NewFunctionResponsePartFromBytes(m.Data, m.MIMEType)
	}
	return parts
}
