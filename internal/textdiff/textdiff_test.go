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

func TestTrim(t *testing.T) {
	d := Lines([]string{"a", "b", "c", "d", "e", "f", "g"}, []string{"a", "b", "c", "X", "e", "f", "g"})
	if got, want := Trim(d, 1), "  …\n  c\n- d\n+ X\n  e\n  …\n"; got != want {
		t.Errorf("Trim(1) = %q, want %q", got, want)
	}
	if got := Trim(d, 10); got != d {
		t.Errorf("Trim(10) = %q, want the whole diff", got)
	}
	if got := Trim("", 2); got != "" {
		t.Errorf("Trim of no diff = %q", got)
	}
}
