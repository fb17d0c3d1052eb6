package agentserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
)

// An Encoder turns a run's records into a protocol's server-sent events.
// [Server.ServeEvents] calls it from one goroutine; an Encoder serves one
// stream and keeps that stream's state (which message is open, which
// step...).
type Encoder interface {
	// Open writes the events that open the stream.
	Open(w *EventWriter)
	// Record writes the events of rec. last is set when the stream ends
	// after it: at the run's end (KindDone), or at a pause that no record
	// follows (the run waits for decisions). A pause that records follow
	// was resolved: it comes with last unset. rec is valid during the
	// call only: the stream reuses it for the next record.
	Record(w *EventWriter, rec *Record, last bool)
	// Abort writes the events that end a stream cut short: the server
	// stopped streaming, or the log could not be read.
	Abort(w *EventWriter, err error)
}

// AbortReason returns what an [Encoder]'s Abort tells the client of err,
// the error that cut its stream: for an *Error other than ErrClosed (a
// Runner that could not read the run's log: 503 runner_unavailable, when
// its run service stopped answering), its code and message, with
// cut=false; for any other, that the server is shutting down, with code
// "stream_cut" and cut=true.
func AbortReason(err error) (code, message string, cut bool) {
	var e *Error
	if errors.As(err, &e) && !errors.Is(err, ErrClosed) {
		return e.Code, e.Message, false
	}
	return "stream_cut", "the stream was cut: the server is shutting down", true
}

// An EventWriter collects the server-sent events of a stream between two
// flushes. Events are framed with LF only ("data: …\n\n"), as every
// client splits them.
type EventWriter struct {
	buf []byte
}

// Begin starts an event: it returns the buffer to append the event's data
// to (one line: JSON holds no raw newline), to be handed to End.
func (w *EventWriter) Begin() []byte {
	if w.buf == nil {
		w.buf = (*bufs.Get().(*[]byte))[:0]
	}
	return append(w.buf, "data: "...)
}

// bufs holds the buffers of streams between their flushes: a stream that
// waits holds none.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// release returns the writer's buffer to the pool, unless it grew large.
func (w *EventWriter) release() {
	if w.buf != nil && cap(w.buf) <= 4*flushAt {
		b := w.buf[:0]
		bufs.Put(&b)
	}
	w.buf = nil
}

// End ends the event begun with Begin, whose data b now holds.
func (w *EventWriter) End(b []byte) { w.buf = append(b, '\n', '\n') }

// Data writes an event whose data is p, one line.
func (w *EventWriter) Data(p []byte) { w.End(append(w.Begin(), p...)) }

// Comment writes a comment line, which clients ignore.
func (w *EventWriter) Comment(s string) {
	if w.buf == nil {
		w.buf = (*bufs.Get().(*[]byte))[:0]
	}
	w.buf = append(w.buf, ':', ' ')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\n', '\n')
}

// Len returns the number of bytes written since the last flush.
func (w *EventWriter) Len() int { return len(w.buf) }

// Stream answers a protocol's request with a stream: start reads the
// request and applies it (authenticates, decodes, submits or looks the
// run up, attaches a cursor), and returns the cursor and the encoder
// that streams it, which Stream hands to [Server.ServeEvents]; an error
// from start is answered with [Server.WriteError] instead.
//
// start runs on another goroutine (one kept for the purpose), which
// Stream waits for: decoding a request and starting a run take a deep
// stack, which the handler's goroutine would otherwise keep for as long
// as the stream is open (a goroutine's stack does not shrink while it is
// in use). A stream then costs its connection's buffers and little else. A panic in start is
// raised again on the handler's goroutine. start may set response
// headers: the handler's goroutine waits for it.
//
// r's body, if it has one, is to be read (by [Server.DecodeJSON]) within
// Config.BodyTimeout: Stream sets the connection's read deadline, unless
// the protocol's handler set it already (this module's do, first thing,
// so that a body they refuse unread is drained within it too), and it is
// lifted once the body is read to its end.
func (s *Server) Stream(w http.ResponseWriter, r *http.Request, start func() (Cursor, Encoder, error)) {
	bodytimeout.Limit(w, r, s.cfg.BodyTimeout)
	var (
		cur      Cursor
		enc      Encoder
		err      error
		panicked any
	)
	done := make(chan struct{})
	s.workers.Go(func() {
		defer close(done)
		defer func() { panicked = recover() }()
		cur, enc, err = start()
	})
	<-done
	if panicked != nil {
		panic(panicked)
	}
	switch {
	case err != nil:
		s.WriteError(w, r, err)
	case cur != nil:
		s.ServeEvents(w, r, cur, enc)
	}
}

// flushAt is the size past which a stream is flushed even though more
// records are ready: a client that lags behind gets its events in pieces
// of about this size.
const flushAt = 8 << 10

// ServeEvents streams the records cur reads to w, as server-sent events
// made by enc, from enc.Open to the run's end or the pause it waits at. It
// writes the status (200) and the SSE headers; a protocol sets its own
// headers before calling it. Each record's events are flushed as soon as
// no other record is ready; a stream with nothing to say for
// Config.KeepAlive gets a comment. A client that reads nothing for
// Config.WriteTimeout is dropped, and one that goes away leaves the run
// going: the stream only ever held a cursor on its log. ServeEvents closes
// cur.
func (s *Server) ServeEvents(w http.ResponseWriter, r *http.Request, cur Cursor, enc Encoder) {
	defer cur.Close()
	// A stream that begins once the server has stopped streaming (its run
	// started before Close, which ran out of time or is over meanwhile)
	// still says what its run's log holds, the run's end as a rule (it was
	// cancelled, and saved), without waiting for more: the client learns
	// what became of its request rather than a refusal of it.
	stopped := !s.streamStarts()
	if !stopped {
		defer s.streamEnds()
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	wait := s.cfg.KeepAlive
	if stopped {
		wait = 0
	} else {
		defer context.AfterFunc(s.stopStreams, cancel)()
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	ew := &EventWriter{}
	defer ew.release()
	flush := func() bool {
		if len(ew.buf) == 0 {
			return true
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		_, err := w.Write(ew.buf)
		ew.release()
		return err == nil && rc.Flush() == nil
	}
	enc.Open(ew)
	if !flush() {
		return
	}
	// One record for the whole stream: handed to enc by pointer, a record
	// declared in the loop would be allocated for each.
	var rec Record
	for {
		var ok bool
		var err error
		rec, ok, err = cur.Next(ctx, wait)
		if err == nil && !ok && stopped {
			err = ErrClosed
		}
		if err != nil {
			if r.Context().Err() != nil {
				return // the client has gone
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("agentserver: the run's log ended before its last record")
			}
			enc.Abort(ew, err)
			flush()
			return
		}
		if !ok {
			ew.Comment("keep-alive")
			if !flush() {
				return
			}
			continue
		}
		last := rec.Kind == KindDone || rec.Kind == KindPause && cur.Buffered() == 0
		enc.Record(ew, &rec, last)
		if last || cur.Buffered() == 0 || ew.Len() >= flushAt {
			if !flush() || last {
				return
			}
		}
	}
}

// streamStarts counts a stream in, unless the server has stopped
// streaming (Close is over, or ran out of time). A stream of a run that
// started before Close is served while Close waits.
func (s *Server) streamStarts() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopStreams.Err() != nil {
		return false
	}
	s.streams++
	return true
}

func (s *Server) streamEnds() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams--
	if s.streams == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}
