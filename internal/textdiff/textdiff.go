// Package textdiff writes line diffs for test failures: the lines of a
// want and a got text, prefixed "- " (only in want), "+ " (only in got) or
// "  " (in both), in order. Unlike go-cmp's output, which varies on purpose,
// the text is stable, so that it can be read and checked.
package textdiff

import "strings"

// Lines returns the diff of want against got, line by line, a line per
// line ending in "\n"; "" when they are equal. The lines in common are a
// longest common subsequence, so that a change shows as the lines it
// touches.
func Lines(want, got []string) string {
	// lcs[i][j] is the length of a longest common subsequence of want[i:]
	// and got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	changed := false
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			b.WriteString("  " + want[i] + "\n")
			i, j = i+1, j+1
		case j < len(got) && (i == len(want) || lcs[i][j+1] > lcs[i+1][j]):
			b.WriteString("+ " + got[j] + "\n")
			j, changed = j+1, true
		default:
			b.WriteString("- " + want[i] + "\n")
			i, changed = i+1, true
		}
	}
	if !changed {
		return ""
	}
	return b.String()
}

// Text returns the diff of two texts, split into lines (see [Lines]).
func Text(want, got string) string {
	return Lines(split(want), split(got))
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Trim keeps, of a diff made by [Lines] or [Text], the changed lines and n
// unchanged lines around each change; each run of unchanged lines left out
// becomes one line "  …".
func Trim(diff string, n int) string {
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "+ ") {
			for j := max(0, i-n); j <= min(len(lines)-1, i+n); j++ {
				keep[j] = true
			}
		}
	}
	var b strings.Builder
	for i, l := range lines {
		switch {
		case keep[i]:
			b.WriteString(l)
		case i == 0 || keep[i-1]:
			b.WriteString("  …\n")
		}
	}
	return b.String()
}
