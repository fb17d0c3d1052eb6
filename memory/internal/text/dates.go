package text

import (
	"strconv"
	"strings"
	"time"
)

// A Period is a span of days a query names: a day ("on 13 October 2023"),
// a month ("in July 2023"), or a month of any year ("in June"). Year is 0
// for the last.
type Period struct {
	Year  int
	Month time.Month
	Day   int // 0 for a whole month
}

// Contains reports whether t, in its own location, falls in p.
func (p Period) Contains(t time.Time) bool {
	y, m, d := t.Date()
	return m == p.Month && (p.Year == 0 || y == p.Year) && (p.Day == 0 || d == p.Day)
}

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

// Periods returns the dates s names: each month name, with a day of the
// month and a year beside it when it has them ("May 23, 2023", "1
// February, 2023", "July 2023", "June"). "may", which is also a verb,
// counts only with a day or a year, or written with a capital inside a
// sentence; "mar" and "march" likewise.
func Periods(s string) []Period {
	type word struct {
		w    string
		name bool
	}
	var ws []word
	Scan(s, func(w string, _ int, name bool) { ws = append(ws, word{w, name}) })
	num := func(i int) int {
		if i < 0 || i >= len(ws) {
			return 0
		}
		w := ws[i].w
		for _, suf := range []string{"st", "nd", "rd", "th"} {
			w = strings.TrimSuffix(w, suf)
		}
		n, err := strconv.Atoi(w)
		if err != nil {
			return 0
		}
		return n
	}
	var out []Period
	for i, x := range ws {
		m, ok := months[x.w]
		if !ok {
			continue
		}
		p := Period{Month: m}
		for _, j := range []int{i - 1, i + 1, i + 2} {
			switch n := num(j); {
			case n >= 1 && n <= 31 && p.Day == 0 && j != i+2:
				p.Day = n
			case n >= 1000 && n <= 9999 && p.Year == 0:
				p.Year = n
			}
		}
		if (x.w == "may" || x.w == "mar" || x.w == "march") && p.Day == 0 && p.Year == 0 && !x.name {
			continue
		}
		out = append(out, p)
	}
	return out
}
