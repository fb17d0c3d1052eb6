package agentserver

import (
	"io"
	"net/http/httptest"
	"sync"
	"testing"
)

// gatedBody gives n bytes of spaces, then, asked for more, says so on
// asked and waits for more to be closed before its end.
type gatedBody struct {
	n           int
	asked, more chan struct{}
	once        sync.Once
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		b.once.Do(func() {
			close(b.asked)
			<-b.more
		})
		return 0, io.EOF
	}
	k := min(len(p), b.n, 64<<10)
	for i := range k {
		p[i] = ' '
	}
	b.n -= k
	return k, nil
}

// A body sent without a Content-Length counts, as it is read, for the
// buffer it has grown to: at most twice what was read, and never past
// MaxBodyBytes and a byte.
func TestBodyGrowthCounted(t *testing.T) {
	s := &Server{cfg: Config{MaxBodyBytes: 4 << 20}, bodies: bodies{max: 64 << 20, perUser: 16 << 20}}
	for _, n := range []int{1, 100 << 10, 1 << 20, 3<<20 + 5} {
		asked, more := make(chan struct{}), make(chan struct{})
		body := &gatedBody{n: n, asked: asked, more: more}
		r := httptest.NewRequest("POST", "/", body)
		r.ContentLength = -1
		type result struct {
			b       []byte
			release func()
			err     error
		}
		done := make(chan result, 1)
		go func() {
			b, release, err := s.readBody(r, "alice")
			done <- result{b, release, err}
		}()
		<-asked
		total, ofAlice := s.BodyBytesInFlight("alice")
		if total != ofAlice || ofAlice < int64(n) || ofAlice > max(2*int64(n), firstBodyBuffer) {
			t.Errorf("%d bytes read: %d in flight (%d of alice), want between %d and twice that", n, total, ofAlice, n)
		}
		close(more)
		res := <-done
		if res.err != nil || len(res.b) != n {
			t.Fatalf("%d bytes: read %d, %v", n, len(res.b), res.err)
		}
		res.release()
		if total, _ := s.BodyBytesInFlight("alice"); total != 0 {
			t.Errorf("%d bytes: %d in flight once released", n, total)
		}
	}
}
