package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// held is a store whose writer is not running: the test takes the
// requests the store's calls queue, one by one, and commits them as one
// group itself.
type held struct {
	*Store
	started bool
}

// start starts the writer.
func (h *held) start() {
	h.started = true
	h.w.start()
}

func holdWriter(t *testing.T) *held {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.w.stop()
	w := newWriter(s.w.db)
	w.stmts = s.w.stmts
	s.w = w
	h := &held{Store: s}
	t.Cleanup(func() {
		if !h.started {
			h.start()
		}
		s.Close()
	})
	return h
}

// queue starts call on a goroutine and returns its request, queued, and
// the channel of its outcome.
func (h *held) queue(call func() error) (*request, chan error) {
	out := make(chan error, 1)
	go func() { out <- call() }()
	return <-h.w.reqs, out
}

// The writes queued together commit in one transaction, and each is
// answered with its own outcome: a write refused by the contract (no such
// run) and one that fails half-way (a constraint, after its first
// statement wrote) leave the others committed, and nothing of their own;
// a write whose caller's context ended while it was queued is not done.
func TestGroupCommitAnswersEachWrite(t *testing.T) {
	ctx := context.Background()
	h := holdWriter(t)
	// A journal entry left in the file without its journal: a BeginRun
	// on "broken" inserts the journal's row, then fails on the entry's
	// primary key.
	if _, err := h.w.db.Exec("INSERT INTO journal_entries (conversation, seq, entry) VALUES ('broken', 0, x'00')"); err != nil {
		t.Fatal(err)
	}

	var reqs []*request
	var outs []chan error
	add := func(call func() error) {
		r, out := h.queue(call)
		reqs = append(reqs, r)
		outs = append(outs, out)
	}
	cctx, cancel := context.WithCancel(ctx)
	add(func() error { return h.Append(ctx, "a", genai.Text("one")) })
	add(func() error { return h.AppendRun(ctx, "none", "run", session.Claim{}, [][]byte{[]byte("x")}) })
	add(func() error { return h.BeginRun(ctx, "broken", "run", session.Claim{}, [][]byte{[]byte("x")}) })
	add(func() error { return h.Append(cctx, "cancelled", genai.Text("never")) })
	add(func() error { return h.BeginRun(ctx, "b", "run", session.Claim{}, [][]byte{[]byte("first")}) })
	add(func() error { return h.Append(ctx, "a", genai.Text("two")) })
	cancel()
	if err := <-outs[3]; !errors.Is(err, context.Canceled) {
		t.Fatalf("Append whose context ended while it was queued = %v; want context.Canceled", err)
	}
	h.w.commit(reqs)

	want := []func(error) bool{
		func(err error) bool { return err == nil },
		func(err error) bool { return errors.Is(err, session.ErrNoRun) },
		func(err error) bool { return err != nil && strings.Contains(err.Error(), "UNIQUE") },
		nil,
		func(err error) bool { return err == nil },
		func(err error) bool { return err == nil },
	}
	for i, ok := range want {
		if ok == nil {
			continue
		}
		if err := <-outs[i]; !ok(err) {
			t.Errorf("write %d = %v", i, err)
		}
	}
	h.start()
	if got, err := h.Load(ctx, "a"); err != nil || len(got) != 2 || got[0].Parts[0].Text != "one" || got[1].Parts[0].Text != "two" {
		t.Errorf(`Load("a") = %v, %v; want one, two`, got, err)
	}
	if _, err := h.LoadRun(ctx, "broken"); !errors.Is(err, session.ErrNoRun) {
		t.Errorf(`LoadRun("broken") = %v; want ErrNoRun: the failed BeginRun left nothing`, err)
	}
	if j, err := h.LoadRun(ctx, "b"); err != nil || len(j.Entries) != 1 {
		t.Errorf(`LoadRun("b") = %+v, %v; want its entry`, j, err)
	}
	if _, err := h.Load(ctx, "cancelled"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf(`Load("cancelled") = %v; want ErrNotFound: a write abandoned while queued is not done`, err)
	}
}

// Writes from many goroutines at once are each stored once, whole, each
// writer's in order.
func TestConcurrentWritesShareCommits(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, each = 50, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Append(ctx, "shared", genai.Text(string(rune('A'+w))+strings.Repeat("x", i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := s.Load(ctx, "shared")
	if err != nil || len(got) != writers*each {
		t.Fatalf("Load = %d contents, %v; want %d", len(got), err, writers*each)
	}
	next := map[byte]int{}
	for _, c := range got {
		text := c.Parts[0].Text
		if len(text)-1 != next[text[0]] {
			t.Fatalf("writer %c's append of %d bytes came after %d of its appends", text[0], len(text), next[text[0]])
		}
		next[text[0]]++
	}
	t.Logf("%d appends in %d commits", writers*each, s.w.commits.Load())
}
