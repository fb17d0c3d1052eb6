package bodytimeout_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout/bodytimeouttest"
)

const timeout = 20 * time.Millisecond

// A body that stalls fails its read with os.ErrDeadlineExceeded once the
// deadline has passed; the server answers, and closes the connection.
func TestStall(t *testing.T) {
	readErr := make(chan error, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodytimeout.Limit(w, r, timeout)
		_, err := io.ReadAll(r.Body)
		readErr <- err
		http.Error(w, "too slow", http.StatusRequestTimeout)
	}))
	defer ts.Close()
	resp, _ := bodytimeouttest.Stall(t, ts.Listener.Addr().String(), "POST", "/", nil, "{")
	if err := <-readErr; !errors.Is(err, os.ErrDeadlineExceeded) || resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("read error %v, status %d; want os.ErrDeadlineExceeded, 408", err, resp.StatusCode)
	}
}

// A response that lasts longer than the deadline is not cut, after a body
// or without one: a GET's connection is read in the background from the
// start, and a deadline would cancel its context.
func TestStreamOutlivesDeadline(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodytimeout.Limit(w, r, timeout)
		if r.Method == http.MethodPost { // a GET's handler reads no body
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "%s", body)
		}
		fmt.Fprint(w, ";")
		w.(http.Flusher).Flush()
		for i := range 3 {
			select {
			case <-r.Context().Done():
				fmt.Fprint(w, "cut")
				return
			case <-time.After(2 * timeout): // the stream outlives the deadline
			}
			fmt.Fprint(w, i)
			w.(http.Flusher).Flush()
		}
	}))
	defer ts.Close()
	for _, tc := range []struct{ method, body, want string }{
		{"GET", "", ";012"},
		{"POST", "hello", "hello;012"},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL, strings.NewReader(tc.body))
		if tc.body == "" {
			req.Body = nil
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want || err != nil {
			t.Errorf("%s: %q, %v; want %q", tc.method, b, err, tc.want)
		}
	}
}

// hidden hides the ResponseWriter it wraps from http.ResponseController:
// it has no Unwrap.
type hidden struct{ http.ResponseWriter }

// A ResponseWriter that cannot set deadlines leaves the body as it is.
func TestNotSupported(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := r.Body
		bodytimeout.Limit(hidden{w}, r, timeout)
		if r.Body != before {
			t.Error("Limit wrapped the body of a ResponseWriter that cannot set deadlines")
		}
		io.Copy(w, r.Body)
	}))
	defer ts.Close()
	resp, err := ts.Client().Post(ts.URL, "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "hello" {
		t.Errorf("the body read %q", b)
	}
}
