package history

import (
	"encoding/json"

	"google.golang.org/genai"
)

// Estimate returns an estimate of the tokens contents take in a prompt,
// made without a request: a token for every 3 bytes of the contents' JSON,
// which is more than Gemini's tokenizer counts for English text and code
// (about 4 bytes a token) and about what it counts for text in other
// scripts, so that a history estimated to fit does fit. Inline data counts
// [MediaTokens] per part, or a token per 256 bytes when that is more; file
// data counts MediaTokens. It is exact for nothing: the API's
// usageMetadata is the count to trust, and [Trimmer] uses it once there is
// one.
func Estimate(contents ...*genai.Content) int {
	n := 0
	for _, c := range contents {
		n += contentTokens(c)
	}
	return n
}

// MediaTokens is what [Estimate] counts for an image, audio or video part:
// the tokens of one image at Gemini 3's high media resolution. Long audio
// and video count more in the API, by their duration, which the estimate
// cannot see.
const MediaTokens = 1120

// bytesPerToken is Estimate's ratio.
const bytesPerToken = 3

func contentTokens(c *genai.Content) int {
	if c == nil {
		return 0
	}
	bytes, media := 24+len(c.Role), 0 // {"role":…,"parts":[…]}
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		bytes += 12 + len(p.Text) + (len(p.ThoughtSignature)+2)/3*4
		if p.Thought {
			bytes += 15
		}
		if fc := p.FunctionCall; fc != nil {
			bytes += 40 + len(fc.ID) + len(fc.Name) + valueSize(fc.Args)
		}
		if fr := p.FunctionResponse; fr != nil {
			bytes += 40 + len(fr.ID) + len(fr.Name) + valueSize(fr.Response)
			for _, fp := range fr.Parts {
				if fp != nil && (fp.InlineData != nil || fp.FileData != nil) {
					media += mediaTokens(fp.InlineData != nil, inlineLen(fp))
				}
			}
		}
		if p.InlineData != nil {
			media += mediaTokens(true, len(p.InlineData.Data))
		}
		if p.FileData != nil {
			media += MediaTokens
		}
		if p.ExecutableCode != nil {
			bytes += len(p.ExecutableCode.Code) + 20
		}
		if p.CodeExecutionResult != nil {
			bytes += len(p.CodeExecutionResult.Output) + 20
		}
	}
	return (bytes+bytesPerToken-1)/bytesPerToken + media
}

func inlineLen(fp *genai.FunctionResponsePart) int {
	if fp.InlineData == nil {
		return 0
	}
	return len(fp.InlineData.Data)
}

func mediaTokens(inline bool, size int) int {
	if inline {
		return max(MediaTokens, size/256)
	}
	return MediaTokens
}

// valueSize returns about the length of v's JSON, without encoding the
// values JSON decoding makes (maps, slices, strings, numbers); other
// values, such as the structs a tool returns, are encoded to be measured.
// Strings count their bytes, not their escapes.
func valueSize(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return len(v) + 2
	case bool:
		return 5
	case float64, int, int64:
		return 10 // about; measuring would cost more than the estimate is worth
	case json.Number:
		return len(v)
	case map[string]any:
		n := 2
		for k, e := range v {
			n += len(k) + 4 + valueSize(e)
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			n += 1 + valueSize(e)
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // the SDK cannot send it either; the loop never puts one in a history
	}
	return len(b)
}
