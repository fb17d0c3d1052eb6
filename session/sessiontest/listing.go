package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// The listing tests list through session.ListPage and session.UsageOf:
// a store's own when it is a session.Lister, else their fallback on
// Store.List.

// listAll lists every conversation of prefix, limit per page, and checks
// that each page but the last is full and that no page repeats one.
func listAll(t *testing.T, s session.Store, prefix string, limit int) []session.Info {
	t.Helper()
	var all []session.Info
	opts := session.ListOptions{Prefix: prefix, Limit: limit}
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("ListPage(%q) gave over 100 pages: its cursors do not advance", prefix)
		}
		p, err := session.ListPage(ctx, s, opts)
		if err != nil {
			t.Fatalf("ListPage(%+v) = %v", opts, err)
		}
		all = append(all, p.Infos...)
		if p.Next == "" {
			return all
		}
		if limit > 0 && len(p.Infos) != limit {
			t.Errorf("ListPage(%+v) = %d conversations and a next page; want a full page of %d", opts, len(p.Infos), limit)
		}
		opts.Cursor = p.Next
	}
}

func ids(infos []session.Info) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.ID
	}
	return out
}

func mustUsage(t *testing.T, s session.Store, prefix string) session.Usage {
	t.Helper()
	u, err := session.UsageOf(ctx, s, prefix)
	if err != nil {
		t.Fatalf("UsageOf(%q) = %v", prefix, err)
	}
	return u
}

// size returns the size of contents as the stores encode them: their JSON.
func size(t *testing.T, contents ...*genai.Content) int64 {
	t.Helper()
	var n int64
	for _, c := range contents {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(b))
	}
	return n
}

// testListPaging lists conversations in pages of every size, and checks
// the order (the most recently appended to first) and the cursors.
func testListPaging(t *testing.T, s session.Store) {
	var want []string // the most recent first
	for i := range 7 {
		id := fmt.Sprintf("u/%d", i)
		mustAppend(t, s, id, text(genai.RoleUser, id))
		want = slices.Insert(want, 0, id)
	}
	mustAppend(t, s, "u/2", text(genai.RoleModel, "again"))
	want = append([]string{"u/2"}, slices.DeleteFunc(want, func(id string) bool { return id == "u/2" })...)
	for _, limit := range []int{0, 1, 2, 3, 6, 7, 8, session.MaxPageSize + 1} {
		if got := ids(listAll(t, s, "u/", limit)); !slices.Equal(got, want) {
			t.Errorf("listing in pages of %d = %q; want %q", limit, got, want)
		}
	}
	p, err := session.ListPage(ctx, s, session.ListOptions{Prefix: "u/", Limit: 7})
	if err != nil || len(p.Infos) != 7 || p.Next != "" {
		t.Errorf("ListPage(Limit 7) of 7 = %d conversations, next %q, %v; want all 7 and no next page", len(p.Infos), p.Next, err)
	}
	for _, info := range p.Infos {
		if info.ID == "u/2" && info.Len != 2 {
			t.Errorf("ListPage: u/2 has Len %d; want 2", info.Len)
		}
	}
	if got := ids(listAll(t, s, "", 3)); !slices.Equal(got, want) {
		t.Errorf("listing with no prefix = %q; want %q", got, want)
	}
	if p, err := session.ListPage(ctx, s, session.ListOptions{Prefix: "nobody/"}); err != nil || len(p.Infos) != 0 || p.Next != "" {
		t.Errorf("ListPage of a prefix nobody has = %+v, %v; want an empty last page", p, err)
	}
}

// testListPrefix lists prefixes that share their start, and that hold
// characters a query language gives a meaning to.
func testListPrefix(t *testing.T, s session.Store) {
	all := []string{"alice/1", "alice/2", "alice2/1", "alic/1", "bob/1",
		"a%/1", "ab/1", "a_/1", "a\\/1", "é/1", "éa/1", "ê/1", "z\U0010FFFF/1", "z\U0010FFFF", "z/1"}
	for _, id := range all {
		mustAppend(t, s, id, text(genai.RoleUser, id))
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"alice/", []string{"alice/1", "alice/2"}},
		{"alice", []string{"alice/1", "alice/2", "alice2/1"}},
		{"alic/", []string{"alic/1"}},
		{"a%", []string{"a%/1"}},
		{"a_", []string{"a_/1"}},
		{"a\\", []string{"a\\/1"}},
		{"é", []string{"é/1", "éa/1"}},
		{"z\U0010FFFF", []string{"z\U0010FFFF", "z\U0010FFFF/1"}},
		{"alice/1", []string{"alice/1"}},
		{"alice/3", nil},
		{"", all},
	} {
		got := ids(listAll(t, s, tc.prefix, 2))
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("listing prefix %q = %q; want %q", tc.prefix, got, want)
		}
		if u := mustUsage(t, s, tc.prefix); u.Conversations != len(want) {
			t.Errorf("UsageOf(%q).Conversations = %d; want %d", tc.prefix, u.Conversations, len(want))
		}
	}
}

