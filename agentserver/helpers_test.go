package agentserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// model is a Gemini 3 model: the fake gives calls ids and thought
// signatures, and refuses a history whose signatures did not come back.
const model = "gemini-3-flash-preview"

// harness is a Server on a fake model, served over HTTP by a minimal
// protocol of the tests' own (see handler), so that the core is tested
// without either real protocol.
type harness struct {
	t     *testing.T
	model *fake.Server
	store *session.Memory
	srv   *agentserver.Server
	http  *httptest.Server
	// gate holds calls of get_weather for the city "Gate" until it is
	// closed (or their context ends); started gets the city of each call
	// as it starts.
	gate    chan struct{}
	started chan string
	// toolCtxErr gets the context error of a gated call that was stopped.
	toolCtxErr chan error
}

type harnessOpts struct {
	config   func(*agentserver.Config)
	agent    func(*agent.Config)
	listener func(*httptest.Server) // wraps the HTTP server before it starts
}

type cityIn struct {
	City string `json:"city"`
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, model: fake.NewServer(), store: session.NewMemory(),
		gate: make(chan struct{}), started: make(chan string, 100), toolCtxErr: make(chan error, 10)}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (string, error) {
		h.started <- in.City
		if in.City == "Gate" {
			select {
			case <-h.gate:
			case <-ctx.Done():
				h.toolCtxErr <- ctx.Err()
				return "", ctx.Err()
			}
		}
		return "sunny in " + in.City, nil
	})
	cfg := agent.Config{Models: h.model.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		Retry: agent.RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, Jitter: -1}}
	if o.agent != nil {
		o.agent(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg := agentserver.Config{Agent: a, Store: h.store, Logger: slog.New(slog.DiscardHandler), Authenticate: func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no X-User header")
	}}
	if o.config != nil {
		o.config(&scfg)
	}
	h.srv, err = agentserver.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	h.http = httptest.NewUnstartedServer(handler(h.srv))
	if o.listener != nil {
		o.listener(h.http)
	}
	h.http.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		h.http.Close()
		h.model.Close()
		for _, rj := range h.model.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
	})
	return h
}

// testRequest is the tests' protocol's request.
type testRequest struct {
	Thread    string                 `json:"thread"`
	Text      string                 `json:"text,omitempty"`
	Decisions []agentserver.Decision `json:"decisions,omitempty"`
	Results   []agentserver.Decision `json:"results,omitempty"`
	Tools     []agentserver.ToolDecl `json:"tools,omitempty"`
}

// handler serves the tests' protocol: POST /run submits a request and
// streams its records as JSON; GET /replay?thread= streams the thread's
// current run from its start (204 when none), GET /replay?run= the run,
// over or not; GET /current?thread=
// answers 200 when the thread has a current run, 204 when none.
func handler(s *agentserver.Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		user, err := s.User(r)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		var req testRequest
		if err := s.DecodeJSON(r, &req); err != nil {
			s.WriteError(w, r, err)
			return
		}
		ar := agentserver.Request{Thread: req.Thread, Decisions: req.Decisions, Results: req.Results, Tools: req.Tools}
		if req.Text != "" {
			ar.Message = genai.NewContentFromText(req.Text, genai.RoleUser)
		}
		att, err := s.Submit(r.Context(), user, ar)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		s.ServeEvents(w, r, att.Cursor, &recordEncoder{run: att.Run.ID})
	})
	mux.HandleFunc("GET /current", func(w http.ResponseWriter, r *http.Request) {
		user, err := s.User(r)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		switch _, err := s.Current(r.Context(), user, r.URL.Query().Get("thread")); {
		case errors.Is(err, agentserver.ErrNotFound):
			w.WriteHeader(http.StatusNoContent)
		case err != nil:
			s.WriteError(w, r, err)
		}
	})
	mux.HandleFunc("GET /replay", func(w http.ResponseWriter, r *http.Request) {
		user, err := s.User(r)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		var info agentserver.RunInfo
		if id := r.URL.Query().Get("run"); id != "" {
			// The run, over or not.
			info, err = s.Run(r.Context(), user, id)
		} else {
			info, err = s.Current(r.Context(), user, r.URL.Query().Get("thread"))
		}
		if errors.Is(err, agentserver.ErrNotFound) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		cur, err := s.Attach(r.Context(), user, info.ID, 0)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		s.ServeEvents(w, r, cur, &recordEncoder{run: info.ID})
	})
	return mux
}

// recordEncoder writes each record as its JSON, and {"kind":"open"} and
// {"kind":"abort"} around them; a resolved pause is marked "resolved".
type recordEncoder struct{ run string }

func (e *recordEncoder) Open(w *agentserver.EventWriter) {
	w.Data([]byte(`{"kind":"open","run":"` + e.run + `"}`))
}

func (*recordEncoder) Record(w *agentserver.EventWriter, rec *agentserver.Record, last bool) {
	b, _ := json.Marshal(rec)
	if rec.Kind == agentserver.KindPause && !last {
		b = append(b[:len(b)-1], `,"resolved":true}`...)
	}
	w.Data(b)
}

func (*recordEncoder) Abort(w *agentserver.EventWriter, err error) {
	w.Data([]byte(`{"kind":"abort"}`))
}

