package sessiontest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// The journal tests run on a store that is a session.Journaler, and skip
// on one that is not.

// journaler returns s as a session.Journaler, or skips t.
func journaler(t *testing.T, s session.Store) session.Journaler {
	t.Helper()
	j, ok := s.(session.Journaler)
	if !ok {
		t.Skipf("%T is not a session.Journaler", s)
	}
	return j
}

// Entries returns journal entries of every shape a store must keep byte
// for byte: JSON, every byte value, invalid UTF-8, NUL bytes, an empty
// entry and a large one.
func Entries() [][]byte {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	return [][]byte{
		[]byte(`{"type":"user","content":{"role":"user","parts":[{"text":"Hi 東京 ✓"}]}}`),
		every,
		[]byte("\xff\xfe not UTF-8 \x00 with a NUL"),
		{},
		[]byte(`{"type":"model","text":"` + strings.Repeat("streamed text ", 5000) + `"}`), // 70 KB
		[]byte(`{"type":"result","call":"fc-1"}`),
	}
}

func mustBeginRun(t *testing.T, j session.Journaler, id, run string, entries ...[]byte) {
	t.Helper()
	if err := j.BeginRun(ctx, id, run, none, entries); err != nil {
		t.Fatalf("BeginRun(%q, %q, %d entries) = %v", id, run, len(entries), err)
	}
}

func mustAppendRun(t *testing.T, j session.Journaler, id, run string, entries ...[]byte) {
	t.Helper()
	if err := j.AppendRun(ctx, id, run, none, entries); err != nil {
		t.Fatalf("AppendRun(%q, %q, %d entries) = %v", id, run, len(entries), err)
	}
}

func mustLoadRun(t *testing.T, j session.Journaler, id string) session.Journal {
	t.Helper()
	got, err := j.LoadRun(ctx, id)
	if err != nil {
		t.Fatalf("LoadRun(%q) = %v", id, err)
	}
	return got
}

// checkRun checks that the journal of id is run's, holding want.
func checkRun(t *testing.T, j session.Journaler, id, run string, want [][]byte) session.Journal {
	t.Helper()
	got := mustLoadRun(t, j, id)
	if got.ID != id || got.Run != run || got.Len != len(want) {
		t.Errorf("LoadRun(%q) = ID %q, Run %q, Len %d; want %q, %q, %d", id, got.ID, got.Run, got.Len, id, run, len(want))
	}
	if !equalEntries(got.Entries, want) {
		t.Errorf("LoadRun(%q).Entries = %.200q; want %.200q", id, got.Entries, want)
	}
	var size int64
	for _, e := range want {
		size += int64(len(e))
	}
	if got.Bytes != size {
		t.Errorf("LoadRun(%q).Bytes = %d; want %d, the sum of the entries' sizes", id, got.Bytes, size)
	}
	listed := slices.IndexFunc(listRuns(t, j, id, session.MaxPageSize), func(l session.Journal) bool { return l.ID == id && l.Bytes == size })
	if listed < 0 {
		t.Errorf("ListRuns(%q) does not list the journal of %q, of %d bytes", id, id, size)
	}
	return got
}

// equalEntries compares entries byte for byte (an empty entry is nil or
// empty).
func equalEntries(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}

// checkNoRun checks that id has no journal.
func checkNoRun(t *testing.T, j session.Journaler, id string) {
	t.Helper()
	if got, err := j.LoadRun(ctx, id); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("LoadRun(%q) = run %q of %d entries, %v; want ErrNoRun", id, got.Run, got.Len, err)
	}
}

// checkLen checks that the conversation id holds n contents (n 0: that
// the store does not hold it).
func checkLen(t *testing.T, s session.Store, id string, n int) {
	t.Helper()
	got, err := s.Load(ctx, id)
	switch {
	case n == 0 && !errors.Is(err, session.ErrNotFound):
		t.Errorf("Load(%q) = %d contents, %v; want ErrNotFound", id, len(got), err)
	case n > 0 && (err != nil || len(got) != n):
		t.Errorf("Load(%q) = %d contents, %v; want %d", id, len(got), err, n)
	}
}

