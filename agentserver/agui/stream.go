package agui

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/wire"
)

// encoder maps a run's records to AG-UI events, for one AG-UI run.
type encoder struct {
	s             *agentserver.Server // for the links of files
	thread, runID string              // as the request names them
	run           string              // the server's run
	model         string
	text          string // the text message open, "" when none
	reason        string // the reasoning message open
	step          int    // 1 + the turn whose step is open; 0 when none
}

// event begins an event of type typ, whose fields the caller appends
// before end.
func event(w *agentserver.EventWriter, typ string) []byte {
	b := w.Begin()
	b = append(b, `{"type":`...)
	return wire.String(b, typ)
}

func end(w *agentserver.EventWriter, b []byte) { w.End(append(b, '}')) }

func (e *encoder) runEvent(w *agentserver.EventWriter, typ string) []byte {
	b := wire.StringField(event(w, typ), "threadId", e.thread)
	return wire.StringField(b, "runId", e.runID)
}

// Open implements agentserver.Encoder.
func (e *encoder) Open(w *agentserver.EventWriter) { end(w, e.runEvent(w, "RUN_STARTED")) }

// ProgressActivity is the activityType of the activity messages that
// show a tool call's progress.
const ProgressActivity = "tool-progress"

// ProgressMessageID returns the id of the activity message that shows the
// progress of the tool call toolCallID.
func ProgressMessageID(toolCallID string) string { return toolCallID + "-progress" }

// messageID is the assistant message of a turn: its text, and the parent
// of its tool calls.
func (e *encoder) messageID(turn int) string { return e.run + "-m" + strconv.Itoa(turn) }

func stepName(turn int) string { return "turn " + strconv.Itoa(turn+1) }

// closeParts ends the text and reasoning messages that are open.
func (e *encoder) closeParts(w *agentserver.EventWriter) {
	if e.text != "" {
		end(w, wire.StringField(event(w, "TEXT_MESSAGE_END"), "messageId", e.text))
		e.text = ""
	}
	if e.reason != "" {
		end(w, wire.StringField(event(w, "REASONING_MESSAGE_END"), "messageId", e.reason))
		end(w, wire.StringField(event(w, "REASONING_END"), "messageId", e.reason))
		e.reason = ""
	}
}

// closeStep ends the open messages, and the step.
func (e *encoder) closeStep(w *agentserver.EventWriter) {
	e.closeParts(w)
	if e.step != 0 {
		end(w, wire.StringField(event(w, "STEP_FINISHED"), "stepName", stepName(e.step-1)))
		e.step = 0
	}
}

// inStep opens turn's step, when it is not: a stream that continues a run
// starts in the middle of a turn.
func (e *encoder) inStep(w *agentserver.EventWriter, turn int) {
	if e.step == turn+1 {
		return
	}
	e.closeStep(w)
	end(w, wire.StringField(event(w, "STEP_STARTED"), "stepName", stepName(turn)))
	e.step = turn + 1
}

