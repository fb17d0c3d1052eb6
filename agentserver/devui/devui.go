package devui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
	"google.golang.org/genai"
)

// Options configure the development UI. The zero value serves the
// server's agent with no browser tools, recording runs when the server's
// Config.Observer is a [*Recorder].
type Options struct {
	// Recorder records the server's runs for the timelines; it must be
	// among the observers of the server's Config.Observer. Nil means the
	// server's Config.Observer itself when it is a *Recorder; without
	// one, the page has no timelines (and says how to get them).
	Recorder *Recorder

	// Title is the page's title. Empty means "toolnexus dev UI" and the
	// agent's name.
	Title string

	// Thread is the conversation the page opens when its address names
	// none. Empty means a new one.
	Thread string

	// BrowserTools are tools the page declares with every message it
	// sends: the model may call them, and the page answers each call with
	// a form, where the person types the tool's result (or its error).
	BrowserTools []agentserver.ToolDecl

	// RunToolsNeedingApproval lets the Agent page run by hand the tools
	// that need approval (the agent's Config.NeedsApproval): the person
	// who runs one approves it. False refuses them (403 needs_approval),
	// for a UI that people other than the tools' owners may open.
	RunToolsNeedingApproval bool
	// Live is the route of voice sessions (package agentserver/live's
	// Handler), mounted at api/live: the page's chat gets a microphone
	// button, and talks to the agent there (see "Voice mode"). Nil: no
	// voice mode.
	Live http.Handler
}

//go:embed static
var static embed.FS

// Handler returns the development UI of s: the page, the chat route it
// talks to (package aisdk's handler, at api/chat), and its JSON API.
// Every path is relative, so it may be mounted under a prefix:
//
//	http.Handle("/", devui.Handler(srv, nil))
//	http.Handle("/dev/", http.StripPrefix("/dev", devui.Handler(srv, nil)))
//
// It panics when opts.Recorder records another server's runs.
func Handler(s *agentserver.Server, opts *Options) http.Handler {
	h := &handler{s: s}
	if opts != nil {
		h.opts = *opts
	}
	h.rec = h.opts.Recorder
	if h.rec == nil {
		h.rec, _ = s.Config().Observer.(*Recorder)
	}
	if h.rec != nil {
		if err := h.rec.bind(s); err != nil {
			panic(err)
		}
	}
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // not reached: the directory is embedded
	}
	h.files = files
	h.etags = map[string]string{}
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(files, p)
			sum := sha256.Sum256(b)
			h.etags[p] = `"` + hex.EncodeToString(sum[:8]) + `"`
		}
		return nil
	})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /static/{file}", h.asset)
	chat := aisdk.Handler(s)
	mux.Handle("/api/chat", chat)
	mux.Handle("/api/chat/", chat)
	if h.opts.Live != nil {
		mux.Handle("/api/live", h.opts.Live)
	}
	if s.Artifacts() != nil {
		mux.Handle("/api/artifacts/", artifacts(s))
	}
	mux.HandleFunc("/api/info", h.api("GET", h.info))
	mux.HandleFunc("/api/threads", h.api("GET", h.threads))
	mux.HandleFunc("/api/threads/{thread}", h.api("GET", h.thread))
	mux.HandleFunc("/api/runs", h.api("GET", h.runs))
	mux.HandleFunc("/api/runs/{run}", h.api("GET", h.run))
	mux.HandleFunc("/api/runs/{run}/calls/{span}", h.api("GET", h.modelCall))
	mux.HandleFunc("/api/runs/{run}/cancel", h.api("POST", h.cancel))
	mux.HandleFunc("/api/tools/{tool}/run", h.api("POST", h.runTool))
	mux.HandleFunc("/api/threads/{thread}/evalcase", h.api("GET", h.evalCase))
	mux.HandleFunc("/api/evals/run", h.api("POST", h.runEvals))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.WriteError(w, r, &agentserver.Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such route", Err: agentserver.ErrNotFound})
	})
	// A POST a browser says comes from a page of another origin is
	// refused (Sec-Fetch-Site, Origin): the page's own are same-origin.
	cross := http.NewCrossOriginProtection()
	cross.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.WriteError(w, r, &agentserver.Error{Status: http.StatusForbidden, Code: "cross_origin",
			Message: "a request from another site's page is refused", Err: agentserver.ErrBadRequest})
	}))
	h.mux = cross.Handler(mux)
	return h
}

