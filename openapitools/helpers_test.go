package openapitools_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/openapitools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// genai's dependencies start opencensus's stats worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// A seen request, as the server received it.
type seen struct {
	Method, URI string
	Header      http.Header
	Body        string
}

// recorder is an HTTP server that records each request and answers with
// a fixed reply.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	requests []seen
	reply    func(w http.ResponseWriter, r *http.Request)
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.requests = append(rec.requests, seen{r.Method, r.RequestURI, r.Header.Clone(), string(b)})
		reply := rec.reply
		rec.mu.Unlock()
		if reply != nil {
			reply(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.requests...)
}

func (r *recorder) last(t *testing.T) seen {
	t.Helper()
	all := r.all()
	if len(all) == 0 {
		t.Fatal("the server saw no request")
	}
	return all[len(all)-1]
}

func (r *recorder) setReply(f func(w http.ResponseWriter, r *http.Request)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reply = f
}

// parseFile reads a description of testdata.
func parseFile(t *testing.T, name string, opts *openapitools.Options) *openapitools.API {
	t.Helper()
	api, err := openapitools.ParseFile(context.Background(), "testdata/"+name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// operation returns the operation of a tool, which must exist.
func operation(t *testing.T, api *openapitools.API, name string) *openapitools.Operation {
	t.Helper()
	op, ok := api.Lookup(name)
	if !ok {
		t.Fatalf("no operation %s", name)
	}
	if op.Tool == nil {
		t.Fatalf("operation %s has no tool: %v", name, op.Err)
	}
	return op
}

// argNameRule is Gemini's documented rule for parameter names
// (genai's FunctionDeclaration.Parameters).
var argNameRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
