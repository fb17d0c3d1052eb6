package agentserver

import (
	"encoding/json"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
)

// A Kind says what a [Record] reports.
type Kind string

// The kinds of records a run's log holds, in the order a turn produces
// them. More kinds may be added: an [Encoder] passes a kind it does not
// know to its protocol's custom event, or skips it, and never fails on it.
const (
	// KindStart: the run began (the first record of every log).
	KindStart Kind = "start"
	// KindStep: a model turn begins (Turn, from 0).
	KindStep Kind = "step"
	// KindText: a piece of the answer's text, as it streams (Turn, Text).
	KindText Kind = "text"
	// KindThought: a piece of the model's thought summary (Turn, Text).
	// Thought signatures never leave the server: they stay in the stored
	// history, where the next model call needs them.
	KindThought Kind = "thought"
	// KindRetry: a model call is about to be made again (Turn, Retry).
	KindRetry Kind = "retry"
	// KindToolCall: the model called a tool (Turn, Call).
	KindToolCall Kind = "tool-call"
	// KindPause: the run waits for decisions about these calls (Pending):
	// approvals, and the results of browser tools. A pause that more
	// records follow was resolved; the last record of a log that waits is
	// a pause.
	KindPause Kind = "pause"
	// KindDecision: a pending call was decided (Decision), by a request
	// or by its deadline.
	KindDecision Kind = "decision"
	// KindProgress: a running call reported how far it has come (Turn,
	// Call, Progress), through toolset.ReportProgress: the loop's
	// agent.EventToolProgress, at most one per call per the agent's
	// Config.ProgressInterval (100 ms by default), the latest report
	// kept; a call's last report comes before its KindToolResult, and
	// none after it.
	KindProgress Kind = "tool-progress"
	// KindToolResult: a call finished (Turn, Call, Result). Results come
	// as calls complete, not in call order.
	KindToolResult Kind = "tool-result"
	// KindStepEnd: the turn is over, its tools included (Turn, Usage).
	KindStepEnd Kind = "step-end"
	// KindDone: the run is over (Done). Always the last record.
	KindDone Kind = "done"
)

// A Record is one entry of a run's log: what the run did, in a form that
// holds no pointer into the loop, serializes as JSON and means the same
// to every protocol. Which fields are set depends on Kind. Records are
// values shared by every reader of the log: read them, never modify what
// their fields point to.
type Record struct {
	// Offset is the record's position in its run's log, from 0: stable,
	// and the same for every reader. (In the kept log of a run that is
	// over, a turn's text is one record, at its first piece's offset: see
	// Request.KeepLog.)
	Offset int64 `json:"offset"`
	Kind   Kind  `json:"kind"`
	// Time is when the record was made.
	Time time.Time `json:"time"`
	// Turn is the model turn the record belongs to, from 0.
	Turn int `json:"turn"`

	Text     string       `json:"text,omitempty"`     // KindText, KindThought
	Call     *Call        `json:"call,omitempty"`     // KindToolCall, KindToolResult
	Result   *CallResult  `json:"result,omitempty"`   // KindToolResult
	Pending  []Pending    `json:"pending,omitempty"`  // KindPause
	Decision *Decision    `json:"decision,omitempty"` // KindDecision
	Retry    *Retry       `json:"retry,omitempty"`    // KindRetry
	Progress *Progress    `json:"progress,omitempty"` // KindProgress
	Usage    *agent.Usage `json:"usage,omitempty"`    // KindStepEnd: the turn's
	Done     *Done        `json:"done,omitempty"`     // KindDone
}

// A Call is a function call the model made.
type Call struct {
	// ID names the call in every protocol (toolCallId): the server's own,
	// unique in the thread, made from the run's id, the turn and the
	// call's position in it.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args are the call's arguments as the model sent them, a JSON object.
	Args json.RawMessage `json:"args"`
	// Wait says whether the call waits for a decision before it can be
	// answered: an approval, or the result of a browser tool; "" when it
	// runs at once.
	Wait PendingKind `json:"wait,omitempty"`
}

