// Package record is the stored form of conversations that every store of
// package session shares: the rules for conversation ids and run names,
// the encoding of contents, the journal entries as stores write them, and
// the cursors of listings.
//
// A content is stored as its JSON, as encoding/json writes a genai.Content.
// That is the form the API itself speaks, so everything a history holds
// survives the trip: thought signatures and inline data come back byte for
// byte (they are base64 in the JSON), thought parts keep their flag, calls
// and responses keep their ids. Numbers in function-call arguments and
// responses come back as float64, as they do from the API.
package record

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"google.golang.org/genai"
)

// MaxIDLen is the longest conversation id, in bytes.
const MaxIDLen = 1024

// CheckID returns an error if id cannot name a conversation: ids are
// non-empty UTF-8 of at most MaxIDLen bytes, without NUL bytes.
func CheckID(id string) error { return checkName("conversation id", id) }

// CheckRun returns an error if run cannot name a run in a journal: the
// same rules as a conversation's id.
func CheckRun(run string) error { return checkName("run", run) }

// CheckClaim checks the arguments of a ClaimRun: a conversation's id, a
// run's and an owner's, none empty.
func CheckClaim(id, run, owner string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if err := CheckRun(run); err != nil {
		return err
	}
	return checkName("owner", owner)
}

// CheckOwner checks the owner a write of a journal names: "" (no claim)
// or a name as CheckClaim takes it.
func CheckOwner(owner string) error {
	if owner == "" {
		return nil
	}
	return checkName("owner", owner)
}

// CheckLease checks the lease of a claim: zero (a claim that lasts as
// long as its owner's life) or more.
func CheckLease(lease time.Duration) error {
	if lease < 0 {
		return fmt.Errorf("session: the lease %v is negative", lease)
	}
	return nil
}

func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("session: the %s is empty", what)
	case len(s) > MaxIDLen:
		return fmt.Errorf("session: the %s is %d bytes long, over the limit of %d", what, len(s), MaxIDLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("session: the %s %q is not valid UTF-8", what, s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return fmt.Errorf("session: the %s %q holds a NUL byte", what, s)
		}
	}
	return nil
}

// Encode checks an append of contents to the conversation id and returns
// the stored form of each content. A nil content, or one that cannot be
// encoded, is an error, and nothing of the append may be stored.
func Encode(id string, contents []*genai.Content) ([][]byte, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	out := make([][]byte, len(contents))
	for i, c := range contents {
		if c == nil {
			return nil, fmt.Errorf("session: appending to %q: content %d is nil", id, i)
		}
		b, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("session: appending to %q: encoding content %d: %w", id, i, err)
		}
		out[i] = b
	}
	return out, nil
}

// Decode returns the content stored as data.
func Decode(data []byte) (*genai.Content, error) {
	c := new(genai.Content)
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("session: decoding a stored content: %w", err)
	}
	return c, nil
}

// Entries checks a write of journal entries to the run of conversation id
// and returns the entries as a store writes them, none of them nil (a nil
// entry is an empty one; the others are the caller's), and their total
// size.
func Entries(id, run string, entries [][]byte) ([][]byte, int64, error) {
	if err := CheckID(id); err != nil {
		return nil, 0, err
	}
	if err := CheckRun(run); err != nil {
		return nil, 0, err
	}
	out := make([][]byte, len(entries))
	var size int64
	for i, e := range entries {
		if e == nil {
			e = []byte{}
		}
		out[i] = e
		size += int64(len(e))
	}
	return out, size, nil
}
