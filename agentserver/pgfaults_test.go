package agentserver_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
)

// syncBuffer is a log's output, written by the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// pgFaultStore opens a store on a database of its own, and returns it
// with its URL and the URL's password, which must never be shown.
func pgFaultStore(t *testing.T) (*pgstore.Store, string, string) {
	t.Helper()
	pgtest.URL(t)
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	secret, ok := u.User.Password()
	if !ok || len(secret) < 8 {
		t.Skipf("the test server's URL has no password to keep out of the logs")
	}
	s, err := pgstore.Open(bg, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, u.String(), secret
}

// checkNoPassword fails t if what holds the password.
func checkNoPassword(t *testing.T, what, s, password string) {
	t.Helper()
	if strings.Contains(s, password) {
		t.Errorf("the %s holds the store's password:\n%s", what, strings.ReplaceAll(s, password, "PASSWORD"))
	}
}

// A PostgreSQL store that refuses to write (a full disk): a step's entry
// refused is logged and the run goes on; the save refused fails the run
// with a clear error, leaves nothing half-written in the thread, and
// keeps the journal as far as it went, which the next Server saves once
// the database takes writes again. The store's URL holds a password,
// which no log line and no response shows.
func TestPostgresRefusesWrites(t *testing.T) {
	store, u, password := pgFaultStore(t)
	logs := &syncBuffer{}
	pgtest.Exec(t, u,
		`CREATE FUNCTION disk_full() RETURNS trigger AS $$ BEGIN
			RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full';
		END $$ LANGUAGE plpgsql`,
		// The result's entry, and the thread's contents (EndRun), are refused.
		`CREATE TRIGGER result_refused BEFORE INSERT ON toolnexus_journal_entries FOR EACH ROW
			WHEN (convert_from(NEW.entry, 'UTF8') LIKE '{"kind":"result"%') EXECUTE FUNCTION disk_full()`,
		"CREATE TRIGGER contents_refused BEFORE INSERT ON toolnexus_contents FOR EACH ROW EXECUTE FUNCTION disk_full()")
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) {
		c.Store = store
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}})
	h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	last := resp.last()
	if last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateFailed || last.Done.Error == nil ||
		last.Done.Error.Code != "store_error" {
		t.Fatalf("the run ended with %+v; want it failed with store_error, its save refused", last)
	}
	if resp.text() != "Sunny in Paris." {
		t.Errorf("the client was shown %q; want the answer", resp.text())
	}
	for _, want := range []string{"agentserver: journaling a step", "step=result", "No space left on device",
		"saving the run", "SQLSTATE 53100"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
	checkNoPassword(t, "log", logs.String(), password)
	checkNoPassword(t, "response", resp.body, password)

	// Nothing of the run is in the thread; its journal holds the run, the
	// call's turn and the answer (the refused result is not there).
	if c, err := store.Load(bg, "agentserver/alice/t1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the thread holds %s, %v; want nothing: its save was refused", dump(c), err)
	}
	j, err := store.LoadRun(bg, "agentserver/alice/t1")
	if err != nil || len(j.Entries) != 3 {
		t.Fatalf("the journal: %d entries, %v; want 3: the run, its call, the answer", len(j.Entries), err)
	}
	if err := h.srv.Close(bg); err != nil {
		t.Fatal(err)
	}

	// The disk has room again: the next Server saves the run as far as
	// it went, without asking the model again. The result was never
	// stored, so the call is answered as interrupted.
	pgtest.Exec(t, u, "DROP TRIGGER result_refused ON toolnexus_journal_entries", "DROP TRIGGER contents_refused ON toolnexus_contents")
	h2 := newHarness(t, harnessOpts{config: func(c *agentserver.Config) {
		c.Store = store
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}})
	want := []string{"user: Weather in Paris?", `model: call get_weather{"city":"Paris"}`,
		`user: response get_weather{"error":"tool get_weather was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"}`,
		"model: Sunny in Paris."}
	if got := dump(h2.stored("alice", "t1")); !slices.Equal(got, want) {
		t.Errorf("the next server saved\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(h2.model.Requests()); n != 0 {
		t.Errorf("the next server asked the model %d times; want 0", n)
	}
	if _, err := store.LoadRun(bg, "agentserver/alice/t1"); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("the journal after the save: %v; want ErrNoRun", err)
	}
	checkNoPassword(t, "log", logs.String(), password)
}

