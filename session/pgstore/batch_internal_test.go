package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// heldStore opens a store on a database of its own whose committers are
// not running: the test takes the writes the store's calls queue, one by
// one, and commits them as one group itself.
func heldStore(t *testing.T) (*Store, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	u := pgtest.Database(t)
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	s.commits.close()
	s.commits = &committer{s: s, reqs: make(chan *write), quit: make(chan struct{})}
	t.Cleanup(func() { s.Close() })
	return s, u
}

// queue starts call on a goroutine and returns its write, queued, and the
// channel of its outcome.
func queue(s *Store, call func() error) (*write, chan error) {
	out := make(chan error, 1)
	go func() { out <- call() }()
	return <-s.commits.reqs, out
}

// The writes queued together commit in one transaction, each answered
// with its own outcome: one refused by the contract (no such run) leaves
// the others committed; when one fails (the server refuses it), the
// group is undone and each write tried alone, so that only that one
// fails; a write whose caller's context ended while it was queued is not
// done.
func TestGroupCommitAnswersEachWrite(t *testing.T) {
	ctx := context.Background()
	s, u := heldStore(t)
	pgtest.Exec(t, u, `CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN
			IF NEW.conversation = 'refused' THEN RAISE EXCEPTION 'no space left on device' USING ERRCODE = 'disk_full'; END IF;
			RETURN NEW;
		END $$ LANGUAGE plpgsql`,
		"CREATE TRIGGER refuse BEFORE INSERT ON toolnexus_contents FOR EACH ROW EXECUTE FUNCTION refuse()")
	if err := s.writeAlone(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	var group []*write
	var outs []chan error
	add := func(call func() error) {
		w, out := queue(s, call)
		group = append(group, w)
		outs = append(outs, out)
	}
	add(func() error { return s.Append(ctx, "a", genai.Text("one")) })
	add(func() error { return s.AppendRun(ctx, "none", "run", session.Claim{}, [][]byte{[]byte("x")}) })
	add(func() error { return s.Append(ctx, "refused", genai.Text("x")) })
	add(func() error { return s.Append(cctx, "cancelled", genai.Text("never")) })
	add(func() error { return s.AppendRun(ctx, "b", "run", session.Claim{}, [][]byte{[]byte("second")}) })
	add(func() error { return s.Append(ctx, "a", genai.Text("two")) })
	cancel()
	if err := <-outs[3]; !errors.Is(err, context.Canceled) {
		t.Fatalf("Append whose context ended while it was queued = %v; want context.Canceled", err)
	}
	s.commits.commit(group)
	s.commits.alone.Wait()
	var pgErr *pgconn.PgError
	for i, ok := range []func(error) bool{
		func(err error) bool { return err == nil },
		func(err error) bool { return errors.Is(err, session.ErrNoRun) },
		func(err error) bool { return errors.As(err, &pgErr) && pgErr.Code == "53100" },
		nil,
		func(err error) bool { return err == nil },
		func(err error) bool { return err == nil },
	} {
		if ok == nil {
			continue
		}
		if err := <-outs[i]; !ok(err) {
			t.Errorf("write %d = %v", i, err)
		}
	}
	s.commits.start(1)
	if got, err := s.Load(ctx, "a"); err != nil || len(got) != 2 {
		t.Errorf(`Load("a") = %d contents, %v; want 2`, len(got), err)
	}
	if j, err := s.LoadRun(ctx, "b"); err != nil || len(j.Entries) != 2 {
		t.Errorf(`LoadRun("b") = %+v, %v; want 2 entries`, j, err)
	}
	for _, id := range []string{"refused", "cancelled"} {
		if _, err := s.Load(ctx, id); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Load(%q) = %v; want ErrNotFound", id, err)
		}
	}
}

// A group whose write waits for a row another transaction holds (another
// process's write to that conversation) waits groupLockTimeout at most:
// then each write goes alone, and the others commit while that one waits.
func TestGroupDoesNotWaitForOneLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, u := heldStore(t)
	if err := s.writeAlone(ctx, "locked"); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE toolnexus_journals SET length = length WHERE id = 'locked'"); err != nil {
		t.Fatal(err)
	}
	w1, locked := queue(s, func() error { return s.AppendRun(ctx, "locked", "run", session.Claim{}, [][]byte{[]byte("x")}) })
	w2, free := queue(s, func() error { return s.Append(ctx, "free", genai.Text("hi")) })
	go s.commits.commit([]*write{w1, w2})
	if err := <-free; err != nil { // while the row is still held
		t.Fatalf("Append of another conversation = %v", err)
	}
	select {
	case err := <-locked:
		t.Fatalf("AppendRun of the locked journal = %v before the lock was released", err)
	default:
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Errorf("AppendRun once the lock was released = %v", err)
	}
	s.commits.alone.Wait()
	s.commits.start(1)
	if j, err := s.LoadRun(ctx, "locked"); err != nil || len(j.Entries) != 2 || !strings.Contains(string(j.Entries[1]), "x") {
		t.Errorf("LoadRun = %+v, %v; want the entry appended", j, err)
	}
}

// writeAlone begins the run "run" on id, unclaimed, with one entry,
// through a try alone: the committers of heldStore do not run.
func (s *Store) writeAlone(ctx context.Context, id string) error {
	entries := [][]byte{[]byte("first")}
	return retry(ctx, func() (bool, error) {
		return s.writeOnce(ctx, &write{
			queue: func(b *pgx.Batch) { b.Queue(beginRunSQL, id, "run", 1, entries, int64(5), "", int64(0)) },
			read:  func(br pgx.BatchResults) error { _, err := wrote(br); return err },
		})
	})
}
