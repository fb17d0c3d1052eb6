package aisdk

import (
	"encoding/json"
	"strconv"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/wire"
)

// encoder maps a run's records to UI message chunks, for one stream.
type encoder struct {
	run    agentserver.RunInfo
	s      *agentserver.Server // for the links of files
	text   string              // the text part open, "" when none
	reason string              // the reasoning part open
	step   bool                // a start-step was sent and its finish-step not
}

// MessageID returns the id of the assistant message that a run is: the
// message every response of the run, and its resume, stream.
func MessageID(runID string) string { return "msg_" + runID }

// Open implements agentserver.Encoder.
func (e *encoder) Open(w *agentserver.EventWriter) {
	b := w.Begin()
	b = append(b, `{"type":"start"`...)
	b = wire.StringField(b, "messageId", MessageID(e.run.ID))
	b = append(b, `,"messageMetadata":{`...)
	b = wire.StringField(b, "runId", e.run.ID)
	b = wire.StringField(b, "threadId", e.run.Thread)
	w.End(append(b, '}', '}'))
}

// chunk begins a chunk of type typ, whose fields the caller appends
// before end.
func chunk(w *agentserver.EventWriter, typ string) []byte {
	b := w.Begin()
	b = append(b, `{"type":`...)
	return wire.String(b, typ)
}

func end(w *agentserver.EventWriter, b []byte) { w.End(append(b, '}')) }

// idChunk writes {"type":typ,"id":id}.
func idChunk(w *agentserver.EventWriter, typ, id string) {
	end(w, wire.StringField(chunk(w, typ), "id", id))
}

// closeParts ends the text and reasoning parts that are open.
func (e *encoder) closeParts(w *agentserver.EventWriter) {
	if e.text != "" {
		idChunk(w, "text-end", e.text)
		e.text = ""
	}
	if e.reason != "" {
		idChunk(w, "reasoning-end", e.reason)
		e.reason = ""
	}
}

// closeStep ends the open parts, and the step.
func (e *encoder) closeStep(w *agentserver.EventWriter) {
	e.closeParts(w)
	if e.step {
		end(w, chunk(w, "finish-step"))
		e.step = false
	}
}

// partID names a text or reasoning part after the record that opens it:
// unique in the message, and the same in every stream of the run.
func partID(prefix string, rec *agentserver.Record) string {
	return prefix + strconv.FormatInt(rec.Offset, 10)
}

// Record implements agentserver.Encoder.
func (e *encoder) Record(w *agentserver.EventWriter, rec *agentserver.Record, last bool) {
	switch rec.Kind {
	case agentserver.KindStart:
	case agentserver.KindStep:
		e.closeStep(w)
		end(w, chunk(w, "start-step"))
		e.step = true
	case agentserver.KindText:
		if e.reason != "" {
			idChunk(w, "reasoning-end", e.reason)
			e.reason = ""
		}
		if e.text == "" {
			e.text = partID("t", rec)
			idChunk(w, "text-start", e.text)
		}
		b := wire.StringField(chunk(w, "text-delta"), "id", e.text)
		end(w, wire.StringField(b, "delta", rec.Text))
	case agentserver.KindThought:
		if e.text != "" {
			idChunk(w, "text-end", e.text)
			e.text = ""
		}
		if e.reason == "" {
			e.reason = partID("r", rec)
			idChunk(w, "reasoning-start", e.reason)
		}
		b := wire.StringField(chunk(w, "reasoning-delta"), "id", e.reason)
		end(w, wire.StringField(b, "delta", rec.Text))
	case agentserver.KindRetry:
		b := chunk(w, "data-retry")
		b = wire.StringField(b, "id", "retry"+strconv.FormatInt(rec.Offset, 10))
		b = append(b, `,"data":{`...)
		b = wire.IntField(b, "turn", int64(rec.Turn))
		b = wire.IntField(b, "attempt", int64(rec.Retry.Attempt))
		b = wire.IntField(b, "delayMs", rec.Retry.Delay.Milliseconds())
		b = wire.StringField(b, "reason", rec.Retry.Reason)
		end(w, append(b, '}'))
	case agentserver.KindToolCall:
		e.closeParts(w)
		b := wire.StringField(chunk(w, "tool-input-available"), "toolCallId", rec.Call.ID)
		b = wire.StringField(b, "toolName", rec.Call.Name)
		end(w, wire.RawField(b, "input", rec.Call.Args))
	case agentserver.KindPause:
		for _, p := range rec.Pending {
			if p.Kind == agentserver.WaitApproval {
				b := wire.StringField(chunk(w, "tool-approval-request"), "approvalId", p.Call.ID)
				end(w, wire.StringField(b, "toolCallId", p.Call.ID))
			}
		}
		if last {
			e.closeStep(w)
			end(w, wire.StringField(chunk(w, "finish"), "finishReason", "tool-calls"))
			w.Data(doneFrame)
		}
	case agentserver.KindDecision:
		d := rec.Decision
		if d.Kind == agentserver.WaitApproval {
			b := wire.StringField(chunk(w, "tool-approval-response"), "approvalId", d.CallID)
			b = wire.BoolField(b, "approved", d.Approved && !d.Expired)
			if d.Reason != "" {
				b = wire.StringField(b, "reason", d.Reason)
			}
			end(w, b)
		}
	case agentserver.KindProgress:
		// Transient: the client hands it to onData and keeps it in no
		// message; its id is the call's, so that a client that keeps data
		// parts replaces the last one.
		p := rec.Progress
		b := wire.StringField(chunk(w, "data-tool-progress"), "id", rec.Call.ID)
		b = wire.Progress(wire.Field(b, "data"), rec.Call.ID, p.Done, p.Total, p.Message)
		end(w, wire.BoolField(b, "transient", true))
	case agentserver.KindToolResult:
		r := rec.Result
		switch {
		case r.Denied:
			end(w, wire.StringField(chunk(w, "tool-output-denied"), "toolCallId", rec.Call.ID))
		case r.Error != "":
			b := wire.StringField(chunk(w, "tool-output-error"), "toolCallId", rec.Call.ID)
			end(w, wire.StringField(b, "errorText", r.Error))
		default:
			b := wire.StringField(chunk(w, "tool-output-available"), "toolCallId", rec.Call.ID)
			end(w, wire.RawField(b, "output", r.Output))
			e.files(w, rec)
		}
	case agentserver.KindStepEnd:
		e.closeStep(w)
	case agentserver.KindDone:
		e.done(w, rec.Done)
	default:
		// A kind this version does not know: a data part of its name.
		raw, err := json.Marshal(rec)
		if err != nil {
			return
		}
		b := wire.StringField(chunk(w, "data-"+string(rec.Kind)), "id", string(rec.Kind)+strconv.FormatInt(rec.Offset, 10))
		end(w, wire.RawField(b, "data", raw))
	}
}

