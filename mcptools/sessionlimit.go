package mcptools

import (
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the HandlerOptions limits whose zero value means "the
// default".
const (
	DefaultMaxSessions        = 10000
	DefaultMaxSessionsPerUser = 100
)

// sessionLimit refuses a request that would open a session of the
// handler over its limits: the handler's sessions, and, for a request
// with a verified token, its user's.
//
// A request that may open a session (a POST without a session ID: an
// initialize) takes its place when it is admitted, before the SDK serves
// it, and holds it while it is served; then the session it opened, if
// any, holds the place until it ends, and otherwise the place is given
// back. Each session is counted once, as a request in flight or as a
// session, so that requests arriving together cannot open more than the
// limits, nor be refused below them.
type sessionLimit struct {
	srv          *mcp.Server
	next         http.Handler
	max, perUser int // 0: no bound

	mu       sync.Mutex
	opening  map[string]int    // requests in flight that may open a session, by user ("": none verified)
	sessions map[string]string // the user of each session opened, by session ID
}

func (l *sessionLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		l.next.ServeHTTP(w, r) // no session opens
		return
	}
	user := ""
	if info := auth.TokenInfoFromContext(r.Context()); info != nil {
		user = info.UserID
	}
	if status := l.admit(user); status != 0 {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "60")
			http.Error(w, "Service Unavailable: the server keeps as many sessions as it can; try again later", status)
		} else {
			http.Error(w, "Too Many Requests: you have as many sessions as the server keeps of one user; end one (DELETE) first", status)
		}
		return
	}
	defer func() { l.opened(user, w.Header().Get("Mcp-Session-Id")) }()
	l.next.ServeHTTP(w, r)
}

// admit takes a place for a request of user that may open a session, or
// returns the status that refuses it.
func (l *sessionLimit) admit(user string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	total, mine := 0, l.opening[user]
	for _, n := range l.opening {
		total += n
	}
	live := map[string]bool{}
	for ss := range l.srv.Sessions() {
		live[ss.ID()] = true
	}
	for id, u := range l.sessions {
		switch {
		case !live[id]:
			delete(l.sessions, id) // ended, or timed out
		case u == user:
			total, mine = total+1, mine+1
		default:
			total++
		}
	}
	switch {
	case l.max > 0 && total >= l.max:
		return http.StatusServiceUnavailable
	case user != "" && l.perUser > 0 && mine >= l.perUser:
		return http.StatusTooManyRequests
	}
	l.opening[user]++
	return 0
}

// opened gives back the place of a request of user once it was served,
// to the session it opened, id, if any.
func (l *sessionLimit) opened(user, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opening[user]--; l.opening[user] == 0 {
		delete(l.opening, user)
	}
	if id != "" {
		l.sessions[id] = user
	}
}
