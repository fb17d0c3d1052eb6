package fake

import (
	"bytes"
	"testing"

	"google.golang.org/genai"
)

// FuzzValidate drives the request check with arbitrary bodies, on both
// backends. It must never panic; a rejection must name a rule and carry a
// 4xx error; an accepted body must decode, and its canonical form must be
// accepted too and be a fixed point.
func FuzzValidate(f *testing.F) {
	for _, tc := range ruleCases {
		model := tc.model
		if model == "" {
			model = "gemini-2.5-flash"
		}
		f.Add(tc.vertex, model, []byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, vertex bool, model string, body []byte) {
		backend := genai.BackendGeminiAPI
		if vertex {
			backend = genai.BackendVertexAI
		}
		in, rej := validate(backend, model, body)
		if rej != nil {
			if !ruleExists(rej.Rule) || rej.Err.Code < 400 || rej.Err.Code > 499 || rej.Err.Message == "" {
				t.Fatalf("validate(%q) = %+v; want a known rule and a 4xx error with a message", body, rej)
			}
			mustJSON(rej.Err.wire())
			return
		}
		if in.req == nil || in.canonical == nil {
			t.Fatalf("validate(%q) accepted without decoding", body)
		}
		again, rej := validate(backend, model, in.canonical)
		if rej != nil {
			t.Fatalf("canonical form %s of %q rejected by %q: %s", in.canonical, body, rej.Rule, rej.Err.Message)
		}
		if !bytes.Equal(again.canonical, in.canonical) {
			t.Fatalf("canonical form is not a fixed point:\n%s\n%s", in.canonical, again.canonical)
		}
		(&record{canonical: in.canonical}).request()
		var u usageCounter
		u.prompt(in.req)
	})
}

func ruleExists(name string) bool {
	for _, r := range rules {
		if r.name == name {
			return true
		}
	}
	return false
}
