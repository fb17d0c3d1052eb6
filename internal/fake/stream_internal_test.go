package fake

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitText(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want []string
	}{
		{"hello", 0, []string{"hello"}},
		{"hello", 5, []string{"hello"}},
		{"hello", 2, []string{"he", "ll", "o"}},
		{"héllo", 2, []string{"h", "é", "ll", "o"}},
		{"✓✓", 2, []string{"✓", "✓"}}, // a rune longer than n is a piece of its own
		{"", 3, []string{""}},
	} {
		if got := splitText(tc.s, tc.n); !cmp.Equal(got, tc.want) {
			t.Errorf("splitText(%q, %d) = %q; want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
