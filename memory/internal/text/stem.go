package text

// Stem returns the English stem of a lower-case word, by the Porter2
// ("English") stemming algorithm of the Snowball project
// (https://snowballstem.org/algorithms/english/stemmer.html), written from
// its description: "running" and "runs" become "run", "generously"
// "generous", "communities" "communiti". Words of two letters or fewer,
// and words with characters other than a-z and apostrophes, are returned
// as they are.
func Stem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if (c < 'a' || c > 'z') && c != '\'' {
			return word
		}
	}
	if s, ok := exceptions1[word]; ok {
		return s
	}
	w := []byte(word)
	if w[0] == '\'' {
		w = w[1:]
	}
	// y at the start, or after a vowel, is a consonant: Y.
	for i := range w {
		if w[i] == 'y' && (i == 0 || isVowel(w[i-1])) {
			w[i] = 'Y'
		}
	}
	r1, r2 := regions(w)
	w = step0(w)
	w = step1a(w)
	if _, ok := exceptions2[string(w)]; ok {
		return lowerY(w)
	}
	w = step1b(w, r1)
	w = step1c(w)
	w = step2(w, r1)
	w = step3(w, r1, r2)
	w = step4(w, r2)
	w = step5(w, r1, r2)
	return lowerY(w)
}

// exceptions1 are the words stemmed as a whole, before the steps.
var exceptions1 = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl",
	"sky": "sky", "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}

// exceptions2 are the words left as they are after step 1a.
var exceptions2 = map[string]struct{}{
	"inning": {}, "outing": {}, "canning": {}, "herring": {}, "earring": {},
	"proceed": {}, "exceed": {}, "succeed": {},
}

