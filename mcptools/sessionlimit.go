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
type sessionLimit struct {
	srv          *mcp.Server
	next         http.Handler
	max, perUser int // 0: no bound

	mu      sync.Mutex
	opening int               // requests that may open a session, in flight
	users   map[string]string // the user of each session opened with a token
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
	l.mu.Lock()
	total, mine := l.opening, 0
	live := map[string]bool{}
	for ss := range l.srv.Sessions() {
		total++
		live[ss.ID()] = true
		if user != "" && l.users[ss.ID()] == user {
			mine++
		}
	}
	for id := range l.users {
		if !live[id] {
			delete(l.users, id) // ended, or timed out
		}
	}
	switch {
	case l.max > 0 && total >= l.max:
		l.mu.Unlock()
		w.Header().Set("Retry-After", "60")
		http.Error(w, "Service Unavailable: the server keeps as many sessions as it can; try again later", http.StatusServiceUnavailable)
		return
	case user != "" && l.perUser > 0 && mine >= l.perUser:
		l.mu.Unlock()
		http.Error(w, "Too Many Requests: you have as many sessions as the server keeps of one user; end one (DELETE) first", http.StatusTooManyRequests)
		return
	}
	l.opening++
	l.mu.Unlock()

	l.next.ServeHTTP(w, r)

	l.mu.Lock()
	l.opening--
	if id := w.Header().Get("Mcp-Session-Id"); id != "" && user != "" {
		l.users[id] = user
	}
	l.mu.Unlock()
}
