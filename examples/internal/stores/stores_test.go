package stores_test

import (
	"net/url"
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
