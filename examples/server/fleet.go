package main

import (
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

// buildFleet builds the fleet command of the repository at root into dir,
// telling out what it does (the first build compiles the Temporal SDK),
// and returns the binary's path.
func buildFleet(root, dir string, out io.Writer) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "toolnexus-fleet")
	fmt.Fprintf(out, "server: -temporal is served by %s/fleet (the root module never requires Temporal): building it (the first time, a minute or two)\n", fleetModule)
	cmd := exec.Command("go", "build", "-o", bin, "./fleet")
	cmd.Dir = filepath.Join(root, fleetModule)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s/fleet: %w", fleetModule, err)
	}
	return bin, nil
}

// execFleet replaces this process with the fleet command, given this
// command's arguments: it serves the same agent with the same flags, its
// runs on the Temporal server of -temporal.
func execFleet(args []string) error {
	wd, _ := os.Getwd()
	root, err := fleetRoot(wd, sourceDir())
	if err != nil {
		return err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin, err := buildFleet(root, filepath.Join(cache, "toolnexus"), os.Stderr)
	if err != nil {
		return err
	}
	err = syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
	return fmt.Errorf("starting the fleet command: %w", err)
}
