package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// CancelThread stops user's thread's run in progress, as [Server.Cancel]
// does (a run that waits for decisions included: its calls are denied),
// and waits until it is over and saved, or ctx is done: once it returns,
// the thread takes its next message. It returns the run as it ended:
// StateCancelled, or the state it reached if it ended on its own first.
// The stored history answers every call of the run, a call that was
// stopped with an error. A thread with no run in progress, or another
// user's, is ErrNotFound (404). A run read by MaxReaders cursors already
// is not cancelled: ErrTooManyReaders (429).
//
// A protocol's cancel route calls it: what a frontend's stop button
// calls, since a client that only drops its connection leaves the run
// going (it is saved, and a reload resumes it).
func (s *Server) CancelThread(ctx context.Context, user, thread string) (RunInfo, error) {
	info, err := s.Current(ctx, user, thread)
	if err != nil {
		return RunInfo{}, err
	}
	// Attached before the cancel, from the records it has: the end cannot
	// be missed.
	cur, err := s.runner.Attach(ctx, info.ID, info.Len)
	if err != nil {
		return RunInfo{}, err
	}
	defer cur.Close()
	if err := s.runner.Cancel(ctx, info.ID); err != nil {
		return RunInfo{}, err
	}
	for {
		rec, ok, err := cur.Next(ctx, time.Hour)
		if errors.Is(err, io.EOF) || (ok && rec.Kind == KindDone) {
			break
		}
		if err != nil {
			return RunInfo{}, newError(http.StatusServiceUnavailable, "not_over", err, "the run was cancelled and has not ended yet")
		}
	}
	return s.runner.Lookup(ctx, info.ID)
}

// WriteJSON answers a request with status and v as JSON: the answer of a
// protocol's route that is not a stream (a cancel, a thread's messages).
func (s *Server) WriteJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