// testRunRoundTrip begins a run, appends to it and loads it: the entries
// come back byte for byte, in order, with the run's times; the store
// shares none of its values with its callers; and a journal is not a
// conversation.
func testRunRoundTrip(t *testing.T, s session.Store) {
	j := journaler(t, s)
	before := time.Now()
	all := Entries()
	mustBeginRun(t, j, "c", "run-1", all[:3]...)
	begun := checkRun(t, j, "c", "run-1", all[:3])
	if begun.Updated.Before(begun.Started) || begun.Started.Before(before.Add(-time.Second)) || begun.Started.After(time.Now().Add(time.Second)) {
		t.Errorf("after BeginRun: Started %v, Updated %v; want now, Updated not before Started", begun.Started, begun.Updated)
	}
	checkLen(t, s, "c", 0) // a journal is not a conversation
	if infos := mustList(t, s); len(infos) != 0 {
		t.Errorf("List() = %+v; want no conversation (a journal is not one)", infos)
	}

	mustAppendRun(t, j, "c", "run-1", all[3:]...)
	mustAppendRun(t, j, "c", "run-1", nil, []byte("last"))
	want := append(slices.Clone(all), nil, []byte("last"))
	got := checkRun(t, j, "c", "run-1", want)
	if !got.Started.Equal(begun.Started) || !got.Updated.After(begun.Updated) {
		t.Errorf("after AppendRun: Started %v -> %v, Updated %v -> %v; want Started kept, Updated later",
			begun.Started, got.Started, begun.Updated, got.Updated)
	}
	mustAppendRun(t, j, "c", "run-1") // no entries: allowed
	checkRun(t, j, "c", "run-1", want)

	// The store keeps its own copies.
	mine := [][]byte{[]byte("mine")}
	mustAppendRun(t, j, "c", "run-1", mine...)
	mine[0][0] = 'X'
	want = append(want, []byte("mine"))
	got = checkRun(t, j, "c", "run-1", want)
	got.Entries[1][0] ^= 0xff
	got.Entries[len(got.Entries)-1][0] = 'Y'
	checkRun(t, j, "c", "run-1", want)
}

// testRunInProgress begins a run on a conversation that has one: refused,
// whatever the run, and nothing changes.
func testRunInProgress(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustAppend(t, s, "c", text(genai.RoleUser, "before"))
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	for _, run := range []string{"run-1", "run-2"} {
		if err := j.BeginRun(ctx, "c", run, none, [][]byte{[]byte("two")}); !errors.Is(err, session.ErrRunInProgress) {
			t.Errorf("BeginRun(%q) on a conversation with a run in progress = %v; want ErrRunInProgress", run, err)
		}
	}
	checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
	checkLen(t, s, "c", 1)
	mustBeginRun(t, j, "d", "run-1", []byte("another conversation's")) // runs are per conversation
	checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
}

// testRunWrongRun appends to and ends a run that is not in progress: no
// journal, or another run's. Refused, and nothing changes.
func testRunWrongRun(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustAppend(t, s, "c", text(genai.RoleUser, "before"))
	check := func(what string) {
		t.Helper()
		if err := j.AppendRun(ctx, "c", "run-2", none, [][]byte{[]byte("x")}); !errors.Is(err, session.ErrNoRun) {
			t.Errorf("AppendRun %s = %v; want ErrNoRun", what, err)
		}
		if err := j.EndRun(ctx, "c", "run-2", none, []*genai.Content{text(genai.RoleModel, "x")}); !errors.Is(err, session.ErrNoRun) {
			t.Errorf("EndRun %s = %v; want ErrNoRun", what, err)
		}
		checkLen(t, s, "c", 1)
	}
	check("with no run in progress")
	checkNoRun(t, j, "c")
	if err := j.EndRun(ctx, "new", "run-2", none, []*genai.Content{text(genai.RoleModel, "x")}); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("EndRun on a conversation that does not exist = %v; want ErrNoRun", err)
	}
	checkLen(t, s, "new", 0)

	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	check("of another run")
	checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
}

