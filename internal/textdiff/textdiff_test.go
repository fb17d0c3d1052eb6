package textdiff

import "testing"

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		diff      string
	}{
		{nil, nil, ""},
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"a"}, nil, "- a\n"},
		{nil, []string{"a"}, "+ a\n"},
		{[]string{"a", "b", "c"}, []string{"a", "x", "c"}, "  a\n- b\n+ x\n  c\n"},
		{[]string{"a", "b", "c", "d"}, []string{"b", "c", "d", "e"}, "- a\n  b\n  c\n  d\n+ e\n"},
		{[]string{"x", "a", "b"}, []string{"a", "b", "x"}, "- x\n  a\n  b\n+ x\n"},
	} {
		if got := Lines(tc.want, tc.got); got != tc.diff {
			t.Errorf("Lines(%q, %q) =\n%s\nwant\n%s", tc.want, tc.got, got, tc.diff)
		}
	}
	if got := Text("a\nb\n", "a\nc\n"); got != "  a\n- b\n+ c\n" {
		t.Errorf("Text = %q", got)
	}
}
