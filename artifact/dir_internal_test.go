package artifact

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A listing that fails fails the save, and one that misses versions (a
// stale view) never costs one: the store never guesses a version number
// (adk-java#1418: after a failed listing, a save took version 0 and
// overwrote it).
func TestDirNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := Key{User: "u", Thread: "t", Name: "f.txt"}
	if _, err := d.Save(ctx, k, strings.NewReader("first"), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	real := d.readDir
	nameDir := d.nameDir(k)

	d.readDir = func(dir string) ([]os.DirEntry, error) {
		if dir == nameDir {
			return nil, errors.New("I/O error")
		}
		return real(dir)
	}
	if _, err := d.Save(ctx, k, strings.NewReader("second"), SaveOptions{}); err == nil {
		t.Fatal("a save whose listing failed succeeded")
	}

	d.readDir = func(dir string) ([]os.DirEntry, error) {
		if dir == nameDir {
			return nil, nil // a listing that shows nothing
		}
		return real(dir)
	}
	info, err := d.Save(ctx, k, strings.NewReader("third"), SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != 2 {
		t.Errorf("the save after a stale listing is version %d, want 2", info.Version)
	}
	d.readDir = real
	for v, want := range map[int]string{1: "first", 2: "third"} {
		f, err := d.Open(ctx, k, v)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != want {
			t.Errorf("version %d = %q, want %q", v, b, want)
		}
	}
}

// Names are escaped to one segment each: whatever a key holds, nothing is
// written outside the root, and each name has a folder of its own.
func TestDirEscapes(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	keys := []Key{
		{User: "../../u", Thread: "../t", Name: "..hidden"},
		{User: "u/../../x", Thread: "/etc", Name: "a..b/c"},
		{User: "u", Thread: "t", Name: strings.Repeat("long/", 60) + "name"},
		{User: "u", Thread: "t", Name: "%2e%2e/%2f"},
		{User: "u", Thread: "", Name: ".lock.x"},
	}
	for _, k := range keys {
		if _, err := d.Save(ctx, k, strings.NewReader("x"), SaveOptions{MaxBytesPerUser: 100}); err != nil {
			t.Fatalf("Save(%+v): %v", k, err)
		}
	}
	err = filepath.WalkDir(parent, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if path != parent && (rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
			t.Errorf("%s is outside the root", path)
		}
		if len(e.Name()) > 210 {
			t.Errorf("%s: a segment of %d bytes", path, len(e.Name()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		list, err := d.List(ctx, k.User, k.Thread)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, info := range list {
			found = found || info.Name == k.Name
		}
		if !found {
			t.Errorf("List(%q, %q) = %v, missing %q", k.User, k.Thread, list, k.Name)
		}
	}
}
