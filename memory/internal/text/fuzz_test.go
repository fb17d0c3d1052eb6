package text

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Any text gives terms that the stores can index as they are: non-empty,
// valid UTF-8, letters and digits only (so never a space, a quote or an
// operator of a full-text query), each a stem of a word of the text; and
// stemming never panics nor grows a word.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{"Caroline's dog didn't like the Running club.", "généreusement ça", "'tis 18th May, 2023 — ok?",
		"\xff\xfe bad utf8", "y'all Yyyy ies sses eed'", strings.Repeat("a", 200), "ÉTÉ İstanbul ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tk := range Tokens(s) {
			if tk.Term == "" || !utf8.ValidString(tk.Term) || len(tk.Term) > len(tk.Word)+2 {
				t.Fatalf("term %q of word %q", tk.Term, tk.Word)
			}
			for _, r := range tk.Term {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("term %q holds %q", tk.Term, r)
				}
			}
		}
		Periods(s)
	})
}