type handler struct {
	s     *agentserver.Server
	opts  Options
	rec   *Recorder
	files fs.FS
	etags map[string]string
	mux   http.Handler

	hand handRuns // the tools run by hand in flight

	// evaluating holds the users whose eval run goes on: one at a time
	// each, since a run spends the model's tokens.
	evalMu     sync.Mutex
	evaluating map[string]bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A body (the API reads only a tool run's, net/http drains the
	// others before it answers) must arrive within the server's
	// BodyTimeout, as the chat's must.
	bodytimeout.Limit(w, r, h.s.Config().BodyTimeout)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	h.mux.ServeHTTP(w, r)
}

// csp keeps the page to its own origin: no script, style, font or image
// from anywhere else, no frame of it anywhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	h.serveFile(w, r, "index.html")
}

func (h *handler) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if _, ok := h.etags[name]; !ok || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	h.serveFile(w, r, name)
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

func (h *handler) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	b, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	etag := h.etags[name]
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Content-Type", contentTypes[path.Ext(name)])
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// api wraps a JSON route that takes method: it authenticates the request
// with the server's Config.Authenticate, and writes what the route
// returns as JSON, or its error as the server writes errors.
func (h *handler) api(method string, route func(r *http.Request, user string) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && (method != http.MethodGet || r.Method != http.MethodHead) {
			h.s.WriteError(w, r, agentserver.MethodNotAllowed(w, method))
			return
		}
		user, err := h.s.User(r)
		if err != nil {
			h.s.WriteError(w, r, err)
			return
		}
		v, err := route(r, user)
		if err != nil {
			h.s.WriteError(w, r, err)
			return
		}
		body, err := json.Marshal(v)
		if err != nil {
			h.s.WriteError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
		w.Write(append(body, '\n'))
	}
}

func notFound(format string, args ...any) error {
	return &agentserver.Error{Status: http.StatusNotFound, Code: "not_found", Message: sprintf(format, args...), Err: agentserver.ErrNotFound}
}

func badRequest(code, format string, args ...any) error {
	return agentserver.BadRequest(0, code, format, args...)
}

// maxRunIDBytes bounds a run id in a path.
const maxRunIDBytes = 100

// runOf returns user's recorded run named in r's path: not found when
// nothing records runs, when the run is another user's, or forgotten.
func (h *handler) runOf(r *http.Request, user string) (*runRec, error) {
	id := r.PathValue("run")
	if len(id) > maxRunIDBytes {
		return nil, badRequest("bad_run", "the run id is longer than %d bytes", maxRunIDBytes)
	}
	if h.rec == nil {
		return nil, notFound("run %q not found: nothing records runs (see devui.Recorder)", id)
	}
	rec := h.rec.lookup(user, id)
	if rec == nil {
		return nil, notFound("run %q not found", id)
	}
	rec.caughtUp(r.Context(), h.s)
	return rec, nil
}