// testEndRun ends a run: its contents are appended as Append appends
// them, once, and its journal is gone.
func testEndRun(t *testing.T, s session.Store) {
	j := journaler(t, s)
	conv := Conversation()
	mustAppend(t, s, "c", conv[:3]...)
	mustAppend(t, s, "other", text(genai.RoleUser, "later"))
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	mustAppendRun(t, j, "c", "run-1", []byte("two"))
	if err := j.EndRun(ctx, "c", "run-1", none, conv[3:]); err != nil {
		t.Fatalf("EndRun = %v", err)
	}
	if diff := cmp.Diff(conv, mustLoad(t, s, "c")); diff != "" {
		t.Errorf("after EndRun, the conversation differs (-want +got):\n%s", diff)
	}
	checkNoRun(t, j, "c")
	infos := mustList(t, s)
	if len(infos) != 2 || infos[0].ID != "c" || infos[0].Len != len(conv) || infos[0].Bytes != size(t, conv...) {
		t.Errorf("List() after EndRun = %+v; want c first (appended to last), of %d contents, %d bytes", infos, len(conv), size(t, conv...))
	}
	if u := mustUsage(t, s, "c"); u.Bytes != size(t, conv...) {
		t.Errorf("UsageOf(c) after EndRun = %+v; want %d bytes", u, size(t, conv...))
	}

	// Saved once: the run is over.
	if err := j.EndRun(ctx, "c", "run-1", none, conv[3:]); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("EndRun again = %v; want ErrNoRun", err)
	}
	if err := j.AppendRun(ctx, "c", "run-1", none, [][]byte{[]byte("late")}); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("AppendRun after EndRun = %v; want ErrNoRun", err)
	}
	checkLen(t, s, "c", len(conv))

	// The next run starts from an empty journal.
	mustBeginRun(t, j, "c", "run-2", []byte("fresh"))
	checkRun(t, j, "c", "run-2", [][]byte{[]byte("fresh")})

	// A run on a new conversation creates it when it ends.
	mustBeginRun(t, j, "new", "run-1")
	if err := j.EndRun(ctx, "new", "run-1", none, conv); err != nil {
		t.Fatalf("EndRun on a new conversation = %v", err)
	}
	if diff := cmp.Diff(conv, mustLoad(t, s, "new")); diff != "" {
		t.Errorf("the conversation a run created differs (-want +got):\n%s", diff)
	}
}

// testEndRunNothing ends runs with no contents: the journal goes, and the
// conversation is as it was (one that did not exist still does not).
func testEndRunNothing(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "new", "run-1", []byte("one"))
	if err := j.EndRun(ctx, "new", "run-1", none, nil); err != nil {
		t.Fatalf("EndRun(no contents) = %v", err)
	}
	checkNoRun(t, j, "new")
	checkLen(t, s, "new", 0)

	mustAppend(t, s, "c", text(genai.RoleUser, "hi"))
	before := mustList(t, s)
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	if err := j.EndRun(ctx, "c", "run-1", none, []*genai.Content{}); err != nil {
		t.Fatalf("EndRun(no contents) = %v", err)
	}
	checkNoRun(t, j, "c")
	if after := mustList(t, s); !cmp.Equal(before, after) {
		t.Errorf("List() = %+v after a run that added nothing; want %+v, unchanged", after, before)
	}
}

// testEndRunNil ends a run with a nil content, which Append refuses: so
// does EndRun, and nothing changes.
func testEndRunNil(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	if err := j.EndRun(ctx, "c", "run-1", none, []*genai.Content{text(genai.RoleUser, "x"), nil}); err == nil {
		t.Errorf("EndRun with a nil content = nil; want an error")
	}
	checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
	checkLen(t, s, "c", 0)
}

// testRunDelete deletes conversations with runs in progress: the journal
// goes with them.
func testRunDelete(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustAppend(t, s, "c", text(genai.RoleUser, "hi"))
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	mustBeginRun(t, j, "kept", "run-1", []byte("kept"))
	if err := s.Delete(ctx, "c"); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	checkNoRun(t, j, "c")
	checkLen(t, s, "c", 0)
	if err := j.AppendRun(ctx, "c", "run-1", none, [][]byte{[]byte("late")}); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("AppendRun after Delete = %v; want ErrNoRun", err)
	}
	if err := j.EndRun(ctx, "c", "run-1", none, []*genai.Content{text(genai.RoleModel, "late")}); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("EndRun after Delete = %v; want ErrNoRun", err)
	}
	checkLen(t, s, "c", 0)
	mustBeginRun(t, j, "c", "run-2", []byte("anew"))
	checkRun(t, j, "c", "run-2", [][]byte{[]byte("anew")})

	// A conversation that has a journal and no contents yet (its first
	// run is in progress) is deleted too.
	mustBeginRun(t, j, "first", "run-1", []byte("one"))
	if err := s.Delete(ctx, "first"); err != nil {
		t.Errorf("Delete of a conversation whose first run is in progress = %v; want nil", err)
	}
	checkNoRun(t, j, "first")
	if err := s.Delete(ctx, "first"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Delete again = %v; want ErrNotFound", err)
	}
	checkRun(t, j, "kept", "run-1", [][]byte{[]byte("kept")})
}

