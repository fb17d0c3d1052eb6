package memory

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Record is a memory as a [Store] keeps it: the memory, the terms search
// matches (see [Analyze]), and its embedding.
type Record struct {
	Memory

	// Terms are the terms of Text, space-separated, as [Analyze] gives
	// them; Before and After those of the messages before and after it in
	// its thread, when known, which search reads as weaker evidence (the
	// answer to a question is often in the reply to it).
	Terms, Before, After string

	// Vector is the memory's embedding, nil when it has none (the service
	// has no Embedder, or embedding it failed and is pending).
	Vector []float32
}

// Stats are what a user's memories say of some terms, for ranking.
type Stats struct {
	Count int // the user's memories

	// TermsLen, BeforeLen and AfterLen total the number of terms in the
	// Terms, Before and After of the user's memories.
	TermsLen, BeforeLen, AfterLen int64

	// DF gives, for each term asked, how many of the user's memories hold
	// it in Terms, Before or After; a term none holds may be absent.
	DF map[string]int
}

// A Page is a page of a user's memories (see [Store.List]).
type Page struct {
	Memories []Memory
	Next     string // the cursor of the next page, "" when this one is the last
}

// ListOptions say which page of a user's memories [Store.List] returns.
type ListOptions struct {
	Limit  int    // at most this many; zero means 100, and at most 1000
	Cursor string // a Page's Next, or "" for the first page
}

// A Store keeps the memories of every user. Every method is scoped to one
// user: no call ever reads, returns, counts or changes another user's
// memories, and an id of another user's memory is answered as one that
// does not exist. Implementations are safe for concurrent use; a call whose
// context is done fails with an error wrapping the context's error.
//
// This package has one in memory ([NewStore]); packages sqlitememory and
// pgmemory keep memories in SQLite and PostgreSQL. The contract tests in
// package memorytest check an implementation against all of this.
type Store interface {
	// Add stores recs, new memories of user, with the terms and vectors
	// they carry, in one step (all or none), and returns the ids of those
	// it added. A record of KindMessage whose Thread and Message the user
	// already has a message of is not added again (ingesting a thread
	// twice adds it once): its id is not returned.
	Add(ctx context.Context, user string, recs []Record) ([]string, error)

	// Replace removes the memories of user with the ids in remove (ids it
	// does not hold are ignored) and adds add, as Add does, in one step.
	Replace(ctx context.Context, user string, add []Record, remove []string) error

	// Stats returns the user's counts for terms.
	Stats(ctx context.Context, user string, terms []string) (Stats, error)

	// Match returns the user's memories that hold any of terms in their
	// Terms, Before or After, at most limit of them, in any order, with
	// their Terms, Before and After but without their vectors. When more
	// match, which ones are returned is the store's choice: the most
	// recently added, where that costs little.
	Match(ctx context.Context, user string, terms []string, limit int) ([]Record, error)

	// Get returns the memories of user with the given ids, in that order,
	// skipping ids it does not hold; without their vectors.
	Get(ctx context.Context, user string, ids []string) ([]Record, error)

	// List returns a page of the user's memories, the most recent (by
	// Time, then id) first.
	List(ctx context.Context, user string, opts ListOptions) (Page, error)

	// Delete removes one memory of user, its vector and terms with it. A
	// memory the user does not have is ErrNotFound.
	Delete(ctx context.Context, user, id string) error

	// DeleteUser removes every memory of user, with everything kept for
	// them (vectors, term counts). A user with none is not an error.
	DeleteUser(ctx context.Context, user string) error

	// SetVectors stores the embeddings of memories of user, by id; ids it
	// does not hold are ignored.
	SetVectors(ctx context.Context, user string, vectors map[string][]float32) error

	// Unembedded returns at most limit memories of user that have no
	// vector, the oldest first.
	Unembedded(ctx context.Context, user string, limit int) ([]Record, error)

	// Vectors calls f with the id and vector of each memory of user that
	// has one, in no particular order, until f returns an error, which
	// Vectors returns. f must not keep v: the store may reuse it.
	Vectors(ctx context.Context, user string, f func(id string, v []float32) error) error
}

// A VectorIndex is a [Store] that finds the memories nearest a vector
// faster than reading every vector: an approximate index (HNSW in
// pgvector, for one). When the service's store is one, hybrid search asks
// it for the k nearest instead of scoring every vector of the user with
// [Store.Vectors]. This module's stores score exactly, and are not.
type VectorIndex interface {
	Store

	// Nearest returns the ids of at most k memories of user with vectors,
	// the most similar to v (by cosine similarity) first, and their
	// similarities.
	Nearest(ctx context.Context, user string, v []float32, k int) ([]string, []float64, error)
}

