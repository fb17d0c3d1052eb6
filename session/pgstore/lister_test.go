package pgstore_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"google.golang.org/genai"
)

// size is what a Store counts in Info.Bytes for contents: their JSON.
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

// listAll follows a listing page by page and returns its ids.
func listAll(t *testing.T, s *pgstore.Store, prefix string, limit int) []string {
	t.Helper()
	var ids []string
	opts := session.ListOptions{Prefix: prefix, Limit: limit}
	for pages := 0; ; pages++ {
		page, err := s.ListPage(ctx, opts)
		if err != nil {
			t.Fatalf("ListPage(%+v) = %v", opts, err)
		}
		if len(page.Infos) > max(limit, 1) && limit > 0 {
			t.Fatalf("a page of %d; limit %d", len(page.Infos), limit)
		}
		for _, info := range page.Infos {
			ids = append(ids, info.ID)
		}
		if page.Next == "" {
			return ids
		}
		if pages > 1000 {
			t.Fatal("the listing does not end")
		}
		opts.Cursor = page.Next
	}
}

// A prefix lists its conversations, newest first, page by page, and no
// others, whatever the prefix's bytes; Len and Bytes are those of what was
// appended; Usage totals the same set.
func TestListPage(t *testing.T) {
	s := open(t, pgtest.Database(t))
	ids := []string{"alice/1", "alice/2", "bob/1", "alice/3", "alice2/1", "alice/4", "alice/5",
		"a%_/1", "a%_/2", "ab/1", "é/1", "éa", "ê/1", "\U0010FFFF/1", "\U0010FFFF", "x\U0010FFFF/1", "y/1"}
	bytes := map[string]int64{}
	for i, id := range ids { // in this order: the listing is the reverse
		contents := []*genai.Content{genai.NewContentFromText(fmt.Sprintf("content %d of %s", i, id), genai.RoleUser)}
		if i%2 == 0 {
			contents = sessiontest.Conversation()
		}
		if err := s.Append(ctx, id, contents); err != nil {
			t.Fatal(err)
		}
		bytes[id] = size(t, contents...)
	}
	want := func(prefix string) []string {
		var out []string
		for _, id := range slices.Backward(ids) {
			if len(id) >= len(prefix) && id[:len(prefix)] == prefix {
				out = append(out, id)
			}
		}
		return out
	}
	for _, prefix := range []string{"", "alice/", "alice", "a%_/", "a", "é", "ê", "\U0010FFFF", "x\U0010FFFF", "nobody/"} {
		for _, limit := range []int{1, 2, 3, 0} {
			if got := listAll(t, s, prefix, limit); !slices.Equal(got, want(prefix)) {
				t.Errorf("listing %q by %d = %q; want %q", prefix, limit, got, want(prefix))
			}
		}
		u, err := s.Usage(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, id := range want(prefix) {
			total += bytes[id]
		}
		if u.Conversations != len(want(prefix)) || u.Bytes != total {
			t.Errorf("Usage(%q) = %+v; want %d conversations, %d bytes", prefix, u, len(want(prefix)), total)
		}
	}
	page, err := s.ListPage(ctx, session.ListOptions{Prefix: "alice/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range page.Infos {
		if info.Bytes != bytes[info.ID] || info.Len == 0 {
			t.Errorf("%s: Bytes %d, Len %d; want %d bytes", info.ID, info.Bytes, info.Len, bytes[info.ID])
		}
	}
	// Bytes grows with each append.
	more := genai.NewContentFromText("more", genai.RoleModel)
	if err := s.Append(ctx, "alice/1", []*genai.Content{more}); err != nil {
		t.Fatal(err)
	}
	page, err = s.ListPage(ctx, session.ListOptions{Prefix: "alice/", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if info := page.Infos[0]; info.ID != "alice/1" || info.Bytes != bytes["alice/1"]+size(t, more) || info.Len != len(sessiontest.Conversation())+1 {
		t.Errorf("after another append, the first of alice/ is %+v; want alice/1 with %d bytes", info, bytes["alice/1"]+size(t, more))
	}
}

// An append between two pages moves its conversation to the front: the
// next page neither repeats a conversation nor skips one.
func TestListPageWhileAppending(t *testing.T) {
	s := open(t, pgtest.Database(t))
	for i := range 6 {
		if err := s.Append(ctx, fmt.Sprint("u/", i), genai.Text("hi")); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.ListPage(ctx, session.ListOptions{Prefix: "u/", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "u/1", genai.Text("again")); err != nil { // on the second page
		t.Fatal(err)
	}
	if err := s.Append(ctx, "u/5", genai.Text("again")); err != nil { // on the first
		t.Fatal(err)
	}
	second, err := s.ListPage(ctx, session.ListOptions{Prefix: "u/", Limit: 3, Cursor: first.Next})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, info := range append(first.Infos, second.Infos...) {
		got = append(got, info.ID)
	}
	if want := []string{"u/5", "u/4", "u/3", "u/2", "u/0"}; !slices.Equal(got, want) {
		t.Errorf("two pages around two appends = %q; want %q (u/1 moved before the first page)", got, want)
	}
}

func TestListPageLimits(t *testing.T) {
	u := pgtest.Database(t)
	s := open(t, u)
	n := session.MaxPageSize + 5
	pgtest.Exec(t, u, fmt.Sprintf(`INSERT INTO toolnexus_conversations (id, created, updated, length, bytes)
		SELECT 'many/' || lpad(i::text, 5, '0'), clock_timestamp(), clock_timestamp(), 1, 10 FROM generate_series(1, %d) i`, n))
	for _, tc := range []struct{ limit, want int }{{0, session.DefaultPageSize}, {-1, session.DefaultPageSize}, {7, 7},
		{session.MaxPageSize + 1, session.MaxPageSize}} {
		page, err := s.ListPage(ctx, session.ListOptions{Prefix: "many/", Limit: tc.limit})
		if err != nil || len(page.Infos) != tc.want || page.Next == "" {
			t.Errorf("ListPage(Limit %d) = %d conversations, next %q, %v; want %d and a next page", tc.limit, len(page.Infos), page.Next, err, tc.want)
		}
	}
	if got := listAll(t, s, "many/", session.MaxPageSize); len(got) != n {
		t.Errorf("listing all = %d conversations; want %d", len(got), n)
	}
}

// A prefix PostgreSQL's text cannot hold is an error, not a listing of
// nothing.
func TestListPageBadPrefix(t *testing.T) {
	s := open(t, pgtest.Database(t))
	for _, prefix := range []string{"\xc3", "a\x00"} {
		if _, err := s.ListPage(ctx, session.ListOptions{Prefix: prefix}); err == nil {
			t.Errorf("ListPage(Prefix %q) = nil error", prefix)
		}
		if _, err := s.Usage(ctx, prefix); err == nil {
			t.Errorf("Usage(%q) = nil error", prefix)
		}
	}
}

func TestListPageBadCursor(t *testing.T) {
	s := open(t, pgtest.Database(t))
	for _, c := range []string{"x", "!!!!", base64.RawURLEncoding.EncodeToString([]byte{1, 2, 3}),
		base64.RawURLEncoding.EncodeToString([]byte("12345678")), base64.RawURLEncoding.EncodeToString([]byte("12345678\xff")),
		base64.StdEncoding.EncodeToString([]byte("12345678abc"))} {
		if _, err := s.ListPage(ctx, session.ListOptions{Cursor: c}); !errors.Is(err, session.ErrBadCursor) {
			t.Errorf("ListPage(Cursor %q) = %v; want ErrBadCursor", c, err)
		}
	}
}
