package wire

import (
	"encoding/json"
	"testing"
)

// String escapes as encoding/json does, invalid UTF-8 included.
func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "new\nline\r\ttab", "\x00\x01\x1f\x7f",
		"<html>&amp;</html>", "héllo wörld 東京", "bad \xff utf-8 \xc3", "line\u2028sep\u2029", "emoji 🌦️"} {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestFields(t *testing.T) {
	b := append([]byte(nil), '{')
	b = StringField(b, "type", "x")
	b = IntField(b, "n", 42)
	b = BoolField(b, "ok", true)
	b = RawField(b, "v", []byte(`{"a":1}`))
	b = append(b, '}')
	if want := `{"type":"x","n":42,"ok":true,"v":{"a":1}}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestProgress(t *testing.T) {
	for _, c := range []struct {
		done, total float64
		message     string
		want        string
	}{
		{3, 4, "step \"3\"", `{"toolCallId":"c1","done":3,"total":4,"message":"step \"3\""}`},
		{2.5, 0, "", `{"toolCallId":"c1","done":2.5}`},
		{1e9, 2e9, "", `{"toolCallId":"c1","done":1e+09,"total":2e+09}`},
	} {
		b := Progress(nil, "c1", c.done, c.total, c.message)
		if string(b) != c.want || !json.Valid(b) {
			t.Errorf("Progress(%v, %v, %q) = %s, want %s", c.done, c.total, c.message, b, c.want)
		}
	}
}
