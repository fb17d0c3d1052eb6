package a2aagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agentserver"
)

// stream returns the stream that answers message/stream: the task's
// events as server-sent events, each a JSON-RPC response, from the
// message on, to the run's end or the input it waits for. A task that starts opens with the Task, submitted;
// one that goes on, with its status, working.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, id json.RawMessage, user string, p *a2a.MessageSendParams) (agentserver.Cursor, agentserver.Encoder) {
	att, err := h.submit(r.Context(), user, p.Message)
	if err != nil {
		h.writeStreamError(w, r, id, rpcErrorOf(err))
		return nil, nil
	}
	opening := func(tr *translator, _ *snapshot) []a2a.Event {
		if att.Continued {
			return []a2a.Event{tr.status(a2a.TaskStateWorking, time.Now(), nil, false)}
		}
		return []a2a.Event{&a2a.Task{ID: tr.task, ContextID: tr.context, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}}
	}
	return h.serveTask(w, r, id, user, att.Run, att.Offset, opening)
}

// resubscribe returns the stream that answers tasks/resubscribe: the
// task as it stands, then its events from there on, to the run's end or
// the input it waits for; for a run that is over, the task and its last
// status.
func (h *handler) resubscribe(w http.ResponseWriter, r *http.Request, id json.RawMessage, user string, task a2a.TaskID) (agentserver.Cursor, agentserver.Encoder) {
	if task == "" {
		h.writeStreamError(w, r, id, invalidParams("params.id is missing"))
		return nil, nil
	}
	info, err := h.s.Run(r.Context(), user, string(task))
	if err != nil {
		h.writeStreamError(w, r, id, rpcErrorOf(taskNotFound(task, err)))
		return nil, nil
	}
	// The task as it stands opens the stream, unless the log ends with the
	// run's end or the input it waits for: that record streams as an
	// event, and ends the stream as it ended the first.
	cur, err := h.s.Attach(r.Context(), user, info.ID, 0)
	if err != nil {
		h.writeStreamError(w, r, id, rpcErrorOf(taskNotFound(task, err)))
		return nil, nil
	}
	var from int64
	for {
		rec, ok, err := cur.Next(r.Context(), 0)
		if err != nil || !ok {
			break
		}
		from = rec.Offset + 1
		if rec.Kind == agentserver.KindDone || rec.Kind == agentserver.KindPause && cur.Buffered() == 0 {
			from = rec.Offset
		}
	}
	cur.Close()
	opening := func(_ *translator, snap *snapshot) []a2a.Event {
		t := snap.task
		return []a2a.Event{&t}
	}
	return h.serveTask(w, r, id, user, info, from, opening)
}

// serveTask returns the stream of run's task from the record at offset:
// the records before it make the translator's state and the task's
// snapshot, from which opening makes the first events.
func (h *handler) serveTask(w http.ResponseWriter, r *http.Request, id json.RawMessage, user string, run agentserver.RunInfo, offset int64,
	opening func(*translator, *snapshot) []a2a.Event) (agentserver.Cursor, agentserver.Encoder) {
	cur, err := h.s.Attach(r.Context(), user, run.ID, 0)
	if err != nil {
		h.writeStreamError(w, r, id, rpcErrorOf(taskNotFound(a2a.TaskID(run.ID), err)))
		return nil, nil
	}
	tr := newTranslator(run)
	snap := newSnapshot(tr)
	for range offset {
		rec, ok, err := cur.Next(r.Context(), 0)
		if err != nil || !ok {
			break // not reached: the log holds the records before offset
		}
		for _, ev := range tr.events(&rec, false) {
			snap.apply(ev)
		}
	}
	return cur, &encoder{id: id, tr: tr, opening: opening(tr, snap)}
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

// A text piece is most of a stream's events: its event is the JSON
// a2a-go's types make of the first piece of its artifact (or of the next
// ones, which append), with the text in place of a mark.
type textFrame struct{ before, after []byte }

type textKey struct {
	turn   int
	append bool
}

// textMark is a text whose JSON is found once in its event's.
const textMark, textMarkJSON = "\x00", `"\u0000"`

func (e *encoder) text(w *agentserver.EventWriter, rec *agentserver.Record) {
	k := textKey{rec.Turn, e.tr.started[rec.Turn]}
	f := e.frames[k]
	if f == nil {
		b, err := appendResponse(nil, e.id, e.tr.events(&agentserver.Record{Kind: agentserver.KindText, Turn: rec.Turn, Text: textMark}, false)[0], nil)
		i := bytes.Index(b, []byte(textMarkJSON))
		if err != nil || i < 0 || bytes.Count(b, []byte(textMarkJSON)) != 1 {
			e.tr.started[rec.Turn] = k.append // not reached: the mark is the only such text
			e.write(w, e.tr.events(rec, false)[0], nil)
			return
		}
		f = &textFrame{b[:i], b[i+len(textMarkJSON):]}
		if e.frames == nil {
			e.frames = map[textKey]*textFrame{}
		}
		e.frames[k] = f
	}
	e.tr.started[rec.Turn] = true
	text, _ := json.Marshal(rec.Text) // a string always encodes
	b := append(w.Begin(), f.before...)
	b = append(b, text...)
	w.End(append(b, f.after...))
}

// Abort implements agentserver.Encoder: the stream is cut short (the
// server is shutting down); the run's end is the task's, for tasks/get.
func (e *encoder) Abort(w *agentserver.EventWriter, err error) {
	msg := "the stream was cut: the server is shutting down; the task goes on (tasks/get, tasks/resubscribe)"
	if errors.Is(err, io.EOF) {
		msg = "the stream was cut"
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
