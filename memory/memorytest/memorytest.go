// Package memorytest checks that a [memory.Store] keeps the contract the
// interface documents, so that a store of your own can be tested the way
// this module's are:
//
//	func TestContract(t *testing.T) {
//		memorytest.Run(t, func(t *testing.T) memory.Store {
//			return newStore(t) // a new, empty store, closed by t.Cleanup
//		})
//	}
//
// The tests cover adding (all or nothing, a thread's message once, facts
// as often as they are given), getting, matching and listing (pages,
// cursors, order), the stats search ranks with (counts, lengths and
// document frequencies, kept exact through adds, replaces and deletes),
// vectors (stored exactly, scanned, the memories without one), deleting one
// memory and every memory of a user, and above all isolation: nothing a
// user does reaches another user's memories, and another user's memory
// answers as one that does not exist. Also: user names and texts of every
// shape, concurrent adds, and calls with a done context. The service tests
// of package memory ([RunService]) run a [memory.Service] on the store:
// ingest, search and forgetting end to end.
package memorytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/memory"
)

// Run runs the contract tests, each as a subtest with a store of its own
// from newStore, which must return a new, empty store.
func Run(t *testing.T, newStore func(t *testing.T) memory.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s memory.Store)
	}{
		{"AddGet", testAddGet},
		{"MessageOnce", testMessageOnce},
		{"FactsRepeat", testFactsRepeat},
		{"AddAtomic", testAddAtomic},
		{"Stats", testStats},
		{"Match", testMatch},
		{"MatchLimit", testMatchLimit},
		{"Replace", testReplace},
		{"List", testList},
		{"ListBadCursor", testListBadCursor},
		{"Delete", testDelete},
		{"DeleteUser", testDeleteUser},
		{"Vectors", testVectors},
		{"Isolation", testIsolation},
		{"Names", testNames},
		{"ConcurrentAdds", testConcurrentAdds},
		{"DoneContext", testDoneContext},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.test(t, newStore(t))
		})
	}
	t.Run("Service", func(t *testing.T) { RunService(t, newStore, nil) })
}

var base = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

var seq int
var seqMu sync.Mutex

func newID() string {
	seqMu.Lock()
	defer seqMu.Unlock()
	seq++
	return fmt.Sprintf("mem_test_%06d", seq)
}

// msg returns a message record of user.
func msg(user, thread string, index int, author, text string) memory.Record {
	return memory.Record{Memory: memory.Memory{ID: newID(), User: user, Kind: memory.KindMessage, Text: text, Author: author,
		Thread: thread, Message: index, Time: base.Add(time.Duration(index) * time.Minute)}, Terms: memory.Analyze(text)}
}

func fact(user, text string) memory.Record {
	return memory.Record{Memory: memory.Memory{ID: newID(), User: user, Kind: memory.KindFact, Text: text, Message: -1, Time: base},
		Terms: memory.Analyze(text)}
}

func add(t *testing.T, s memory.Store, user string, recs ...memory.Record) []string {
	t.Helper()
	ids, err := s.Add(context.Background(), user, recs)
	if err != nil {
		t.Fatalf("Add(%q): %v", user, err)
	}
	return ids
}

// sameMemory reports how a and b differ as memories, or "".
func sameMemory(a, b memory.Memory) string {
	switch {
	case a.ID != b.ID:
		return fmt.Sprintf("ID %q, want %q", a.ID, b.ID)
	case a.User != b.User:
		return fmt.Sprintf("User %q, want %q", a.User, b.User)
	case a.Kind != b.Kind || a.Text != b.Text || a.Author != b.Author || a.Thread != b.Thread || a.Message != b.Message:
		return fmt.Sprintf("%+v, want %+v", a, b)
	case !a.Time.Equal(b.Time):
		return fmt.Sprintf("Time %v, want %v", a.Time, b.Time)
	}
	return ""
}

