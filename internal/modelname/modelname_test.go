package modelname

import "testing"

func TestMajor(t *testing.T) {
	for _, tc := range []struct {
		model string
		major int
		tail  string
		ok    bool
	}{
		{"gemini-2.5-flash", 2, ".5-flash", true},
		{"models/gemini-3-flash-preview", 3, "-flash-preview", true},
		{"publishers/google/models/gemini-10", 10, "", true},
		{"gemini-flash-latest", 0, "", false},
		{"Gemini-3-pro", 0, "", false},
		{"imagen-3", 0, "", false},
	} {
		major, tail, ok := Major(tc.model)
		if major != tc.major || tail != tc.tail || ok != tc.ok {
			t.Errorf("Major(%q) = %d, %q, %v; want %d, %q, %v", tc.model, major, tail, ok, tc.major, tc.tail, tc.ok)
		}
	}
}
