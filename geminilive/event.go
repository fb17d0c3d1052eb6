package geminilive

import (
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of events a session yields.
const (
	// EventText: a piece of the model's text answer (Text).
	EventText EventKind = iota + 1
	// EventThought: a piece of the model's thoughts (Text).
	EventThought
	// EventAudio: a chunk of the model's speech (Audio, MIMEType: 16-bit
	// little-endian mono PCM at 24 kHz).
	EventAudio
	// EventInputTranscript: a piece of the transcription of what the user
	// said (Text, Finished).
	EventInputTranscript
	// EventOutputTranscript: a piece of the transcription of what the
	// model said (Text, Finished).
	EventOutputTranscript
	// EventToolCall: the model asked for a call (Call, Tool: nil for an
	// unknown tool); it starts, or waits for approval.
	EventToolCall
	// EventApproval: a call picked by the agent's Config.NeedsApproval
	// waits for [Session.Decide] (Call, Tool).
	EventApproval
	// EventToolProgress: a running call reported how far it has come
	// (Call, Tool, Progress), paced by Config.ProgressInterval.
	EventToolProgress
	// EventToolResult: a call finished and its response is sent next
	// (Call, Tool, Result): it comes before the model's answer to it. (A
	// call that came without an id is answered once the earlier id-less
	// calls of its toolCall are: see the package documentation.)
	EventToolResult
	// EventToolCancelled: the model cancelled a call (toolCallCancellation,
	// the user spoke over it): its context is cancelled with
	// [ErrCancelled] and nothing is sent for it (Call, Tool).
	EventToolCancelled
	// EventInterrupted: the user interrupted the model; a player drops
	// the audio it has not played yet.
	EventInterrupted
	// EventGenerationComplete: the model is done generating its turn.
	EventGenerationComplete
	// EventTurnComplete: the model's turn ended.
	EventTurnComplete
	// EventUsage: token counts (Usage).
	EventUsage
	// EventGoAway: the service ends the connection in TimeLeft; the
	// session reconnects at once (unless Config.NoResumption, or it has
	// no handle yet).
	EventGoAway
	// EventReconnected: the session resumed on a new connection.
	EventReconnected
)

var kindNames = [...]string{
	EventText: "Text", EventThought: "Thought", EventAudio: "Audio",
	EventInputTranscript: "InputTranscript", EventOutputTranscript: "OutputTranscript",
	EventToolCall: "ToolCall", EventApproval: "Approval", EventToolProgress: "ToolProgress", EventToolResult: "ToolResult",
	EventToolCancelled: "ToolCancelled", EventInterrupted: "Interrupted",
	EventGenerationComplete: "GenerationComplete", EventTurnComplete: "TurnComplete",
	EventUsage: "Usage", EventGoAway: "GoAway", EventReconnected: "Reconnected",
}

// String returns the kind's name, e.g. "ToolCall".
func (k EventKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "EventKind(?)"
}

// An Event is something that happened in a live session. Which fields are
// set depends on Kind.
type Event struct {
	Kind EventKind

	Text     string // EventText, EventThought, EventInputTranscript, EventOutputTranscript
	Finished bool   // EventInputTranscript, EventOutputTranscript: the transcription is complete
	Audio    []byte // EventAudio
	MIMEType string // EventAudio

	// Call is the call of EventToolCall, EventApproval, EventToolProgress,
	// EventToolResult and EventToolCancelled. Its ID is the service's, or
	// for a call that came without one the session's own ("geminilive-N"),
	// which Session.Decide takes; Message holds the call as it came.
	Call   *genai.FunctionCall
	Tool   *toolset.Tool     // the same kinds: the tool called, nil if unknown
	Result *agent.ToolResult // EventToolResult: what was sent back

	Progress *toolset.Progress // EventToolProgress

	Usage    agent.Usage   // EventUsage
	TimeLeft time.Duration // EventGoAway

	// Message is the server message the event comes from; nil for
	// EventToolResult and EventReconnected. Read it, never modify it.
	Message *genai.LiveServerMessage
}
