package text

import "testing"

func TestStem(t *testing.T) {
	for word, want := range map[string]string{
		"consign": "consign", "consigned": "consign", "consigning": "consign", "consignment": "consign",
		"consist": "consist", "consisted": "consist", "consistency": "consist", "consistent": "consist",
		"running": "run", "runs": "run", "ran": "ran", "generously": "generous", "generate": "generat",
		"caresses": "caress", "ponies": "poni", "ties": "tie", "cries": "cri", "gaps": "gap", "gas": "gas",
		"kiwis": "kiwi", "hopping": "hop", "hoped": "hope", "luxuriated": "luxuri", "feed": "feed",
		"agreed": "agre", "happily": "happili", "skies": "sky", "dying": "die", "news": "news",
		"painting": "paint", "painted": "paint", "paints": "paint", "adoption": "adopt", "adopting": "adopt",
		"communities": "communiti", "community": "communiti", "camping": "camp", "camped": "camp",
		"swimming": "swim", "pottery": "potteri", "counseling": "counsel", "counselor": "counselor",
		"transgender": "transgend", "inspiring": "inspir", "inspired": "inspir", "friends": "friend",
		"cry": "cri", "by": "by", "say": "say", "playing": "play", "played": "play", "children": "children",
		"meeting": "meet", "meetings": "meet", "bicycle": "bicycl", "happiness": "happi", "beautiful": "beauti",
		"caroline's": "carolin", "'tis": "tis", "fluently": "fluentli", "abundantly": "abund", "knitting": "knit",
		"nationality": "nation", "rational": "ration", "hopeful": "hope", "innings": "inning",
	} {
		if got := Stem(word); got != want {
			t.Errorf("Stem(%q) = %q, want %q", word, got, want)
		}
	}
}
