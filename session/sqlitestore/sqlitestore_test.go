package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"google.golang.org/genai"
	_ "modernc.org/sqlite"
)

var ctx = context.Background()

// open opens a store at path, closed when t ends.
func open(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store {
		// A directory name with characters a file: URI must escape.
		dir := filepath.Join(t.TempDir(), "a dir?#%")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return open(t, filepath.Join(dir, "sessions.db"))
	})
}

// What was appended is there once the file is opened again, by another
// Store, and the file is in WAL mode.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := sessiontest.Conversation()
	if err := s.Append(ctx, "c", want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "c"); err == nil {
		t.Errorf("Load after Close = nil error; want one")
	}
	again := open(t, path)
	got, err := again.Load(ctx, "c")
	if err != nil || len(got) != len(want) {
		t.Fatalf("Load after reopening = %d contents, %v; want %d", len(got), err, len(want))
	}
	for i := range want {
		for j, p := range want[i].Parts {
			if string(p.ThoughtSignature) != string(got[i].Parts[j].ThoughtSignature) {
				t.Errorf("content %d part %d: signature %x, want %x", i, j, got[i].Parts[j].ThoughtSignature, p.ThoughtSignature)
			}
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no -wal file beside the store (%v): not in WAL mode", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := sqlitestore.Open(ctx, filepath.Join(dir, "missing", "dir", "s.db")); err == nil {
		t.Errorf("Open in a missing directory = nil error")
	}
	notDB := filepath.Join(dir, "not.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlitestore.Open(ctx, notDB); err == nil {
		t.Errorf("Open of a file that is not a database = nil error")
	}
}

// A file written by a newer schema is refused, not misread.
func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	if err := s.Append(ctx, "c", genai.Text("hi")); err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, path, 6)
	_, err := sqlitestore.Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "schema version 6, written by a newer version") {
		t.Errorf("Open of a newer schema = %v; want an error naming the version", err)
	}
}

func TestDoneContextOpen(t *testing.T) {
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sqlitestore.Open(done, filepath.Join(t.TempDir(), "s.db")); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a done context = %v; want context.Canceled", err)
	}
}

// setUserVersion writes PRAGMA user_version in the file at path, as a newer
// version of the package would.
func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		t.Fatal(err)
	}
}
