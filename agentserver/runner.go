package agentserver

import (
	"context"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/genai"
)

// A Runner hosts the runs a [Server] serves: it starts them, keeps each
// one's log of [Record]s, hands out cursors into the logs, takes the
// decisions the runs wait for, and cancels them. The Server holds no run
// state of its own: protocols reach runs only through it.
//
// The default Runner runs each run in the server's process (see
// [Config.Runner]). Another one may host them elsewhere (a durable
// workflow, so that any server instance reattaches to any run and
// approvals wait for days) if it keeps the guarantees of the package
// documentation, section "Runners".
type Runner interface {
	// Start starts a run of the agent on in.Thread, and returns a cursor
	// on its log from its first record, attached before the run begins so
	// that it misses nothing (the caller reads it or closes it). It fails
	// with an error matching ErrBusy when the thread has a run that is not
	// over, and with ErrClosed once Close was called.
	Start(ctx context.Context, in *Input) (RunInfo, Cursor, error)

	// Attach returns a cursor on the run's log, at offset (0 reads the
	// whole log; a run that is over may have kept only its last record,
	// which the cursor then reads, or, with Input.KeepLog, its text
	// joined: the cursor reads from the first record at or after offset).
	// An unknown run is ErrNotFound.
	Attach(ctx context.Context, runID string, offset int64) (Cursor, error)

	// Decide hands the run decisions about its pending calls, all or
	// none: each must name a call the run holds pending and undecided,
	// and suit it (an approval is approved or denied; a browser call gets
	// an output or an error). It returns a cursor on the log from the
	// first record the decisions added, attached with them, from which a
	// response that continues the run reads (the caller reads it or
	// closes it). A decision for a call that is not pending fails with an
	// error matching ErrUnknownCall, ErrDecided or ErrExpired.
	Decide(ctx context.Context, runID string, decisions []Decision) (Cursor, error)

	// Cancel stops the run and its tools; it is saved as far as it went.
	// A run that is over is left as it is.
	Cancel(ctx context.Context, runID string) error

	// Lookup describes the run. A run the Runner no longer knows (over
	// for longer than it keeps runs) is ErrNotFound.
	Lookup(ctx context.Context, runID string) (RunInfo, error)

	// Latest describes the thread's latest run: the one in progress, or
	// the last one, for as long as the Runner keeps runs that are over.
	// ErrNotFound when there is none.
	Latest(ctx context.Context, thread string) (RunInfo, error)

	// Close stops taking runs and ends those in flight here: runs that
	// wait for decisions end at once, either left as they are to the next
	// runner on the store (a runner whose runs survive a crash: the
	// in-process runner on a session.Journaler parks them there) or
	// cancelled and saved;
	// it waits for the others until ctx is done, then cancels them, and
	// returns once every run it ended is saved or left. The error is
	// ctx's when runs had to be cancelled.
	Close(ctx context.Context) error
}

// A RunLister is a [Runner] that lists runs, for [Server.Runs]. The
// in-process Runner is one, and so is temporalagent's.
type RunLister interface {
	// Runs describes user's runs that the Runner keeps, in any order,
	// and never another user's. A Runner whose runs live outside the
	// process finds a user's under [UserPrefix] in its store, and bounds
	// what one listing costs.
	Runs(ctx context.Context, user string) ([]RunInfo, error)
}

// Input is what a run starts from.
type Input struct {
	// Thread is the conversation's id in the store: the thread of one
	// user, as the Server namespaces it.
	Thread string
	// Conversation is the thread's id as the client names it: the run's
	// agent.Conversation, and RunInfo.Thread.
	Conversation string
	// User is who asked.
	User string
	// Message is the new user message.
	Message *genai.Content
	// Tools are the browser tools the request declared, validated.
	Tools []ToolDecl
	// KeepLog says to keep the run's whole log once it is over, for as
	// long as the run is kept (Request.KeepLog).
	KeepLog bool
}

// A ToolDecl declares a tool that runs in the browser: the model may call
// it, and the run waits for the result the next request carries.
type ToolDecl struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Parameters  *jsonschema.Schema `json:"parameters,omitempty"`
}

// RunInfo describes a run.
type RunInfo struct {
	ID string `json:"id"`
	// Thread is the thread's id as the client names it.
	Thread string `json:"thread"`
	User   string `json:"-"`
	State  State  `json:"state"`
	// Pending lists the calls a waiting run waits for, in call order.
	Pending []Pending `json:"pending,omitempty"`
	Started time.Time `json:"started"`
	// Ended is when the run ended; zero while it goes on.
	Ended time.Time `json:"ended,omitzero"`
	// Len is the number of records in the run's log.
	Len int64 `json:"len"`
	// Done is how the run ended; nil while it goes on.
	Done *Done `json:"done,omitempty"`
	// Message is the user's message the run answers, which the thread's
	// history holds once the run is saved: what a page reloaded during
	// the run shows as the question. The server's own runner sets it; a
	// Runner that does not keep it leaves it nil. Read it, never modify
	// it. It is not part of the JSON: a protocol sends it in its own
	// shape.
	Message *genai.Content `json:"-"`
}

// A Cursor reads a run's log in order, from an offset. A cursor belongs
// to one reader: it is not safe for concurrent use. Readers never slow the
// run down: the log is written whatever they read.
type Cursor interface {
	// Next returns the next record. When none is there yet it waits, up
	// to wait (not at all when wait <= 0): ok is false when the wait ran
	// out. It fails with ctx's error when ctx is done, and with io.EOF
	// after the run's last record.
	Next(ctx context.Context, wait time.Duration) (r Record, ok bool, err error)

	// Buffered returns how many records are in the log after the cursor:
	// those Next returns without waiting.
	Buffered() int

	// Close releases the cursor.
	Close()
}
