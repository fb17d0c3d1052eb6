package docstest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// firstProgram is the heading of README.md's section whose steps a
// newcomer follows in a directory of their own.
const firstProgram = "## Your first program"

// TestFirstProgram follows README.md's "Your first program" as written, in
// a new directory: main.go is the section's program, and the section's
// commands run in order (go mod init, fetching what main.go imports, go
// run). The one change is a replace directive, added right after go mod
// init, that points this module's path at this checkout; the go command
// then runs offline (GOPROXY=off, no checksum database) on the module
// cache, and with its default -mod=readonly, as a newcomer's does, so
// that a step that leaves go.sum short fails here as it fails for them.
// The program must print the offline model's answer.
func TestFirstProgram(t *testing.T) {
	goBin := goCommand(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash:", err)
	}
	root := repoRoot(t)
	var program, steps *block
	for _, b := range section(t, root, "README.md", firstProgram) {
		switch {
		case program == nil && b.lang == "go" && strings.HasPrefix(b.text, "package main\n"):
			program = &b
		case steps == nil && b.lang == "sh":
			steps = &b
		}
	}
	if program == nil || steps == nil {
		t.Fatalf("README.md's %q has no program (%v) or no commands (%v)", firstProgram, program != nil, steps != nil)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program.text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// go is a function of the script that adds the replace directive as
	// soon as go mod init has made go.mod, within a line of several
	// commands too.
	var script strings.Builder
	fmt.Fprintf(&script, `set -eo pipefail
go() {
	command go "$@" || return
	if [ "$1 $2" = "mod init" ]; then command go mod edit -replace %s; fi
}
`, shellQuote("github.com/toolnexus/toolnexus-go="+root))
	initialized := false
	for _, c := range commands(*steps) { // the block's skip marker keeps it from TestDocsCommands only
		fmt.Fprintf(&script, "echo %s >&2\n%s\n", shellQuote(fmt.Sprintf("--- README.md:%d: %s", c.line, strings.SplitN(c.text, "\n", 2)[0])), c.text)
		initialized = initialized || strings.Contains(c.text, "go mod init ")
	}
	if !initialized {
		t.Fatalf("README.md:%d: the steps make no module (go mod init):\n%s", steps.line, steps.text)
	}
	env := offlineEnv(t, goBin)
	// Offline, on the module cache; GOFLAGS empty, so that no -mod=mod
	// from the caller's environment completes go.sum behind the steps'
	// back. The go directive go mod init writes is this toolchain's.
	env = append(env, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=", "GONOSUMDB=", "GOPRIVATE=")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("README.md's steps: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	for _, city := range []string{"Paris", "Tokyo"} {
		if !strings.Contains(string(out), "sunny in "+city) {
			t.Errorf("go run . printed %q; want get_weather's answer for %s", out, city)
		}
	}
}

// section returns the fenced blocks of a markdown file's section: those
// after its heading line, before the next heading of its level or
// higher.
func section(t *testing.T, root, file, heading string) []block {
	t.Helper()
	all := blocks(t, root, file)
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	level := strings.Index(heading, " ")
	inBlock := func(line int) bool {
		for _, b := range all {
			if line >= b.line && line <= b.line+strings.Count(b.text, "\n")+2 {
				return true
			}
		}
		return false
	}
	start, end := 0, -1
	for i, l := range strings.Split(string(data), "\n") {
		line := i + 1
		if !strings.HasPrefix(l, "#") || inBlock(line) {
			continue
		}
		switch {
		case start == 0 && l == heading:
			start = line
		case start > 0 && strings.Index(l, " ") > 0 && strings.Index(l, " ") <= level && strings.Trim(l[:strings.Index(l, " ")], "#") == "":
			end = line
		}
		if end > 0 {
			break
		}
	}
	if start == 0 {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	var out []block
	for _, b := range all {
		if b.line > start && (end < 0 || b.line < end) {
			out = append(out, b)
		}
	}
	return out
}
