// Package pgtest gives each test a PostgreSQL database of its own, on the
// server whose URL the environment variable TOOLNEXUS_PG_URL holds
// (.ci/postgres starts one and prints it). Without it the tests that need
// a server skip, saying why; with TOOLNEXUS_PG_REQUIRED=1, as in CI, they
// fail instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables the tests read.
const (
	URLEnv      = "TOOLNEXUS_PG_URL"      // a URL of the server, as a superuser (or a role that may create databases)
	RequiredEnv = "TOOLNEXUS_PG_REQUIRED" // "1": a missing server fails the tests
)

// URL returns the server's URL, or ends t: skipped, or failed when
// RequiredEnv is 1.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(URLEnv)
	if u == "" {
		const why = URLEnv + " is not set: no PostgreSQL server to test against (start one with: eval \"$(bash .ci/postgres)\")"
		if os.Getenv(RequiredEnv) == "1" {
			t.Fatal(why + ", and " + RequiredEnv + "=1")
		}
		t.Skip(why)
	}
	return u
}

// Database creates a new, empty database for t on the server, dropped
// when t ends (its remaining connections ended), and returns its URL.
func Database(t testing.TB) string {
	t.Helper()
	server := URL(t)
	name := "toolnexus_test_" + strings.ToLower(rand.Text()[:16])
	Exec(t, server, "CREATE DATABASE "+name)
	t.Cleanup(func() { Exec(t, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return WithDatabase(t, server, name)
}

// WithDatabase returns the URL u with its database replaced by name.
func WithDatabase(t testing.TB, u, name string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "postgres" && parsed.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL", URLEnv)
	}
	parsed.Path = "/" + name
	return parsed.String()
}

// Exec runs statements on the database at u, as the URL's user.
func Exec(t testing.TB, u string, statements ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connecting to the test server: %v", err)
	}
	defer conn.Close(ctx)
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
}
