package agentserver

import (
	"context"
	"fmt"
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
// Config.AllowedOrigins says: every protocol handler of this module is
// wrapped in it, and an application wraps its own routes on the server
// (a route of its own that a page of another origin calls) the same way.
// Without AllowedOrigins it returns next unchanged.
//
// A request whose Origin is allowed gets Access-Control-Allow-Origin: the
// origin itself, with Access-Control-Allow-Credentials: true, when it is
// listed; "*", without credentials (the Fetch standard allows no other
// pairing), when only "*" allows it. A preflight (OPTIONS with
// Access-Control-Request-Method) of an allowed origin is answered 204,
// allowing the methods the routes take (GET, POST, DELETE) and the
// headers the preflight asks for (Content-Type, Authorization, an
// application's own), for 10 minutes; next does not see it. A request of
// an origin that is not allowed gets no CORS header: its preflight is
// refused (403), and a request that needs none (a form, a GET) reaches
// next, which refuses a body that is not JSON, and the browser keeps the
// answer from the page. Responses say Vary: Origin, so that caches keep
// them apart.
func (s *Server) CORS(next http.Handler) http.Handler {
	if !s.origins.any && len(s.origins.exact) == 0 {
		return next
	}
	return &corsHandler{o: s.origins, next: next}
}

type corsHandler struct {
	o    origins
	next http.Handler
}

func (c *corsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, done := r.Context().Value(corsKey{}).(bool); done {
		c.next.ServeHTTP(w, r) // wrapped twice: the outer one answered
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	exact := origin != "" && c.o.exact[strings.ToLower(origin)]
	allowed := exact || (origin != "" && c.o.any)
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
	c.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), corsKey{}, true)))
}

// corsKey marks a request's context once a CORS handler has answered it.
type corsKey struct{}
