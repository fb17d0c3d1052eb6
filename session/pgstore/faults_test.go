package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"google.golang.org/genai"
)

// guard is a context that ends a test that would otherwise hang.
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A database that is down fails Open with the driver's connect error, at
// once; one that accepts connections and never answers fails it within
// the URL's connect_timeout.
func TestOpenWhenDown(t *testing.T) {
	ctx := guard(t)
	_, err := pgstore.Open(ctx, "postgres://u:pw@"+freeAddr(t)+"/db?sslmode=disable")
	var connectErr *pgconn.ConnectError
	if !errors.As(err, &connectErr) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Open of a server that is down = %v; want a *pgconn.ConnectError saying the connection was refused", err)
	}

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accepts, and never says a word
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, err = pgstore.Open(ctx, "postgres://u:pw@"+silent.Addr().String()+"/db?sslmode=disable&connect_timeout=1")
	if !errors.As(err, &connectErr) || !pgconn.Timeout(err) || ctx.Err() != nil {
		t.Errorf("Open of a server that never answers = %v; want a connect error that timed out", err)
	}
}

// No error of Open, whatever goes wrong, holds the URL's password.
func TestPasswordNeverInErrors(t *testing.T) {
	ctx := guard(t)
	server := pgtest.URL(t)
	parsed, _ := url.Parse(server)
	real, _ := parsed.User.Password()
	const secret = "Sekr3t-pa55word"
	wrong := *parsed
	wrong.User = url.UserPassword(parsed.User.Username(), secret)
	for _, u := range []string{
		wrong.String(), // refused by the server
		"postgres://toolnexus:" + secret + "@" + freeAddr(t) + "/db?sslmode=disable", // no server
		pgtest.WithDatabase(t, server, "no_such_database"),                           // the real password
		"postgres://u:" + secret + "@host:notaport/db",                               // malformed…
		"postgres://u:" + secret + "@[::1/db",
		"postgres://u:" + secret + "%zz@host/db",
		"postgres://u:pa:" + secret + "@host:5432:1/db",
		"postgresql://u:" + secret + "@host/db?connect_timeout=soon",
		"postgres://host/db?password=" + secret + "&sslmode=sometimes",
		"host=h user=u password=" + secret + " port=x",
		"host=h password='" + secret + " quoted' sslmode=nope",
	} {
		_, err := pgstore.Open(ctx, u)
		if err == nil {
			t.Errorf("Open(%s) = nil error", strings.ReplaceAll(u, secret, "SECRET"))
			continue
		}
		for _, pw := range []string{secret, real} {
			if msg := fmt.Sprintf("%v %+v %#v", err, err, err.Error()); strings.Contains(msg, pw) {
				t.Errorf("Open(%s) = %s: the error holds the password", strings.ReplaceAll(u, secret, "SECRET"), strings.ReplaceAll(msg, pw, "PASSWORD"))
			}
		}
	}
}

// A refusal of the server (a full disk, a constraint, a read-only
// database) fails the Append with an error wrapping the server's, stores
// nothing of it, and is not tried again.
func TestRefusals(t *testing.T) {
	ctx := guard(t)
	u := pgtest.Database(t)
	s := open(t, u)
	first := genai.Text("kept")
	if err := s.Append(ctx, "c", first); err != nil {
		t.Fatal(err)
	}
	// A trigger that counts its calls (a sequence: not undone by a
	// rollback) and refuses the third content of an append, as a full
	// disk would.
	pgtest.Exec(t, u, "CREATE SEQUENCE attempts",
		`CREATE FUNCTION disk_full() RETURNS trigger AS $$ BEGIN
			PERFORM nextval('attempts');
			IF NEW.seq = 3 THEN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END IF;
			RETURN NEW;
		END $$ LANGUAGE plpgsql`,
		"CREATE TRIGGER disk_full BEFORE INSERT ON toolnexus_contents FOR EACH ROW EXECUTE FUNCTION disk_full()")
	check := func(what, code string, err error) {
		t.Helper()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != code || !strings.HasPrefix(err.Error(), `pgstore: appending to "c": `) {
			t.Errorf("Append %s = %v; want an error wrapping the server's, code %s", what, err, code)
		}
		got, err := s.Load(ctx, "c")
		if err != nil || len(got) != 1 {
			t.Errorf("after Append %s, %d contents (%v); want the 1 stored before", what, len(got), err)
		}
		if u, err := s.Usage(ctx, "c"); err != nil || u.Bytes != size(t, first...) {
			t.Errorf("after Append %s, Usage = %+v, %v; want %d bytes", what, u, err, size(t, first...))
		}
	}
	check("on a full disk", "53100", s.Append(ctx, "c", sessiontest.Conversation()[:3]))
	pgtest.Exec(t, u, "DROP TRIGGER disk_full ON toolnexus_contents")
	if calls := queryInt(t, u, "SELECT last_value FROM attempts"); calls != 3 { // seq 1, 2 and 3 of the one try
		t.Errorf("the refusing trigger ran %d times; want 3: the refused append was tried again", calls)
	}

	pgtest.Exec(t, u, "ALTER TABLE toolnexus_contents ADD CONSTRAINT small CHECK (length(content) < 1000)")
	big := genai.Text(strings.Repeat("x", 2000))
	check("over a constraint", "23514", s.Append(ctx, "c", append(genai.Text("fits"), big...)))
	pgtest.Exec(t, u, "ALTER TABLE toolnexus_contents DROP CONSTRAINT small")

	// A read-only database: a store opened on it reads, and refuses to
	// write.
	name := strings.TrimPrefix(must(url.Parse(u)).Path, "/")
	pgtest.Exec(t, u, "ALTER DATABASE "+name+" SET default_transaction_read_only = on")
	s = open(t, u)
	check("on a read-only database", "25006", s.Append(ctx, "c", genai.Text("no")))
	var pgErr *pgconn.PgError
	if err := s.Delete(ctx, "c"); !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Errorf("Delete on a read-only database = %v; want the server's refusal", err)
	}
}