// maxListLimit bounds ListOptions.Limit.
const maxListLimit = 1000

// ListLimit returns the number of memories a page of opts holds: Limit,
// or 100 when it is zero, and at most 1000. Stores use it.
func ListLimit(opts ListOptions) int {
	switch {
	case opts.Limit <= 0:
		return 100
	case opts.Limit > maxListLimit:
		return maxListLimit
	}
	return opts.Limit
}

// timeKey is how stores order by time: Unix nanoseconds.
func timeKey(t time.Time) int64 { return t.UnixNano() }

// The helpers below serve implementations of Store.

// CheckRecords checks what every Store requires of records to add for
// user: a user, ids present and distinct, a known kind. It returns an
// error wrapping ErrInvalid.
func CheckRecords(user string, recs []Record) error {
	if user == "" {
		return fmt.Errorf("%w: empty user", ErrInvalid)
	}
	seen := make(map[string]bool, len(recs))
	for i := range recs {
		r := &recs[i]
		switch {
		case r.ID == "":
			return fmt.Errorf("%w: record %d has no id", ErrInvalid, i)
		case seen[r.ID]:
			return fmt.Errorf("%w: id %q given twice", ErrInvalid, r.ID)
		case r.Kind != KindMessage && r.Kind != KindFact:
			return fmt.Errorf("%w: record %d has kind %q", ErrInvalid, i, r.Kind)
		}
		seen[r.ID] = true
	}
	return nil
}

// InOrder returns recs in the order of ids, those ids names, once each.
func InOrder(recs []Record, ids []string) []Record {
	byID := make(map[string]int, len(recs))
	for i := range recs {
		byID[recs[i].ID] = i
	}
	out := make([]Record, 0, len(recs))
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			out = append(out, recs[i])
			delete(byID, id)
		}
	}
	return out
}

// EncodeCursor returns the cursor of a listing whose last memory had time
// t and id: the next page begins after it, in List's order (newest first,
// then ids in descending order).
func EncodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixNano(), 10) + " " + id))
}

// DecodeCursor reads a cursor EncodeCursor made: the time, in Unix
// nanoseconds, and the id. A cursor it did not make is an error wrapping
// ErrInvalid.
func DecodeCursor(c string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if ts, id, ok := strings.Cut(string(b), " "); ok {
			if t, err := strconv.ParseInt(ts, 10, 64); err == nil {
				return t, id, nil
			}
		}
	}
	return 0, "", fmt.Errorf("%w: bad cursor %q", ErrInvalid, c)
}

// DistinctTerms returns the distinct terms of r's Terms, Before and After,
// in order of first appearance: the terms a store counts r in (Stats.DF).
func DistinctTerms(r *Record) []string {
	seen := make(map[string]bool, 32)
	var out []string
	for _, s := range []string{r.Terms, r.Before, r.After} {
		for t := range strings.FieldsSeq(s) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// TermCount returns the number of terms in terms, space-separated: what a
// store adds to Stats.TermsLen, BeforeLen or AfterLen.
func TermCount(terms string) int64 {
	var n int64
	for range strings.FieldsSeq(terms) {
		n++
	}
	return n
}

// TermPrefix returns what this module's stores put before each term of
// user's memories in their full-text index: "u" and 12 hex digits of the
// SHA-256 of the user's name. Each user's terms are so tokens of their
// own, and a match reads the index entries of its user's memories only,
// however many users share the index. Two users whose prefixes collide
// share index entries, never memories: a store checks the user of each
// memory a match reads.
func TermPrefix(user string) string {
	h := sha256.Sum256([]byte(user))
	return "u" + hex.EncodeToString(h[:6])
}

// EncodeVector returns v as little-endian float32s, the form this
// module's stores keep vectors in; nil for nil.
func EncodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reads what EncodeVector wrote, into into when it has room.
func DecodeVector(b []byte, into []float32) []float32 {
	n := len(b) / 4
	if cap(into) < n {
		into = make([]float32, n)
	}
	into = into[:n]
	for i := range into {
		into[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return into
}

// PageOf returns the page of a listing that read up to n+1 records in
// List's order: the first n, and the cursor after them when there were
// more.
func PageOf(recs []Record, n int) Page {
	var p Page
	if len(recs) > n {
		recs = recs[:n]
		last := recs[n-1]
		p.Next = EncodeCursor(last.Time, last.ID)
	}
	p.Memories = make([]Memory, len(recs))
	for i := range recs {
		p.Memories[i] = recs[i].Memory
	}
	return p
}
