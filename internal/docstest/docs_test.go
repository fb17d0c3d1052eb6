package docstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/citest"
	"github.com/toolnexus/toolnexus-go/internal/offline"
)

// repoRoot returns the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goCommand returns the go command, or skips the test without one.
func goCommand(t *testing.T) string {
	t.Helper()
	citest.Heavy(t, "builds the examples and runs the docs' commands and programs")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	return goBin
}

// offlineEnv returns the environment of a newcomer without a key: no
// Gemini or Vertex AI variable, no OTLP endpoint, a home of its own (the
// chat keeps its sessions in the user's config directory), and the go
// command's caches where they were, so that nothing is built twice.
func offlineEnv(t *testing.T, goBin string, path ...string) []string {
	t.Helper()
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	caches := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(caches) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	drop := regexp.MustCompile(`^(GEMINI_API_KEY|GOOGLE_API_KEY|GOOGLE_GENAI_USE_VERTEXAI|GOOGLE_GENAI_USE_ENTERPRISE|GOOGLE_CLOUD_PROJECT|GOOGLE_CLOUD_LOCATION|OTEL_EXPORTER_OTLP_[A-Z_]*|HOME|XDG_CONFIG_HOME|GOCACHE|GOMODCACHE|GOPATH|GOWORK|GOTOOLCHAIN|PATH)=`)
	var env []string
	for _, kv := range os.Environ() {
		if !drop.MatchString(kv) {
			env = append(env, kv)
		}
	}
	home := t.TempDir()
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GOCACHE="+caches[0], "GOMODCACHE="+caches[1], "GOPATH="+caches[2], "GOWORK=off", "GOTOOLCHAIN=local",
		"PATH="+strings.Join(append(path, filepath.Dir(goBin), os.Getenv("PATH")), string(os.PathListSeparator)))
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// The go wrapper the commands find first in PATH: go run of an example
// runs its binary, built once; any other go command is the real one.
const goWrapper = `#!/bin/sh
if [ "$1" = run ]; then
	case "$2" in
	./examples/chat | ./examples/server | ./examples/mcpserver | ./examples/openapi)
		bin="$DOCSTEST_BIN/${2#./examples/}"
		shift 2
		exec "$bin" "$@" ;;
	esac
fi
exec "$DOCSTEST_GO" "$@"
`

// offlineHelp is the start of the offline model's answer to a question
// it does not understand.
var offlineHelp = offline.Help[:strings.Index(offline.Help, ":")]

var (
	// servesRE matches a command that serves until it is stopped.
	servesRE = regexp.MustCompile(`^go run \./examples/(server\b|chat\b.*\s-web\s|mcpserver\b.*\s-http\s)`)
	// wholeModuleRE matches a go test of the whole module, which would
	// run this test again.
	wholeModuleRE = regexp.MustCompile(`\bgo test\b.*\s\./\.\.\.(\s|$)`)
)

// TestDocsCommands runs every command of README.md and docs/*.md, offline,
// file by file: each file's commands run in order in one bash script (so
// that a variable one sets is there for the next), each command a failure
// of the file when it fails; a command that serves is started in the
// background, checked to listen, and stopped when the next one starts or
// the file ends.
func TestDocsCommands(t *testing.T) {
	goBin := goCommand(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash:", err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl:", err)
	}
	root := repoRoot(t)
	dir := t.TempDir()
	bin, wrapper := filepath.Join(dir, "bin"), filepath.Join(dir, "path")
	for _, d := range []string{bin, wrapper} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wrapper, "go"), []byte(goWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	env := offlineEnv(t, goBin, wrapper)
	env = append(env, "DOCSTEST_BIN="+bin, "DOCSTEST_GO="+goBin)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin+string(os.PathSeparator),
		"./examples/chat", "./examples/server", "./examples/mcpserver", "./examples/openapi")
	build.Dir, build.Env = root, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the examples: %v\n%s", err, out)
	}

	for _, file := range markdownFiles(t, root) {
		t.Run(file, func(t *testing.T) {
			script, n := fileScript(t, root, file, freePort(t))
			if n == 0 {
				t.Skip("no command to run")
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", script)
			cmd.Dir, cmd.Env = root, env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// A question the offline model does not understand gets its
			// help text: the docs promise an answer.
			if i := strings.Index(string(out), offlineHelp); i >= 0 {
				at := string(out[:i])
				at = at[strings.LastIndex(at, "--- ")+len("--- "):]
				t.Errorf("%s: the offline model did not understand it:\n%s", strings.SplitN(at, "\n", 2)[0], out)
			}
			t.Logf("%d commands ran\n%s", n, out)
		})
	}
}

// fileScript returns the bash script that runs a markdown file's
// commands, with port in place of 8080, and how many commands it runs.
func fileScript(t *testing.T, root, file, port string) (string, int) {
	var b strings.Builder
	// A server the script started is stopped, with every process of the
	// script, when it ends; an error's line is the markdown's.
	b.WriteString(`set -eo pipefail
server=
stop_server() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; server=; fi; }
trap stop_server EXIT
trap 'echo "FAILED: $at" >&2' ERR
`)
	n := 0
	for _, blk := range blocks(t, root, file) {
		if blk.lang != "sh" {
			continue
		}
		for _, c := range commands(blk) {
			at := fmt.Sprintf("%s:%d: %s", file, c.line, strings.SplitN(c.text, "\n", 2)[0])
			switch {
			case c.skip != "":
				t.Logf("%s: skipped: %s", at, c.skip)
				continue
			case wholeModuleRE.MatchString(c.text):
				t.Logf("%s: skipped: the whole module's tests, this one among them", at)
				continue
			}
			n++
			text := strings.ReplaceAll(c.text, "localhost:8080", "localhost:"+port)
			fmt.Fprintf(&b, "at=%s\necho \"--- $at\" >&2\n", shellQuote(at))
			if servesRE.MatchString(text) {
				// Started, then checked to listen for up to a minute.
				text = strings.TrimSuffix(strings.TrimSpace(text), "&")
				fmt.Fprintf(&b, `stop_server
%s &
server=$!
for i in $(seq 600); do
	if (exec 3<>/dev/tcp/localhost/%s) 2>/dev/null; then break; fi
	if ! kill -0 "$server" 2>/dev/null; then echo "FAILED: $at: exited instead of serving" >&2; exit 1; fi
	sleep 0.1
done
(exec 3<>/dev/tcp/localhost/%s) 2>/dev/null || { echo "FAILED: $at: not listening on %s after a minute" >&2; exit 1; }
`, text, port, port, port)
				continue
			}
			b.WriteString(text + "\n") // stdin is /dev/null, but for a pipe
		}
	}
	return b.String(), n
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
