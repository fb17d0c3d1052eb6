package session

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genai"
)

// ErrNotFound is returned, wrapped, by Load and Delete for a conversation
// the store does not hold: one never appended to, or deleted.
var ErrNotFound = errors.New("session: conversation not found")

// A Store keeps conversations. A conversation is named by an id (any
// non-empty UTF-8 string of at most 1024 bytes without NUL) and holds a
// list of contents, oldest first, that only grows, by [Store.Append], until
// it is deleted.
//
// Implementations are safe for concurrent use, and durable ones for use by
// several processes. Each Append is atomic: a failure or a crash leaves all
// of its contents stored or none, and appends to one conversation never
// interleave, so a function call is never stored without the response that
// was appended with it. A call whose context is done fails with an error
// wrapping the context's error.
//
// The contract tests in package [sessiontest] check an implementation
// against all of this.
//
// [sessiontest]: https://pkg.go.dev/github.com/toolnexus/toolnexus-go/session/sessiontest
type Store interface {
	// Load returns the conversation's contents, oldest first: new values
	// that the caller owns. A conversation the store does not hold is
	// ErrNotFound.
	Load(ctx context.Context, id string) ([]*genai.Content, error)

	// Append adds contents to the end of the conversation, creating it
	// when it does not exist. The store keeps its own copy: the caller may
	// modify contents afterwards. Appending no contents does nothing; a
	// nil content is an error, and nothing is appended.
	Append(ctx context.Context, id string, contents []*genai.Content) error

	// List describes every conversation, the most recently appended to
	// first.
	List(ctx context.Context) ([]Info, error)

	// Delete removes the conversation. A conversation the store does not
	// hold is ErrNotFound.
	Delete(ctx context.Context, id string) error
}

// Info describes a stored conversation.
type Info struct {
	ID      string
	Len     int       // the number of contents
	Created time.Time // the first append
	Updated time.Time // the last append
}
