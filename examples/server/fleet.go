package main

import (
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
)

// fleetModule is the module, relative to the repository's root, whose
// fleet command serves through Temporal: the root module never requires
// Temporal, so -temporal is served by that command.
const fleetModule = "temporalagent/examples"

// fleetFlags are the flags only the fleet command knows: with any of them
// set, the server is an instance of a fleet.
var fleetFlags = []string{"temporal", "namespace", "queue", "run-timeout", "approval-timeout", "sticky-timeout"}

// fleetRoot returns the repository's root: the first of dirs, or of their
// parents, that holds the fleet's module.
func fleetRoot(dirs ...string) (string, error) {
	for _, dir := range dirs {
		for dir != "" {
			if _, err := os.Stat(filepath.Join(dir, fleetModule, "go.mod")); err == nil {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("-temporal is served by the fleet command of the %s module, which is not in this directory or its parents: run the server from a clone of the repository", fleetModule)
}

// sourceDir is the directory of this file, when the binary was built from
// a checkout (go run, without -trimpath).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}

// fleetName is the fleet command's binary beside this one: the guides
// build both into one directory (go build -o /tmp/ …/fleet, and
// examples/server into /tmp/server). fleetPackage is its package, as its
// build information says (go version -m).
const (
	fleetName    = "fleet"
	fleetPackage = "github.com/toolnexus/toolnexus-go/" + fleetModule + "/fleet"
)

// fleetBinary returns where the fleet command's binary is, and whether it
// is to be built there from the clone: the binary beside this one (self),
// when there is one (a Go binary of the fleet's package), is used as it
// is outside a clone (root == "") and built in place inside one (go build
// leaves an up-to-date binary as it is); else the binary in cacheDir is
// built. It fails when there is neither a binary beside this one nor a
// clone to build one from.
func fleetBinary(self, root, cacheDir string) (bin string, build bool, err error) {
	if self != "" {
		beside := filepath.Join(filepath.Dir(self), fleetName)
		if bi, err := buildinfo.ReadFile(beside); err == nil && bi.Path == fleetPackage {
			return beside, root != "", nil
		}
	}
	if root == "" {
		return "", false, fmt.Errorf("-temporal is served by the fleet command of the %s module: build it beside this binary (go -C %s build -o %s ./fleet), or run the server from a clone of the repository", fleetModule, fleetModule, filepath.Join(filepath.Dir(self), fleetName))
	}
	return filepath.Join(cacheDir, "toolnexus", "toolnexus-fleet"), true, nil
}

// buildFleet builds the fleet command of the repository at root into bin,
// telling out what it does. go build leaves a binary that is up to date
// as it is: a start after the first costs a check of the sources (a few
// seconds), not a build. Instances started at once build it once: the
// build holds a lock, beside bin, that the others wait for.
func buildFleet(root, bin string, out io.Writer) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(bin), "."+filepath.Base(bin)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close() // and the lock with it
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the fleet command's build: %w", err)
	}
	fmt.Fprintf(out, "server: -temporal is served by %s/fleet (the root module never requires Temporal): building %s if it is not up to date (the first build compiles the Temporal SDK: minutes, see docs/fleet.md)\n", fleetModule, bin)
	cmd := exec.Command("go", "build", "-o", bin, "./fleet")
	cmd.Dir = filepath.Join(root, fleetModule)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s/fleet: %w", fleetModule, err)
	}
	return nil
}

// execFleet replaces this process with the fleet command, given this
// command's arguments: it serves the same agent with the same flags, its
// runs on the Temporal server of -temporal.
func execFleet(args []string) error {
	wd, _ := os.Getwd()
	root, err := fleetRoot(wd, sourceDir())
	if err != nil {
		root = ""
	}
	self, _ := os.Executable()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin, build, err := fleetBinary(self, root, cache)
	if err != nil {
		return err
	}
	if build {
		if err := buildFleet(root, bin, os.Stderr); err != nil {
			return err
		}
	}
	err = syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
	return fmt.Errorf("starting the fleet command %s: %w", bin, err)
}
