package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/session/internal/record"
)

// ListPage returns one page of the conversations of s whose ids start with
// opts.Prefix, as [Lister.ListPage] does: through it when s is a Lister,
// else through s.List, which reads every conversation of the store.
func ListPage(ctx context.Context, s Store, opts ListOptions) (Page, error) {
	if l, ok := s.(Lister); ok {
		return l.ListPage(ctx, opts)
	}
	infos, err := listed(ctx, s, opts.Prefix)
	if err != nil {
		return Page{}, err
	}
	return pageOf(infos, opts)
}

// UsageOf totals the conversations of s whose ids start with prefix, as
// [Lister.Usage] does: through it when s is a Lister, else through s.List,
// which reads every conversation of the store.
func UsageOf(ctx context.Context, s Store, prefix string) (Usage, error) {
	if l, ok := s.(Lister); ok {
		return l.Usage(ctx, prefix)
	}
	infos, err := listed(ctx, s, prefix)
	if err != nil {
		return Usage{}, err
	}
	return usageOf(infos), nil
}

// listed returns the conversations of s whose ids start with prefix, in
// a listing's order.
func listed(ctx context.Context, s Store, prefix string) ([]Info, error) {
	infos, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	infos = slices.DeleteFunc(infos, func(i Info) bool { return !strings.HasPrefix(i.ID, prefix) })
	sortInfos(infos)
	return infos, nil
}

// sortInfos sorts infos in a listing's order: the most recently appended
// to first, ties by id.
func sortInfos(infos []Info) {
	slices.SortFunc(infos, func(a, b Info) int {
		return cmp.Or(b.Updated.Compare(a.Updated), cmp.Compare(a.ID, b.ID))
	})
}

// pageOf returns the page opts asks for of infos: the conversations of
// opts.Prefix, in a listing's order. The page shares infos' array.
func pageOf(infos []Info, opts ListOptions) (Page, error) {
	infos, next, err := paged(infos, opts, func(i Info) (time.Time, string) { return i.Updated, i.ID }, record.After)
	if err != nil {
		return Page{}, fmt.Errorf("session: listing conversations: %w", err)
	}
	return Page{Infos: infos, Next: next}, nil
}

// paged returns the page opts asks for of items, which are sorted in the
// order of after, where key places each (its updated time and its id),
// and the cursor of the next page. The page shares items' array.
func paged[T any](items []T, opts ListOptions, key func(T) (time.Time, string),
	after func(updated time.Time, id string, cursorUpdated time.Time, cursorID string) bool) ([]T, string, error) {
	if opts.Cursor != "" {
		updated, id, ok := record.ParseCursor(opts.Cursor)
		if !ok {
			return nil, "", ErrBadCursor
		}
		items = items[sort.Search(len(items), func(i int) bool {
			u, x := key(items[i])
			return after(u, x, updated, id)
		}):]
	}
	var next string
	if n := record.PageSize(opts.Limit, DefaultPageSize, MaxPageSize); len(items) > n {
		items = items[:n]
		next = record.Cursor(key(items[n-1]))
	}
	return items, next, nil
}

func usageOf(infos []Info) Usage {
	u := Usage{Conversations: len(infos)}
	for _, i := range infos {
		u.Bytes += i.Bytes
	}
	return u
}
