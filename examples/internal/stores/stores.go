// Package stores opens the session store that an example's flag names: a
// PostgreSQL database for a postgres:// or postgresql:// URL or a libpq
// key=value connection string (host=… dbname=… password=…), both as
// session/pgstore takes them; else a SQLite file (session/sqlitestore).
// What looks like neither (a URL of another scheme, a connection string
// with a setting libpq does not know) is refused, never opened as a file
// named after it: a connection string holds a password.
package stores

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
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
// file: a postgres:// or postgresql:// URL, or a key=value connection
// string.
func IsURL(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://") || isConnString(where)
}

// connSettings are the settings of a libpq connection string
// (https://www.postgresql.org/docs/current/libpq-connect.html): a string
// of key=value pairs that names one is a connection string.
var connSettings = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth", "channel_binding",
	"connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
	"keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
	"requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir",
	"sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation",
	"service", "target_session_attrs", "load_balance_hosts", "sslnegotiation",
	// pgx's own settings of a connection string.
	"pool_max_conns", "pool_min_conns", "pool_max_conn_lifetime", "pool_max_conn_idle_time", "pool_health_check_period",
	"pool_max_conn_lifetime_jitter", "statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode"}

// setting matches the key of a key=value setting, at the start of the
// string or after a space.
var setting = regexp.MustCompile(`(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)\s*=`)

// isConnString reports whether where is a key=value connection string:
// one of its settings is libpq's.
func isConnString(where string) bool {
	for _, m := range setting.FindAllStringSubmatch(where, -1) {
		if slices.Contains(connSettings, strings.ToLower(m[1])) {
			return true
		}
	}
	return false
}

// check refuses what is neither a file's path nor a connection string
// this package opens: a URL of another scheme, a key=value string with a
// setting libpq does not know (a typo would open a file named after the
// string, password included). The error names the settings, never their
// values.
func check(where string) error {
	if scheme, _, ok := strings.Cut(where, "://"); ok && !strings.ContainsAny(scheme, `/\`) && !IsURL(where) {
		return fmt.Errorf("%q is not a store this program opens: give a SQLite file's path, or a postgres:// URL or key=value connection string", scheme+"://…")
	}
	if !isConnString(where) {
		return nil
	}
	var unknown []string
	for _, m := range setting.FindAllStringSubmatch(where, -1) {
		if !slices.Contains(connSettings, strings.ToLower(m[1])) {
			unknown = append(unknown, m[1])
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the PostgreSQL connection string has settings libpq does not know: %s (a file path holds no key=value settings)", strings.Join(unknown, ", "))
	}
	return nil
}

// Open opens the store at where, a PostgreSQL URL or connection string,
// or a file's path, and returns it with what to show a user of where it
// is: the file's absolute path, or the database without its password or
// parameters. No error holds the password.
func Open(ctx context.Context, where string) (Store, string, error) {
	if err := check(where); err != nil {
		return nil, "", err
	}
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

// Shown returns the URL or connection string u as it may be shown or
// logged: a URL without its password and its parameters (which may hold
// one); a connection string as its host, port, database and user.
func Shown(u string) string {
	if isConnString(u) {
		var kept []string
		for _, f := range strings.Fields(u) {
			if k, v, ok := strings.Cut(f, "="); ok && slices.Contains([]string{"host", "port", "dbname", "user"}, strings.ToLower(k)) {
				kept = append(kept, k+"="+v)
			}
		}
		if len(kept) == 0 {
			return "a PostgreSQL database"
		}
		return "PostgreSQL " + strings.Join(kept, " ")
	}
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
