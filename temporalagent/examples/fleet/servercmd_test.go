package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// The command: examples/server (of the root module, which never
// requires Temporal) with -temporal and -db serves as an instance of the
// fleet, by running this module's fleet command with the same flags: the
// one built beside it, as the guides build them, which is up to date and
// so not built again. Its runs are workflows on the Temporal server, and
// it stops cleanly on SIGTERM.
func TestServerCommandTemporal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds examples/server and the fleet command")
	}
	f := newProcFleet(t)
	ts := shared(t)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, fleet := filepath.Join(dir, "server"), filepath.Join(dir, "fleet")
	for _, b := range []struct{ dir, pkg, out string }{{root, "./examples/server", bin}, {filepath.Join(root, "temporalagent", "examples"), "./fleet", fleet}} {
		build := exec.Command("go", "build", "-o", b.out, b.pkg)
		build.Dir = b.dir
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", b.pkg, err, out)
		}
	}
	built, err := os.Stat(fleet)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-temporal", ts.GetFrontendHostPort(), "-namespace", ts.GetDefaultNamespace(),
		"-db", f.db, "-queue", f.queue, "-addr", "127.0.0.1:0")
	cmd.Dir = root
	// Its own process group, so that a kill reaches the go build it runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A fleet command it built would go into the user's cache directory: a
	// temporary one here, with Go's build cache where it is.
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache, "GOCACHE=" + strings.TrimSpace(string(gocache))}
	var url string
	p, err := startCmd(t, "server -temporal", cmd, env, func(line string) bool {
		u, ok := field(line, "msg=serving", "url")
		if ok {
			url = u
		}
		return ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.matching("msg=\"serving through Temporal\"")) != 1 {
		t.Fatalf("the server does not serve through Temporal:\n%s", p.output())
	}
	// It ran the fleet beside it, up to date: go build left it as it was
	// (a new build would be a new file, renamed into place), and built
	// nothing in the cache directory.
	now, err := os.Stat(fleet)
	if err != nil || !os.SameFile(built, now) || len(p.matching("building "+fleet)) != 1 {
		t.Errorf("the fleet beside the server was built again (%v), or not the one run:\n%s", err, p.output())
	}
	if _, err := os.Stat(filepath.Join(cache, "toolnexus", "toolnexus-fleet")); err == nil {
		t.Error("the server built a fleet command in the cache directory, though one was beside it")
	}
	chat := f.queue + "-server"
	r := doAt(t, http.DefaultClient, url, "POST", "/api/chat", map[string]any{"id": chat,
		"messages": []any{userMessage("u1", "What is the weather in Paris?")}})
	if types := r.types(); r.status != 200 || !slices.Contains(types, "tool-output-available") || !slices.Contains(types, "text-delta") || types[len(types)-1] != "finish" {
		t.Fatalf("a question: %d %v %s", r.status, types, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := f.runner.Latest(ctx, storeThread(chat))
	if err != nil || run.State != agentserver.StateDone {
		t.Fatalf("the thread's run, read from Temporal: %+v, %v", run, err)
	}
	// Not this test binary: it has no goroutine check of its own, and must
	// only exit 0.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(procGuard):
		t.Fatalf("the server did not end %v after SIGTERM:\n%s", procGuard, p.output())
	}
	if p.err != nil {
		t.Errorf("the server after SIGTERM: %v\n%s", p.err, p.output())
	}
}
