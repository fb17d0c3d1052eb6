package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -temporal finds the fleet's module from anywhere in a clone, and says
// what to do outside one. (temporalagent/examples/fleet's tests run the
// server with -temporal end to end.)
func TestFleetRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..")
	for _, from := range []string{wd, root, filepath.Join(root, "agent")} {
		got, err := fleetRoot(from)
		if err != nil || filepath.Clean(got) != filepath.Clean(root) {
			t.Errorf("fleetRoot(%s) = %q, %v; want %s", from, got, err, root)
		}
	}
	if got, err := fleetRoot("", sourceDir()); err != nil || filepath.Clean(got) != filepath.Clean(root) {
		t.Errorf("fleetRoot from the source's directory = %q, %v", got, err)
	}
	if _, err := fleetRoot(t.TempDir()); err == nil || !strings.Contains(err.Error(), "clone of the repository") {
		t.Errorf("fleetRoot outside a clone: %v; want an error saying to run it in a clone", err)
	}
}

// -temporal runs the fleet command built beside the server's binary (as
// the guides build them) when there is one, building it in place from a
// clone, where go build leaves an up-to-date binary as it is; else it
// builds one into the user's cache directory. A file named fleet that is
// not the fleet command is not run.
func TestFleetBinary(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	self := filepath.Join(dir, "server")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A Go binary of another package, executable: not the fleet.
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fleetName), data, 0o755); err != nil {
		t.Fatal(err)
	}
	inCache := filepath.Join(cache, "toolnexus", "toolnexus-fleet")
	if bin, build, err := fleetBinary(self, "/clone", cache); err != nil || bin != inCache || !build {
		t.Errorf("beside another binary named fleet: %q, build %v, %v; want %s, built", bin, build, err, inCache)
	}
	if bin, build, err := fleetBinary("", "/clone", cache); err != nil || bin != inCache || !build {
		t.Errorf("no executable: %q, build %v, %v; want %s, built", bin, build, err, inCache)
	}
	if _, _, err := fleetBinary(self, "", cache); err == nil || !strings.Contains(err.Error(), "build -o "+filepath.Join(dir, fleetName)+" ./fleet") {
		t.Errorf("outside a clone, without the fleet beside it: %v; want an error saying how to build it beside the server", err)
	}
}
