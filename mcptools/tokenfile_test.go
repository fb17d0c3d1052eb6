package mcptools_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/mcptools"
)

// saveLogins keeps n logins, named prefix and a number, in the TokenFile
// at path, each through a TokenFile of its own, as n Logins would; it
// starts once the file start exists (none: at once).
func saveLogins(path, prefix string, n int, start string) error {
	for deadline := time.Now().Add(time.Minute); start != ""; time.Sleep(time.Millisecond) { // a hang guard only
		if _, err := os.Stat(start); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s never appeared", start)
		}
	}
	for i := range n {
		server := fmt.Sprintf("%s%d", prefix, i)
		if err := mcptools.TokenFile(path).SaveLogin(server, []byte(strconv.Quote(server))); err != nil {
			return err
		}
	}
	return nil
}

// checkLogins fails the test unless the TokenFile at path keeps n logins
// for each of prefixes.
func checkLogins(t *testing.T, path string, n int, prefixes ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Logins map[string]json.RawMessage }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the file = %s: %v", b, err)
	}
	var lost []string
	for _, p := range prefixes {
		for i := range n {
			server := fmt.Sprintf("%s%d", p, i)
			if got := string(d.Logins[server]); got != strconv.Quote(server) {
				lost = append(lost, server)
			}
		}
	}
	if len(lost) > 0 || len(d.Logins) != n*len(prefixes) {
		t.Errorf("%d logins kept of %d saved; lost: %v", len(d.Logins), n*len(prefixes), lost)
	}
}

// Logins saved at once on one path, through TokenFile values of their
// own (spelling the path in other ways), are all kept.
func TestTokenFileConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logins.json")
	const n = 30
	savers := []struct{ path, prefix string }{{path, "a"}, {dir + "/./logins.json", "b"}}
	if link := filepath.Join(t.TempDir(), "link"); os.Symlink(dir, link) == nil {
		savers = append(savers, struct{ path, prefix string }{filepath.Join(link, "logins.json"), "c"})
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(savers))
	for _, p := range savers {
		wg.Go(func() { errs <- saveLogins(p.path, p.prefix, n, "") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var prefixes []string
	for _, p := range savers {
		prefixes = append(prefixes, p.prefix)
	}
	checkLogins(t, path, n, prefixes...)
}

// Processes that save logins at once on one path keep them all.
func TestTokenFileAcrossProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "logins.json")
	const n = 30
	prefixes := []string{"p", "q", "r"}
	var cmds []*exec.Cmd
	for _, p := range prefixes {
		cmd := exec.Command(exe, serverArg, "savelogins", path, p, strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("a process saving logins: %v", err)
		}
	}
	checkLogins(t, path, n, prefixes...)
}