// queryInt returns the number a query of the database at u answers.
func queryInt(t *testing.T, u, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A connection lost in the middle of an Append: before its statement,
// after the server received its commit (whose answer is lost), before its
// commit with the server left unaware (a partition), and a commit
// answered by the end of the session (a FATAL error, which can follow a
// commit that took effect, as it does here). Each time the
// Append returns nil and the contents are stored exactly once: the store
// tries again where nothing was stored, and learns from the server
// whether a commit it did not hear about took effect.
func TestConnectionLostMidAppend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fault
		match func(byte, []byte) bool
	}{
		{"before the statement", cutBefore, parse("toolnexus_contents")},
		{"after the commit", cutAfter, query("commit")},
		{"partitioned before the commit", partition, query("commit")},
		{"the session ended at the commit", fatalAfter, query("commit")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := guard(t)
			u := pgtest.Database(t)
			direct := open(t, u)
			before := genai.Text("before")
			if err := direct.Append(ctx, "c", before); err != nil {
				t.Fatal(err)
			}
			p, proxied := newProxy(t, u, tc.fault, tc.match)
			s := open(t, proxied)
			want := sessiontest.Conversation()
			if err := s.Append(ctx, "c", want); err != nil {
				t.Fatalf("Append = %v; want nil", err)
			}
			if !p.fired.Load() {
				t.Fatal("the fault never happened: this test proves nothing")
			}
			got, err := direct.Load(ctx, "c")
			if err != nil || len(got) != 1+len(want) {
				t.Fatalf("Load = %d contents, %v; want %d: the append is stored once", len(got), err, 1+len(want))
			}
			if info, err := s.ListPage(ctx, session.ListOptions{Prefix: "c"}); err != nil || info.Infos[0].Len != 1+len(want) ||
				info.Infos[0].Bytes != size(t, append(before, want...)...) {
				t.Errorf("ListPage = %+v, %v; want %d contents", info, err, 1+len(want))
			}
		})
	}
}

// A commit whose answer is lost, on a server that cannot be reached
// afterwards: the Append fails with ErrUncertain once ResolveTimeout has
// passed, and the append is stored whole (here, it was committed).
func TestUncertainCommit(t *testing.T) {
	t.Parallel()
	ctx := guard(t)
	u := pgtest.Database(t)
	direct := open(t, u)
	p, proxied := newProxy(t, u, cutAfter, query("commit"))
	p.thenDown.Store(true)
	s := open(t, proxied)
	want := sessiontest.Conversation()
	err := s.Append(ctx, "c", want)
	if !errors.Is(err, pgstore.ErrUncertain) || !p.fired.Load() {
		t.Fatalf("Append whose commit's answer was lost, the server then unreachable = %v; want ErrUncertain", err)
	}
	t.Log(err)
	if got, err := direct.Load(ctx, "c"); err != nil || len(got) != len(want) {
		t.Errorf("Load = %d contents, %v; want the %d appended, whole", len(got), err, len(want))
	}
}

// The server ends the store's connections (a restart, a failover, an
// administrator): the next calls open new ones, without an error.
func TestServerEndsConnections(t *testing.T) {
	ctx := guard(t)
	u := pgtest.Database(t)
	s := open(t, u)
	if err := s.Append(ctx, "c", genai.Text("one")); err != nil {
		t.Fatal(err)
	}
	end := func() {
		pgtest.Exec(t, u, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	}
	end()
	if err := s.Append(ctx, "c", genai.Text("two")); err != nil {
		t.Errorf("Append after the server ended the connections = %v", err)
	}
	end()
	if got, err := s.Load(ctx, "c"); err != nil || len(got) != 2 {
		t.Errorf("Load after the server ended the connections = %d contents, %v; want 2", len(got), err)
	}
	end()
	if page, err := s.ListPage(ctx, session.ListOptions{Prefix: "c"}); err != nil || len(page.Infos) != 1 {
		t.Errorf("ListPage after the server ended the connections = %+v, %v; want c", page, err)
	}
	end()
	if err := s.Delete(ctx, "c"); err != nil {
		t.Errorf("Delete after the server ended the connections = %v", err)
	}
}

// A database that goes away after Open: every call fails, with the
// driver's connect error, once its tries are spent; none hangs.
func TestDatabaseGoesDown(t *testing.T) {
	ctx := guard(t)
	u := pgtest.Database(t)
	p, proxied := newProxy(t, u, cutBefore, func(byte, []byte) bool { return false })
	s := open(t, proxied)
	if err := s.Append(ctx, "c", genai.Text("one")); err != nil {
		t.Fatal(err)
	}
	p.close()
	var connectErr *pgconn.ConnectError
	if err := s.Append(ctx, "c", genai.Text("two")); !errors.As(err, &connectErr) {
		t.Errorf("Append with the database down = %v; want a connect error", err)
	}
	if _, err := s.Load(ctx, "c"); !errors.As(err, &connectErr) {
		t.Errorf("Load with the database down = %v; want a connect error", err)
	}
	if got, err := open(t, u).Load(ctx, "c"); err != nil || len(got) != 1 {
		t.Errorf("Load from the database = %d contents, %v; want the 1 appended before it went down", len(got), err)
	}
}