// doneFrame is the data of the last frame of every stream.
var doneFrame = []byte("[DONE]")

// done writes the end of the run.
func (e *encoder) done(w *agentserver.EventWriter, d *agentserver.Done) {
	e.closeStep(w)
	if len(d.Output) > 0 {
		b := wire.StringField(chunk(w, "data-output"), "id", "output")
		end(w, wire.RawField(b, "data", d.Output))
	}
	reason := "stop"
	if f := d.Error; f != nil {
		switch f.Code {
		case "cancelled":
			end(w, wire.StringField(chunk(w, "abort"), "reason", f.Message))
			reason = "other"
		case "max_tokens":
			reason = "length"
		case "blocked", "unsafe":
			reason = "content-filter"
		default:
			reason = "error"
		}
		if f.Code != "cancelled" {
			end(w, wire.StringField(chunk(w, "error"), "errorText", f.Message))
		}
	}
	b := wire.StringField(chunk(w, "finish"), "finishReason", reason)
	b = append(b, `,"messageMetadata":{"usage":`...)
	b = appendUsage(b, d)
	end(w, append(b, '}'))
	w.Data(doneFrame)
}

// appendUsage appends the run's usage as the AI SDK counts it: input and
// output totals, thoughts among the output, cached tokens among the
// input.
func appendUsage(b []byte, d *agentserver.Done) []byte {
	u := d.Usage
	in, out := wire.Tokens(u)
	b = append(b, '{')
	b = wire.IntField(b, "inputTokens", in)
	b = wire.IntField(b, "outputTokens", out)
	b = wire.IntField(b, "totalTokens", in+out)
	b = wire.IntField(b, "reasoningTokens", int64(u.ThoughtsTokens))
	b = wire.IntField(b, "cachedInputTokens", int64(u.CachedTokens))
	return append(b, '}')
}

// Abort implements agentserver.Encoder: the stream is cut (the server is
// shutting down: an abort chunk), or its run's log could not be read (an
// error chunk, whose text says why: the run goes on, the client resumes
// it later); the run's end is in the thread's history.
func (e *encoder) Abort(w *agentserver.EventWriter, err error) {
	e.closeStep(w)
	if _, msg, cut := agentserver.AbortReason(err); !cut {
		end(w, wire.StringField(chunk(w, "error"), "errorText", msg))
	} else {
		end(w, wire.StringField(chunk(w, "abort"), "reason", msg))
	}
	w.Data(doneFrame)
}

// files writes a file part for each file a call's result refers to: its
// download URL, and under providerMetadata.toolnexus its name and the
// call's id, so that a frontend shows it with the tool's part.
func (e *encoder) files(w *agentserver.EventWriter, rec *agentserver.Record) {
	for _, f := range rec.Result.Files {
		url, ok := e.s.FileURL(e.run.Thread, f.URI)
		if !ok {
			continue
		}
		b := wire.StringField(chunk(w, "file"), "url", url)
		b = wire.StringField(b, "mediaType", f.MediaType)
		b = append(b, `,"providerMetadata":{"toolnexus":{`...)
		b = wire.String(append(b, `"name":`...), f.Name)
		b = wire.StringField(b, "toolCallId", rec.Call.ID)
		end(w, append(b, '}', '}'))
	}
}
