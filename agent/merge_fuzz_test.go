package agent

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

// FuzzMerge checks that any chunking of the same reply merges into the same
// model content: the reply's thought, its text (with or without a
// signature, which may come on the last piece or in a trailing chunk) and
// its function calls, split into pieces at arbitrary places. The seed
// corpus is in testdata/fuzz/FuzzMerge.
func FuzzMerge(f *testing.F) {
	f.Add("I should look it up.", "Let me check the weather in Paris.", []byte{3, 9, 0, 14}, true, false, true)
	f.Add("", "héllo wörld ✓", []byte{1, 1, 1}, false, true, false)
	f.Fuzz(func(t *testing.T, thought, text string, cuts []byte, signed, trailing, withCall bool) {
		if !utf8.ValidString(thought) || !utf8.ValidString(text) {
			return
		}
		sig := []byte("sig")
		var want []*genai.Part
		if thought != "" {
			want = append(want, &genai.Part{Text: thought, Thought: true})
		}
		if text != "" {
			p := &genai.Part{Text: text}
			if signed {
				p.ThoughtSignature = sig
			}
			want = append(want, p)
		}
		call := &genai.Part{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "f", Args: map[string]any{"x": 1.0}}, ThoughtSignature: []byte("call-sig")}
		if withCall {
			want = append(want, call)
		}
		if len(want) == 0 {
			return
		}

		var chunks []*genai.GenerateContentResponse
		next := func() int { // the next cut length, from the fuzzer's bytes
			if len(cuts) == 0 {
				return 1 << 30
			}
			n := int(cuts[0]) + 1
			cuts = cuts[1:]
			return n
		}
		split := func(s string, thoughtPart, sign bool) {
			for s != "" {
				n := next()
				if n > len(s) {
					n = len(s)
				}
				for n < len(s) && !utf8.RuneStart(s[n]) {
					n++
				}
				p := &genai.Part{Text: s[:n], Thought: thoughtPart}
				s = s[n:]
				if s == "" && sign && !trailing {
					p.ThoughtSignature = sig
				}
				chunks = append(chunks, chunk(p))
			}
			if sign && trailing {
				chunks = append(chunks, chunk(&genai.Part{Text: "", ThoughtSignature: sig}))
			}
		}
		split(thought, true, false)
		split(text, false, signed && text != "")
		if withCall {
			chunks = append(chunks, chunk(call))
		}
		last := chunk()
		last.Candidates[0].FinishReason = genai.FinishReasonStop
		chunks = append(chunks, last)

		var m merger
		for _, c := range chunks {
			m.add(c, nil)
		}
		got := m.response()
		if got.Candidates[0].FinishReason != genai.FinishReasonStop {
			t.Fatalf("finish reason lost")
		}
		if diff := cmp.Diff(want, got.Candidates[0].Content.Parts); diff != "" {
			t.Fatalf("merged parts (-want +got):\n%s", diff)
		}
	})
}