func testAddGet(t *testing.T, s memory.Store) {
	ctx := context.Background()
	r1 := msg("alice", "t1", 0, "user", "I adopted a cat named Miso in Lisbon.")
	r1.Before, r1.After = "hello", memory.Analyze("What a lovely name!")
	r2 := fact("alice", "Alice is vegetarian.")
	r2.Author = "alice"
	r3 := msg("alice", "t1", 1, "model", "What a lovely name! 🐈")
	ids := add(t, s, "alice", r1, r2, r3)
	if !slices.Equal(ids, []string{r1.ID, r2.ID, r3.ID}) {
		t.Fatalf("Add returned %q, want the three ids in order", ids)
	}
	got, err := s.Get(ctx, "alice", []string{r3.ID, "missing", r1.ID, r2.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("Get returned %d records, want 3 (the missing id skipped)", len(got))
	}
	for i, want := range []memory.Record{r3, r1, r2} {
		if d := sameMemory(got[i].Memory, want.Memory); d != "" {
			t.Errorf("Get[%d]: %s", i, d)
		}
		if got[i].Terms != want.Terms || got[i].Before != want.Before || got[i].After != want.After {
			t.Errorf("Get[%d] terms %q %q %q, want %q %q %q", i, got[i].Terms, got[i].Before, got[i].After, want.Terms, want.Before, want.After)
		}
		if got[i].Vector != nil {
			t.Errorf("Get[%d] has a vector", i)
		}
	}
}

func testMessageOnce(t *testing.T, s memory.Store) {
	a := msg("alice", "t1", 3, "user", "first")
	b := msg("alice", "t1", 3, "user", "second")
	c := msg("alice", "t2", 3, "user", "other thread")
	if ids := add(t, s, "alice", a); len(ids) != 1 {
		t.Fatalf("first add: %q", ids)
	}
	if ids := add(t, s, "alice", b, c); !slices.Equal(ids, []string{c.ID}) {
		t.Fatalf("second add returned %q, want only %q (the same thread and message is added once)", ids, c.ID)
	}
	got, _ := s.Get(context.Background(), "alice", []string{a.ID, b.ID})
	if len(got) != 1 || got[0].Text != "first" {
		t.Fatalf("Get = %+v, want the first message only", got)
	}
	// Another user may have the same thread and message.
	if ids := add(t, s, "bob", msg("bob", "t1", 3, "user", "bob's")); len(ids) != 1 {
		t.Fatalf("bob's add: %q", ids)
	}
}

func testFactsRepeat(t *testing.T, s memory.Store) {
	a, b := fact("alice", "Likes tea."), fact("alice", "Likes tea.")
	a.Thread, a.Message, b.Thread, b.Message = "t", 2, "t", 2
	if ids := add(t, s, "alice", a, b); len(ids) != 2 {
		t.Fatalf("Add returned %q, want both facts", ids)
	}
}

func testAddAtomic(t *testing.T, s memory.Store) {
	ctx := context.Background()
	good := fact("alice", "kept?")
	bad := fact("alice", "no id")
	bad.ID = ""
	if _, err := s.Add(ctx, "alice", []memory.Record{good, bad}); err == nil {
		t.Fatal("Add of a record without id succeeded")
	}
	dup := fact("alice", "dup")
	if _, err := s.Add(ctx, "alice", []memory.Record{good, dup, dup}); err == nil {
		t.Fatal("Add of an id given twice succeeded")
	}
	if got, _ := s.Get(ctx, "alice", []string{good.ID, dup.ID}); len(got) != 0 {
		t.Fatalf("a failed Add stored %d records", len(got))
	}
	if st, _ := s.Stats(ctx, "alice", []string{"kept"}); st.Count != 0 || st.DF["kept"] != 0 {
		t.Fatalf("a failed Add changed the stats: %+v", st)
	}
	if _, err := s.Add(ctx, "", []memory.Record{fact("", "x")}); err == nil {
		t.Fatal("Add for an empty user succeeded")
	}
}

func wantStats(t *testing.T, s memory.Store, user string, terms []string, want memory.Stats) {
	t.Helper()
	got, err := s.Stats(context.Background(), user, terms)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != want.Count || got.TermsLen != want.TermsLen || got.BeforeLen != want.BeforeLen || got.AfterLen != want.AfterLen {
		t.Errorf("Stats(%q) = %d memories, lengths %d %d %d; want %d, %d %d %d", user, got.Count, got.TermsLen, got.BeforeLen, got.AfterLen,
			want.Count, want.TermsLen, want.BeforeLen, want.AfterLen)
	}
	for _, term := range terms {
		if got.DF[term] != want.DF[term] {
			t.Errorf("Stats(%q).DF[%q] = %d, want %d", user, term, got.DF[term], want.DF[term])
		}
	}
}

func testStats(t *testing.T, s memory.Store) {
	ctx := context.Background()
	a := msg("alice", "t", 0, "user", "")
	a.Terms, a.Before, a.After = "cat cat dog", "bird", "cat fish"
	b := fact("alice", "")
	b.Terms = "dog"
	add(t, s, "alice", a, b)
	terms := []string{"cat", "dog", "bird", "fish", "none"}
	wantStats(t, s, "alice", terms, memory.Stats{Count: 2, TermsLen: 4, BeforeLen: 1, AfterLen: 2,
		DF: map[string]int{"cat": 1, "dog": 2, "bird": 1, "fish": 1}})
	if err := s.Delete(ctx, "alice", b.ID); err != nil {
		t.Fatal(err)
	}
	wantStats(t, s, "alice", terms, memory.Stats{Count: 1, TermsLen: 3, BeforeLen: 1, AfterLen: 2,
		DF: map[string]int{"cat": 1, "dog": 1, "bird": 1, "fish": 1}})
	wantStats(t, s, "nobody", terms, memory.Stats{})
}

// matchIDs returns the sorted ids of the memories that hold any of terms.
func matchIDs(t *testing.T, s memory.Store, user string, terms []string, limit int) []string {
	t.Helper()
	recs, err := s.Match(context.Background(), user, terms, limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		if r.Vector != nil {
			t.Errorf("Match returned a vector")
		}
		if r.User != user {
			t.Errorf("Match(%q) returned a memory of %q", user, r.User)
		}
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	return ids
}

func testMatch(t *testing.T, s memory.Store) {
	a := msg("alice", "t", 0, "user", "I play the violin")
	b := msg("alice", "t", 1, "model", "Lovely")
	b.Before = a.Terms
	c := fact("alice", "Alice runs marathons")
	add(t, s, "alice", a, b, c)
	sorted := func(ids ...string) []string { sort.Strings(ids); return ids }
	if got, want := matchIDs(t, s, "alice", []string{"violin"}, 10), sorted(a.ID, b.ID); !slices.Equal(got, want) {
		t.Errorf("Match(violin) = %q, want %q (the memory and the one whose Before holds it)", got, want)
	}
	if got, want := matchIDs(t, s, "alice", []string{"marathon", "nothing"}, 10), sorted(c.ID); !slices.Equal(got, want) {
		t.Errorf("Match(marathon) = %q, want %q", got, want)
	}
	if got := matchIDs(t, s, "alice", []string{"absent"}, 10); len(got) != 0 {
		t.Errorf("Match(absent) = %q", got)
	}
	if got := matchIDs(t, s, "alice", nil, 10); len(got) != 0 {
		t.Errorf("Match() = %q", got)
	}
	// Terms that look like query syntax are terms.
	d := fact("alice", "")
	d.Terms = "or and not near"
	add(t, s, "alice", d)
	if got := matchIDs(t, s, "alice", []string{"or", "near"}, 10); !slices.Equal(got, []string{d.ID}) {
		t.Errorf("Match(or near) = %q, want %q", got, d.ID)
	}
	if got := matchIDs(t, s, "alice", []string{"", "violin"}, 10); len(got) != 2 {
		t.Errorf("Match with an empty term = %q, want the violin's two", got)
	}
}

func testMatchLimit(t *testing.T, s memory.Store) {
	var all []string
	for i := range 30 {
		r := msg("alice", "t", i, "user", fmt.Sprintf("apple number %d", i))
		add(t, s, "alice", r)
		all = append(all, r.ID)
	}
	got := matchIDs(t, s, "alice", []string{"appl"}, 7)
	want := slices.Clone(all[23:])
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("Match with limit 7 = %q, want the 7 added last %q", got, want)
	}
}

func testReplace(t *testing.T, s memory.Store) {
	ctx := context.Background()
	old := fact("alice", "Alice lives in Paris")
	keep := fact("alice", "Alice likes tea")
	add(t, s, "alice", old, keep)
	fresh := fact("alice", "Alice lives in Lisbon")
	if err := s.Replace(ctx, "alice", []memory.Record{fresh}, []string{old.ID, "missing"}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(ctx, "alice", []string{old.ID, keep.ID, fresh.ID})
	if len(got) != 2 || got[0].ID != keep.ID || got[1].ID != fresh.ID {
		t.Fatalf("after Replace, Get = %+v", got)
	}
	wantStats(t, s, "alice", []string{"pari", "lisbon", "alic", "live"}, memory.Stats{Count: 2, TermsLen: 6,
		DF: map[string]int{"lisbon": 1, "live": 1, "alic": 2}})
	// Bob cannot replace Alice's memories.
	if err := s.Replace(ctx, "bob", nil, []string{keep.ID}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "alice", []string{keep.ID}); len(got) != 1 {
		t.Fatal("bob's Replace removed alice's memory")
	}
	// All or nothing.
	bad := fact("alice", "bad")
	bad.ID = ""
	if err := s.Replace(ctx, "alice", []memory.Record{bad}, []string{keep.ID}); err == nil {
		t.Fatal("Replace with a bad record succeeded")
	}
	if got, _ := s.Get(ctx, "alice", []string{keep.ID}); len(got) != 1 {
		t.Fatal("a failed Replace removed a memory")
	}
}

func testList(t *testing.T, s memory.Store) {
	ctx := context.Background()
	var want []memory.Record
	for i := range 25 {
		r := msg("alice", "t", i, "user", fmt.Sprintf("m%d", i))
		if i%5 == 0 {
			r.Time = base.Add(time.Hour) // ties, ordered by id
		}
		want = append(want, r)
	}
	add(t, s, "alice", want...)
	add(t, s, "bob", msg("bob", "t", 0, "user", "bob's"))
	slices.SortFunc(want, func(a, b memory.Record) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	var got []memory.Memory
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("List never ends")
		}
		p, err := s.List(ctx, "alice", memory.ListOptions{Limit: 10, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Memories) > 10 {
			t.Fatalf("a page of %d memories, limit 10", len(p.Memories))
		}
		got = append(got, p.Memories...)
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if len(got) != len(want) {
		t.Fatalf("List returned %d memories, want %d", len(got), len(want))
	}
	for i := range got {
		if d := sameMemory(got[i], want[i].Memory); d != "" {
			t.Errorf("List[%d]: %s", i, d)
		}
	}
	if p, err := s.List(ctx, "nobody", memory.ListOptions{}); err != nil || len(p.Memories) != 0 || p.Next != "" {
		t.Errorf("List(nobody) = %+v, %v", p, err)
	}
}

func testListBadCursor(t *testing.T, s memory.Store) {
	_, err := s.List(context.Background(), "alice", memory.ListOptions{Cursor: "!!not a cursor"})
	if err == nil {
		t.Fatal("List with a bad cursor succeeded")
	}
}

func testDelete(t *testing.T, s memory.Store) {
	ctx := context.Background()
	a := msg("alice", "t", 0, "user", "The secret code is tangerine")
	add(t, s, "alice", a)
	if err := s.SetVectors(ctx, "alice", map[string][]float32{a.ID: {1, 0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "alice", a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "alice", a.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	if got := matchIDs(t, s, "alice", []string{"tangerin"}, 10); len(got) != 0 {
		t.Errorf("a deleted memory still matches: %q", got)
	}
	if n := countVectors(t, s, "alice"); n != 0 {
		t.Errorf("a deleted memory's vector is still scanned (%d)", n)
	}
	// The message may be remembered again once forgotten.
	if ids := add(t, s, "alice", msg("alice", "t", 0, "user", "again")); len(ids) != 1 {
		t.Errorf("re-adding a deleted message: %q", ids)
	}
}

func countVectors(t *testing.T, s memory.Store, user string) int {
	t.Helper()
	n := 0
	err := s.Vectors(context.Background(), user, func(string, []float32) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testDeleteUser(t *testing.T, s memory.Store) {
	ctx := context.Background()
	a := msg("alice", "t", 0, "user", "alice's secret plum")
	b := msg("bob", "t", 0, "user", "bob's secret plum")
	add(t, s, "alice", a, fact("alice", "plum fact"))
	add(t, s, "bob", b)
	s.SetVectors(ctx, "alice", map[string][]float32{a.ID: {0, 1}})
	s.SetVectors(ctx, "bob", map[string][]float32{b.ID: {0, 1}})
	if err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	wantStats(t, s, "alice", []string{"plum", "secret"}, memory.Stats{})
	if got := matchIDs(t, s, "alice", []string{"plum"}, 10); len(got) != 0 {
		t.Errorf("after DeleteUser, Match = %q", got)
	}
	if n := countVectors(t, s, "alice"); n != 0 {
		t.Errorf("after DeleteUser, %d vectors", n)
	}
	if p, _ := s.List(ctx, "alice", memory.ListOptions{}); len(p.Memories) != 0 {
		t.Errorf("after DeleteUser, List = %d", len(p.Memories))
	}
	if u, _ := s.Unembedded(ctx, "alice", 10); len(u) != 0 {
		t.Errorf("after DeleteUser, Unembedded = %d", len(u))
	}
	// Bob is untouched.
	wantStats(t, s, "bob", []string{"plum"}, memory.Stats{Count: 1, TermsLen: 3, DF: map[string]int{"plum": 1}})
	if n := countVectors(t, s, "bob"); n != 1 {
		t.Errorf("bob has %d vectors, want 1", n)
	}
	if err := s.DeleteUser(ctx, "nobody"); err != nil {
		t.Errorf("DeleteUser(nobody): %v", err)
	}
}

func testVectors(t *testing.T, s memory.Store) {
	ctx := context.Background()
	var recs []memory.Record
	for i := range 5 {
		recs = append(recs, msg("alice", "t", i, "user", fmt.Sprint("text ", i)))
	}
	recs[4].Vector = []float32{0.5, 0.5} // added with a vector
	add(t, s, "alice", recs...)
	un, err := s.Unembedded(ctx, "alice", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(un) != 4 || un[0].ID != recs[0].ID || un[3].ID != recs[3].ID {
		t.Fatalf("Unembedded = %d records, want the first 4 in order", len(un))
	}
	if un, _ := s.Unembedded(ctx, "alice", 2); len(un) != 2 || un[0].ID != recs[0].ID {
		t.Fatalf("Unembedded(2) = %d records", len(un))
	}
	odd := []float32{float32(math.Pi), -0, float32(math.SmallestNonzeroFloat32), math.MaxFloat32, -1e-30}
	vecs := map[string][]float32{recs[0].ID: odd, recs[1].ID: {1, 2, 3, 4, 5}, "missing": {1}}
	if err := s.SetVectors(ctx, "alice", vecs); err != nil {
		t.Fatal(err)
	}
	got := map[string][]float32{}
	err = s.Vectors(ctx, "alice", func(id string, v []float32) error {
		got[id] = slices.Clone(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !slices.Equal(got[recs[0].ID], odd) || !slices.Equal(got[recs[4].ID], []float32{0.5, 0.5}) {
		t.Fatalf("Vectors = %v", got)
	}
	if un, _ := s.Unembedded(ctx, "alice", 10); len(un) != 2 {
		t.Fatalf("after SetVectors, Unembedded = %d, want 2", len(un))
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Vectors(ctx, "alice", func(string, []float32) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Vectors after f's error: %v, %d calls", err, n)
	}
}

func testIsolation(t *testing.T, s memory.Store) {
	ctx := context.Background()
	a := msg("alice", "shared-thread", 0, "user", "my password is swordfish")
	add(t, s, "alice", a)
	s.SetVectors(ctx, "alice", map[string][]float32{a.ID: {1}})
	for _, other := range []string{"bob", "alic", "alice ", "ALICE", "alice\n", "%"} {
		if got := matchIDs(t, s, other, []string{"swordfish", "password"}, 10); len(got) != 0 {
			t.Errorf("Match as %q found alice's memory", other)
		}
		if got, _ := s.Get(ctx, other, []string{a.ID}); len(got) != 0 {
			t.Errorf("Get as %q found alice's memory", other)
		}
		if st, _ := s.Stats(ctx, other, []string{"swordfish"}); st.Count != 0 || st.DF["swordfish"] != 0 {
			t.Errorf("Stats as %q count alice's memory: %+v", other, st)
		}
		if p, _ := s.List(ctx, other, memory.ListOptions{}); len(p.Memories) != 0 {
			t.Errorf("List as %q shows alice's memory", other)
		}
		if n := countVectors(t, s, other); n != 0 {
			t.Errorf("Vectors as %q scans alice's vector", other)
		}
		if un, _ := s.Unembedded(ctx, other, 10); len(un) != 0 {
			t.Errorf("Unembedded as %q returns alice's memory", other)
		}
		if err := s.Delete(ctx, other, a.ID); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Delete as %q: %v, want ErrNotFound", other, err)
		}
		s.SetVectors(ctx, other, map[string][]float32{a.ID: {9}})
		s.Replace(ctx, other, nil, []string{a.ID})
		s.DeleteUser(ctx, other)
		// Another user's message of the same thread and index is theirs.
		if ids := add(t, s, other, msg(other, "shared-thread", 0, "user", "swordfish too")); len(ids) != 1 {
			t.Errorf("as %q, adding a message alice has at the same place: %q", other, ids)
		}
	}
	got, _ := s.Get(ctx, "alice", []string{a.ID})
	if len(got) != 1 || got[0].Text != a.Text {
		t.Fatal("alice's memory changed")
	}
	var v []float32
	s.Vectors(ctx, "alice", func(_ string, w []float32) error { v = slices.Clone(w); return nil })
	if !slices.Equal(v, []float32{1}) {
		t.Fatalf("alice's vector is %v, want [1]", v)
	}
}

func testNames(t *testing.T, s memory.Store) {
	ctx := context.Background()
	for _, user := range []string{"a%b_c", `quote"'\`, "ünïcödé 🐈", "user:with/slashes", strings.Repeat("x", 300)} {
		text := "Text with 'quotes', \"double\", % and _ and emoji 🐈 for " + user
		r := msg(user, "thread/"+user, 1, user, text)
		if ids := add(t, s, user, r); len(ids) != 1 {
			t.Fatalf("add for %q: %q", user, ids)
		}
		got, err := s.Get(ctx, user, []string{r.ID})
		if err != nil || len(got) != 1 {
			t.Fatalf("Get for %q: %v, %v", user, got, err)
		}
		if d := sameMemory(got[0].Memory, r.Memory); d != "" {
			t.Errorf("for %q: %s", user, d)
		}
		if ids := matchIDs(t, s, user, []string{"emoji"}, 10); len(ids) != 1 {
			t.Errorf("Match for %q = %q", user, ids)
		}
	}
}

func testConcurrentAdds(t *testing.T, s memory.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	added := make(chan []string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				// Every goroutine adds message i of the thread: one wins.
				ids, err := s.Add(ctx, "alice", []memory.Record{msg("alice", "t", i, "user", fmt.Sprintf("from %d", g)),
					fact("alice", fmt.Sprintf("fact %d %d", g, i))})
				if err != nil {
					errs <- err
					return
				}
				added <- ids
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(added)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for ids := range added {
		total += len(ids)
	}
	if want := 5 + 8*5; total != want {
		t.Errorf("concurrent adds added %d memories, want %d (each message once, each fact)", total, want)
	}
	st, _ := s.Stats(ctx, "alice", []string{"fact"})
	if st.Count != 45 || st.DF["fact"] != 40 {
		t.Errorf("Stats after concurrent adds: %d memories, df(fact) %d; want 45, 40", st.Count, st.DF["fact"])
	}
}

func testDoneContext(t *testing.T, s memory.Store) {
	add(t, s, "alice", fact("alice", "something"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done context: %v, want context.Canceled", name, err)
		}
	}
	_, err := s.Add(ctx, "alice", []memory.Record{fact("alice", "x")})
	check("Add", err)
	check("Replace", s.Replace(ctx, "alice", []memory.Record{fact("alice", "x")}, nil))
	_, err = s.Stats(ctx, "alice", []string{"someth"})
	check("Stats", err)
	_, err = s.Match(ctx, "alice", []string{"someth"}, 10)
	check("Match", err)
	_, err = s.Get(ctx, "alice", []string{"x"})
	check("Get", err)
	_, err = s.List(ctx, "alice", memory.ListOptions{})
	check("List", err)
	check("Delete", s.Delete(ctx, "alice", "x"))
	check("DeleteUser", s.DeleteUser(ctx, "alice"))
	check("SetVectors", s.SetVectors(ctx, "alice", map[string][]float32{"x": {1}}))
	_, err = s.Unembedded(ctx, "alice", 1)
	check("Unembedded", err)
	check("Vectors", s.Vectors(ctx, "alice", func(string, []float32) error { return nil }))
	if st, _ := s.Stats(context.Background(), "alice", nil); st.Count != 1 {
		t.Errorf("calls with a done context changed the store: %d memories", st.Count)
	}
}