// threads lists a page of the user's threads (?limit=N&cursor=C, as
// agentserver's Threads takes them), the most recently updated first: on
// the first page, those whose first run is in progress (which the store
// holds once the run is saved) come first.
func (h *handler) threads(r *http.Request, user string) (any, error) {
	q := r.URL.Query()
	opts := agentserver.ThreadsOptions{Cursor: q.Get("cursor")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return nil, badRequest("bad_limit", "limit must be a number of threads, 1 or more")
		}
		opts.Limit = n
	}
	page, err := h.s.Threads(r.Context(), user, opts)
	if err != nil {
		return nil, err
	}
	if h.rec == nil || opts.Cursor != "" {
		return page, nil
	}
	var fresh []agentserver.ThreadInfo
	for _, rec := range h.rec.list(user) {
		rec.mu.Lock()
		thread, started := rec.thread, rec.spans[0].start
		rec.mu.Unlock()
		if slices.ContainsFunc(fresh, func(t agentserver.ThreadInfo) bool { return t.ID == thread }) ||
			slices.ContainsFunc(page.Threads, func(t agentserver.ThreadInfo) bool { return t.ID == thread }) {
			continue
		}
		info, err := h.s.Current(r.Context(), user, thread)
		if err != nil {
			continue
		}
		if _, err := h.s.History(r.Context(), user, thread); !errors.Is(err, agentserver.ErrNotFound) {
			continue // stored: listed on its page
		}
		fresh = append(fresh, agentserver.ThreadInfo{ID: thread, Created: started, Updated: started, Run: info.ID})
	}
	page.Threads = append(fresh, page.Threads...)
	return page, nil
}

// maxContents bounds the contents of one answer of the thread route.
const maxContents = 500

// threadJSON is a thread's history, with its run in progress.
type threadJSON struct {
	ID string `json:"id"`
	// Len is the number of contents stored; From is the first of those
	// in Contents (the latest maxContents when the request names none).
	Len      int               `json:"len"`
	From     int               `json:"from"`
	Contents []json.RawMessage `json:"contents"`
	// Run is the thread's run in progress, with its new message (which
	// the history holds once the run is saved): agentserver.RunInfo's
	// Message, or, from a Runner that does not keep it, the recorder's.
	Run *struct {
		agentserver.RunInfo
		Message json.RawMessage `json:"message,omitempty"`
	} `json:"run,omitempty"`
}

// thread returns a thread's stored contents, every part of each, thought
// signatures and inline data replaced by a note of their size.
func (h *handler) thread(r *http.Request, user string) (any, error) {
	id := r.PathValue("thread")
	if err := agentserver.CheckThreadID(id); err != nil {
		return nil, err
	}
	from := -1
	if f := r.URL.Query().Get("from"); f != "" {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, badRequest("bad_from", "from must be a number of contents, 0 or more")
		}
		from = n
	}
	contents, err := h.s.History(r.Context(), user, id)
	found := err == nil
	if err != nil && !errors.Is(err, agentserver.ErrNotFound) {
		return nil, err
	}
	out := &threadJSON{ID: id, Len: len(contents), Contents: []json.RawMessage{}}
	if info, err := h.s.Current(r.Context(), user, id); err == nil {
		found = true
		out.Run = &struct {
			agentserver.RunInfo
			Message json.RawMessage `json:"message,omitempty"`
		}{RunInfo: info}
		// The run's question: the server's (a page reloaded before the
		// first model call, or after a restart that recovered the run,
		// still shows it), else the recorder's, from the run's first
		// model request.
		msg := info.Message
		if msg == nil && h.rec != nil {
			if rec := h.rec.lookup(user, info.ID); rec != nil {
				rec.mu.Lock()
				msg = rec.message
				rec.mu.Unlock()
			}
		}
		if msg != nil {
			if out.Run.Message, err = redacted(msg); err != nil {
				return nil, err
			}
		}
	}
	if !found {
		// The chat page opens threads that may not exist yet: it asks
		// with ?missing=empty, so that a new thread is not a failed
		// request in the browser's console. Another user's thread answers
		// the same.
		if r.URL.Query().Get("missing") == "empty" {
			return &threadJSON{ID: id, Contents: []json.RawMessage{}}, nil
		}
		return nil, notFound("thread %q not found", id)
	}
	if from < 0 {
		from = max(0, len(contents)-maxContents)
	}
	from = min(from, len(contents))
	out.From = from
	for _, c := range contents[from:min(len(contents), from+maxContents)] {
		b, err := redacted(c)
		if err != nil {
			return nil, err
		}
		out.Contents = append(out.Contents, b)
	}
	return out, nil
}

