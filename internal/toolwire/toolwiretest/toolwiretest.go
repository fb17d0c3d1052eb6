// Package toolwiretest is a loopback HTTP server that records what an
// official SDK client sends and answers from a script: the adapters' tests
// compare the requests the real SDKs build with what the providers
// document.
package toolwiretest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A Recorder is a loopback server that answers each POST with the next
// scripted reply, as JSON, and keeps every request body.
type Recorder struct {
	URL string

	mu      sync.Mutex
	replies []string
	bodies  [][]byte
	paths   []string
}

// Start starts a Recorder, closed when the test ends. A request past the
// script fails the test and gets a 500.
func Start(t testing.TB, replies ...string) *Recorder {
	t.Helper()
	r := &Recorder{replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil || req.Method != http.MethodPost || len(r.replies) == 0 {
			t.Errorf("unexpected request %s %s (read error %v, %d replies left)", req.Method, req.URL.Path, err, len(r.replies))
			http.Error(w, `{"error": {"message": "unexpected request"}}`, http.StatusInternalServerError)
			return
		}
		r.bodies = append(r.bodies, body)
		r.paths = append(r.paths, req.URL.Path)
		reply := r.replies[0]
		r.replies = r.replies[1:]
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Request returns the i-th request's path and its body, decoded.
func (r *Recorder) Request(t testing.TB, i int) (path string, body map[string]any) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= len(r.bodies) {
		t.Fatalf("request %d was not sent (%d were)", i, len(r.bodies))
	}
	if err := json.Unmarshal(r.bodies[i], &body); err != nil {
		t.Fatalf("request %d: body is not a JSON object: %v\n%s", i, err, r.bodies[i])
	}
	return r.paths[i], body
}

// JSON decodes a JSON text written in a test, failing the test if it is
// not valid.
func JSON(t testing.TB, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("invalid JSON in test: %v\n%s", err, text)
	}
	return v
}

// Encode is v's JSON, decoded: what an SDK value looks like on the wire,
// to compare with a documented shape.
func Encode(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return JSON(t, string(b))
}
