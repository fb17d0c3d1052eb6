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