// PostgreSQL ends the backend of each kind of write of a served run while
// it is in the middle of the write (pg_terminate_backend, as an
// administrator or a failover does): the store writes again what did not
// take effect, and the run finishes as if nothing happened: its tool
// run once, its thread stored once, its journal gone.
func TestPostgresBackendEndedMidWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table string
		when  string
	}{
		{"the run's begin", "toolnexus_journal_entries", `convert_from(NEW.entry, 'UTF8') LIKE '{"kind":"begin"%'`},
		{"a turn", "toolnexus_journal_entries", `convert_from(NEW.entry, 'UTF8') LIKE '{"kind":"turn"%'`},
		{"a result", "toolnexus_journal_entries", `convert_from(NEW.entry, 'UTF8') LIKE '{"kind":"result"%'`},
		{"the save", "toolnexus_contents", "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, u, password := pgFaultStore(t)
			logs := &syncBuffer{}
			// The first insert that matches sleeps until its backend is
			// ended; the sequence, which a rollback does not undo, makes
			// it the first only.
			pgtest.Exec(t, u, "CREATE SEQUENCE tries",
				`CREATE FUNCTION stall() RETURNS trigger AS $$ BEGIN
					IF nextval('tries') = 1 THEN PERFORM pg_sleep(600); END IF;
					RETURN NEW;
				END $$ LANGUAGE plpgsql`,
				"CREATE TRIGGER stall BEFORE INSERT ON "+tc.table+" FOR EACH ROW WHEN ("+tc.when+") EXECUTE FUNCTION stall()")
			ended := make(chan error, 1)
			go func() { ended <- endSleepingBackend(u) }()
			h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) {
				c.Store = store
				c.Logger = slog.New(slog.NewTextHandler(logs, nil))
			}})
			h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
			resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
			if err := <-ended; err != nil {
				t.Fatalf("ending the backend: %v", err)
			}
			if last := resp.last(); last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateDone {
				t.Fatalf("the run ended with %+v: %v", last, resp.kinds())
			}
			want := []string{"user: Weather in Paris?", `model: call get_weather{"city":"Paris"}`,
				`user: response get_weather{"result":"sunny in Paris"}`, "model: Sunny in Paris."}
			c, err := store.Load(bg, "agentserver/alice/t1")
			if got := dump(c); err != nil || !slices.Equal(got, want) {
				t.Errorf("the thread holds\n%s\n(%v) want\n%s", strings.Join(got, "\n"), err, strings.Join(want, "\n"))
			}
			if n := len(h.started); n != 1 {
				t.Errorf("the tool ran %d times; want 1", n)
			}
			if _, err := store.LoadRun(bg, "agentserver/alice/t1"); !errors.Is(err, session.ErrNoRun) {
				t.Errorf("the journal after the run: %v; want ErrNoRun", err)
			}
			if strings.Contains(logs.String(), "level=WARN") || strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("the server logged a failure, though the store wrote again:\n%s", logs.String())
			}
			checkNoPassword(t, "log", logs.String(), password)
		})
	}
}

// endSleepingBackend waits for a backend of the database at u to sleep in
// pg_sleep, and ends it. It polls the server: a hang guard bounds it.
func endSleepingBackend(u string) error {
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(bg)
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event = 'PgSleep' AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil || n > 0 {
			return err
		}
		if _, err := conn.Exec(ctx, "SELECT pg_sleep(0.005)"); err != nil {
			return err
		}
	}
}
