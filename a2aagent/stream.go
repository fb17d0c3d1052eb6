package a2aagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/wire"
)

// stream returns the stream that answers message/stream: the task's
// events as server-sent events, each a JSON-RPC response, from the
// message on, to the run's end or the input it waits for.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, id json.RawMessage, user string, p *a2a.MessageSendParams, pc *pushConfig) (agentserver.Cursor, agentserver.Encoder) {
	cur, enc, err := h.startStream(r.Context(), user, p.Message, pc)
	if err != nil {
		h.writeStreamError(w, r, id, rpcErrorOf(err))
		return nil, nil
	}
	enc.id = id
	return cur, enc
}

// startStream applies m and returns the cursor and encoder of its
// stream. A task that starts opens with the Task, submitted; one that
// goes on, with its status, working. The stream reads the cursor Submit
// attached before the message took effect, so that it misses nothing of
// a fast run. pc, when not nil, is the push config the message sets.
func (h *handler) startStream(ctx context.Context, user string, m *a2a.Message, pc *pushConfig) (agentserver.Cursor, *encoder, error) {
	if pc != nil {
		if err := h.push.prepare(ctx, user, pc); err != nil {
			return nil, nil, err
		}
	}
	att, err := h.submit(ctx, user, m)
	if err != nil {
		return nil, nil, err
	}
	h.messagePush(ctx, user, att, pc)
	tr := newTranslator(h.files(), att.Run)
	if !att.Continued {
		return att.Cursor, &encoder{tr: tr, opening: []a2a.Event{
			&a2a.Task{ID: tr.task, ContextID: tr.context, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}}}, nil
	}
	// The records before the decisions (att.Run.Len of them) are what
	// the task's streams sent already: which artifacts the next parts
	// are appended to.
	if err := h.fold(ctx, user, att.Run.ID, att.Run.Len, tr, nil); err != nil {
		att.Cursor.Close()
		return nil, nil, taskNotFound(a2a.TaskID(att.Run.ID), err)
	}
	return att.Cursor, &encoder{tr: tr, opening: []a2a.Event{tr.status(a2a.TaskStateWorking, time.Now(), nil, false)}}, nil
}

// fold reads run id's log from its start, up to the record at offset
// until, into tr's state and snap (when not nil).
func (h *handler) fold(ctx context.Context, user, id string, until int64, tr *translator, snap *snapshot) error {
	cur, err := h.s.Attach(ctx, user, id, 0)
	if err != nil {
		return err
	}
	defer cur.Close()
	for {
		rec, ok, err := cur.Next(ctx, 0)
		if err != nil || !ok || rec.Offset >= until {
			return nil // the log holds the records before until: the run goes on from there
		}
		snap.fold(tr, &rec, false)
	}
}

// resubscribe returns the stream that answers tasks/resubscribe: the
// task as it stands, then its events from there on, to the run's end or
// the input it waits for; for a run that is over, the task and its last
// status.
func (h *handler) resubscribe(w http.ResponseWriter, r *http.Request, id json.RawMessage, user string, task a2a.TaskID) (agentserver.Cursor, agentserver.Encoder) {
	cur, enc, err := h.startResubscribe(r.Context(), user, task)
	if err != nil {
		h.writeStreamError(w, r, id, rpcErrorOf(err))
		return nil, nil
	}
	enc.id = id
	return cur, enc
}

// startResubscribe returns the cursor and encoder of a stream that
// resubscribes to task.
func (h *handler) startResubscribe(ctx context.Context, user string, task a2a.TaskID) (agentserver.Cursor, *encoder, error) {
	if task == "" {
		return nil, nil, invalidParams("params.id is missing")
	}
	info, err := h.s.Run(ctx, user, string(task))
	if err != nil {
		return nil, nil, taskNotFound(task, err)
	}
	cur, err := h.s.Attach(ctx, user, info.ID, 0)
	if err != nil {
		return nil, nil, taskNotFound(task, err)
	}
	defer cur.Close()
	// The task as it stands opens the stream, unless the log ends with the
	// run's end or the input it waits for: that record streams as an
	// event, and ends the stream as it ended the first. So each record is
	// folded once the next one is read.
	tr := newTranslator(h.files(), info)
	snap := newSnapshot(tr, info)
	var (
		held agentserver.Record // the last record read
		have bool
	)
	for {
		rec, ok, err := cur.Next(ctx, 0)
		if err != nil || !ok {
			break
		}
		if have {
			snap.fold(tr, &held, false)
		}
		held, have = rec, true
	}
	from := held.Offset + 1
	switch {
	case !have:
		from = 0 // not reached: every log starts with KindStart
	case held.Kind == agentserver.KindDone || held.Kind == agentserver.KindPause && cur.Buffered() == 0:
		from = held.Offset
	default:
		snap.fold(tr, &held, false)
	}
	// Attached before cur is closed: the log the stream reads is the one
	// folded.
	rest, err := h.s.Attach(ctx, user, info.ID, from)
	if err != nil {
		return nil, nil, taskNotFound(task, err)
	}
	t := snap.task
	return rest, &encoder{tr: tr, opening: []a2a.Event{&t}}, nil
}

