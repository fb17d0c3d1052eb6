package memory

import (
	"errors"
	"time"
)

// Kind says what a [Memory] holds.
type Kind string

// The kinds of memories.
const (
	// KindMessage is a message of a conversation, as it was said: its
	// text, who said it, in which thread and where in it, and when.
	KindMessage Kind = "message"

	// KindFact is a fact about the user: told directly
	// ([Service.Remember]) or written by a model that read a conversation
	// (see [Extraction]).
	KindFact Kind = "fact"
)

// A Memory is one thing remembered about a user, with where it came from.
type Memory struct {
	ID   string // the store's id, unique among all users' memories
	User string // whose memory it is
	Kind Kind
	Text string

	// Author is who said or told it: a message's role in its thread
	// ("user", "model") or a person's name. For a fact a model wrote, the
	// author of what it was drawn from when that was one person, else "".
	Author string

	// Thread is the conversation it came from ("" for a fact told
	// directly), and Message the index of its content in that thread's
	// history, from 0 (for a fact drawn from a conversation, of the last
	// message it was drawn from); -1 when there is none.
	Thread  string
	Message int

	// Time is when it was said or told.
	Time time.Time
}

// A Message is a message of a conversation to remember (see
// [Service.IngestMessages]).
type Message struct {
	Thread string    // the conversation: required
	Index  int       // its position in the conversation, from 0: with Thread, what makes it one message
	Author string    // who said it: a role ("user", "model") or a name
	Text   string    // what was said
	Time   time.Time // when; zero means now
}

// A Fact is something to remember told directly (see [Service.Remember]).
type Fact struct {
	Text   string
	Author string    // who told it, optional
	Time   time.Time // when; zero means now

	// Thread and Message say where it came from, when it came from a
	// conversation; Message is then the index of the content it came from.
	// An empty Thread means none (Message is ignored).
	Thread  string
	Message int
}

// A Result is a memory a search found.
type Result struct {
	Memory

	// Score orders the results, higher first. Without embeddings it is
	// the lexical score (see the package documentation, "Ranking"); with
	// them, the fused score of the two rankings.
	Score float64

	// Lexical and Vector are the memory's ranks, from 1, in the lexical
	// ranking and in the ranking by embedding similarity; 0 when it is not
	// among the ranking's candidates, or there was no such ranking.
	Lexical, Vector int
}

// Errors of the service, matched with errors.Is.
var (
	// ErrNotFound: the memory does not exist, or is another user's.
	ErrNotFound = errors.New("memory: not found")

	// ErrTooLarge: a query or a memory over the service's limits
	// (Config.MaxQueryBytes, Config.MaxMemoryBytes).
	ErrTooLarge = errors.New("memory: too large")

	// ErrInvalid: a call's arguments are not valid (an empty user, an
	// empty text, a message without a thread…).
	ErrInvalid = errors.New("memory: invalid argument")

	// ErrClosed: the service was closed.
	ErrClosed = errors.New("memory: service closed")
)
