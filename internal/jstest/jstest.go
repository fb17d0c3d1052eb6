// Package jstest runs the official JavaScript clients of the protocols
// the project serves against its Go servers, from Go tests: the project's
// one place for JavaScript test dependencies.
//
// This directory holds package.json and its package-lock.json, which pin
// the clients (ai, @ag-ui/client, @a2a-js/sdk) and Node 22 itself (the npm package
// node@22: the machine's Node may be older, and ai@7 needs 22), and the
// Node scripts the tests run. They are installed with
//
//	npm ci --prefix internal/jstest
//
// (.ci/run does it before the tests). [Node] finds them; a test that
// needs them skips, saying why, when they are not installed, and fails
// instead when the environment sets TOOLNEXUS_JS_REQUIRED=1, as CI does,
// so that CI never skips them silently.
package jstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequiredEnv is the environment variable that makes a missing install a
// failure rather than a skip.
const RequiredEnv = "TOOLNEXUS_JS_REQUIRED"

// MinNodeMajor is the oldest Node the scripts run on.
const MinNodeMajor = 22

// A Runner runs the scripts of this directory with the installed Node.
type Runner struct {
	node string // the node binary
	dir  string // this directory, where the scripts and node_modules are
}

// Node returns the Runner of the installed clients. When they are not
// installed it skips t with the reason and the command that installs
// them, or fails it when TOOLNEXUS_JS_REQUIRED=1.
func Node(t testing.TB) *Runner {
	t.Helper()
	r, err := find()
	if err != nil {
		msg := fmt.Sprintf("the JavaScript clients are not installed (%v): run `npm ci --prefix internal/jstest`", err)
		if os.Getenv(RequiredEnv) == "1" {
			t.Fatalf("%s; %s=1 requires them", msg, RequiredEnv)
		}
		t.Skip(msg)
	}
	return r
}

// find locates this directory from the working directory (a package of
// the module), its node_modules and its Node.
func find() (*Runner, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var dir string
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/toolnexus/toolnexus-go\n")) {
			dir = filepath.Join(d, "internal", "jstest")
			break
		}
		if filepath.Dir(d) == d {
			return nil, fmt.Errorf("no module root above %s", wd)
		}
	}
	node := filepath.Join(dir, "node_modules", "node", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		return nil, fmt.Errorf("no %s", node)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", node, err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.Split(v, ".")[0])
	if major < MinNodeMajor {
		return nil, fmt.Errorf("%s is Node %s; the scripts need %d or newer", node, v, MinNodeMajor)
	}
	for _, pkg := range []string{"ai", "@ag-ui/client", "@a2a-js/sdk"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			return nil, fmt.Errorf("no %s in node_modules", pkg)
		}
	}
	return &Runner{node: node, dir: dir}, nil
}

// Run runs script (a file of this directory) with env added to the
// environment, and returns its standard output. The script fails the
// test by exiting non-zero: its output, standard error included, is then
// in the failure. timeout bounds it (a hang guard only).
func (r *Runner) Run(t testing.TB, timeout time.Duration, script string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.node, filepath.Join(r.dir, script))
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("node %s did not finish in %v:\nstdout:\n%s\nstderr:\n%s", script, timeout, stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
