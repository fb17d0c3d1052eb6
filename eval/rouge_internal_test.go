package eval

import (
	"math"
	"testing"
)

// TestPorterStem checks the stemmer against NLTK's PorterStemmer() in its
// default mode (NLTK_EXTENSIONS): the plural and suffix examples of
// nltk/test/stem.doctest, the cases of nltk/test/unit/test_stem.py
// (test_oed_bug, test_lowercase_option), and words chosen to reach every
// rule, with the stems nltk 3.8 gives them (porter.py is unchanged in
// NLTK's main branch since). While it was written, the stemmer also agreed
// with NLTK on all 473,233 distinct tokens of the module cache's and the
// shared directory's text.
func TestPorterStem(t *testing.T) {
	for _, tc := range []struct{ word, want string }{
		{"running", "run"}, {"runs", "run"}, {"ran", "ran"}, {"quickly", "quickli"},
		{"weather", "weather"}, {"sunny", "sunni"}, {"forecast", "forecast"},
		{"temperature", "temperatur"}, {"cities", "citi"}, {"city", "citi"}, {"cloudy", "cloudi"},
		{"rainy", "raini"}, {"agents", "agent"}, {"agent", "agent"}, {"calling", "call"},
		{"called", "call"}, {"calls", "call"}, {"tools", "tool"}, {"tool", "tool"},
		{"responses", "respons"}, {"response", "respons"}, {"answered", "answer"},
		{"answers", "answer"}, {"happily", "happili"}, {"happiness", "happi"},
		{"relational", "relat"}, {"conditional", "condit"}, {"rational", "ration"},
		{"generously", "gener"}, {"generalization", "gener"}, {"operator", "oper"},
		{"feudalism", "feudal"}, {"decisiveness", "decis"}, {"hopefulness", "hope"},
		{"callousness", "callous"}, {"formality", "formal"}, {"sensitivity", "sensit"},
		{"sensibility", "sensibl"}, {"triplicate", "triplic"}, {"formative", "form"},
		{"formalize", "formal"}, {"electricity", "electr"}, {"electrical", "electr"},
		{"hopeful", "hope"}, {"goodness", "good"}, {"revival", "reviv"}, {"allowance", "allow"},
		{"inference", "infer"}, {"airliner", "airlin"}, {"gyroscopic", "gyroscop"},
		{"adjustable", "adjust"}, {"defensible", "defens"}, {"irritant", "irrit"},
		{"replacement", "replac"}, {"adjustment", "adjust"}, {"dependent", "depend"},
		{"adoption", "adopt"}, {"homologous", "homolog"}, {"communism", "commun"},
		{"activate", "activ"}, {"angularity", "angular"}, {"effective", "effect"},
		{"bowdlerize", "bowdler"}, {"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"},
		{"controlling", "control"}, {"roll", "roll"}, {"caresses", "caress"}, {"flies", "fli"},
		{"dies", "die"}, {"mules", "mule"}, {"denied", "deni"}, {"died", "die"},
		{"agreed", "agre"}, {"owned", "own"}, {"humbled", "humbl"}, {"sized", "size"},
		{"meeting", "meet"}, {"stating", "state"}, {"siezing", "siez"}, {"itemization", "item"},
		{"sensational", "sensat"}, {"traditional", "tradit"}, {"reference", "refer"},
		{"colonizer", "colon"}, {"plotted", "plot"}, {"guesses", "guess"},
		{"addresses", "address"}, {"bypasses", "bypass"}, {"copies", "copi"},
		{"capabilities", "capabl"}, {"fries", "fri"}, {"assess", "assess"}, {"process", "process"},
		{"piss", "piss"}, {"need", "need"}, {"seed", "seed"}, {"proceed", "proceed"},
		{"simplified", "simplifi"}, {"unmodified", "unmodifi"}, {"unspecified", "unspecifi"},
		{"padded", "pad"}, {"seated", "seat"}, {"unregistered", "unregist"}, {"modeling", "model"},
		{"featuring", "featur"}, {"crossing", "cross"}, {"fabricating", "fabric"},
		{"floating", "float"}, {"creating", "creat"}, {"sibling", "sibl"}, {"dropping", "drop"},
		{"wrapping", "wrap"}, {"skipping", "skip"}, {"omitting", "omit"}, {"hitting", "hit"},
		{"chatting", "chat"}, {"compelling", "compel"}, {"unmarshalling", "unmarshal"},
		{"billing", "bill"}, {"processing", "process"}, {"missing", "miss"}, {"trailing", "trail"},
		{"scheduling", "schedul"}, {"failing", "fail"}, {"gardening", "garden"},
		{"evening", "even"}, {"mutually", "mutual"}, {"likely", "like"}, {"friendly", "friendli"},
		{"pretty", "pretti"}, {"nursery", "nurseri"}, {"identify", "identifi"},
		{"educational", "educ"}, {"informational", "inform"}, {"fictional", "fiction"},
		{"functional", "function"}, {"additional", "addit"}, {"fertilizer", "fertil"},
		{"summarizer", "summar"}, {"optimization", "optim"}, {"summarization", "summar"},
		{"conversation", "convers"}, {"narration", "narrat"}, {"creation", "creation"},
		{"translator", "translat"}, {"evaluator", "evalu"}, {"numerator", "numer"},
		{"helpfulness", "help"}, {"fabricate", "fabric"}, {"duplicate", "duplic"},
		{"informative", "inform"}, {"native", "nativ"}, {"generative", "gener"},
		{"serialize", "serial"}, {"alphabetical", "alphabet"}, {"identical", "ident"},
		{"clinical", "clinic"}, {"faithful", "faith"}, {"successful", "success"},
		{"helpful", "help"}, {"harness", "har"}, {"completeness", "complet"},
		{"financial", "financi"}, {"llminternal", "llmintern"}, {"refusal", "refus"},
		{"relevance", "relev"}, {"france", "franc"}, {"performance", "perform"},
		{"resilience", "resili"}, {"confidence", "confid"}, {"sequence", "sequenc"},
		{"earlier", "earlier"}, {"older", "older"}, {"december", "decemb"}, {"topic", "topic"},
		{"metric", "metric"}, {"synthetic", "synthet"}, {"usable", "usabl"},
		{"suitable", "suitabl"}, {"readable", "readabl"}, {"impossible", "imposs"},
		{"flexible", "flexibl"}, {"legible", "legibl"}, {"variant", "variant"},
		{"lastassistant", "lastassist"}, {"qdrant", "qdrant"}, {"implement", "implement"},
		{"placement", "placement"}, {"requirement", "requir"}, {"management", "manag"},
		{"entertainment", "entertain"}, {"argument", "argument"}, {"engagement", "engag"},
		{"aagent", "aagent"}, {"nutrient", "nutrient"}, {"immersion", "immers"},
		{"expression", "express"}, {"lesion", "lesion"}, {"duration", "durat"},
		{"proportion", "proport"}, {"isolation", "isol"}, {"xhpjmou", "xhpjmou"},
		{"oxkbjwijusou", "oxkbjwijus"}, {"pfnou", "pfnou"}, {"determinism", "determin"},
		{"parallelism", "parallel"}, {"tolerate", "toler"}, {"evaluate", "evalu"},
		{"candidate", "candid"}, {"famous", "famou"}, {"various", "variou"},
		{"delicious", "delici"}, {"arrive", "arriv"}, {"alternative", "altern"},
		{"depressive", "depress"}, {"size", "size"}, {"customize", "custom"},
		{"optimize", "optim"}, {"tqdwe", "tqdwe"}, {"igsue", "igsu"}, {"suite", "suit"},
		{"kzll", "kzll"}, {"wall", "wall"}, {"payroll", "payrol"}, {"sky", "sky"},
		{"skies", "sky"}, {"dying", "die"}, {"lying", "lie"}, {"tying", "tie"}, {"news", "news"},
		{"innings", "inning"}, {"inning", "inning"}, {"outings", "outing"}, {"outing", "outing"},
		{"cannings", "canning"}, {"canning", "canning"}, {"howe", "howe"}, {"exceed", "exceed"},
		{"succeed", "succeed"}, {"oed", "o"}, {"spies", "spi"}, {"spied", "spi"}, {"cried", "cri"},
		{"ties", "tie"}, {"enjoy", "enjoy"}, {"spy", "spi"}, {"fly", "fli"}, {"try", "tri"},
		{"geology", "geolog"}, {"theology", "theolog"}, {"archaeology", "archaeolog"},
		{"1234s", "1234"}, {"2024", "2024"}, {"covid19s", "covid19"}, {"tss", "tss"}, {"ss", "ss"},
		{"is", "is"}, {"as", "as"}, {"yes", "ye"}, {"gas", "ga"}, {"abys", "abi"},
		{"ying", "ying"},
		// nltk/test/unit/test_stem.py
		{"On", "on"}, {"I", "i"}, {"Github", "github"},
	} {
		if got := porterStem(tc.word); got != tc.want {
			t.Errorf("porterStem(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func near(a, b, tolerance float64) bool { return math.Abs(a-b) <= tolerance }

// TestRouge1 checks ROUGE-1 against the numbers of rouge_score's own tests
// (google-research/google-research rouge/rouge_scorer_test.py:
// testRouge1, testRougeEmpty, testRouge1AgainstRouge155 and
// ...WithStemming, whose texts are the first two lines of
// rouge/testdata/target.txt and prediction.txt, scored by ROUGE-1.5.5)
// and of ADK's (google/adk-python
// tests/unittests/evaluation/test_final_response_match_v1.py:
// test_calculate_rouge_1_scores*).
func TestRouge1(t *testing.T) {
	const (
		target0     = "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L\n"
		prediction0 = "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi\n"
		target1     = "KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing sbKao Q m qiing LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing tQ.saefZwJtKrTlixYpMMsJing UCAPwNHeYVjDing c T BUySKtion gMPfJpwGw p'NvxAoping eu pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN\n"
		prediction1 = "n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed HqqLFXe,XPY,J XsurkMeo ,ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD\n"
	)
	for _, tc := range []struct {
		name                 string
		candidate, reference string
		stem                 bool
		precision, recall, f float64
		tolerance            float64
	}{
		{"testRouge1", "testing", "testing one two", false, 1, 1.0 / 3, 0.5, 1e-9},
		{"testRouge1 stemmed", "testing", "testing one two", true, 1, 1.0 / 3, 0.5, 1e-9},
		{"testRougeEmpty", "", "testing one two", true, 0, 0, 0, 0},
		{"ROUGE-1.5.5 line 1", prediction0, target0, false, 0.68750, 0.40741, 0.51163, 5e-6},
		{"ROUGE-1.5.5 line 2", prediction1, target1, false, 0.65385, 0.40476, 0.50000, 5e-6},
		{"ROUGE-1.5.5 line 1 stemmed", prediction0, target0, true, 0.68750, 0.40741, 0.51163, 5e-6},
		{"ROUGE-1.5.5 line 2 stemmed", prediction1, target1, true, 0.69231, 0.42857, 0.52941, 5e-6},
		{"ADK both empty", "", "", true, 0, 0, 0, 0},
		{"ADK empty reference", "This is a test candidate response.", "", true, 0, 0, 0, 0},
		{"ADK", "This is a test candidate response.", "This is a test reference.", true, 2.0 / 3, 4.0 / 5, 8.0 / 11, 1e-9},
	} {
		got := rouge1(rougeTokens(tc.candidate, tc.stem), rougeTokens(tc.reference, tc.stem))
		if !near(got.Precision, tc.precision, tc.tolerance) || !near(got.Recall, tc.recall, tc.tolerance) || !near(got.F, tc.f, tc.tolerance) {
			t.Errorf("%s: ROUGE-1 = %+v, want P %.5f R %.5f F %.5f", tc.name, got, tc.precision, tc.recall, tc.f)
		}
		if tc.stem {
			if pub := Rouge1(tc.candidate, tc.reference); pub != got {
				t.Errorf("%s: Rouge1 = %+v, want %+v (both texts are Latin: stemmed)", tc.name, pub, got)
			}
		}
	}
}

// TestRougeTokens checks the tokenizer where Python and Go differ: Python
// lowercases İ to i and a combining dot, the Kelvin sign to k; digits are
// words; stemming needs more than three characters.
func TestRougeTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"İstanbul", []string{"i", "stanbul"}},
		{"5 \u212Aelvin", []string{"5", "kelvin"}},
		{"Running runs RAN", []string{"run", "run", "ran"}},
		{"it's 12:30, café", []string{"it", "s", "12", "30", "caf"}},
		{"  ---  ", nil},
		{"The tools' calls", []string{"the", "tool", "call"}},
	} {
		got := rougeTokens(tc.text, true)
		if len(got) != len(tc.want) {
			t.Errorf("rougeTokens(%q) = %q, want %q", tc.text, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("rougeTokens(%q) = %q, want %q", tc.text, got, tc.want)
				break
			}
		}
	}
}

// TestLatinScript checks the stemming switch against ADK's tests of
// _is_latin_script (test_final_response_match_v1.py, TestIsLatinScript).
func TestLatinScript(t *testing.T) {
	for text, want := range map[string]bool{
		"": true, "Hello world": true, "The quick brown fox": true,
		"Olá, como você está?": true, "São Paulo é uma cidade": true,
		"Bonjour, comment allez-vous?": true, "français café résumé": true,
		"Guten Tag, wie geht es Ihnen?": true, "Größe Übung Äpfel": true,
		"สวัสดี": false, "สวัสดีครับ": false, "你好": false, "中文测试": false,
		"مرحبا": false, "اللغة العربية": false, "こんにちは": false, "日本語テスト": false,
		"안녕하세요": false, "한국어 테스트": false, "12345": true, "!@#$%": true,
		"Hello 你好 world test": true, "你好世界 Hi": false,
		// Letters whose names do not say LATIN, though Go's tables put
		// them in the Latin script.
		"ªºʰʱ": false, "\u212A\u212B": false,
	} {
		if got := latinScript(text); got != want {
			t.Errorf("latinScript(%q) = %v, want %v", text, got, want)
		}
	}
	// Mixed texts stem only when both are Latin: "running" against
	// "run" matches in English, not next to a mostly Thai text.
	if s := Rouge1("I am running fast", "I am run fast"); s.F != 1 {
		t.Errorf("English stemmed: F = %v, want 1 (ADK: test_english_stemming_running_vs_run)", s.F)
	}
	if s := Rouge1("running สวัสดีครับผม", "run"); s.F != 0 {
		t.Errorf("non-Latin candidate: F = %v, want 0 (not stemmed)", s.F)
	}
}
