// Package bodytimeout reads a request's body under a deadline of the
// handler's own, for agentserver (every protocol's requests) and
// mcptools' HTTP handler: a client that sends part of a body and stalls
// is cut off, while the response that follows (a stream that lasts
// longer) is not.
package bodytimeout

import (
	"io"
	"net/http"
	"time"
)

// Limit sets a read deadline timeout from now on the connection r came
// on, through http.ResponseController, and wraps r.Body so that the
// deadline is lifted once the body has been read to its end: a stream
// that follows is not cut. It bounds the server's own reads too: net/http
// drains a body a handler left unread (up to 256 KiB) before it answers. A read past the deadline fails with an error
// errors.Is matches to os.ErrDeadlineExceeded; the deadline stays, so
// that the server's own reads of what is left of the body fail too, and
// it closes the connection after its response. A body that is never read
// to its end (refused before, or over a limit) keeps the deadline, which
// bounds how long the server drains it.
//
// A request without a body gets no deadline: its connection is read in
// the background already (to notice the client going away), and a
// deadline would cancel r's context mid-response. Neither does one whose
// ResponseWriter cannot set deadlines (http.ErrNotSupported: a wrapper
// without Unwrap): the http.Server's ReadTimeout is its only bound. A
// timeout that is not positive sets none, and a body Limit wrapped
// already keeps its deadline: a handler may call Limit, then hand the
// request to one that calls it again.
func Limit(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	if _, limited := r.Body.(*body); limited || timeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return
	}
	r.Body = &body{ReadCloser: r.Body, rc: rc}
}

// body lifts the read deadline when it reaches its end.
type body struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
