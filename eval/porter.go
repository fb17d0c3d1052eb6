package eval

import "strings"

// This file is the Porter stemmer as NLTK's PorterStemmer() runs it, in its
// default mode (NLTK_EXTENSIONS): the algorithm of Porter's 1980 paper
// with the changes Martin Porter later made and those NLTK added (the
// irregular forms, the ies/ied rules for short words, the y rule of step
// 1c, the alli, fulli and logi rules of step 2). ROUGE-1 as ADK computes
// it (rouge_score with use_stemmer=True) stems with it, so that "running"
// and "runs" match; the same stems give the same scores. Written from
// nltk/stem/porter.py's description of each rule; the tests check it
// against NLTK's outputs.

// porterIrregular maps the irregular forms NLTK stems by table.
var porterIrregular = map[string]string{
	"sky": "sky", "skies": "sky",
	"dying": "die", "lying": "lie", "tying": "tie",
	"news":    "news",
	"innings": "inning", "inning": "inning",
	"outings": "outing", "outing": "outing",
	"cannings": "canning", "canning": "canning",
	"howe":    "howe",
	"proceed": "proceed", "exceed": "exceed", "succeed": "succeed",
}

// porterStem returns the stem of word, lowercased, as NLTK's
// PorterStemmer().stem(word) does.
func porterStem(word string) string {
	w := strings.ToLower(word)
	if s, ok := porterIrregular[w]; ok {
		return s
	}
	if len(w) <= 2 {
		return w
	}
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	w = step2(w)
	w = step3(w)
	w = step4(w)
	w = step5a(w)
	return step5b(w)
}

// consonant reports whether w[i] is a consonant: a letter other than a, e,
// i, o, u, and other than a y that follows a consonant.
func consonant(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(w, i-1)
	}
	return true
}

// measure returns m, the number of vowel-consonant sequences of stem in
// the form [C](VC){m}[V].
func measure(stem string) int {
	m := 0
	for i := 1; i < len(stem); i++ {
		if !consonant(stem, i-1) && consonant(stem, i) {
			m++
		}
	}
	return m
}

func hasVowel(stem string) bool {
	for i := range len(stem) {
		if !consonant(stem, i) {
			return true
		}
	}
	return false
}

// doubleConsonant is the paper's *d: w ends with two equal consonants.
func doubleConsonant(w string) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && consonant(w, n-1)
}

// cvc is the paper's *o: w ends consonant-vowel-consonant, the last not w,
// x or y; NLTK also counts a two-letter vowel-consonant word.
func cvc(w string) bool {
	n := len(w)
	if n >= 3 && consonant(w, n-3) && !consonant(w, n-2) && consonant(w, n-1) && !strings.ContainsRune("wxy", rune(w[n-1])) {
		return true
	}
	return n == 2 && !consonant(w, 0) && consonant(w, 1)
}

// A porterRule replaces suffix by repl when the stem left satisfies cond
// (nil: always).
type porterRule struct {
	suffix, repl string
	cond         func(stem string) bool
}

func positive(stem string) bool { return measure(stem) > 0 }
func overOne(stem string) bool  { return measure(stem) > 1 }

// applyRules applies the first rule whose suffix w ends with: the
// replacement when its condition holds, nothing otherwise (no later rule
// is tried).
func applyRules(w string, rules []porterRule) string {
	for _, r := range rules {
		if !strings.HasSuffix(w, r.suffix) {
			continue
		}
		stem := w[:len(w)-len(r.suffix)]
		if r.cond == nil || r.cond(stem) {
			return stem + r.repl
		}
		return w
	}
	return w
}

// step1a: sses -> ss, ies -> i, ss -> ss, s -> "" (and, in NLTK, a
// four-letter ies word -> ie: dies -> die).
func step1a(w string) string {
	if strings.HasSuffix(w, "ies") && len(w) == 4 {
		return w[:1] + "ie"
	}
	return applyRules(w, []porterRule{{"sses", "ss", nil}, {"ies", "i", nil}, {"ss", "ss", nil}, {"s", "", nil}})
}

