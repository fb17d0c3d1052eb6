package agentserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// corsMethods are the methods the protocols' routes take, as a preflight
// is answered.
const corsMethods = "GET, POST, DELETE"

// corsExposed are the response headers a page of an allowed origin may
// read besides the safelisted ones.
const corsExposed = "Retry-After, X-Vercel-Ai-Ui-Message-Stream"

// corsMaxAge is how long, in seconds, a browser may keep a preflight's
// answer (Chromium keeps it 2 hours at most, Firefox 1 day).
const corsMaxAge = "600"

// origins is Config.AllowedOrigins, read: the exact origins, and whether
// any origin is allowed ("*").
type origins struct {
	exact map[string]bool
	any   bool
}

// parseOrigins checks Config.AllowedOrigins: each is "*" or an origin,
// scheme://host[:port], with no path, query or user. withAuth says
// whether Config.Authenticate is set: "*" needs it.
func parseOrigins(list []string, withAuth bool) (origins, error) {
	var o origins
	for _, s := range list {
		if s == "*" {
			if !withAuth {
				return origins{}, fmt.Errorf(`agentserver: Config.AllowedOrigins "*" needs Config.Authenticate: it would let every site's pages drive the anonymous user's runs`)
			}
			o.any = true
			continue
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return origins{}, fmt.Errorf("agentserver: Config.AllowedOrigins: %q is not an origin (scheme://host[:port], or *)", s)
		}
		if o.exact == nil {
			o.exact = make(map[string]bool)
		}
		o.exact[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return o, nil
}

// CORS returns next with cross-origin requests answered as
// Config.AllowedOrigins says, and those that change something refused
// unless they say so: every protocol handler of this module is wrapped
// in it, and an application wraps its own routes on the server (a route
// of its own that a page of another origin calls) the same way.
//
// A request whose Origin is allowed gets Access-Control-Allow-Origin: the
// origin itself, with Access-Control-Allow-Credentials: true, when it is
// listed; "*", without credentials (the Fetch standard allows no other
// pairing), when only "*" allows it. A preflight (OPTIONS with
// Access-Control-Request-Method) of an allowed origin is answered 204,
// allowing the methods the routes take (GET, POST, DELETE) and the
// headers the preflight asks for (Content-Type, Authorization, an
// application's own), for 10 minutes; next does not see it. A request of
// an origin that is not allowed gets no CORS header, and its preflight is
// refused (403). Responses say Vary: Origin, so that caches keep them
// apart. Without AllowedOrigins, no CORS header is written and next
// answers preflights.
//
// A request that may change something (any method but GET, HEAD and
// OPTIONS) that a browser says comes from a page of another origin
// (Sec-Fetch-Site, or an Origin that is not the request's host:
// http.CrossOriginProtection) is refused (403, code cross_origin), unless
// AllowedOrigins lists its origin, or allows every origin ("*") and the
// request carries its own credentials (an Authorization header, which a
// page cannot send without the preflight "*" answers). So a page of
// another site cannot make the user's browser send what needs no
// preflight (a form, a POST of no body or of text, with the user's
// cookies) to a route that acts on it, whatever the route reads; requests
// of programs (no Origin, no Sec-Fetch-Site) are not affected.
func (s *Server) CORS(next http.Handler) http.Handler {
	return &corsHandler{s: s, next: next}
}

// crossOrigin returns the check of requests of pages of other origins:
// those of the origins o lists are trusted.
func crossOrigin(o origins) *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	for origin := range o.exact {
		_ = c.AddTrustedOrigin(origin) // (parseOrigins checked it)
	}
	return c
}

type corsHandler struct {
	s    *Server
	next http.Handler
}

func (c *corsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, done := r.Context().Value(corsKey{}).(bool); done {
		c.next.ServeHTTP(w, r) // wrapped twice: the outer one answered
		return
	}
	o := c.s.origins
	h := w.Header()
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	exact := origin != "" && o.exact[strings.ToLower(origin)]
	allowed := exact || (origin != "" && o.any)
	if o.any || len(o.exact) > 0 {
		h.Add("Vary", "Origin")
		if allowed {
			if exact {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
			} else {
				h.Set("Access-Control-Allow-Origin", "*")
			}
		}
		if preflight {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			if !allowed {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			h.Set("Access-Control-Allow-Methods", corsMethods)
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			h.Set("Access-Control-Expose-Headers", corsExposed)
		}
	}
	if err := c.s.cross.Check(r); err != nil && !(o.any && origin != "" && r.Header.Get("Authorization") != "") {
		c.s.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "agentserver: a request from a page of another origin refused",
			slog.String("origin", origin), slog.String("path", r.URL.Path))
		c.s.WriteError(w, r, newError(http.StatusForbidden, "cross_origin", ErrBadRequest,
			"a request from a page of another site is refused: the server takes requests that change something from its own pages and the origins it allows"))
		return
	}
	ctx := context.WithValue(r.Context(), corsKey{}, true)
	if _, ok := ctx.Value(requestKey{}).(*requestState); !ok {
		ctx = context.WithValue(ctx, requestKey{}, &requestState{}) // User names its user once
	}
	c.next.ServeHTTP(w, r.WithContext(ctx))
}

// corsKey marks a request's context once a CORS handler has answered it.
type corsKey struct{}
