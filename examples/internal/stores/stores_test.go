package stores_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/examples/internal/stores"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"google.golang.org/genai"
)

func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, shown, err := stores.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*sqlitestore.Store); !ok || shown != path {
		t.Errorf("Open(a path) = %T, %q; want a sqlitestore at %s", s, shown, path)
	}
}

// A URL opens a PostgreSQL store, shown without its password; a URL
// whose database cannot be opened is an error without it.
func TestOpenURL(t *testing.T) {
	u := pgtest.Database(t)
	parsed, _ := url.Parse(u)
	password, _ := parsed.User.Password()
	for _, scheme := range []string{"postgres", "postgresql"} {
		parsed.Scheme = scheme
		s, shown, err := stores.Open(t.Context(), parsed.String())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Append(t.Context(), "c", genai.Text("hi")); err != nil {
			t.Error(err)
		}
		s.Close()
		if _, ok := s.(*pgstore.Store); !ok || strings.Contains(shown, password) || !strings.HasPrefix(shown, scheme+"://toolnexus@127.0.0.1:") {
			t.Errorf("Open(%s URL) = %T, shown as %q; want a pgstore, shown without the password", scheme, s, shown)
		}
	}
	_, _, err := stores.Open(t.Context(), pgtest.WithDatabase(t, u, "no_such_database"))
	if err == nil || strings.Contains(err.Error(), password) {
		t.Errorf("Open(a missing database) = %v; want an error without the password", err)
	}
}

// A key=value connection string (as pgstore.Open takes it, and libpq)
// opens PostgreSQL, shown without its password; no file is created.
func TestOpenConnString(t *testing.T) {
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	conn := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable", u.Hostname(), u.Port(), u.User.Username(), password, strings.TrimPrefix(u.Path, "/"))
	t.Chdir(t.TempDir())
	s, shown, err := stores.Open(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(t.Context(), "c", genai.Text("hi")); err != nil {
		t.Error(err)
	}
	if _, ok := s.(*pgstore.Store); !ok || strings.Contains(shown, password) || !strings.Contains(shown, "host="+u.Hostname()) {
		t.Errorf("Open(a connection string) = %T, shown as %q; want a pgstore, shown without the password", s, shown)
	}
	checkNoFiles(t)
}

// What is neither a file's path nor a PostgreSQL URL or connection
// string is refused, with an error that shows no password, and no file
// named after it is created; a path is a file, '=' and all.
func TestOpenRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, where := range []string{
		"hots=127.0.0.1 password=hunter2secret dbname=x", // a typo: the string is not a file's name
		"password=hunter2secret hots=db",
		"mysql://u:hunter2secret@db/x",
		"sqlite://hunter2secret.db",
	} {
		s, _, err := stores.Open(t.Context(), where)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) = nil; want it refused", where)
			continue
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open(%q) = %v; the error holds the password", where, err)
		}
	}
	checkNoFiles(t)
	s, shown, err := stores.Open(t.Context(), "x=1.db")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, ok := s.(*sqlitestore.Store); !ok || filepath.Base(shown) != "x=1.db" {
		t.Errorf("Open(x=1.db) = %T at %q; want a SQLite file", s, shown)
	}
}

// checkNoFiles fails t if the working directory holds a file.
func checkNoFiles(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("Open left %s in the working directory", e.Name())
	}
}