func lowerY(w []byte) string {
	for i := range w {
		if w[i] == 'Y' {
			w[i] = 'y'
		}
	}
	return string(w)
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// regions returns the starts of R1 and R2: R1 is what follows the first
// non-vowel that follows a vowel (or the prefixes gener, commun, arsen),
// R2 the same within R1.
func regions(w []byte) (r1, r2 int) {
	s := string(w)
	switch {
	case len(s) >= 5 && (s[:5] == "gener" || s[:5] == "arsen"):
		r1 = 5
	case len(s) >= 6 && s[:6] == "commun":
		r1 = 6
	default:
		r1 = afterVC(w, 0)
	}
	r2 = afterVC(w, r1)
	return r1, r2
}

// afterVC returns the position after the first vowel-then-non-vowel pair at
// or after from, or len(w).
func afterVC(w []byte, from int) int {
	for i := from + 1; i < len(w); i++ {
		if !isVowel(w[i]) && isVowel(w[i-1]) {
			return i + 1
		}
	}
	return len(w)
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

// longest returns the longest of suffixes that w ends with, or "".
func longest(w []byte, suffixes []string) string {
	best := ""
	for _, s := range suffixes {
		if len(s) > len(best) && hasSuffix(w, s) {
			best = s
		}
	}
	return best
}

func step0(w []byte) []byte {
	switch s := longest(w, []string{"'s'", "'s", "'"}); s {
	case "":
		return w
	default:
		return w[:len(w)-len(s)]
	}
}

func containsVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

func step1a(w []byte) []byte {
	switch s := longest(w, []string{"sses", "ied", "ies", "us", "ss", "s"}); s {
	case "sses":
		return w[:len(w)-2]
	case "ied", "ies":
		if len(w) > 4 {
			return append(w[:len(w)-3], 'i')
		}
		return append(w[:len(w)-3], 'i', 'e')
	case "s":
		// Delete when the part before the letter before the s holds a vowel.
		if len(w) >= 3 && containsVowel(w[:len(w)-2]) {
			return w[:len(w)-1]
		}
	}
	return w
}

// isShortSyllableEnd reports whether w ends in a short syllable: a vowel
// followed by a non-vowel other than w, x or Y and preceded by a non-vowel;
// or, for a word of two letters, a vowel followed by a non-vowel.
func isShortSyllableEnd(w []byte) bool {
	n := len(w)
	if n == 2 {
		return isVowel(w[0]) && !isVowel(w[1])
	}
	if n < 3 {
		return false
	}
	c := w[n-1]
	return !isVowel(w[n-3]) && isVowel(w[n-2]) && !isVowel(c) && c != 'w' && c != 'x' && c != 'Y'
}

func isShort(w []byte, r1 int) bool {
	return r1 >= len(w) && isShortSyllableEnd(w)
}

func isDouble(w []byte) bool {
	n := len(w)
	if n < 2 || w[n-1] != w[n-2] {
		return false
	}
	switch w[n-1] {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func step1b(w []byte, r1 int) []byte {
	s := longest(w, []string{"eed", "eedly", "ed", "edly", "ing", "ingly"})
	switch s {
	case "":
		return w
	case "eed", "eedly":
		if len(w)-len(s) >= r1 {
			return append(w[:len(w)-len(s)], 'e', 'e')
		}
		return w
	}
	stem := w[:len(w)-len(s)]
	if !containsVowel(stem) {
		return w
	}
	switch {
	case hasSuffix(stem, "at"), hasSuffix(stem, "bl"), hasSuffix(stem, "iz"):
		return append(stem, 'e')
	case isDouble(stem):
		return stem[:len(stem)-1]
	case isShort(stem, r1):
		return append(stem, 'e')
	}
	return stem
}

func step1c(w []byte) []byte {
	n := len(w)
	if n > 2 && (w[n-1] == 'y' || w[n-1] == 'Y') && !isVowel(w[n-2]) {
		w[n-1] = 'i'
	}
	return w
}

var step2Suffixes = []string{"tional", "enci", "anci", "abli", "entli", "izer", "ization",
	"ational", "ation", "ator", "alism", "aliti", "alli", "fulness", "ousli", "ousness",
	"iveness", "iviti", "biliti", "bli", "ogi", "fulli", "lessli", "li"}

var step2Replace = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
	"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous", "ousness": "ous",
	"iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble", "fulli": "ful", "lessli": "less",
}

func step2(w []byte, r1 int) []byte {
	s := longest(w, step2Suffixes)
	if s == "" || len(w)-len(s) < r1 {
		return w
	}
	stem := w[:len(w)-len(s)]
	switch s {
	case "ogi":
		if hasSuffix(stem, "l") {
			return append(stem, 'o', 'g')
		}
		return w
	case "li":
		if len(stem) > 0 {
			switch stem[len(stem)-1] {
			case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
				return stem
			}
		}
		return w
	}
	return append(stem, step2Replace[s]...)
}

var step3Suffixes = []string{"tional", "ational", "alize", "icate", "iciti", "ical", "ful", "ness", "ative"}

var step3Replace = map[string]string{
	"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic", "ical": "ic",
	"ful": "", "ness": "",
}

func step3(w []byte, r1, r2 int) []byte {
	s := longest(w, step3Suffixes)
	if s == "" || len(w)-len(s) < r1 {
		return w
	}
	stem := w[:len(w)-len(s)]
	if s == "ative" {
		if len(w)-len(s) >= r2 {
			return stem
		}
		return w
	}
	return append(stem, step3Replace[s]...)
}

var step4Suffixes = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement",
	"ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion"}

func step4(w []byte, r2 int) []byte {
	s := longest(w, step4Suffixes)
	if s == "" || len(w)-len(s) < r2 {
		return w
	}
	stem := w[:len(w)-len(s)]
	if s == "ion" && !hasSuffix(stem, "s") && !hasSuffix(stem, "t") {
		return w
	}
	return stem
}

func step5(w []byte, r1, r2 int) []byte {
	n := len(w)
	switch {
	case n > 0 && w[n-1] == 'e':
		stem := w[:n-1]
		if n-1 >= r2 || (n-1 >= r1 && !isShortSyllableEnd(stem)) {
			return stem
		}
	case n > 1 && w[n-1] == 'l' && w[n-2] == 'l' && n-1 >= r2:
		return w[:n-1]
	}
	return w
}
