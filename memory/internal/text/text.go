// Package text turns text into the terms memory search indexes and
// queries: words, lower-cased, English stop words left out, stemmed
// (Porter2), with their positions and whether they were written as names.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Token is one indexed word of a text.
type Token struct {
	Term string // lower-cased and stemmed
	Word string // lower-cased, not stemmed
	Pos  int    // the word's position among the text's words, stop words included
	Name bool   // written with a capital, not at the start of a sentence
}

// MaxWordBytes bounds a word: longer runs of letters are cut there.
const MaxWordBytes = 64

// Tokens returns the terms of s, in order. Stop words are counted in
// positions but not returned.
func Tokens(s string) []Token {
	var out []Token
	Scan(s, func(word string, pos int, name bool) {
		if IsStop(word) {
			return
		}
		out = append(out, Token{Term: Stem(word), Word: word, Pos: pos, Name: name})
	})
	return out
}

// Terms returns the terms of s, in order, repeated as often as they occur.
func Terms(s string) []string {
	toks := Tokens(s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Term
	}
	return out
}

// Scan calls f with each word of s, lower-cased, its position, and whether
// it was written with a capital letter other than at the start of a
// sentence. A word is a run of letters and digits; an apostrophe inside
// one ends it, and the contraction or possessive after it ("'s", "'t",
// "'re"…) is dropped.
func Scan(s string, f func(word string, pos int, name bool)) {
	pos := 0
	sentenceStart := true
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			switch r {
			case '.', '!', '?', '\n':
				sentenceStart = true
			}
			i += size
			continue
		}
		start := i
		b.Reset()
		capital := unicode.IsUpper(r)
		for i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
			if isWordRune(r) {
				if b.Len() < MaxWordBytes {
					b.WriteRune(unicode.ToLower(r))
				}
				i += size
				continue
			}
			if (r == '\'' || r == '’') && i+size < len(s) {
				// An apostrophe between letters: skip the contraction.
				j := i + size
				for j < len(s) {
					r2, size2 := utf8.DecodeRuneInString(s[j:])
					if !isWordRune(r2) {
						break
					}
					j += size2
				}
				if j > i+size {
					i = j
				}
			}
			break
		}
		_ = start
		f(b.String(), pos, capital && !sentenceStart)
		pos++
		sentenceStart = false
	}
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// IsStop reports whether word, lower-cased, is an English stop word: a
// word so common that it says nothing of what a text is about.
func IsStop(word string) bool {
	_, ok := stopWords[word]
	return ok || len(word) == 1 && word[0] >= 'a' && word[0] <= 'z'
}

// stopWords are Snowball's English stop words, with the contractions'
// stems, and words of conversation that say nothing of its subject.
var stopWords = map[string]struct{}{}

func init() {
	for _, w := range strings.Fields(`
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for
from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
into is isn it its itself let me more most mustn my myself no nor not of off on once only or other
ought our ours ourselves out over own same shan she should shouldn so some such than that the their
theirs them themselves then there these they this those through to too under until up very was wasn
we were weren what when where which while who whom why will with won would wouldn you your yours
yourself yourselves
also
s t m re ve ll d
`) {
		stopWords[w] = struct{}{}
	}
}
