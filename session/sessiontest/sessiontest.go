// Package sessiontest checks that a [session.Store] keeps the contract the
// interface documents, so that a store of your own (Postgres, Redis…) can be
// tested the way this module's stores are:
//
//	func TestContract(t *testing.T) {
//		sessiontest.Run(t, func(t *testing.T) session.Store {
//			return newStore(t) // a new, empty store, closed by t.Cleanup
//		})
//	}
//
// The tests cover loading, appending, listing and deleting; contents that
// come back exactly as they were stored (thought signatures and inline data
// byte for byte, thought parts, function calls and responses with their
// ids); ids of every shape; values the store must not share with its
// callers; atomic appends, concurrent appends that lose nothing and never
// interleave, and calls with a done context. The listing tests (pages and
// their cursors, prefixes, the order, Info.Bytes and usage, bad cursors,
// appends between pages) list through session.ListPage and
// session.UsageOf: a store's own when it is a [session.Lister], else their
// fallback on List.
//
// On a store that is a [session.Journaler], the journal tests check the
// runs in progress: entries kept byte for byte and in order; one journal
// per conversation (a second BeginRun fails with ErrRunInProgress, and of
// many concurrent ones exactly one wins); AppendRun and EndRun of a run
// that is not in progress fail with ErrNoRun and change nothing; EndRun
// appends as Append does, once, even when many race, and drops the
// journal; Delete drops it too; ListRuns' pages, prefixes and order (the
// least recently appended to first); invalid ids and run names; done
// contexts; claims (one owner at a time while its lease lasts, of many
// racing exactly one, renewed, released, anyone's once run out, shown
// with Held) and the fence (a write under a claim that is not the
// journal's, a taken-over owner's included, fails with ErrClaimed and
// writes nothing). On a [session.LiveJournaler] they check lives too: a
// claim of zero lease lasts while its owner's life does, and is anyone's
// at once when it ends. On a store that is not a Journaler, they skip.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Run runs the contract tests, each as a subtest with a store of its own
// from newStore, which must return a new, empty store.
func Run(t *testing.T, newStore func(t *testing.T) session.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s session.Store)
	}{
		{"LoadMissing", testLoadMissing},
		{"RoundTrip", testRoundTrip},
		{"AppendAppends", testAppendAppends},
		{"AppendNothing", testAppendNothing},
		{"AppendNilIsAtomic", testAppendNil},
		{"InvalidIDs", testInvalidIDs},
		{"IDs", testIDs},
		{"NoSharing", testNoSharing},
		{"List", testList},
		{"Delete", testDelete},
		{"ConcurrentAppends", testConcurrentAppends},
		{"DoneContext", testDoneContext},
		{"LargeContent", testLargeContent},
		{"ListPaging", testListPaging},
		{"ListPrefix", testListPrefix},
		{"ListBytes", testListBytes},
		{"ListBadCursor", testListBadCursor},
		{"ListAppendsBetweenPages", testListAppendsBetweenPages},
		{"ListDoneContext", testListDoneContext},
		{"RunRoundTrip", testRunRoundTrip},
		{"RunInProgress", testRunInProgress},
		{"RunWrongRun", testRunWrongRun},
		{"EndRun", testEndRun},
		{"EndRunNothing", testEndRunNothing},
		{"EndRunNil", testEndRunNil},
		{"RunDelete", testRunDelete},
		{"ListRuns", testListRuns},
		{"ConcurrentRuns", testConcurrentRuns},
		{"RunInvalid", testRunInvalid},
		{"RunDoneContext", testRunDoneContext},
		{"ClaimRun", testClaimRun},
		{"ConcurrentClaims", testConcurrentClaims},
		{"FencedWrites", testFencedWrites},
		{"Lives", testLives},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.test(t, newStore(t))
		})
	}
}

var ctx = context.Background()