// Record implements agentserver.Encoder.
func (e *encoder) Record(w *agentserver.EventWriter, rec *agentserver.Record, last bool) {
	switch rec.Kind {
	case agentserver.KindStart, agentserver.KindDecision:
	case agentserver.KindStep:
		e.inStep(w, rec.Turn)
	case agentserver.KindText:
		e.inStep(w, rec.Turn)
		if e.reason != "" {
			e.closeParts(w)
		}
		if e.text == "" {
			e.text = e.messageID(rec.Turn)
			b := wire.StringField(event(w, "TEXT_MESSAGE_START"), "messageId", e.text)
			end(w, wire.StringField(b, "role", "assistant"))
		}
		b := wire.StringField(event(w, "TEXT_MESSAGE_CONTENT"), "messageId", e.text)
		end(w, wire.StringField(b, "delta", rec.Text))
	case agentserver.KindThought:
		e.inStep(w, rec.Turn)
		if e.text != "" {
			e.closeParts(w)
		}
		if e.reason == "" {
			e.reason = e.run + "-r" + strconv.FormatInt(rec.Offset, 10)
			end(w, wire.StringField(event(w, "REASONING_START"), "messageId", e.reason))
			b := wire.StringField(event(w, "REASONING_MESSAGE_START"), "messageId", e.reason)
			end(w, wire.StringField(b, "role", "reasoning"))
		}
		b := wire.StringField(event(w, "REASONING_MESSAGE_CONTENT"), "messageId", e.reason)
		end(w, wire.StringField(b, "delta", rec.Text))
	case agentserver.KindRetry:
		b := wire.StringField(event(w, "CUSTOM"), "name", "retry")
		b = append(b, `,"value":{`...)
		b = wire.IntField(b, "turn", int64(rec.Turn))
		b = wire.IntField(b, "attempt", int64(rec.Retry.Attempt))
		b = wire.IntField(b, "delayMs", rec.Retry.Delay.Milliseconds())
		b = wire.StringField(b, "reason", rec.Retry.Reason)
		end(w, append(b, '}'))
	case agentserver.KindToolCall:
		e.inStep(w, rec.Turn)
		e.closeParts(w)
		c := rec.Call
		b := wire.StringField(event(w, "TOOL_CALL_START"), "toolCallId", c.ID)
		b = wire.StringField(b, "toolCallName", c.Name)
		end(w, wire.StringField(b, "parentMessageId", e.messageID(rec.Turn)))
		b = wire.StringField(event(w, "TOOL_CALL_ARGS"), "toolCallId", c.ID)
		end(w, wire.String(wire.Field(b, "delta"), string(c.Args)))
		end(w, wire.StringField(event(w, "TOOL_CALL_END"), "toolCallId", c.ID))
	case agentserver.KindPause:
		if last {
			e.pause(w, rec)
		}
	case agentserver.KindProgress:
		// The call's progress is an activity message of its own, which
		// each report replaces.
		e.inStep(w, rec.Turn)
		e.closeParts(w)
		p := rec.Progress
		b := wire.StringField(event(w, "ACTIVITY_SNAPSHOT"), "messageId", ProgressMessageID(rec.Call.ID))
		b = wire.StringField(b, "activityType", ProgressActivity)
		b = wire.Progress(wire.Field(b, "content"), rec.Call.ID, p.Done, p.Total, p.Message)
		end(w, wire.BoolField(b, "replace", true))
	case agentserver.KindToolResult:
		e.inStep(w, rec.Turn)
		e.closeParts(w)
		r := rec.Result
		b := wire.StringField(event(w, "TOOL_CALL_RESULT"), "messageId", rec.Call.ID+"-result")
		b = wire.StringField(b, "toolCallId", rec.Call.ID)
		switch {
		case r.Error != "":
			b = wire.StringField(b, "content", r.Error)
		case len(r.Files) > 0:
			b = wire.RawField(b, "content", e.resultParts(string(r.Output), r.Files))
		default:
			b = wire.String(wire.Field(b, "content"), string(r.Output))
		}
		b = wire.StringField(b, "role", "tool")
		if r.Error != "" {
			b = append(b, `,"metadata":{"isError":true`...)
			b = wire.BoolField(b, "denied", r.Denied)
			b = append(b, '}')
		}
		end(w, b)
	case agentserver.KindStepEnd:
		if e.step == rec.Turn+1 {
			e.closeStep(w)
		}
	case agentserver.KindDone:
		e.done(w, rec.Done)
	default:
		// A kind this version does not know: a custom event of its name.
		raw, err := json.Marshal(rec)
		if err != nil {
			return
		}
		b := wire.StringField(event(w, "CUSTOM"), "name", string(rec.Kind))
		end(w, wire.RawField(b, "value", raw))
	}
}

