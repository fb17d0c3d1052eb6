//go:build ignore

// slowest.go reads go test -json on its standard input and prints the
// slowest packages and tests, and the failures (see .ci/slowest).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// top is how many packages and tests are listed.
const top = 15

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

type timing struct {
	name    string
	seconds float64
	action  string
}

func main() {
	var pkgs, tests []timing
	var failed []string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a build error's text
		}
		if e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
			continue
		}
		pkg := shortName(e.Package)
		switch {
		case e.Test == "":
			pkgs = append(pkgs, timing{pkg, e.Elapsed, e.Action})
		case !strings.Contains(e.Test, "/"): // subtests are counted in their parent
			tests = append(tests, timing{pkg + " " + e.Test, e.Elapsed, e.Action})
		}
		if e.Action == "fail" {
			failed = append(failed, strings.TrimSpace(pkg+" "+e.Test))
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "reading go test -json:", err)
		os.Exit(1)
	}
	list("slowest packages (the test binary's run)", pkgs)
	list("slowest tests", tests)
	if len(failed) > 0 {
		fmt.Printf("\nfailed:\n  %s\n", strings.Join(failed, "\n  "))
	}
}

// list prints the top entries of ts, slowest first, and their sum.
func list(title string, ts []timing) {
	slices.SortStableFunc(ts, func(a, b timing) int {
		switch {
		case a.seconds > b.seconds:
			return -1
		case a.seconds < b.seconds:
			return 1
		}
		return 0
	})
	var sum float64
	for _, t := range ts {
		sum += t.seconds
	}
	fmt.Printf("\n%s: %d, %.1f s in all\n", title, len(ts), sum)
	for _, t := range ts[:min(top, len(ts))] {
		mark := ""
		if t.action != "pass" {
			mark = "  (" + t.action + ")"
		}
		fmt.Printf("  %7.2f s  %s%s\n", t.seconds, t.name, mark)
	}
}

// shortName returns a package's path in this module, or its whole path.
func shortName(pkg string) string {
	return strings.TrimPrefix(strings.TrimPrefix(pkg, "github.com/toolnexus/toolnexus-go"), "/")
}