// Conversation returns a conversation that holds every kind of part a
// history of the loop holds: text, thoughts, thought signatures (on a call,
// on text, on an otherwise empty part), parallel function calls with ids
// and their responses (a result and an error), inline data, and text in
// several scripts. Its numbers are float64, as JSON decoding makes them, so
// that a store's Load returns values equal to these.
func Conversation() []*genai.Content {
	sig := func(seed byte) []byte { // every byte value, as signatures are opaque bytes
		b := make([]byte, 64)
		for i := range b {
			b[i] = seed + byte(i*37)
		}
		return b
	}
	return []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "What's the weather in Paris and Tokyo? 東京は？ Ünïcode ✓"}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "The user wants two cities.", Thought: true},
			{FunctionCall: &genai.FunctionCall{ID: "fc-1", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": 2.0}}, ThoughtSignature: sig(1)},
			{FunctionCall: &genai.FunctionCall{ID: "fc-2", Name: "get_weather", Args: map[string]any{"city": "Tokyo", "units": []any{"C", nil, true}}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{ID: "fc-1", Name: "get_weather", Response: map[string]any{"result": map[string]any{"sky": "sunny", "temp": 21.5}}}},
			{FunctionResponse: &genai.FunctionResponse{ID: "fc-2", Name: "get_weather", Response: map[string]any{"error": "service unavailable <&>"}}},
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "Sunny in Paris; Tokyo's weather is unavailable."},
			{Text: "", ThoughtSignature: sig(2)},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{Text: "And this picture?"},
			{InlineData: &genai.Blob{MIMEType: "image/png", Data: sig(3)}},
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "A test pattern.", ThoughtSignature: sig(4)}}},
	}
}

func text(role, s string) *genai.Content {
	return &genai.Content{Role: role, Parts: []*genai.Part{{Text: s}}}
}

func mustAppend(t *testing.T, s session.Store, id string, contents ...*genai.Content) {
	t.Helper()
	if err := s.Append(ctx, id, contents); err != nil {
		t.Fatalf("Append(%q, %d contents) = %v", id, len(contents), err)
	}
}

func mustLoad(t *testing.T, s session.Store, id string) []*genai.Content {
	t.Helper()
	got, err := s.Load(ctx, id)
	if err != nil {
		t.Fatalf("Load(%q) = %v", id, err)
	}
	return got
}

func mustList(t *testing.T, s session.Store) []session.Info {
	t.Helper()
	infos, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List() = %v", err)
	}
	return infos
}

func testLoadMissing(t *testing.T, s session.Store) {
	if got, err := s.Load(ctx, "nobody"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load(missing) = %d contents, %v; want ErrNotFound", len(got), err)
	}
	if infos := mustList(t, s); len(infos) != 0 {
		t.Errorf("List() of an empty store = %v; want none", infos)
	}
}

func testRoundTrip(t *testing.T, s session.Store) {
	want := Conversation()
	mustAppend(t, s, "c", want...)
	got := mustLoad(t, s, "c")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load after Append differs (-appended +loaded):\n%s", diff)
	}
}

func testAppendAppends(t *testing.T, s session.Store) {
	first, second := Conversation()[:3], Conversation()[3:]
	mustAppend(t, s, "c", first...)
	mustAppend(t, s, "c", second...)
	if diff := cmp.Diff(Conversation(), mustLoad(t, s, "c")); diff != "" {
		t.Errorf("two appends did not concatenate (-want +got):\n%s", diff)
	}
	if infos := mustList(t, s); len(infos) != 1 || infos[0].ID != "c" || infos[0].Len != len(Conversation()) {
		t.Errorf("List() = %+v; want one conversation c of %d contents", infos, len(Conversation()))
	}
}

func testAppendNothing(t *testing.T, s session.Store) {
	for _, contents := range [][]*genai.Content{nil, {}} {
		if err := s.Append(ctx, "c", contents); err != nil {
			t.Errorf("Append(nothing) = %v; want nil", err)
		}
	}
	if _, err := s.Load(ctx, "c"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load after appending nothing = %v; want ErrNotFound (nothing created)", err)
	}
}

func testAppendNil(t *testing.T, s session.Store) {
	mustAppend(t, s, "c", text(genai.RoleUser, "one"))
	if err := s.Append(ctx, "c", []*genai.Content{text(genai.RoleModel, "two"), nil}); err == nil {
		t.Errorf("Append with a nil content = nil; want an error")
	}
	if got := mustLoad(t, s, "c"); len(got) != 1 {
		t.Errorf("after a failed Append, %d contents; want 1 (all or nothing)", len(got))
	}
	if err := s.Append(ctx, "new", []*genai.Content{nil}); err == nil {
		t.Errorf("Append of a nil content = nil; want an error")
	}
	if _, err := s.Load(ctx, "new"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load after a failed first Append = %v; want ErrNotFound", err)
	}
}