// A CallResult is what a call's answer was.
type CallResult struct {
	// Output is the result, as JSON, when the call succeeded.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is the message the model read when the call failed: the
	// tool's error, a denial's reason.
	Error string `json:"error,omitempty"`
	// Denied is set when the call needed approval and did not get it (it
	// was denied, or its deadline passed): it did not run.
	Denied bool `json:"denied,omitempty"`
	// Duration is how long the call took.
	Duration time.Duration `json:"duration"`
	// Files are the files of the thread the result refers to (the files
	// the call made, or loaded): on a server with Config.Artifacts, a
	// frontend downloads each from Server.FileURL of its URI.
	Files []File `json:"files,omitempty"`
}

// PendingKind says what a pending call waits for.
type PendingKind string

const (
	// WaitApproval: a person must approve the call before it runs
	// (agent.Config.NeedsApproval picked it).
	WaitApproval PendingKind = "approval"
	// WaitBrowser: the call is of a tool the request declared, which runs
	// in the browser; the run waits for its result.
	WaitBrowser PendingKind = "browser"
)

// A Pending call waits for a [Decision].
type Pending struct {
	Call Call        `json:"call"`
	Kind PendingKind `json:"kind"`
	// Deadline is when the call is denied if nobody decided it.
	Deadline time.Time `json:"deadline"`
}

// A Decision decides a pending call: it approves or denies a call that
// needs approval, or gives a browser tool's result or error.
type Decision struct {
	// CallID is the pending call's Call.ID.
	CallID string `json:"callId"`
	// Approved lets a call that needs approval run.
	Approved bool `json:"approved,omitempty"`
	// Reason tells the model why a call was denied; empty means "the
	// user denied it".
	Reason string `json:"reason,omitempty"`
	// Output is a browser tool's result, as JSON.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is a browser tool's failure, for the model.
	Error string `json:"error,omitempty"`
	// Expired is set on the decision the server took when the deadline
	// passed (a denial). Requests never set it.
	Expired bool `json:"expired,omitempty"`
	// Kind is what the call waited for; the server sets it in the log.
	Kind PendingKind `json:"kind,omitempty"`
}

// Progress is how far a running call has come, as its tool reported it
// (see toolset.Progress).
type Progress struct {
	// Done is the work done, in the tool's units; Total the whole work,
	// 0 when the tool does not know it.
	Done  float64 `json:"done"`
	Total float64 `json:"total,omitempty"`
	// Message says what the tool is doing, for a person.
	Message string `json:"message,omitempty"`
}

// A Retry reports a model call made again.
type Retry struct {
	// Attempt is the attempt that failed, from 1.
	Attempt int `json:"attempt"`
	// Delay is the wait before the next attempt.
	Delay time.Duration `json:"delay"`
	// Reason says why, in a few words safe to show anyone: "rate
	// limited", "the model's reply was cut"...
	Reason string `json:"reason"`
}

// State is where a run stands.
type State string

const (
	StateRunning   State = "running"   // the run goes on
	StateWaiting   State = "waiting"   // the run waits for decisions (RunInfo.Pending)
	StateDone      State = "done"      // the run finished: the model answered
	StateFailed    State = "failed"    // the run failed (Done.Error says why)
	StateCancelled State = "cancelled" // the run was cancelled, or the server closed
)

// Over reports whether a run in state s is over.
func (s State) Over() bool { return s == StateDone || s == StateFailed || s == StateCancelled }

// Done is how a run ended.
type Done struct {
	State State `json:"state"`
	// Text is the answer's text (agent.Result.Text), partial when the run
	// did not finish.
	Text string `json:"text,omitempty"`
	// Output is the typed answer of a typed agent (agent.Typed), as JSON.
	Output json.RawMessage `json:"output,omitempty"`
	// Usage sums the run's token counts.
	Usage agent.Usage `json:"usage"`
	// Error says why the run failed or was cancelled; nil when it
	// finished.
	Error *Failure `json:"error,omitempty"`
}

// A Failure is an error as a client may see it: a stable code and a
// short message that never holds a key, a stack or a model's raw error
// body. The server logs the error itself.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
