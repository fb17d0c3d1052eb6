package devui

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// redacted returns v as the JSON the API speaks (genai's field names),
// with what the page never shows replaced by a note of its size: thought
// signatures (opaque bytes the next model call needs, which never leave
// the server) and inline data (images, audio, files). Everything else is
// as it is, every part of every content included.
func redacted(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(redactTree(tree))
}

// redactTree replaces, at any depth, the values of thoughtSignature and
// of inlineData's data.
func redactTree(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch s, isString := x.(string); {
			case k == "thoughtSignature" && isString:
				v[k] = omitted(s)
			case k == "inlineData":
				if blob, ok := x.(map[string]any); ok {
					if data, ok := blob["data"].(string); ok {
						blob["data"] = omitted(data)
					}
				}
			default:
				v[k] = redactTree(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = redactTree(x)
		}
	}
	return v
}

// omitted is the note that stands for base64 bytes the page does not
// show.
func omitted(b64 string) string {
	n := base64.StdEncoding.DecodedLen(len(b64))
	if raw, err := base64.StdEncoding.DecodeString(b64); err == nil {
		n = len(raw)
	}
	return fmt.Sprintf("(%d bytes, not shown)", n)
}

// maxValueBytes bounds a tool's arguments or output in a timeline: a
// larger one is cut, and says so.
const maxValueBytes = 64 << 10

// valueJSON returns v as JSON, cut to maxValueBytes (as a string that
// says so).
func valueJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("(not JSON: %v)", err))
	}
	if len(b) > maxValueBytes {
		b, _ = json.Marshal(fmt.Sprintf("(%d bytes of JSON, cut) %s…", len(b), b[:maxValueBytes/4]))
	}
	return b
}