// event is a record as the tests' client reads it.
type event struct {
	agentserver.Record
	Resolved bool   `json:"resolved"`
	Run      string `json:"run"` // of the open event
}

// response is what a request got.
type response struct {
	status int
	body   string  // the body of a response that is not a stream
	events []event // the stream's records, open and abort included
	raw    string  // the stream as sent
}

// run returns the id of the run the response streamed.
func (r *response) run() string {
	if len(r.events) == 0 {
		return ""
	}
	return r.events[0].Run
}

func (r *response) kinds() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, string(e.Kind))
	}
	return out
}

// of returns the events of kind k.
func (r *response) of(k agentserver.Kind) []event {
	var out []event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// last returns the stream's last event.
func (r *response) last() event {
	if len(r.events) == 0 {
		return event{}
	}
	return r.events[len(r.events)-1]
}

// text returns the text the stream carried.
func (r *response) text() string {
	var b strings.Builder
	for _, e := range r.of(agentserver.KindText) {
		b.WriteString(e.Text)
	}
	return b.String()
}

// errorCode returns the code of a JSON error response.
func (r *response) errorCode() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal([]byte(r.body), &e)
	return e.Error.Code
}

// post sends req as user and reads the whole response.
func (h *harness) post(ctx context.Context, user string, req testRequest) *response {
	h.t.Helper()
	body, _ := json.Marshal(req)
	return h.do(ctx, user, http.MethodPost, "/run", "application/json", bytes.NewReader(body))
}

func (h *harness) do(ctx context.Context, user, method, path, contentType string, body io.Reader) *response {
	h.t.Helper()
	r, err := http.NewRequestWithContext(ctx, method, h.http.URL+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if user != "" {
		r.Header.Set("X-User", user)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	resp, err := h.http.Client().Do(r)
	if err != nil {
		if ctx.Err() != nil {
			return &response{}
		}
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := &response{status: resp.StatusCode}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		out.body = string(b)
		return out
	}
	raw, events, err := readEvents(resp.Body)
	out.raw, out.events = raw, events
	if err != nil && ctx.Err() == nil {
		h.t.Fatalf("reading the stream: %v", err)
	}
	return out
}

// readEvents reads server-sent events: each "data: " line a JSON event.
func readEvents(r io.Reader) (string, []event, error) {
	var raw strings.Builder
	var events []event
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		raw.WriteString(line + "\n")
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return raw.String(), events, fmt.Errorf("event %q: %w", data, err)
		}
		events = append(events, e)
	}
	return raw.String(), events, sc.Err()
}

// await returns the thread's run once cond holds of it.
func (h *harness) await(user, thread string, cond func(agentserver.RunInfo) bool) agentserver.RunInfo {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard only
	for {
		info, err := h.srv.Current(context.Background(), user, thread)
		if err == nil && cond(info) {
			return info
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("thread %q: the run never reached the expected state (last: %+v, %v)", thread, info, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// awaitRun returns run id once cond holds of it.
func (h *harness) awaitRun(user, id string, cond func(agentserver.RunInfo) bool) agentserver.RunInfo {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard only
	for {
		info, err := h.srv.Run(context.Background(), user, id)
		if err == nil && cond(info) {
			return info
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("run %q never reached the expected state (last: %+v, %v)", id, info, err)
		}
		time.Sleep(time.Millisecond)
	}
}

func over(info agentserver.RunInfo) bool    { return info.State.Over() }
func waiting(info agentserver.RunInfo) bool { return info.State == agentserver.StateWaiting }

// stored returns the thread's stored contents, as JSON lines, for
// comparisons.
func (h *harness) stored(user, thread string) []*genai.Content {
	h.t.Helper()
	c, err := h.srv.History(context.Background(), user, thread)
	if err != nil && !errors.Is(err, agentserver.ErrNotFound) {
		h.t.Fatal(err)
	}
	return c
}

// appends counts the store's appends, to check that a run is saved once.
type countingStore struct {
	session.Store
	mu      sync.Mutex
	appends map[string]int
}

func (s *countingStore) Append(ctx context.Context, id string, contents []*genai.Content) error {
	s.mu.Lock()
	if s.appends == nil {
		s.appends = map[string]int{}
	}
	s.appends[id]++
	s.mu.Unlock()
	return s.Store.Append(ctx, id, contents)
}

func call(city string) *genai.FunctionCall {
	return fake.Call("get_weather", map[string]any{"city": city})
}

// requestText returns the texts of a model request's contents, one per
// content, parts joined, function calls and responses named.
func requestText(req *fake.Request) []string {
	var out []string
	for _, c := range req.Contents {
		var parts []string
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				b, _ := json.Marshal(p.FunctionCall.Args)
				parts = append(parts, "call "+p.FunctionCall.Name+string(b))
			case p.FunctionResponse != nil:
				b, _ := json.Marshal(p.FunctionResponse.Response)
				parts = append(parts, "response "+p.FunctionResponse.Name+string(b))
			case p.Text != "":
				parts = append(parts, p.Text)
			}
		}
		out = append(out, c.Role+": "+strings.Join(parts, " | "))
	}
	return out
}

func isErr(err, target error) bool { return errors.Is(err, target) }
