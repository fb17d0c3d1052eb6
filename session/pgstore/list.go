package pgstore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
)

// ListPage implements [session.Lister]: an index range of the primary key
// (ids are in byte order, COLLATE "C"), sorted; a page costs the
// conversations of the prefix, never the others.
func (s *Store) ListPage(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	sql, args, err := listQuery(opts, "SELECT "+infoColumns+" FROM toolnexus_conversations", false)
	if err != nil {
		return session.Page{}, fmt.Errorf("pgstore: listing conversations: %w", err)
	}
	infos, err := s.infos(ctx, sql, args...)
	if err != nil {
		return session.Page{}, fmt.Errorf("pgstore: listing conversations: %w", err)
	}
	var page session.Page
	if limit := pageSize(opts.Limit); len(infos) > limit {
		infos = infos[:limit]
		page.Next = cursor(infos[limit-1].Updated, infos[limit-1].ID)
	}
	page.Infos = infos
	return page, nil
}

// Usage implements [session.Lister], on the same index range as ListPage.
func (s *Store) Usage(ctx context.Context, prefix string) (session.Usage, error) {
	if err := checkPrefix(prefix); err != nil {
		return session.Usage{}, fmt.Errorf("pgstore: totalling conversations: %w", err)
	}
	where, args := prefixRange(prefix, nil)
	var u session.Usage
	err := retry(ctx, func() (bool, error) {
		return true, s.pool.QueryRow(ctx, "SELECT count(*), coalesce(sum(bytes), 0) FROM toolnexus_conversations"+where, args...).
			Scan(&u.Conversations, &u.Bytes)
	})
	if err != nil {
		return session.Usage{}, fmt.Errorf("pgstore: totalling conversations: %w", err)
	}
	return u, nil
}

// pageSize is the number of conversations a page of limit holds.
func pageSize(limit int) int {
	switch {
	case limit <= 0:
		return session.DefaultPageSize
	case limit > session.MaxPageSize:
		return session.MaxPageSize
	}
	return limit
}

// listQuery returns a listing's query, from (a SELECT of a table whose
// key is id) the rows of opts' page, in the order of ListPage (the most
// recently updated first) or, if oldestFirst, of ListRuns: one more row
// than the page holds, to know whether another page follows. Each shape
// of query is its own statement, so that the server plans each with the
// index range it can use, whatever the values.
func listQuery(opts session.ListOptions, from string, oldestFirst bool) (string, []any, error) {
	if err := checkPrefix(opts.Prefix); err != nil {
		return "", nil, err
	}
	after, order := "<", "updated DESC, id"
	if oldestFirst {
		after, order = ">", "updated, id"
	}
	where, args := prefixRange(opts.Prefix, nil)
	if opts.Cursor != "" {
		updated, id, err := parseCursor(opts.Cursor)
		if err != nil {
			return "", nil, err
		}
		args = append(args, updated, id)
		where += fmt.Sprintf("%s (updated %s $%d OR (updated = $%[3]d AND id > $%d))",
			and(where), after, len(args)-1, len(args))
	}
	args = append(args, pageSize(opts.Limit)+1)
	sql := fmt.Sprintf("%s%s ORDER BY %s LIMIT $%d", from, where, order, len(args))
	return sql, args, nil
}

// checkPrefix refuses a prefix that PostgreSQL's text cannot hold: one
// that is not UTF-8 (even one that ends inside a character that an id
// completes) or that holds a NUL byte.
func checkPrefix(prefix string) error {
	if !utf8.ValidString(prefix) || strings.IndexByte(prefix, 0) >= 0 {
		return fmt.Errorf("the prefix %q is not UTF-8 without NUL bytes", prefix)
	}
	return nil
}

// prefixRange returns the WHERE clause that keeps the ids starting with
// prefix, as a range of the primary key, and args with its arguments
// added. In byte order, the ids that start with prefix are those from
// prefix up to, not including, prefix with its last rune incremented.
func prefixRange(prefix string, args []any) (string, []any) {
	if prefix == "" {
		return "", args
	}
	args = append(args, prefix)
	where := " WHERE id >= $" + strconv.Itoa(len(args))
	if end, ok := successor(prefix); ok {
		args = append(args, end)
		where += " AND id < $" + strconv.Itoa(len(args))
	}
	return where, args
}

func and(where string) string {
	if where == "" {
		return " WHERE"
	}
	return " AND"
}

// successor returns the first string after every string that starts with
// prefix, in byte order, among valid UTF-8 strings; false if there is
// none (prefix is all U+10FFFF).
func successor(prefix string) (string, bool) {
	for p := prefix; p != ""; {
		r, size := utf8.DecodeLastRuneInString(p)
		p = p[:len(p)-size]
		switch {
		case r == utf8.MaxRune:
			continue
		case r == 0xD7FF: // the surrogates follow: not UTF-8
			r = 0xE000
		default:
			r++
		}
		return p + string(r), true
	}
	return "", false
}

// A cursor is the position of the last conversation (or journal) of a
// page: its updated time in Unix microseconds (the server's precision), 8
// bytes big endian, then its id, in unpadded base64url.
func cursor(updated time.Time, id string) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(updated.UnixMicro()))
	return base64.RawURLEncoding.EncodeToString(append(b, id...))
}

func parseCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 9 || record.CheckID(string(b[8:])) != nil {
		return time.Time{}, "", fmt.Errorf("%w: %.40q", session.ErrBadCursor, c)
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64(b))), string(b[8:]), nil
}
