package fake

import (
	"bytes"
	"testing"

	"google.golang.org/genai"
)

func TestSyntaxMessageCaret(t *testing.T) {
	body := "{\n  \"contents\": [\n    {\"parts\": [}\n  ]\n}"
	_, rej := validate(genai.BackendGeminiAPI, "m", []byte(body))
	want := "Invalid JSON payload received. Unexpected token.\n    {\"parts\": [}\n               ^"
	if rej == nil || rej.Err.Message != want {
		t.Errorf("message = %q; want %q", rej.Err.Message, want)
	}
}

func TestJSONValueRoundTrip(t *testing.T) {
	in := `{"b":[1,2.5e3,"x\u003c",true,null,{}],"a":{"z":-0,"y":[]}}`
	v, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	v.encode(&buf)
	if got := buf.String(); got != in {
		t.Errorf("encode(parseJSON(%s)) = %s; want it unchanged, keys in order", in, got)
	}
	if v.get("b").elems()[1].str != "2.5e3" || v.get("missing") != nil || v.get("a").get("y").elems() != nil {
		t.Errorf("get/elems on %s gave wrong values", in)
	}
}
