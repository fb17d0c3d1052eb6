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
// A journal is claimed by the process that runs its run (a [Claim]), and
// every write of it names the claim its writer holds: the store checks
// the claim in the same atomic step as the write (a fence), so a process
// that lost the run to another writes nothing more of it.
//
// The stores of this module (Memory, sqlitestore, pgstore) are
// Journalers, and [LiveJournaler]s; package sessiontest checks the
// contract.
type Journaler interface {
	Store

	// BeginRun creates the journal of conversation id's run, holding
	// entries, claimed as claim says (an Owner of "" leaves it
	// unclaimed). It fails with an error wrapping ErrRunInProgress when
	// the conversation has a journal already (run's own included), and
	// creates nothing then. The conversation itself need not exist yet.
	BeginRun(ctx context.Context, id, run string, claim Claim, entries [][]byte) error

	// AppendRun adds entries to the end of the journal of conversation
	// id's run, under claim: only when the journal's claim is
	// claim.Owner's (for an Owner of "", only when nobody claims it),
	// checked in the same atomic step as the write, and it renews the
	// claim as ClaimRun(claim) would. It fails, appending nothing, with
	// an error wrapping ErrClaimed when another owner claims the journal
	// (it was taken over), and with one wrapping ErrNoRun when the
	// conversation has no journal of that run (none, or another run's:
	// it ended).
	AppendRun(ctx context.Context, id, run string, claim Claim, entries [][]byte) error

	// EndRun ends the run under claim, fenced as AppendRun is: it appends
	// contents to the conversation (as Append does; none is allowed) and
	// deletes the run's journal, in one atomic step. It fails with an
	// error wrapping ErrClaimed or ErrNoRun as AppendRun does, and
	// changes nothing then: a run is saved once, by the process that
	// holds it.
	EndRun(ctx context.Context, id, run string, claim Claim, contents []*genai.Content) error

	// LoadRun returns the journal of the run in progress on conversation
	// id: an error wrapping ErrNoRun when there is none.
	LoadRun(ctx context.Context, id string) (Journal, error)

	// ListRuns returns one page of the journals of the conversations
	// whose ids start with opts.Prefix (their runs in progress, what a
	// restarted server recovers), the least recently appended to first
	// (ties by id), without their entries.
	ListRuns(ctx context.Context, opts ListOptions) (JournalPage, error)

	// ClaimRun claims the journal of conversation id's run for
	// claim.Owner (a process, as its caller names it; not ""), as claim
	// says, so that of processes that pick runs up, one only takes each.
	// It succeeds when the journal is not claimed, when its claim has
	// run out (its lease passed, or the life of its owner ended), or
	// when claim.Owner holds it (renewing it, on the terms of claim); it
	// fails with an error wrapping ErrClaimed, changing nothing, while
	// another owner's claim lasts, and with one wrapping ErrNoRun when
	// the conversation has no journal of that run. Claims are not writes
	// of the journal: Updated stays as it was.
	ClaimRun(ctx context.Context, id, run string, claim Claim) error

	// ReleaseRun drops owner's claim of the journal of conversation id's
	// run: the journal is then not claimed, for anyone to claim at once.
	// It fails with an error wrapping ErrClaimed, changing nothing, when
	// another owner claims the journal, and with one wrapping ErrNoRun
	// when the conversation has no journal of that run; releasing a
	// journal nobody claims does nothing.
	ReleaseRun(ctx context.Context, id, run, owner string) error
}

// A Claim says who holds the journal of a run (ClaimRun), and who makes a
// write of it (BeginRun, AppendRun, EndRun: the write is made only if the
// journal's claim is that owner's).
type Claim struct {
	// Owner names the process, as its caller names it: "" is nobody (a
	// write by no claim is made only on a journal nobody claims).
	Owner string
	// Lease is how long the claim lasts after the call that makes or
	// renews it, on the store's clock. Zero makes a claim that lasts as
	// long as Owner's life on the store ([LiveJournaler.Live]): it ends
	// at once when the life does, whatever the time. A store that tracks
	// no lives refuses a claim of zero lease; less than zero is an error.
	Lease time.Duration
}

// A LiveJournaler is a [Journaler] that knows whether the owners of its
// claims are alive, from what its database knows of the processes
// connected to it (PostgreSQL: a session-level advisory lock on a
// connection of the owner's own, which the server drops when the
// connection does; SQLite: a file lock the kernel drops when the process
// dies; Memory: the process itself). A claim of zero lease lasts as long
// as its owner's life: a process that dies (a kill, a crash) loses its
// claims at once, rather than when a lease runs out, and a process that
// lives keeps them without renewing them.
type LiveJournaler interface {
	Journaler

	// Live begins owner's life on the store, which lasts until Close, the
	// process's death, or the store's loss of it (Life.Done). An owner
	// names one life: once it ended, claims of zero lease by that owner
	// are anyone's, and a process that lives on begins another life under
	// another name. Live fails when owner's life is already going on
	// (in any process), and with an error wrapping errors.ErrUnsupported
	// where the store cannot track lives (a platform without the locks
	// it needs).
	Live(ctx context.Context, owner string) (Life, error)
}

// A Life is the life of an owner of claims on a [LiveJournaler]: while it
// lasts, the claims of zero lease its owner holds last too.
type Life interface {
	// Check returns nil when the store vouches that the life lasts, and
	// will for some time yet (long enough to start a step of a run that
	// must not be started by two processes), from a check made within
	// the last second or one made now; and otherwise why not, wrapping
	// ErrLifeLost once the life is over.
	Check(ctx context.Context) error
	// Done is closed once the life is over: ended by Close, or lost (the
	// store can no longer vouch for it: its connection broke). Err then
	// says which.
	Done() <-chan struct{}
	// Err is nil while the life lasts and after Close; once the store
	// lost it, an error wrapping ErrLifeLost.
	Err() error
	// Close ends the life: its claims of zero lease are anyone's at once.
	Close() error
}

// ErrLifeLost is the error, wrapped, of a [Life] the store lost: a
// process must then act as one that lost every claim of zero lease it
// held.
var ErrLifeLost = errors.New("session: the store lost the process's life")

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
	// store's clock, or for as long as its life lasts when Lease is the
	// zero time (a claim of zero lease): "" when nobody claims it.
	Owner string
	Lease time.Time
	// Held says whether the claim lasted when the store read the
	// journal: its lease had not passed, or its owner's life went on.
	// A journal whose claim does not last is anyone's to claim.
	Held bool
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
	// ErrClaimed: ClaimRun of a journal another owner's claim holds, or
	// a write (AppendRun, EndRun) or release under a claim that is not
	// the journal's: the run was taken over.
	ErrClaimed = errors.New("session: another process holds the run in progress")
)