func testInvalidIDs(t *testing.T, s session.Store) {
	for _, id := range []string{"", "bad\xffutf8", "nul\x00byte", strings.Repeat("x", 1025)} {
		if err := s.Append(ctx, id, []*genai.Content{text(genai.RoleUser, "hi")}); err == nil {
			t.Errorf("Append(%.20q) = nil; want an error", id)
		}
		if _, err := s.Load(ctx, id); err == nil || errors.Is(err, session.ErrNotFound) {
			t.Errorf("Load(%.20q) = %v; want an error other than ErrNotFound", id, err)
		}
		if err := s.Delete(ctx, id); err == nil || errors.Is(err, session.ErrNotFound) {
			t.Errorf("Delete(%.20q) = %v; want an error other than ErrNotFound", id, err)
		}
	}
	if infos := mustList(t, s); len(infos) != 0 {
		t.Errorf("List() after invalid appends = %v; want none", infos)
	}
}

func testIDs(t *testing.T, s session.Store) {
	ids := []string{"a", "A", "a/b", "../x", "héllo wörld", "'; DROP TABLE contents; --", "%_*?", "line\nbreak",
		"?x=1#y", " padded ", strings.Repeat("é", 512)}
	for i, id := range ids {
		mustAppend(t, s, id, text(genai.RoleUser, fmt.Sprint(i)))
	}
	for i, id := range ids {
		got := mustLoad(t, s, id)
		if len(got) != 1 || got[0].Parts[0].Text != fmt.Sprint(i) {
			t.Errorf("Load(%q) = %d contents; want the one appended to it", id, len(got))
		}
	}
	seen := map[string]bool{}
	for _, info := range mustList(t, s) {
		seen[info.ID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("List() lacks %q", id)
		}
	}
}

func testNoSharing(t *testing.T, s session.Store) {
	appended := Conversation()
	mustAppend(t, s, "c", appended...)
	appended[0].Parts[0].Text = "changed after Append"
	appended[1].Parts[1].ThoughtSignature[0] ^= 0xff
	appended[1].Parts[1].FunctionCall.Args["city"] = "Lyon"
	loaded := mustLoad(t, s, "c")
	if diff := cmp.Diff(Conversation(), loaded); diff != "" {
		t.Fatalf("the store shares the appended values (-want +got):\n%s", diff)
	}
	loaded[0].Parts[0].Text = "changed after Load"
	loaded[1].Parts[1].ThoughtSignature[0] ^= 0xff
	if diff := cmp.Diff(Conversation(), mustLoad(t, s, "c")); diff != "" {
		t.Errorf("the store shares the loaded values (-want +got):\n%s", diff)
	}
}

func testList(t *testing.T, s session.Store) {
	before := time.Now()
	mustAppend(t, s, "a", text(genai.RoleUser, "1"))
	mustAppend(t, s, "b", text(genai.RoleUser, "1"), text(genai.RoleModel, "2"))
	first := mustList(t, s)
	mustAppend(t, s, "a", text(genai.RoleModel, "2"), text(genai.RoleUser, "3"))
	infos := mustList(t, s)
	after := time.Now()
	if len(infos) != 2 || infos[0].ID != "a" || infos[1].ID != "b" {
		t.Fatalf("List() = %+v; want a (appended to last), then b", infos)
	}
	if infos[0].Len != 3 || infos[1].Len != 2 {
		t.Errorf("Len = %d, %d; want 3, 2", infos[0].Len, infos[1].Len)
	}
	for _, info := range infos {
		if info.Created.Before(before.Add(-time.Second)) || info.Updated.After(after.Add(time.Second)) || info.Updated.Before(info.Created) {
			t.Errorf("%s: Created %v, Updated %v; want between %v and %v, Created first", info.ID, info.Created, info.Updated, before, after)
		}
	}
	if len(first) != 2 || first[0].ID != "b" {
		t.Fatalf("first List() = %+v; want b first", first)
	}
	var a0 session.Info
	for _, info := range first {
		if info.ID == "a" {
			a0 = info
		}
	}
	if !infos[0].Created.Equal(a0.Created) || !infos[0].Updated.After(a0.Updated) {
		t.Errorf("after another append to a: Created %v -> %v, Updated %v -> %v; want Created kept, Updated later",
			a0.Created, infos[0].Created, a0.Updated, infos[0].Updated)
	}
}

