// Package stores opens the session store that an example's flag names: a
// PostgreSQL database for a postgres:// or postgresql:// URL
// (session/pgstore), else a SQLite file (session/sqlitestore).
package stores

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
)

// Store is an open store, which its user closes.
type Store interface {
	session.Store
	Close() error
}

// IsURL reports whether where names a PostgreSQL database rather than a
// file.
func IsURL(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// Open opens the store at where, a PostgreSQL URL or a file's path, and
// returns it with what to show a user of where it is: the file's absolute
// path, or the URL without its password or parameters. No error holds the
// URL's password.
func Open(ctx context.Context, where string) (Store, string, error) {
	if !IsURL(where) {
		s, err := sqlitestore.Open(ctx, where)
		if err != nil {
			return nil, "", err
		}
		return s, s.Path(), nil
	}
	s, err := pgstore.Open(ctx, where)
	if err != nil {
		return nil, "", err
	}
	return s, Shown(where), nil
}

// Shown returns the URL u as it may be shown or logged: without its
// password and its parameters (which may hold one).
func Shown(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return "a PostgreSQL database"
	}
	if parsed.User != nil {
		parsed.User = url.User(parsed.User.Username())
	}
	parsed.RawQuery, parsed.Fragment = "", ""
	return parsed.String()
}

// Artifacts returns the artifact store beside the conversations of s, a
// store Open made: in the same SQLite file or PostgreSQL database.
func Artifacts(ctx context.Context, s Store) (artifact.Store, error) {
	switch s := s.(type) {
	case *sqlitestore.Store:
		return s.Artifacts(ctx)
	case *pgstore.Store:
		return s.Artifacts(ctx)
	}
	return nil, fmt.Errorf("stores: %T keeps no artifacts", s)
}