// pause ends the AG-UI run at calls that wait: an interrupt for each call
// that needs approval; the browser tools' calls are pending tool calls.
func (e *encoder) pause(w *agentserver.EventWriter, rec *agentserver.Record) {
	e.closeStep(w)
	b := e.runEvent(w, "RUN_FINISHED")
	approvals := 0
	for _, p := range rec.Pending {
		if p.Kind == agentserver.WaitApproval {
			approvals++
		}
	}
	if approvals > 0 {
		b = append(b, `,"outcome":{"type":"interrupt","interrupts":[`...)
		first := true
		for _, p := range rec.Pending {
			if p.Kind != agentserver.WaitApproval {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '{')
			b = wire.StringField(b, "id", p.Call.ID)
			b = wire.StringField(b, "reason", "tool_call")
			b = wire.StringField(b, "toolCallId", p.Call.ID)
			b = wire.StringField(b, "message", p.Call.Name+" needs approval")
			b = append(b, `,"responseSchema":{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"]}`...)
			b = wire.StringField(b, "expiresAt", p.Deadline.UTC().Format(time.RFC3339Nano))
			b = append(b, '}')
		}
		end(w, append(b, ']', '}'))
		return
	}
	b = append(b, `,"outcome":{"type":"success","pendingToolCallIds":[`...)
	for i, p := range rec.Pending {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.String(b, p.Call.ID)
	}
	end(w, append(b, ']', '}'))
}

// done ends the AG-UI run at the run's end.
func (e *encoder) done(w *agentserver.EventWriter, d *agentserver.Done) {
	e.closeStep(w)
	if f := d.Error; f != nil && f.Code != "cancelled" {
		b := wire.StringField(event(w, "RUN_ERROR"), "message", f.Message)
		b = wire.StringField(b, "code", f.Code)
		end(w, e.usage(b, d))
		return
	}
	b := e.runEvent(w, "RUN_FINISHED")
	if d.State == agentserver.StateCancelled {
		end(w, append(b, `,"outcome":{"type":"cancelled"}`...))
		return
	}
	if len(d.Output) > 0 {
		b = wire.RawField(b, "result", d.Output)
	}
	b = append(b, `,"outcome":{"type":"success"}`...)
	end(w, e.usage(b, d))
}

// usage appends the run's usage as AG-UI counts it: input and output
// totals, reasoning and cached tokens among them.
func (e *encoder) usage(b []byte, d *agentserver.Done) []byte {
	u := d.Usage
	in, out := wire.Tokens(u)
	b = append(b, `,"usage":[{"provider":"gemini"`...)
	if e.model != "" {
		b = wire.StringField(b, "model", e.model)
	}
	b = wire.IntField(b, "inputTokens", in)
	b = wire.IntField(b, "outputTokens", out)
	b = wire.IntField(b, "totalTokens", in+out)
	b = wire.IntField(b, "reasoningTokens", int64(u.ThoughtsTokens))
	b = wire.IntField(b, "cachedInputTokens", int64(u.CachedTokens))
	return append(b, '}', ']')
}

// Abort implements agentserver.Encoder: the stream is cut (the server is
// shutting down: code stream_cut), or its run's log could not be read (the
// code and message say why: the run goes on, the client connects again
// later); the run's end is in the thread's history.
func (e *encoder) Abort(w *agentserver.EventWriter, err error) {
	e.closeStep(w)
	code, msg, _ := agentserver.AbortReason(err)
	b := wire.StringField(event(w, "RUN_ERROR"), "message", msg)
	end(w, wire.StringField(b, "code", code))
}

// resultParts is the content of a tool result that refers to files, as
// AG-UI 1.0 carries a tool's media: a text part holding the output's JSON,
// then a media part per file whose source is of type "url", its download
// link (the file is fetched by whoever shows it; a "file" source is a
// handle of the model's provider, not to be fetched), with its name in
// the part's metadata.
func (e *encoder) resultParts(output string, files []agentserver.File) []byte {
	parts := []outPart{{Type: "text", Text: output}}
	for _, f := range files {
		if url, ok := e.s.FileURL(e.thread, f.URI); ok {
			p := media(f.MediaType, "url", url)
			p.Metadata = map[string]string{"filename": f.Name}
			parts = append(parts, p)
		}
	}
	b, _ := json.Marshal(parts)
	return b
}
