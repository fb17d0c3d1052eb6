package text

import (
	"reflect"
	"testing"
	"time"
)

func TestTokens(t *testing.T) {
	got := Tokens("Caroline's dog didn't like the Running club. Then Paris!")
	var terms []string
	var names []bool
	for _, tk := range got {
		terms = append(terms, tk.Term)
		names = append(names, tk.Name)
	}
	if want := []string{"carolin", "dog", "like", "run", "club", "pari"}; !reflect.DeepEqual(terms, want) {
		t.Errorf("terms = %q, want %q", terms, want)
	}
	if want := []bool{false, false, false, true, false, true}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
}

func TestPeriods(t *testing.T) {
	for q, want := range map[string][]Period{
		"What did Gina find on 1 February, 2023?":   {{2023, 2, 1}},
		"accepted for on May 23, 2023?":             {{2023, 5, 23}},
		"When did Melanie go camping in June?":      {{0, 6, 0}},
		"What did Mel paint in July 2023?":          {{2023, 7, 0}},
		"You may go now":                            nil,
		"What happened in May?":                     {{0, 5, 0}},
		"What setback did Melanie face in October?": {{0, 10, 0}},
	} {
		if got := Periods(q); !reflect.DeepEqual(got, want) {
			t.Errorf("Periods(%q) = %v, want %v", q, got, want)
		}
	}
	p := Period{2023, time.July, 0}
	if !p.Contains(time.Date(2023, 7, 9, 13, 0, 0, 0, time.UTC)) || p.Contains(time.Date(2022, 7, 9, 0, 0, 0, 0, time.UTC)) {
		t.Error("Contains")
	}
}
