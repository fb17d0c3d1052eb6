package eval

import (
	"strings"
	"unicode"
)

// This file is ROUGE-1 as ADK's response_match_score computes it
// (google/adk-python src/google/adk/evaluation/final_response_match_v1.py,
// which calls rouge_score's RougeScorer(["rouge1"], use_stemmer=...);
// google-research/rouge: rouge_scorer.py, tokenize.py, scoring.py), so
// that a set scores here what it scores in ADK.

// RougeScore is a ROUGE-1 score.
type RougeScore struct {
	Precision float64 // the share of the candidate's words found in the reference
	Recall    float64 // the share of the reference's words found in the candidate
	F         float64 // their harmonic mean: response_match_score
}

// Rouge1 scores candidate against reference with ROUGE-1 exactly as ADK's
// response_match_score does: both texts lowercased (as Python lowercases),
// every run of characters other than a-z and 0-9 a space, the words of more
// than three letters stemmed with NLTK's Porter stemmer when both texts are
// mostly Latin script, then the unigrams of the two counted and clipped.
// Either text without a word scores 0.
func Rouge1(candidate, reference string) RougeScore {
	stem := latinScript(candidate) && latinScript(reference)
	return rouge1(rougeTokens(candidate, stem), rougeTokens(reference, stem))
}

func rouge1(candidate, reference []string) RougeScore {
	ref := map[string]int{}
	for _, t := range reference {
		ref[t]++
	}
	cand := map[string]int{}
	for _, t := range candidate {
		cand[t]++
	}
	overlap := 0
	for t, n := range ref {
		overlap += min(n, cand[t])
	}
	var s RougeScore
	s.Precision = float64(overlap) / float64(max(len(candidate), 1))
	s.Recall = float64(overlap) / float64(max(len(reference), 1))
	if s.Precision+s.Recall > 0 {
		s.F = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

// rougeTokens tokenizes text as rouge_score's tokenize does: lowercase,
// replace [^a-z0-9]+ by a space, split on spaces, stem the tokens of more
// than three characters, keep the non-empty ones.
func rougeTokens(text string, stem bool) []string {
	var b strings.Builder
	space := true
	for _, r := range text {
		for _, l := range pythonLower(r) {
			if 'a' <= l && l <= 'z' || '0' <= l && l <= '9' {
				b.WriteRune(l)
				space = false
			} else if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	tokens := strings.Fields(b.String())
	if stem {
		for i, t := range tokens {
			if len(t) > 3 {
				tokens[i] = porterStem(t)
			}
		}
	}
	return tokens
}

// pythonLower returns what Python's str.lower() makes of r, as far as the
// letters a-z are concerned: Go's simple lowercase mapping, except for
// U+0130 (İ), which Python lowercases to i and a combining dot above.
func pythonLower(r rune) []rune {
	if r == 'İ' {
		return []rune{'i', '\u0307'}
	}
	return []rune{unicode.ToLower(r)}
}

// latinScript reports whether more than half the letters of text are
// Latin, as ADK's _is_latin_script decides it ("LATIN" in the character's
// Unicode name); a text without letters is Latin.
func latinScript(text string) bool {
	letters, latin := 0, 0
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if latinName(r) {
			latin++
		}
	}
	return letters == 0 || 2*latin > letters
}

// latinName reports whether the Unicode name of the letter r holds
// "LATIN": a Latin-script letter but for the ones in notLatinNamed, and
// the two Glagolitic "LATINATE" letters.
func latinName(r rune) bool {
	if unicode.Is(latinNamedOthers, r) {
		return true
	}
	return unicode.Is(unicode.Latin, r) && !unicode.Is(notLatinNamed, r)
}

// notLatinNamed are the Latin-script letters whose Unicode names do not say
// LATIN (ordinal indicators, modifier letters, signs such as KELVIN SIGN),
// and latinNamedOthers the letters of other scripts whose names do;
// computed from Python's unicodedata against Go's unicode.Latin.
var (
	notLatinNamed = &unicode.RangeTable{
		R16: []unicode.Range16{
			{0xaa, 0xaa, 1}, {0xba, 0xba, 1}, {0x2b0, 0x2b8, 1}, {0x2e0, 0x2e4, 1},
			{0x1d2c, 0x1d5c, 1}, {0x1d9b, 0x1dbe, 1}, {0x212a, 0x212b, 1}, {0x2132, 0x2132, 1},
			{0x214e, 0x214e, 1}, {0x2183, 0x2183, 1}, {0x2c7d, 0x2c7d, 1}, {0xa770, 0xa770, 1},
			{0xa7f2, 0xa7f4, 1}, {0xa7f8, 0xa7f9, 1}, {0xab5c, 0xab5f, 1}, {0xab69, 0xab69, 1},
		},
		R32: []unicode.Range32{{0x10780, 0x10785, 1}, {0x10787, 0x107b0, 1}, {0x107b2, 0x107ba, 1}},
	}
	latinNamedOthers = &unicode.RangeTable{R16: []unicode.Range16{{0x2c2e, 0x2c2e, 1}, {0x2c5e, 0x2c5e, 1}}}
)
