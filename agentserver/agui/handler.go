package agui

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
)

// Handler returns the handler of s's AG-UI endpoint: POST runs the agent
// (RunAgentInput in, events out), POST …/connect reconnects to the
// thread's run in progress, POST …/cancel stops it, GET
// …/messages?threadId=… returns the thread's messages (see [Messages]).
// Mount it at the endpoint and under it:
//
//	http.Handle("/agui", h)
//	http.Handle("/agui/", h)
//
// Pages of the origins agentserver.Config.AllowedOrigins lists may call
// it from another origin (see agentserver.Server.CORS).
func Handler(s *agentserver.Server) http.Handler {
	return s.CORS(&handler{s: s, model: s.Agent().Steps().Model()})
}

type handler struct {
	s     *agentserver.Server
	model string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bodytimeout.Limit(w, r, h.s.Config().BodyTimeout) // a body refused unread is drained within it too
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/messages") {
		h.messages(w, r)
		return
	}
	if r.Method != http.MethodPost {
		h.s.WriteError(w, r, agentserver.MethodNotAllowed(w, "POST"))
		return
	}
	if strings.HasSuffix(r.URL.Path, "/cancel") {
		h.cancel(w, r)
		return
	}
	h.s.Stream(w, r, func() (agentserver.Cursor, agentserver.Encoder, error) { return h.start(r) })
}

// start reads and applies the request, and attaches to its run.
func (h *handler) start(r *http.Request) (agentserver.Cursor, agentserver.Encoder, error) {
	user, err := h.s.User(r)
	if err != nil {
		return nil, nil, err
	}
	in, req, err := read(h.s, r)
	if err != nil {
		return nil, nil, err
	}
	enc := &encoder{thread: in.ThreadID, runID: in.RunID, model: h.model, s: h.s}
	if strings.HasSuffix(r.URL.Path, "/connect") {
		return h.connect(r, user, enc)
	}
	if req.Message == nil && len(req.Decisions) == 0 {
		// Nothing to start, nothing strict to decide: if no run waits for
		// what the request implies (a cancelled interrupt that expired, a
		// tool result of the past), the answer is an empty run, so that
		// the client's state moves on.
		if _, err := h.s.Current(r.Context(), user, in.ThreadID); errors.Is(err, agentserver.ErrNotFound) && len(req.Results) > 0 {
			return &nothing{}, enc, nil
		}
	}
	att, err := h.s.Submit(r.Context(), user, req)
	if err != nil {
		return nil, nil, err
	}
	enc.run = att.Run.ID
	return att.Cursor, enc, nil
}

// cancel stops the thread a JSON body names ({"threadId": …}; the other
// fields of a RunAgentInput are ignored), and answers once its run is
// over with the run (agentserver.RunInfo): what a stop button calls.
func (h *handler) cancel(w http.ResponseWriter, r *http.Request) {
	info, err := func() (agentserver.RunInfo, error) {
		user, err := h.s.User(r)
		if err != nil {
			return agentserver.RunInfo{}, err
		}
		var in struct {
			ThreadID string `json:"threadId"`
		}
		if err := h.s.DecodeJSON(r, &in); err != nil {
			return agentserver.RunInfo{}, err
		}
		return h.s.CancelThread(r.Context(), user, in.ThreadID)
	}()
	if err != nil {
		h.s.WriteError(w, r, err)
		return
	}
	h.s.WriteJSON(w, r, http.StatusOK, info)
}

// connect attaches to the thread's run in progress from its start, to be
// streamed as one AG-UI run; to an empty run when nothing runs.
func (h *handler) connect(r *http.Request, user string, enc *encoder) (agentserver.Cursor, agentserver.Encoder, error) {
	info, err := h.s.Current(r.Context(), user, enc.thread)
	if errors.Is(err, agentserver.ErrNotFound) {
		return &nothing{}, enc, nil
	}
	if err != nil {
		return nil, nil, err
	}
	enc.run = info.ID
	cur, err := h.s.Attach(r.Context(), user, info.ID, 0)
	return cur, enc, err
}

// nothing is the log of a run that does nothing: its end.
type nothing struct{ read bool }

func (n *nothing) Next(context.Context, time.Duration) (agentserver.Record, bool, error) {
	if n.read {
		return agentserver.Record{}, false, io.EOF
	}
	n.read = true
	return agentserver.Record{Kind: agentserver.KindDone, Done: &agentserver.Done{State: agentserver.StateDone}}, true, nil
}

func (n *nothing) Buffered() int { return 0 }
func (n *nothing) Close()        {}