// listRuns lists every journal of prefix, limit per page, and checks that
// each page but the last is full and holds no entries.
func listRuns(t *testing.T, j session.Journaler, prefix string, limit int) []session.Journal {
	t.Helper()
	var all []session.Journal
	opts := session.ListOptions{Prefix: prefix, Limit: limit}
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("ListRuns(%q) gave over 100 pages: its cursors do not advance", prefix)
		}
		p, err := j.ListRuns(ctx, opts)
		if err != nil {
			t.Fatalf("ListRuns(%+v) = %v", opts, err)
		}
		for _, journal := range p.Journals {
			if journal.Entries != nil {
				t.Errorf("ListRuns: %s has Entries; want nil in a listing", journal.ID)
			}
		}
		all = append(all, p.Journals...)
		if p.Next == "" {
			return all
		}
		if limit > 0 && len(p.Journals) != limit {
			t.Errorf("ListRuns(%+v) = %d journals and a next page; want a full page of %d", opts, len(p.Journals), limit)
		}
		opts.Cursor = p.Next
	}
}

func runIDs(journals []session.Journal) []string {
	out := make([]string, len(journals))
	for i, j := range journals {
		out[i] = j.ID
	}
	return out
}

// testListRuns lists the runs in progress in pages of every size: the
// least recently appended to first, by prefix, without the conversations
// that have none.
func testListRuns(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "v/0", "run", []byte("another owner's"))
	var want []string // the least recently appended to first
	for i := range 7 {
		id := fmt.Sprintf("u/%d", i)
		mustBeginRun(t, j, id, "run-"+id, []byte(id))
		want = append(want, id)
	}
	mustAppend(t, s, "u/conversation", text(genai.RoleUser, "no run in progress"))
	mustAppend(t, s, "u/1", text(genai.RoleUser, "a conversation's append is not a journal's"))
	mustAppendRun(t, j, "u/2", "run-u/2", []byte("again"))
	if err := j.EndRun(ctx, "u/4", "run-u/4", none, nil); err != nil {
		t.Fatal(err)
	}
	want = append(slices.DeleteFunc(want, func(id string) bool { return id == "u/2" || id == "u/4" }), "u/2")
	for _, limit := range []int{0, 1, 2, 3, 5, 6, 7, session.MaxPageSize + 1} {
		if got := runIDs(listRuns(t, j, "u/", limit)); !slices.Equal(got, want) {
			t.Errorf("listing runs in pages of %d = %q; want %q", limit, got, want)
		}
	}
	for _, journal := range listRuns(t, j, "u/", 0) {
		wantLen := 1
		if journal.ID == "u/2" {
			wantLen = 2
		}
		if journal.Run != "run-"+journal.ID || journal.Len != wantLen || journal.Updated.Before(journal.Started) {
			t.Errorf("ListRuns: %+v; want run %q of %d entries, Updated not before Started", journal, "run-"+journal.ID, wantLen)
		}
	}
	if got, want := runIDs(listRuns(t, j, "", 2)), append([]string{"v/0"}, want...); !slices.Equal(got, want) {
		t.Errorf("listing runs with no prefix = %q; want %q", got, want)
	}
	if got := runIDs(listRuns(t, j, "u/1", 0)); !slices.Equal(got, []string{"u/1"}) {
		t.Errorf("listing runs of prefix u/1 = %q; want [u/1]", got)
	}
	if p, err := j.ListRuns(ctx, session.ListOptions{Prefix: "nobody/"}); err != nil || len(p.Journals) != 0 || p.Next != "" {
		t.Errorf("ListRuns of a prefix nobody has = %+v, %v; want an empty last page", p, err)
	}
	for _, cursor := range []string{"x", "not a cursor!", "dTEvYQ", "AAAA"} {
		if p, err := j.ListRuns(ctx, session.ListOptions{Prefix: "u/", Cursor: cursor}); !errors.Is(err, session.ErrBadCursor) {
			t.Errorf("ListRuns(Cursor %q) = %+v, %v; want ErrBadCursor", cursor, p, err)
		}
	}
}

