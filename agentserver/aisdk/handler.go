package aisdk

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
)

// Handler returns the handler of s's chat route: POST starts a run or
// continues the one that waits, GET {id}/stream (under whatever path the
// handler is mounted at) resumes the thread's run in progress, DELETE
// {id}/stream cancels it, GET {id}/messages returns the chat's messages
// (see [Messages]). Mount it at the route and under it:
//
//	http.Handle("/api/chat", h)
//	http.Handle("/api/chat/", h)
//
// Pages of the origins agentserver.Config.AllowedOrigins lists may call
// it from another origin (see agentserver.Server.CORS).
func Handler(s *agentserver.Server) http.Handler {
	return s.CORS(&handler{s: s})
}

type handler struct{ s *agentserver.Server }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bodytimeout.Limit(w, r, h.s.Config().BodyTimeout) // a body refused unread is drained within it too
	if rest, ok := strings.CutSuffix(r.URL.EscapedPath(), "/stream"); ok && r.Method == http.MethodGet {
		h.s.Stream(w, r, func() (agentserver.Cursor, agentserver.Encoder, error) {
			id, err := chatID(rest)
			if err != nil {
				return nil, nil, err
			}
			return h.resume(w, r, id)
		})
		return
	}
	if rest, ok := strings.CutSuffix(r.URL.EscapedPath(), "/stream"); ok && r.Method == http.MethodDelete {
		h.cancel(w, r, rest)
		return
	}
	if rest, ok := strings.CutSuffix(r.URL.EscapedPath(), "/messages"); ok && r.Method == http.MethodGet {
		h.messages(w, r, rest)
		return
	}
	if r.Method != http.MethodPost {
		h.s.WriteError(w, r, agentserver.MethodNotAllowed(w, "POST, GET …/{id}/messages, or GET and DELETE …/{id}/stream"))
		return
	}
	h.s.Stream(w, r, func() (agentserver.Cursor, agentserver.Encoder, error) {
		user, err := h.s.User(r)
		if err != nil {
			return nil, nil, err
		}
		req, err := read(h.s, r)
		if err != nil {
			return nil, nil, err
		}
		att, err := h.s.Submit(r.Context(), user, req)
		if err != nil {
			return nil, nil, err
		}
		return h.stream(w, att.Run, att.Cursor)
	})
}

// chatID returns the chat id that ends path (the part before /stream).
func chatID(path string) (string, error) {
	id, err := url.PathUnescape(path[strings.LastIndexByte(path, '/')+1:])
	if err != nil {
		return "", agentserver.BadRequest(0, "bad_thread", "the chat id in the path is not escaped right")
	}
	return id, agentserver.CheckThreadID(id)
}

// cancel stops the thread's run in progress, and answers once it is over
// with the run (agentserver.RunInfo): what a stop button calls.
func (h *handler) cancel(w http.ResponseWriter, r *http.Request, path string) {
	info, err := func() (agentserver.RunInfo, error) {
		user, err := h.s.User(r)
		if err != nil {
			return agentserver.RunInfo{}, err
		}
		id, err := chatID(path)
		if err != nil {
			return agentserver.RunInfo{}, err
		}
		return h.s.CancelThread(r.Context(), user, id)
	}()
	if err != nil {
		h.s.WriteError(w, r, err)
		return
	}
	h.s.WriteJSON(w, r, http.StatusOK, info)
}

// resume attaches to the thread's run in progress, from its start, or
// answers 204 when none is.
func (h *handler) resume(w http.ResponseWriter, r *http.Request, thread string) (agentserver.Cursor, agentserver.Encoder, error) {
	user, err := h.s.User(r)
	if err != nil {
		return nil, nil, err
	}
	info, err := h.s.Current(r.Context(), user, thread)
	if errors.Is(err, agentserver.ErrNotFound) {
		w.WriteHeader(http.StatusNoContent)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	cur, err := h.s.Attach(r.Context(), user, info.ID, 0)
	if err != nil {
		return nil, nil, err
	}
	return h.stream(w, info, cur)
}

// stream returns the encoder of run's stream, with the protocol's header.
func (h *handler) stream(w http.ResponseWriter, run agentserver.RunInfo, cur agentserver.Cursor) (agentserver.Cursor, agentserver.Encoder, error) {
	w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	return cur, &encoder{run: run, s: h.s}, nil
}