// step1b: (m>0) eed -> ee; (*v*) ed and ing go, then at -> ate, bl -> ble,
// iz -> ize, a double consonant but l, s, z is halved, and an m=1 *o stem
// gets an e. NLTK first turns ied into ie (four letters) or i.
func step1b(w string) string {
	if strings.HasSuffix(w, "ied") {
		if len(w) == 4 {
			return w[:1] + "ie"
		}
		return w[:len(w)-3] + "i"
	}
	if stem, ok := strings.CutSuffix(w, "eed"); ok {
		if measure(stem) > 0 {
			return stem + "ee"
		}
		return w
	}
	var stem string
	found := false
	for _, suffix := range []string{"ed", "ing"} {
		if s, ok := strings.CutSuffix(w, suffix); ok && hasVowel(s) {
			stem, found = s, true
			break
		}
	}
	if !found {
		return w
	}
	for _, r := range []porterRule{{"at", "ate", nil}, {"bl", "ble", nil}, {"iz", "ize", nil}} {
		if strings.HasSuffix(stem, r.suffix) {
			return stem + "e"
		}
	}
	if doubleConsonant(stem) {
		if !strings.ContainsRune("lsz", rune(stem[len(stem)-1])) {
			return stem[:len(stem)-1]
		}
		return stem
	}
	if measure(stem) == 1 && cvc(stem) {
		return stem + "e"
	}
	return stem
}

// step1c: y -> i after a consonant that is not the stem's only letter
// (NLTK's rule: happy -> happi, but enjoy stays, and spy -> spi).
func step1c(w string) string {
	if stem, ok := strings.CutSuffix(w, "y"); ok && len(stem) > 1 && consonant(stem, len(stem)-1) {
		return stem + "i"
	}
	return w
}

var step2Rules = []porterRule{
	{"ational", "ate", positive},
	{"tional", "tion", positive},
	{"enci", "ence", positive},
	{"anci", "ance", positive},
	{"izer", "ize", positive},
	{"bli", "ble", positive},
	{"alli", "al", positive},
	{"entli", "ent", positive},
	{"eli", "e", positive},
	{"ousli", "ous", positive},
	{"ization", "ize", positive},
	{"ation", "ate", positive},
	{"ator", "ate", positive},
	{"alism", "al", positive},
	{"iveness", "ive", positive},
	{"fulness", "ful", positive},
	{"ousness", "ous", positive},
	{"aliti", "al", positive},
	{"iviti", "ive", positive},
	{"biliti", "ble", positive},
	{"fulli", "ful", positive},
}

// step2 maps double suffixes to single ones when m>0. NLTK applies alli ->
// al first, and again after; its logi -> log rule keeps the l with the
// stem, so that geo- and theo- words work like archaeo- ones.
func step2(w string) string {
	if stem, ok := strings.CutSuffix(w, "alli"); ok && positive(stem) {
		return step2(stem + "al")
	}
	rules := append(step2Rules[:len(step2Rules):len(step2Rules)],
		porterRule{"logi", "log", func(string) bool { return positive(w[:len(w)-3]) }})
	return applyRules(w, rules)
}

var step3Rules = []porterRule{
	{"icate", "ic", positive},
	{"ative", "", positive},
	{"alize", "al", positive},
	{"iciti", "ic", positive},
	{"ical", "ic", positive},
	{"ful", "", positive},
	{"ness", "", positive},
}

func step3(w string) string { return applyRules(w, step3Rules) }

var step4Rules = []porterRule{
	{"al", "", overOne},
	{"ance", "", overOne},
	{"ence", "", overOne},
	{"er", "", overOne},
	{"ic", "", overOne},
	{"able", "", overOne},
	{"ible", "", overOne},
	{"ant", "", overOne},
	{"ement", "", overOne},
	{"ment", "", overOne},
	{"ent", "", overOne},
	{"ion", "", func(stem string) bool {
		return measure(stem) > 1 && strings.ContainsRune("st", rune(stem[len(stem)-1]))
	}},
	{"ou", "", overOne},
	{"ism", "", overOne},
	{"ate", "", overOne},
	{"iti", "", overOne},
	{"ous", "", overOne},
	{"ive", "", overOne},
	{"ize", "", overOne},
}

// step4 removes a last suffix when m>1.
func step4(w string) string { return applyRules(w, step4Rules) }

// step5a: (m>1) e -> ""; (m=1 and not *o) e -> "".
func step5a(w string) string {
	stem, ok := strings.CutSuffix(w, "e")
	if !ok {
		return w
	}
	if m := measure(stem); m > 1 || m == 1 && !cvc(stem) {
		return stem
	}
	return w
}

// step5b: (m>1 and *d and *L) -> a single l.
func step5b(w string) string {
	if strings.HasSuffix(w, "ll") && measure(w[:len(w)-1]) > 1 {
		return w[:len(w)-1]
	}
	return w
}