// testConcurrentRuns races runs on one conversation from many
// goroutines: one BeginRun of many wins; appends to the journal from
// several goroutines are all there, each whole, each goroutine's in
// order; and one EndRun of many saves the run, once.
func testConcurrentRuns(t *testing.T, s session.Store) {
	j := journaler(t, s)
	const racers = 16
	errs := race(racers, func(i int) error {
		return j.BeginRun(ctx, "c", fmt.Sprint("run-", i), none, [][]byte{[]byte(fmt.Sprint(i))})
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("BeginRun %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, session.ErrRunInProgress):
			t.Errorf("BeginRun %d = %v; want nil or ErrRunInProgress", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no BeginRun of %d won", racers)
	}
	run := fmt.Sprint("run-", winner)
	checkRun(t, j, "c", run, [][]byte{[]byte(fmt.Sprint(winner))})

	const writers, batches, batchSize = 4, 10, 3
	errs = race(writers, func(w int) error {
		for b := range batches {
			batch := make([][]byte, batchSize)
			for i := range batch {
				batch[i] = fmt.Appendf(nil, "%d/%d/%d", w, b, i)
			}
			if err := j.AppendRun(ctx, "c", run, none, batch); err != nil {
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Errorf("concurrent AppendRun = %v", err)
		}
	}
	got := mustLoadRun(t, j, "c")
	contents := make([]*genai.Content, len(got.Entries)-1)
	for i, e := range got.Entries[1:] {
		contents[i] = text(genai.RoleUser, string(e))
	}
	CheckBatches(t, contents, writers, batches, batchSize)

	saved := []*genai.Content{text(genai.RoleUser, "question"), text(genai.RoleModel, "answer")}
	errs = race(racers, func(int) error { return j.EndRun(ctx, "c", run, none, saved) })
	ended := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ended++
		case !errors.Is(err, session.ErrNoRun):
			t.Errorf("EndRun %d = %v; want nil or ErrNoRun", i, err)
		}
	}
	if ended != 1 {
		t.Errorf("%d of %d concurrent EndRuns succeeded; want 1", ended, racers)
	}
	if diff := cmp.Diff(saved, mustLoad(t, s, "c")); diff != "" {
		t.Errorf("after concurrent EndRuns, the conversation differs (-want +got): the run is saved once:\n%s", diff)
	}
}

// race calls f(0) … f(n-1) from n goroutines released at once, and
// returns their errors.
func race(n int, f func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// testRunInvalid gives the journal's calls ids and run names that cannot
// be: an error, not ErrNoRun, and nothing is written.
func testRunInvalid(t *testing.T, s session.Store) {
	j := journaler(t, s)
	for _, id := range []string{"", "bad\xffutf8", "nul\x00byte", strings.Repeat("x", 1025)} {
		if err := j.BeginRun(ctx, id, "run", none, nil); err == nil {
			t.Errorf("BeginRun(%.20q) = nil; want an error", id)
		}
		for op, err := range map[string]error{
			"AppendRun": j.AppendRun(ctx, id, "run", none, nil),
			"EndRun":    j.EndRun(ctx, id, "run", none, nil),
			"LoadRun":   func() error { _, err := j.LoadRun(ctx, id); return err }(),
		} {
			if err == nil || errors.Is(err, session.ErrNoRun) {
				t.Errorf("%s(%.20q) = %v; want an error other than ErrNoRun", op, id, err)
			}
		}
	}
	for _, run := range []string{"", "bad\xffutf8", "nul\x00byte", strings.Repeat("x", 1025)} {
		if err := j.BeginRun(ctx, "c", run, none, [][]byte{[]byte("x")}); err == nil || errors.Is(err, session.ErrRunInProgress) {
			t.Errorf("BeginRun(run %.20q) = %v; want an error", run, err)
		}
	}
	checkNoRun(t, j, "c")
	if p, err := j.ListRuns(ctx, session.ListOptions{}); err != nil || len(p.Journals) != 0 {
		t.Errorf("ListRuns() after invalid calls = %+v, %v; want none", p, err)
	}
}

// testRunDoneContext calls the journal's methods with a done context:
// each fails with the context's error, and nothing changes.
func testRunDoneContext(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustAppend(t, s, "c", text(genai.RoleUser, "hi"))
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	done, cancel := context.WithCancel(ctx)
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done context = %v; want an error wrapping context.Canceled", op, err)
		}
	}
	check("BeginRun", j.BeginRun(done, "d", "run-1", none, [][]byte{[]byte("no")}))
	check("AppendRun", j.AppendRun(done, "c", "run-1", none, [][]byte{[]byte("no")}))
	check("EndRun", j.EndRun(done, "c", "run-1", none, []*genai.Content{text(genai.RoleModel, "no")}))
	_, err := j.LoadRun(done, "c")
	check("LoadRun", err)
	_, err = j.ListRuns(done, session.ListOptions{})
	check("ListRuns", err)
	checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
	checkNoRun(t, j, "d")
	checkLen(t, s, "c", 1)
}
