package session_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"google.golang.org/genai"
)

func TestMemoryContract(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Store { return session.NewMemory() })
}

func TestMemoryZeroValue(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Store { return new(session.Memory) })
}

// notLister hides the Lister methods of its store: the listing tests then
// check session.ListPage's and session.UsageOf's fallback on List.
type notLister struct{ session.Store }

func TestListFallback(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Store { return notLister{session.NewMemory()} })
}

// A Memory holds at most MaxBytes: an append over it forgets the
// conversations appended to least recently, and one conversation larger
// than MaxBytes by itself is refused.
func TestMemoryMaxBytes(t *testing.T) {
	ctx := context.Background()
	kib := genai.Text(strings.Repeat("x", 1000)) // about 1 KiB stored
	m := &session.Memory{MaxBytes: 3500}
	for _, id := range []string{"a", "b", "c"} {
		if err := m.Append(ctx, id, kib); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Append(ctx, "a", kib); err != nil { // a is now the most recent: b goes
		t.Fatal(err)
	}
	list, _ := m.List(ctx)
	var got []string
	for _, info := range list {
		got = append(got, info.ID)
	}
	if want := []string{"a", "c"}; !slices.Equal(got, want) {
		t.Errorf("after an append over MaxBytes, List() = %q; want %q (b, appended to least recently, forgotten)", got, want)
	}
	if u, _ := m.Usage(ctx, ""); u.Bytes > m.MaxBytes || u.Conversations != 2 {
		t.Errorf("Usage() = %+v; want 2 conversations within MaxBytes %d", u, m.MaxBytes)
	}
	if _, err := m.Load(ctx, "b"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load(b) = %v; want ErrNotFound", err)
	}
	if got, err := m.Load(ctx, "a"); err != nil || len(got) != 2 {
		t.Errorf("Load(a) = %d contents, %v; want 2", len(got), err)
	}

	err := m.Append(ctx, "a", append(kib, kib[0], kib[0]))
	if !errors.Is(err, session.ErrTooLarge) {
		t.Fatalf("an append that makes a conversation larger than MaxBytes = %v; want ErrTooLarge", err)
	}
	if got, _ := m.Load(ctx, "a"); len(got) != 2 {
		t.Errorf("after a refused append, a holds %d contents; want 2", len(got))
	}
	if _, err := m.Load(ctx, "c"); err != nil {
		t.Errorf("a refused append forgot c: %v", err)
	}

	unbounded := &session.Memory{MaxBytes: -1}
	for range 10 {
		if err := unbounded.Append(ctx, "a", kib); err != nil {
			t.Fatalf("Append to a Memory with MaxBytes -1 = %v", err)
		}
	}
}

// Totalling and listing one owner's conversations in a Memory of 100,000
// (1,000 owners of 100 each), against the whole store's List.
func BenchmarkMemoryOwner(b *testing.B) {
	ctx := context.Background()
	m := session.NewMemory()
	for o := range 1000 {
		for c := range 100 {
			if err := m.Append(ctx, fmt.Sprintf("agentserver/user%d/thread-%d", o, c), genai.Text("hi")); err != nil {
				b.Fatal(err)
			}
		}
	}
	const prefix = "agentserver/user500/"
	b.Run("Usage", func(b *testing.B) {
		for b.Loop() {
			if u, _ := m.Usage(ctx, prefix); u.Conversations != 100 {
				b.Fatal(u)
			}
		}
	})
	b.Run("ListPage", func(b *testing.B) {
		for b.Loop() {
			if p, _ := m.ListPage(ctx, session.ListOptions{Prefix: prefix}); len(p.Infos) != 100 {
				b.Fatal(len(p.Infos))
			}
		}
	})
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			all, _ := m.List(ctx)
			n := 0
			for _, info := range all {
				if strings.HasPrefix(info.ID, prefix) {
					n++
				}
			}
			if n != 100 {
				b.Fatal(n)
			}
		}
	})
}

// A Memory's journals count toward MaxBytes, and a run in progress keeps
// its conversation: the store forgets others first, refuses a write that
// only forgetting it would make fit, and may forget it again once the run
// has ended.
func TestMemoryMaxBytesWithRuns(t *testing.T) {
	ctx := context.Background()
	kib := genai.Text(strings.Repeat("x", 1000)) // about 1 KiB stored
	m := &session.Memory{MaxBytes: 3500}
	ids := func() []string {
		list, _ := m.List(ctx)
		var got []string
		for _, info := range list {
			got = append(got, info.ID)
		}
		slices.Sort(got)
		return got
	}
	for _, id := range []string{"a", "b"} {
		if err := m.Append(ctx, id, kib); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.BeginRun(ctx, "a", "run", session.Claim{}, [][]byte{make([]byte, 100)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c", "d"} { // d is over the bound: b goes, not a (least recent, but its run is in progress)
		if err := m.Append(ctx, id, kib); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := ids(), []string{"a", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after an append over MaxBytes, the store holds %q; want %q (a kept for its run, b forgotten)", got, want)
	}

	err := m.AppendRun(ctx, "a", "run", session.Claim{}, [][]byte{make([]byte, 3000)})
	if !errors.Is(err, session.ErrTooLarge) {
		t.Fatalf("an AppendRun that does not fit beside its conversation = %v; want ErrTooLarge", err)
	}
	if j, err := m.LoadRun(ctx, "a"); err != nil || j.Len != 1 {
		t.Errorf("after a refused AppendRun, LoadRun(a) = %d entries, %v; want 1", j.Len, err)
	}
	if got, want := ids(), []string{"a", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("after a refused AppendRun, the store holds %q; want %q: nothing forgotten", got, want)
	}
	if err := m.BeginRun(ctx, "e", "run", session.Claim{}, [][]byte{make([]byte, 2500)}); !errors.Is(err, session.ErrTooLarge) {
		t.Errorf("a BeginRun that does not fit beside the runs in progress = %v; want ErrTooLarge", err)
	}

	// 1500 bytes of entries fit once c and d are forgotten.
	if err := m.AppendRun(ctx, "a", "run", session.Claim{}, [][]byte{make([]byte, 1500)}); err != nil {
		t.Fatalf("AppendRun = %v", err)
	}
	if got, want := ids(), []string{"a"}; !slices.Equal(got, want) {
		t.Errorf("after an AppendRun over MaxBytes, the store holds %q; want %q", got, want)
	}

	// The run ends: its entries no longer count, and a may be forgotten.
	if err := m.EndRun(ctx, "a", "run", session.Claim{}, kib); err != nil {
		t.Fatalf("EndRun = %v", err)
	}
	for _, id := range []string{"f", "g"} {
		if err := m.Append(ctx, id, kib); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := ids(), []string{"f", "g"}; !slices.Equal(got, want) {
		t.Errorf("after the run ended and appends over MaxBytes, the store holds %q; want %q (a forgotten)", got, want)
	}
}
