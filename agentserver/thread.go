package agentserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// AppendThread adds contents to the end of user's thread, creating it: for
// a route that holds a conversation of its own on a thread, outside the
// server's runs (package live's voice sessions save their transcript with
// it). It is refused, and appends nothing, as a new run on the thread
// would be: a bad thread id (400), a run in progress on the thread
// (ErrBusy, 409: on this server, or, on a session.Journaler, on any
// server that shares the store, running or waiting for decisions), the
// user over Config.MaxThreadsPerUser or Config.MaxBytesPerUser (ErrQuota,
// 429). With no contents it only checks. The contents are not checked:
// the caller builds them.
func (s *Server) AppendThread(ctx context.Context, user, thread string, contents []*genai.Content) error {
	key, err := threadKey(user, thread)
	if err != nil {
		return err
	}
	if cur, err := s.runner.Latest(ctx, key); err == nil && !cur.State.Over() {
		return newError(http.StatusConflict, "busy", ErrBusy, "the thread has a run in progress")
	}
	if js, ok := s.cfg.Store.(session.Journaler); ok {
		// A run of another server, or one not picked up yet, is in the
		// store's journal of the thread.
		switch _, err := js.LoadRun(ctx, key); {
		case err == nil:
			return newError(http.StatusConflict, "busy", ErrBusy, "the thread has a run in progress")
		case !errors.Is(err, session.ErrNoRun):
			return newError(http.StatusServiceUnavailable, "store", err, "the server cannot read the thread's runs; try again later")
		}
	}
	if err := s.checkQuotas(ctx, user, key); err != nil {
		return err
	}
	if len(contents) == 0 {
		return nil
	}
	return s.cfg.Store.Append(ctx, key, contents)
}

// OriginAllowed reports whether a page of r's origin may open a websocket
// on the server (a route that upgrades checks it before it does, as
// package live's does): a request with no Origin header (not a browser's),
// one of the server's own origin (the Origin's host is the request's
// Host), and one of an origin Config.AllowedOrigins lists are. "*" allows
// every origin only for a request that carries no cookie: CORS answers
// "*" without credentials, and a websocket has no such mode (the browser
// sends the server's cookies whatever page opens it), so a server that
// authenticates by cookie lists the origins it trusts.
func (s *Server) OriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	if s.origins.exact[strings.ToLower(u.Scheme+"://"+u.Host)] {
		return true
	}
	return s.origins.any && r.Header.Get("Cookie") == ""
}
