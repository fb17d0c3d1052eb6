package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"google.golang.org/genai"
)

// A connection lost in the middle of a write to a journal, as
// TestConnectionLostMidAppend loses it in an Append: before the
// statement, after the server received the commit (whose answer is
// lost), before the commit with the server left unaware, and a commit
// answered by the end of the session. Each time the call returns nil and
// takes effect exactly once: a BeginRun whose commit went unanswered does
// not then find its own journal in progress, an AppendRun does not append
// its entries twice, an EndRun does not fail with ErrNoRun nor save the
// run twice.
func TestConnectionLostMidRun(t *testing.T) {
	u := pgtest.Database(t)
	direct := open(t, u)
	faults := []struct {
		name  string
		fault fault
		match func(byte, []byte) bool
	}{
		{"before the statement", cutBefore, parse("toolnexus_journal")},
		{"after the commit", cutAfter, query("commit")},
		{"partitioned before the commit", partition, query("commit")},
		{"the session ended at the commit", fatalAfter, query("commit")},
	}
	first, more := [][]byte{[]byte("begun")}, sessiontest.Entries()
	contents := sessiontest.Conversation()
	for _, op := range []struct {
		name  string
		setup func(t *testing.T, id string)
		call  func(ctx context.Context, s *pgstore.Store, id string) error
		check func(t *testing.T, id string)
	}{
		{
			name: "BeginRun",
			call: func(ctx context.Context, s *pgstore.Store, id string) error {
				return s.BeginRun(ctx, id, "run", session.Claim{}, more)
			},
			check: func(t *testing.T, id string) {
				checkJournal(t, direct, id, more)
			},
		},
		{
			name:  "AppendRun",
			setup: func(t *testing.T, id string) { mustBeginRun(t, direct, id, first) },
			call: func(ctx context.Context, s *pgstore.Store, id string) error {
				return s.AppendRun(ctx, id, "run", session.Claim{}, more)
			},
			check: func(t *testing.T, id string) {
				checkJournal(t, direct, id, append(first, more...))
			},
		},
		{
			name: "EndRun",
			setup: func(t *testing.T, id string) {
				if err := direct.Append(ctx, id, genai.Text("before")); err != nil {
					t.Fatal(err)
				}
				mustBeginRun(t, direct, id, first)
			},
			call: func(ctx context.Context, s *pgstore.Store, id string) error {
				return s.EndRun(ctx, id, "run", session.Claim{}, contents)
			},
			check: func(t *testing.T, id string) {
				got, err := direct.Load(ctx, id)
				if want := append(genai.Text("before"), contents...); err != nil || !cmp.Equal(want, got) {
					t.Errorf("Load = %d contents, %v; want %d: the run saved once", len(got), err, len(want))
				}
				if _, err := direct.LoadRun(ctx, id); !errors.Is(err, session.ErrNoRun) {
					t.Errorf("LoadRun after EndRun = %v; want ErrNoRun", err)
				}
			},
		},
	} {
		for i, f := range faults {
			t.Run(op.name+" "+f.name, func(t *testing.T) {
				id := fmt.Sprint(op.name, "-", i)
				if op.setup != nil {
					op.setup(t, id)
				}
				p, proxied := newProxy(t, u, f.fault, f.match)
				s := open(t, proxied)
				if err := op.call(guard(t), s, id); err != nil {
					t.Fatalf("%s = %v; want nil", op.name, err)
				}
				if !p.fired.Load() {
					t.Fatal("the fault never happened: this test proves nothing")
				}
				op.check(t, id)
			})
		}
	}
}

func mustBeginRun(t *testing.T, s *pgstore.Store, id string, entries [][]byte) {
	t.Helper()
	if err := s.BeginRun(ctx, id, "run", session.Claim{}, entries); err != nil {
		t.Fatal(err)
	}
}

// checkJournal checks that id's journal is run's and holds want, once.
func checkJournal(t *testing.T, s *pgstore.Store, id string, want [][]byte) {
	t.Helper()
	got, err := s.LoadRun(ctx, id)
	if err != nil || got.Run != "run" || got.Len != len(want) || !cmp.Equal(want, got.Entries, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })) {
		t.Errorf("LoadRun = run %q of %d entries, %v; want run of %d entries, once", got.Run, got.Len, err, len(want))
	}
}

// A refusal of the server fails a write to a journal with an error
// wrapping the server's, and writes nothing; a read-only database refuses
// them all.
func TestRunRefusals(t *testing.T) {
	u := pgtest.Database(t)
	s := open(t, u)
	mustBeginRun(t, s, "c", [][]byte{[]byte("kept")})
	pgtest.Exec(t, u, "ALTER TABLE toolnexus_journal_entries ADD CONSTRAINT small CHECK (length(entry) < 1000)")
	err := s.AppendRun(ctx, "c", "run", session.Claim{}, [][]byte{[]byte("fits"), make([]byte, 2000)})
	if !isCode(err, "23514") {
		t.Errorf("AppendRun over a constraint = %v; want the server's refusal, 23514", err)
	}
	checkJournal(t, s, "c", [][]byte{[]byte("kept")})
	if err := s.BeginRun(ctx, "d", "run", session.Claim{}, [][]byte{make([]byte, 2000)}); !isCode(err, "23514") {
		t.Errorf("BeginRun over a constraint = %v; want the server's refusal, 23514", err)
	}
	if _, err := s.LoadRun(ctx, "d"); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("LoadRun after a refused BeginRun = %v; want ErrNoRun", err)
	}
	pgtest.Exec(t, u, "ALTER TABLE toolnexus_journal_entries DROP CONSTRAINT small")

	name := strings.TrimPrefix(must(url.Parse(u)).Path, "/")
	pgtest.Exec(t, u, "ALTER DATABASE "+name+" SET default_transaction_read_only = on")
	s = open(t, u)
	for what, err := range map[string]error{
		"BeginRun":  s.BeginRun(ctx, "e", "run", session.Claim{}, nil),
		"AppendRun": s.AppendRun(ctx, "c", "run", session.Claim{}, [][]byte{[]byte("no")}),
		"EndRun":    s.EndRun(ctx, "c", "run", session.Claim{}, genai.Text("no")),
	} {
		if !isCode(err, "25006") {
			t.Errorf("%s on a read-only database = %v; want the server's refusal, 25006", what, err)
		}
	}
	checkJournal(t, s, "c", [][]byte{[]byte("kept")})
}

// isCode reports whether err wraps the server's error of code.
func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
