package interactionswire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/wire"
)

// encodingJSON is the reference: what encoding/json writes for s, without
// HTML escaping.
func encodingJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

var trickyStrings = []string{"", "plain", `quo"te`, `back\slash`, "new\nline\ttab\rret", "\x00\x01\x1f", "<html> & co",
	"é 世界 🌍", "\u2028\u2029", "bad \xff utf-8", "\x7f"}

// The fast encoder writes what encoding/json writes.
func TestAppendStepsIsEncodingJSON(t *testing.T) {
	type refContent struct {
		Type        string          `json:"type"`
		Text        *string         `json:"text,omitempty"`
		Annotations json.RawMessage `json:"annotations,omitempty"`
		Data        string          `json:"data,omitempty"`
		URI         string          `json:"uri,omitempty"`
		MimeType    string          `json:"mime_type,omitempty"`
	}
	type refStep struct {
		Type      string          `json:"type"`
		Content   []refContent    `json:"content,omitempty"`
		Signature *string         `json:"signature,omitempty"`
		Summary   []refContent    `json:"summary,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		CallID    string          `json:"call_id,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
		Result    json.RawMessage `json:"result,omitempty"`
		Error     json.RawMessage `json:"error,omitempty"`
	}
	ref := func(cs []Content) []refContent {
		var out []refContent
		for _, c := range cs {
			r := refContent{Type: c.Type, Data: c.Data, URI: c.URI, MimeType: c.MimeType}
			if c.Type == "text" {
				text := c.Text
				r.Text, r.Annotations = &text, c.Annotations
			}
			out = append(out, r)
		}
		return out
	}
	for _, s := range trickyStrings {
		sig := s
		steps := []Step{
			{Type: TypeUserInput, Content: []Content{{Type: "text", Text: s}, {Type: "image", Data: "AQI=", MimeType: "image/png"}, {Type: "document", URI: "gs://" + s}}},
			{Type: TypeThought, Signature: &sig, Summary: []Content{{Type: "text", Text: s, Annotations: json.RawMessage(`[{"a":1}]`)}}},
			{Type: TypeFunctionCall, ID: s, Name: "f", Arguments: json.RawMessage(`{"k":"v"}`)},
			{Type: TypeFunctionResult, CallID: s, Name: s, IsError: true, Result: json.RawMessage(`"x"`)},
			{Type: TypeModelOutput, Content: []Content{{Type: "text", Text: ""}}, Error: json.RawMessage(`{"code":1}`)},
		}
		var want []refStep
		for _, st := range steps {
			want = append(want, refStep{Type: st.Type, Content: ref(st.Content), Signature: st.Signature, Summary: ref(st.Summary), ID: st.ID,
				Name: st.Name, Arguments: st.Arguments, CallID: st.CallID, IsError: st.IsError, Result: st.Result, Error: st.Error})
		}
		got, wantJSON := string(AppendJSON(nil, steps)), encodingJSON(t, want)
		if got != wantJSON {
			t.Errorf("for %q:\n got %s\nwant %s", s, got, wantJSON)
		}
		if m, _ := Marshal(steps); string(m) != wantJSON {
			t.Errorf("Marshal for %q:\n got %s\nwant %s", s, m, wantJSON)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(wire.StringNoHTML(nil, s)), encodingJSON(t, s); got != want {
			t.Errorf("wire.StringNoHTML(%q) = %s; want %s", s, got, want)
		}
	})
}