// encoder writes a task's events as server-sent events, each one line of
// JSON: a JSON-RPC response of the request's id whose result is the event.
type encoder struct {
	id      json.RawMessage
	tr      *translator
	opening []a2a.Event
	frames  map[textKey]*textFrame
}

// Open implements agentserver.Encoder.
func (e *encoder) Open(w *agentserver.EventWriter) {
	for _, ev := range e.opening {
		e.write(w, ev, nil)
	}
}

// Record implements agentserver.Encoder.
func (e *encoder) Record(w *agentserver.EventWriter, rec *agentserver.Record, last bool) {
	if rec.Kind == agentserver.KindText {
		e.text(w, rec)
		return
	}
	for _, ev := range e.tr.events(rec, last) {
		e.write(w, ev, nil)
	}
}

// A text piece is most of a stream's events: its event is the JSON of
// the first piece of its artifact (or of the next ones, which append),
// written once per turn, with the text in place of a mark: a piece costs
// its text's escaping, and neither the event's values nor their encoding.
type textFrame struct{ before, after []byte }

type textKey struct {
	turn   int
	append bool
}

// textMark is a text whose JSON is found once in its event's.
const textMark, textMarkJSON = "\x00", `"\u0000"`

func (e *encoder) text(w *agentserver.EventWriter, rec *agentserver.Record) {
	w.End(e.appendText(w.Begin(), rec))
}

// appendText appends the JSON-RPC response of a text piece's event.
func (e *encoder) appendText(b []byte, rec *agentserver.Record) []byte {
	k := textKey{rec.Turn, e.tr.started[rec.Turn]}
	f := e.frames[k]
	if f == nil {
		frame, err := appendResponse(nil, e.id, e.tr.events(&agentserver.Record{Kind: agentserver.KindText, Turn: rec.Turn, Text: textMark}, false)[0], nil)
		i := bytes.Index(frame, []byte(textMarkJSON))
		if err != nil || i < 0 || bytes.Count(frame, []byte(textMarkJSON)) != 1 {
			e.tr.started[rec.Turn] = k.append // not reached: the mark is the only such text
			b, _ = appendResponse(b, e.id, e.tr.events(rec, false)[0], nil)
			return b
		}
		f = &textFrame{frame[:i], frame[i+len(textMarkJSON):]}
		if e.frames == nil {
			e.frames = map[textKey]*textFrame{}
		}
		e.frames[k] = f
	}
	e.tr.started[rec.Turn] = true
	b = append(b, f.before...)
	b = wire.String(b, rec.Text)
	return append(b, f.after...)
}

// Abort implements agentserver.Encoder: the stream is cut short, the
// server shutting down or the task's log unreadable; tasks/get says where
// the task stands.
func (e *encoder) Abort(w *agentserver.EventWriter, err error) {
	msg := "the stream was cut: the server is shutting down; the task goes on (tasks/get, tasks/resubscribe)"
	if !errors.Is(err, context.Canceled) {
		msg = "the stream was cut: the task's log could not be read; tasks/get says where the task stands"
	}
	e.write(w, nil, &rpcError{Code: codeInternalError, Message: msg, Data: map[string]any{"error": msg}})
}

func (e *encoder) write(w *agentserver.EventWriter, ev a2a.Event, rerr *rpcError) {
	b, err := appendResponse(w.Begin(), e.id, ev, rerr)
	if err != nil {
		// Not reached: events hold JSON values only.
		b, _ = appendResponse(w.Begin(), e.id, nil, &rpcError{Code: codeInternalError, Message: "internal error"})
	}
	w.End(b)
}