func testDelete(t *testing.T, s session.Store) {
	mustAppend(t, s, "a", Conversation()...)
	mustAppend(t, s, "b", text(genai.RoleUser, "keep me"))
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatalf("Delete(a) = %v", err)
	}
	if _, err := s.Load(ctx, "a"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load after Delete = %v; want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "a"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Delete again = %v; want ErrNotFound", err)
	}
	if infos := mustList(t, s); len(infos) != 1 || infos[0].ID != "b" {
		t.Errorf("List() after Delete = %+v; want only b", infos)
	}
	if got := mustLoad(t, s, "b"); len(got) != 1 {
		t.Errorf("Delete(a) changed b: %d contents", len(got))
	}
	mustAppend(t, s, "a", text(genai.RoleUser, "anew"))
	if got := mustLoad(t, s, "a"); len(got) != 1 || got[0].Parts[0].Text != "anew" {
		t.Errorf("a conversation appended to after Delete holds %d contents; want only the new one", len(got))
	}
}

// testConcurrentAppends appends batches from several goroutines to one
// conversation: every batch must be there, whole, and each goroutine's in
// its order.
func testConcurrentAppends(t *testing.T, s session.Store) {
	const writers, batches, size = 8, 10, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				batch := make([]*genai.Content, size)
				for i := range batch {
					batch[i] = text(genai.RoleUser, fmt.Sprintf("%d/%d/%d", w, b, i))
				}
				if err := s.Append(ctx, "shared", batch); err != nil {
					errs <- err
				}
				if err := s.Append(ctx, fmt.Sprint("own-", w), batch[:1]); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Append = %v", err)
	}
	CheckBatches(t, mustLoad(t, s, "shared"), writers, batches, size)
	for w := range writers {
		if got := mustLoad(t, s, fmt.Sprint("own-", w)); len(got) != batches {
			t.Errorf("own-%d holds %d contents; want %d", w, len(got), batches)
		}
	}
}

// CheckBatches checks a conversation that writers wrote concurrently, each
// appending batches batches of size contents whose text is
// "writer/batch/index": every batch must be there, whole, and each writer's
// batches in their order.
func CheckBatches(t *testing.T, got []*genai.Content, writers, batches, size int) {
	t.Helper()
	if len(got) != writers*batches*size {
		t.Errorf("%d contents; want %d (%d writers × %d batches × %d)", len(got), writers*batches*size, writers, batches, size)
	}
	next := make([]int, writers) // each writer's next batch
	for i := 0; i+size <= len(got); i += size {
		var w, b, k int
		if _, err := fmt.Sscanf(got[i].Parts[0].Text, "%d/%d/%d", &w, &b, &k); err != nil || w < 0 || w >= writers {
			t.Fatalf("content %d = %q; want writer/batch/index", i, got[i].Parts[0].Text)
		}
		if b != next[w] || k != 0 {
			t.Errorf("content %d is %q; want writer %d's batch %d starting there", i, got[i].Parts[0].Text, w, next[w])
		}
		next[w] = b + 1
		for j := 1; j < size; j++ {
			if want := fmt.Sprintf("%d/%d/%d", w, b, j); got[i+j].Parts[0].Text != want {
				t.Errorf("content %d is %q; want %q: batches interleaved", i+j, got[i+j].Parts[0].Text, want)
			}
		}
	}
}

func testDoneContext(t *testing.T, s session.Store) {
	mustAppend(t, s, "c", text(genai.RoleUser, "hi"))
	done, cancel := context.WithCancel(ctx)
	cancel()
	check := func(op string, err error) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done context = %v; want an error wrapping context.Canceled", op, err)
		}
	}
	_, err := s.Load(done, "c")
	check("Load", err)
	check("Append", s.Append(done, "c", []*genai.Content{text(genai.RoleModel, "no")}))
	_, err = s.List(done)
	check("List", err)
	check("Delete", s.Delete(done, "c"))
	if got := mustLoad(t, s, "c"); len(got) != 1 {
		t.Errorf("after calls with a done context, %d contents; want 1", len(got))
	}
}

func testLargeContent(t *testing.T, s session.Store) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	want := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: "read_file", Response: map[string]any{"result": big}}}}}}
	mustAppend(t, s, "c", want...)
	if diff := cmp.Diff(want, mustLoad(t, s, "c")); diff != "" {
		t.Errorf("a 1 MiB content did not round-trip: %.200s", diff)
	}
}