// testListBytes checks Info.Bytes and Usage: the size of the contents as
// JSON, in List, ListPage and Usage, as conversations grow and go.
func testListBytes(t *testing.T, s session.Store) {
	conv := Conversation()
	mustAppend(t, s, "u/a", conv[:2]...)
	mustAppend(t, s, "u/b", text(genai.RoleUser, "short"))
	mustAppend(t, s, "v/c", text(genai.RoleUser, "another user's"))
	mustAppend(t, s, "u/a", conv[2:]...)
	wantA, wantB := size(t, conv...), size(t, text(genai.RoleUser, "short"))
	check := func(where string, infos []session.Info) {
		t.Helper()
		for _, info := range infos {
			if want := map[string]int64{"u/a": wantA, "u/b": wantB}[info.ID]; info.ID != "v/c" && info.Bytes != want {
				t.Errorf("%s: %s has Bytes %d; want %d (its contents' JSON)", where, info.ID, info.Bytes, want)
			}
		}
	}
	check("List", mustList(t, s))
	check("ListPage", listAll(t, s, "u/", 0))
	if u, want := mustUsage(t, s, "u/"), (session.Usage{Conversations: 2, Bytes: wantA + wantB}); u != want {
		t.Errorf("UsageOf(u/) = %+v; want %+v", u, want)
	}
	if err := s.Delete(ctx, "u/a"); err != nil {
		t.Fatal(err)
	}
	if u, want := mustUsage(t, s, "u/"), (session.Usage{Conversations: 1, Bytes: wantB}); u != want {
		t.Errorf("UsageOf(u/) after a Delete = %+v; want %+v", u, want)
	}
	if u := mustUsage(t, s, "nobody/"); u != (session.Usage{}) {
		t.Errorf("UsageOf(nobody/) = %+v; want zero", u)
	}
}

// testListBadCursor checks that a cursor the store did not make is refused.
func testListBadCursor(t *testing.T, s session.Store) {
	mustAppend(t, s, "u/a", text(genai.RoleUser, "hi"))
	for _, cursor := range []string{"x", "not a cursor!", "dTEvYQ", "AAAA"} {
		if p, err := session.ListPage(ctx, s, session.ListOptions{Prefix: "u/", Cursor: cursor}); !errors.Is(err, session.ErrBadCursor) {
			t.Errorf("ListPage(Cursor %q) = %+v, %v; want ErrBadCursor", cursor, p, err)
		}
	}
}

// testListAppendsBetweenPages appends to conversations between the pages
// of a listing: no page repeats one, and every conversation not appended
// to meanwhile is listed once.
func testListAppendsBetweenPages(t *testing.T, s session.Store) {
	for i := range 6 {
		mustAppend(t, s, fmt.Sprint("u/", i), text(genai.RoleUser, "hi"))
	}
	// The listing: u/5 u/4 | u/3 u/2 | u/1 u/0.
	p1, err := session.ListPage(ctx, s, session.ListOptions{Prefix: "u/", Limit: 2})
	if err != nil || p1.Next == "" {
		t.Fatalf("first page = %+v, %v; want 2 conversations and a next page", p1, err)
	}
	mustAppend(t, s, "u/5", text(genai.RoleModel, "listed, then appended to"))
	mustAppend(t, s, "u/1", text(genai.RoleModel, "not yet listed, appended to"))
	mustAppend(t, s, "u/new", text(genai.RoleUser, "created between pages"))
	seen := map[string]int{}
	for _, info := range p1.Infos {
		seen[info.ID]++
	}
	opts := session.ListOptions{Prefix: "u/", Limit: 2, Cursor: p1.Next}
	for range 10 {
		p, err := session.ListPage(ctx, s, opts)
		if err != nil {
			t.Fatalf("ListPage(%+v) = %v", opts, err)
		}
		for _, info := range p.Infos {
			seen[info.ID]++
		}
		if opts.Cursor = p.Next; p.Next == "" {
			break
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("the listing gave %s %d times", id, n)
		}
	}
	for _, id := range []string{"u/0", "u/2", "u/3", "u/4", "u/5"} {
		if seen[id] != 1 {
			t.Errorf("the listing gave %s %d times; want once (it was not appended to after its page, or not at all)", id, seen[id])
		}
	}
}

// testListDoneContext checks the listing calls with a done context.
func testListDoneContext(t *testing.T, s session.Store) {
	mustAppend(t, s, "u/a", text(genai.RoleUser, "hi"))
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := session.ListPage(done, s, session.ListOptions{Prefix: "u/"}); !errors.Is(err, context.Canceled) {
		t.Errorf("ListPage with a done context = %v; want an error wrapping context.Canceled", err)
	}
	if _, err := session.UsageOf(done, s, "u/"); !errors.Is(err, context.Canceled) {
		t.Errorf("UsageOf with a done context = %v; want an error wrapping context.Canceled", err)
	}
}
