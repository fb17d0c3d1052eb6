package httpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/examples/internal/httpserver"
)

// The server bounds reading a request and idle connections, and leaves
// responses (event streams) unbounded.
func TestTimeouts(t *testing.T) {
	hs := httpserver.New(http.NotFoundHandler())
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.IdleTimeout <= 0 || hs.WriteTimeout != 0 {
		t.Errorf("ReadHeaderTimeout %v, ReadTimeout %v, IdleTimeout %v, WriteTimeout %v: want the first three set, no WriteTimeout",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout, hs.WriteTimeout)
	}
}

// A stream that lasts longer than the server's ReadTimeout, after a body,
// is not cut: net/http lifts the read deadline once the body is read.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	hs := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body [5]byte
		r.Body.Read(body[:])
		for i := range 3 {
			select {
			case <-r.Context().Done():
				fmt.Fprint(w, "cut")
				return
			case <-time.After(40 * time.Millisecond):
			}
			fmt.Fprint(w, i)
			w.(http.Flusher).Flush()
		}
	}))
	hs.ReadTimeout = 50 * time.Millisecond // what New sets, shortened: the stream lasts 120 ms
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) // a hang guard
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "012" {
		t.Errorf("the stream sent %q, want 012", b)
	}
}
