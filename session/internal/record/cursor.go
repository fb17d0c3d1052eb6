package record

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// cursorVersion starts every cursor, so that one this package did not
// make is told from one it did.
const cursorVersion = "c1."

// Cursor returns the opaque cursor of a listing's next page: the page
// starts after the conversation id, last appended to at updated, in the
// listing's order (see After and AfterOldestFirst).
func Cursor(updated time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + strconv.FormatInt(updated.UnixNano(), 10) + "." + id))
}

// ParseCursor returns what Cursor encoded; ok is false for a string it
// did not make.
func ParseCursor(cursor string) (updated time.Time, id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, "", false
	}
	rest, ok := strings.CutPrefix(string(b), cursorVersion)
	if !ok {
		return time.Time{}, "", false
	}
	nanos, id, ok := strings.Cut(rest, ".")
	if !ok || CheckID(id) != nil {
		return time.Time{}, "", false
	}
	n, err := strconv.ParseInt(nanos, 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	return time.Unix(0, n), id, true
}

// After reports whether the conversation id, last appended to at updated,
// comes after the cursor's (cursorUpdated, cursorID) in a listing's order:
// the most recently appended to first, ties by id.
func After(updated time.Time, id string, cursorUpdated time.Time, cursorID string) bool {
	if c := updated.Compare(cursorUpdated); c != 0 {
		return c < 0
	}
	return id > cursorID
}

// AfterOldestFirst is After for a listing in the other order, as of
// journals: the least recently updated first, ties by id.
func AfterOldestFirst(updated time.Time, id string, cursorUpdated time.Time, cursorID string) bool {
	if c := updated.Compare(cursorUpdated); c != 0 {
		return c > 0
	}
	return id > cursorID
}

// PageSize returns the size of a page asked for with limit: def for 0 or
// less, at most max.
func PageSize(limit, def, max int) int {
	if limit <= 0 {
		return def
	}
	return min(limit, max)
}
