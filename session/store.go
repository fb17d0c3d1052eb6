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
	Bytes   int64     // the size of its contents, as the store encodes them (the JSON the API speaks)
	Created time.Time // the first append
	Updated time.Time // the last append
}

// A Lister is a [Store] that lists and totals the conversations whose ids
// start with a prefix without reading the others: an index range, not a
// scan of the store. agentserver's ids start with their owner, so a prefix
// is an owner's conversations. The stores of this module (Memory,
// sqlitestore, pgstore) are Listers; [ListPage] and [UsageOf] serve any
// Store, through List where it is not one.
type Lister interface {
	Store

	// ListPage returns one page of the conversations whose ids start with
	// opts.Prefix, the most recently appended to first (ties by id), and
	// the cursor of the next page. Appends between two pages may move a
	// conversation to an earlier page; a listing never returns one twice
	// in a page nor skips one that was not appended to meanwhile.
	ListPage(ctx context.Context, opts ListOptions) (Page, error)

	// Usage totals the conversations whose ids start with prefix.
	Usage(ctx context.Context, prefix string) (Usage, error)
}

// ListOptions selects one page of a listing.
type ListOptions struct {
	// Prefix keeps the conversations whose id starts with it; "" keeps all.
	Prefix string
	// Limit is the most conversations a page holds: 0 (or less) means
	// [DefaultPageSize]; more than [MaxPageSize] is MaxPageSize.
	Limit int
	// Cursor continues a listing: the Next of its previous page. "" starts
	// it. A cursor is opaque, and one the store did not make is an error
	// wrapping [ErrBadCursor].
	Cursor string
}

// Page is one page of a listing.
type Page struct {
	Infos []Info
	Next  string // the cursor of the next page; "" after the last
}

// Usage totals a set of conversations.
type Usage struct {
	Conversations int
	Bytes         int64 // the sum of their Info.Bytes
}

// Page sizes of a listing.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// ErrBadCursor is returned, wrapped, by ListPage for a cursor it did not make.
var ErrBadCursor = errors.New("session: bad listing cursor")

// A Journaler is a [Store] that keeps, beside a conversation, the journal
// of the run in progress on it: what the run did that the conversation
// cannot hold yet (the user's message, a model turn whose calls are not
// all answered, each call's result as it comes, a pause for decisions and
// each decision, the text of an answer cut short), so that a run a crash
// or a deploy interrupted can be picked up from the store by another
// process. The conversation keeps its contract (every call it holds has
// its response); the journal holds the rest until the run ends, and
// [Journaler.EndRun] moves the run's contents into the conversation and
// drops its journal in one atomic step, so a run is saved exactly once.
//
// A conversation has at most one journal: [Journaler.BeginRun] on a
// conversation that has one fails with [ErrRunInProgress], whichever
// process holds it, so that two processes never run one conversation at
// once. Entries are opaque to the store (agentserver writes JSON): it
// keeps them in order, byte for byte. Every call is atomic, as Append is.
// Deleting a conversation deletes its journal.
//
// The stores of this module (Memory, sqlitestore, pgstore) are
// Journalers; package sessiontest checks the contract.
type Journaler interface {
	Store

	// BeginRun creates the journal of conversation id's run, holding
	// entries. It fails with an error wrapping ErrRunInProgress when the
	// conversation has a journal already (run's own included), and
	// creates nothing then. The conversation itself need not exist yet.
	BeginRun(ctx context.Context, id, run string, entries [][]byte) error

	// AppendRun adds entries to the end of the journal of conversation
	// id's run. It fails with an error wrapping ErrNoRun when the
	// conversation has no journal of that run (none, or another run's: it
	// ended, or was taken over), and appends nothing then.
	AppendRun(ctx context.Context, id, run string, entries [][]byte) error

	// EndRun ends the run: it appends contents to the conversation (as
	// Append does; none is allowed) and deletes the run's journal, in one
	// atomic step. It fails with an error wrapping ErrNoRun when the
	// conversation has no journal of that run, and changes nothing then:
	// a run is saved once.
	EndRun(ctx context.Context, id, run string, contents []*genai.Content) error

	// LoadRun returns the journal of the run in progress on conversation
	// id: an error wrapping ErrNoRun when there is none.
	LoadRun(ctx context.Context, id string) (Journal, error)

	// ListRuns returns one page of the journals of the conversations
	// whose ids start with opts.Prefix (their runs in progress, what a
	// restarted server recovers), the least recently appended to first
	// (ties by id), without their entries.
	ListRuns(ctx context.Context, opts ListOptions) (JournalPage, error)

	// ClaimRun claims the journal of conversation id's run for owner (a
	// process, as its caller names it), until lease has passed on the
	// store's clock, so that of processes that pick runs up, one only
	// takes each. It succeeds when the journal has no claim, its claim
	// has run out, or owner holds it (renewing it); it fails with an
	// error wrapping ErrClaimed, changing nothing, while another owner's
	// claim lasts, and with one wrapping ErrNoRun when the conversation
	// has no journal of that run. A lease <= 0 releases owner's claim:
	// the journal may be claimed by anyone at once. Claims are not writes
	// of the journal: Updated stays as it was.
	ClaimRun(ctx context.Context, id, run, owner string, lease time.Duration) error
}

// Journal is the journal of a run in progress on a conversation.
type Journal struct {
	ID      string   // the conversation's
	Run     string   // the run's, as BeginRun named it
	Entries [][]byte // oldest first; nil in a listing
	Len     int      // the number of entries
	Bytes   int64    // the sum of their sizes, in bytes
	Started time.Time
	Updated time.Time // the last BeginRun or AppendRun
	// Owner holds the journal's claim (ClaimRun) until Lease, on the
	// store's clock: "" and the zero time when it was never claimed. A
	// claim whose Lease has passed is anyone's to take.
	Owner string
	Lease time.Time
}

// JournalPage is one page of a listing of journals.
type JournalPage struct {
	Journals []Journal
	Next     string // the cursor of the next page; "" after the last
}

// Errors of a Journaler, returned wrapped.
var (
	// ErrRunInProgress: BeginRun on a conversation that has a journal.
	ErrRunInProgress = errors.New("session: a run is in progress on the conversation")
	// ErrNoRun: the conversation has no journal of that run.
	ErrNoRun = errors.New("session: no such run in progress on the conversation")
	// ErrClaimed: ClaimRun of a journal another owner's claim holds.
	ErrClaimed = errors.New("session: another process holds the run in progress")
)
