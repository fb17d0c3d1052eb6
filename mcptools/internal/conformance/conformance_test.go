// Package conformance holds mcptools to the official MCP conformance suite,
// @modelcontextprotocol/conformance, on both sides: the suite plays the
// servers that ./client (mcptools.Connect, with mcptools.Login) talks to,
// and the client that talks to ./server (mcptools.NewServer). Each side
// is run twice: for the requirements of protocol revision 2026-07-28
// (stateless; --requirements 2026-07-28) and for those of 2025-11-25
// (sessions; --spec-version 2025-11-25). Every scenario
// must pass except those in the revision's baseline,
// baseline-2026-07-28.yml or baseline-2025-11-25.yml, which says why each
// one does not.
//
// The suite and the Node 22 it needs come from the npm registry through
// this directory's package.json and lockfile:
//
//	(cd mcptools/internal/conformance && npm ci)
//	go test ./mcptools/internal/conformance -v
//
// Without them the tests skip, saying so; with TOOLNEXUS_JS_REQUIRED=1 (as
// .ci/run sets it) they fail instead. Once installed, the suite reaches
// nothing but loopback.
package conformance_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// suiteTimeout bounds a whole suite run: a hang guard.
const suiteTimeout = 12 * time.Minute

// suite returns the Node 22 binary and the suite's entry point installed
// here, skipping the test when they are not (failing it when
// TOOLNEXUS_JS_REQUIRED=1).
func suite(t *testing.T) (node, entry string) {
	t.Helper()
	node, _ = filepath.Abs(filepath.Join("node_modules", "node", "bin", "node"))
	entry, _ = filepath.Abs(filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	for _, f := range []string{node, entry} {
		if _, err := os.Stat(f); err != nil {
			unavailable(t, "the conformance suite is not installed (%v): run npm ci in mcptools/internal/conformance", err)
		}
	}
	out, err := exec.Command(node, "--version").Output()
	if v := strings.TrimSpace(string(out)); err != nil || !strings.HasPrefix(v, "v22.") {
		unavailable(t, "%s is not Node 22 (%q, %v): run npm ci in mcptools/internal/conformance", node, v, err)
	}
	return node, entry
}

// unavailable skips the test, or fails it when the JS tests are required.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("TOOLNEXUS_JS_REQUIRED") == "1" {
		t.Fatalf(format+" (TOOLNEXUS_JS_REQUIRED=1)", args...)
	}
	t.Skipf(format, args...)
}

// build builds the program in ./dir and returns its path.
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), dir)
	out, err := exec.Command("go", "build", "-o", bin, "./"+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./%s: %v\n%s", dir, err, out)
	}
	return bin
}

// revisions are the protocol revisions the suite holds each side to: the
// arguments that select a revision's requirements on the server side and
// on the client side, and its baseline.
var revisions = []struct {
	name                   string
	serverArgs, clientArgs []string
	baseline               string
}{
	{"2026-07-28", []string{"--requirements", "2026-07-28"}, []string{"--requirements", "2026-07-28"}, "baseline-2026-07-28.yml"},
	{"2025-11-25", []string{"--suite", "active", "--spec-version", "2025-11-25"}, []string{"--suite", "all", "--spec-version", "2025-11-25"},
		"baseline-2025-11-25.yml"},
}

// runSuite runs the suite with args and baseline, and fails the test when
// it fails: a failure not in the baseline, or a baseline entry that
// passes. The per-scenario lines and the verdict are logged.
func runSuite(t *testing.T, ctx context.Context, baseline string, args ...string) {
	t.Helper()
	node, entry := suite(t)
	args = append([]string{entry}, args...)
	args = append(args, "--expected-failures", baseline, "--output-dir", t.TempDir())
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	var summary []string
	inSummary := false
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(stripColor(line), "\n")
		switch {
		case strings.HasPrefix(line, "=== SUMMARY ==="):
			inSummary = true
		case strings.HasPrefix(line, "Total:"):
			inSummary = true // the baseline's verdict follows
			summary = append(summary, line)
		case inSummary, strings.HasPrefix(line, "✓ "), strings.HasPrefix(line, "✗ "):
			if strings.TrimSpace(line) != "" {
				summary = append(summary, line)
			}
		}
	}
	t.Logf("conformance %s:\n%s", args[1], strings.Join(summary, "\n"))
	if err != nil {
		t.Fatalf("the conformance suite failed (%v):\n%s", err, stripColor(string(out)))
	}
}

// stripColor removes ANSI color sequences.
func stripColor(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The server side: the suite's client against mcptools.NewServer.
func TestServer(t *testing.T) {
	suite(t)
	ctx, cancel := context.WithTimeout(t.Context(), suiteTimeout)
	defer cancel()
	srv := exec.Command(build(t, "server"), "-addr", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		if err := srv.Wait(); err != nil {
			t.Errorf("the server: %v\n%s", err, stderr.String())
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server gave no URL: %v\n%s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("the server's URL is %q", url)
	}
	for _, rev := range revisions {
		t.Run(rev.name, func(t *testing.T) {
			runSuite(t, ctx, rev.baseline, append([]string{"server", "--url", url}, rev.serverArgs...)...)
		})
	}
}

// The client side: mcptools' client against the suite's servers, its
// authorization servers included.
func TestClient(t *testing.T) {
	suite(t)
	ctx, cancel := context.WithTimeout(t.Context(), suiteTimeout)
	defer cancel()
	client := build(t, "client")
	if strings.ContainsAny(client, " \t") {
		t.Skipf("the client's path %q has a space, which the suite's --command would split", client)
	}
	// The suite runs the scenarios at once; on a loaded machine a client
	// may need longer than the suite's default 30 s.
	for _, rev := range revisions {
		t.Run(rev.name, func(t *testing.T) {
			runSuite(t, ctx, rev.baseline, append([]string{"client", "--command", client,
				"--timeout", fmt.Sprint((2 * time.Minute).Milliseconds())}, rev.clientArgs...)...)
		})
	}
}