// runs lists the user's recorded runs, the latest first; ?thread= keeps
// one thread's.
func (h *handler) runs(r *http.Request, user string) (any, error) {
	thread := r.URL.Query().Get("thread")
	if thread != "" {
		if err := agentserver.CheckThreadID(thread); err != nil {
			return nil, err
		}
	}
	out := []runSummary{}
	if h.rec == nil {
		return out, nil
	}
	now := time.Now()
	for _, rec := range h.rec.list(user) {
		rec.mu.Lock()
		if thread == "" || rec.thread == thread {
			out = append(out, rec.summary(now))
		}
		rec.mu.Unlock()
	}
	return out, nil
}

// run returns a recorded run's timeline.
func (h *handler) run(r *http.Request, user string) (any, error) {
	rec, err := h.runOf(r, user)
	if err != nil {
		return nil, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.timeline(time.Now(), h.s.Agent().Steps().Limits().MaxParallel), nil
}

// modelCallJSON is what a model call sent and got.
type modelCallJSON struct {
	Request struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		Contents json.RawMessage `json:"contents"`
		Config   json.RawMessage `json:"config"`
	} `json:"request"`
	// Response is the response, the stream's chunks merged as the loop
	// merges them; absent when the call failed or is in flight.
	Response json.RawMessage `json:"response,omitempty"`
}

// modelCall returns the exact request of one model call of a recorded
// run, and the response it got.
func (h *handler) modelCall(r *http.Request, user string) (any, error) {
	rec, err := h.runOf(r, user)
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(r.PathValue("span"))
	if err != nil {
		return nil, badRequest("bad_span", "the call must be named by its span's number")
	}
	rec.mu.Lock()
	var sp *span
	if n >= 0 && n < len(rec.spans) && rec.spans[n].kind == "model" {
		sp = rec.spans[n]
	}
	var (
		model    string
		stream   bool
		contents []*genai.Content
		config   *genai.GenerateContentConfig
		resp     *genai.GenerateContentResponse
	)
	if sp != nil {
		model, stream, contents, config, resp = sp.name, sp.stream, sp.contents, sp.config, sp.response
	}
	rec.mu.Unlock()
	if sp == nil {
		return nil, notFound("run %q has no model call %d", rec.id, n)
	}
	out := &modelCallJSON{}
	out.Request.Model, out.Request.Stream = model, stream
	if contents == nil {
		contents = []*genai.Content{}
	}
	if out.Request.Contents, err = redacted(contents); err != nil {
		return nil, err
	}
	if out.Request.Config, err = redacted(config); err != nil {
		return nil, err
	}
	if resp != nil {
		if out.Response, err = redacted(resp); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cancel stops a run in progress. The request must say it sends JSON, so
// that no other site's form can post it.
func (h *handler) cancel(r *http.Request, user string) (any, error) {
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != "application/json" {
		return nil, agentserver.BadRequest(http.StatusUnsupportedMediaType, "bad_content_type", "send the request as application/json")
	}
	id := r.PathValue("run")
	if len(id) > maxRunIDBytes {
		return nil, badRequest("bad_run", "the run id is longer than %d bytes", maxRunIDBytes)
	}
	if err := h.s.Cancel(r.Context(), user, id); err != nil {
		return nil, err
	}
	return map[string]string{"run": id, "state": "cancelling"}, nil
}

// artifacts serves the server's artifacts routes (ArtifactsHandler) under
// api/artifacts/, relative as the page's other routes are: a request for
// api/artifacts/{rest} is handed on as one for
// {Config.ArtifactsPath}{rest}.
func artifacts(s *agentserver.Server) http.Handler {
	files := s.ArtifactsHandler()
	prefix := strings.TrimSuffix(s.Config().ArtifactsPath, "/")
	return http.StripPrefix("/api/artifacts", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = prefix + r.URL.Path
		if r.URL.RawPath != "" {
			r.URL.RawPath = prefix + r.URL.RawPath
		}
		files.ServeHTTP(w, r)
	}))
}
