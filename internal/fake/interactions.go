package fake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
)

// This file serves the Interactions API (see the package documentation,
// section "Interactions"): its routes, the interactions the server keeps,
// and the four methods.

// The Interactions methods.
const (
	// MethodCreateInteraction is POST …/interactions.
	MethodCreateInteraction Method = "interactions.create"
	// MethodGetInteraction is GET …/interactions/{id}.
	MethodGetInteraction Method = "interactions.get"
	// MethodDeleteInteraction is DELETE …/interactions/{id}.
	MethodDeleteInteraction Method = "interactions.delete"
	// MethodCancelInteraction is POST …/interactions/{id}/cancel.
	MethodCancelInteraction Method = "interactions.cancel"
)

// The routes of the Interactions API (genai interactions/interactions.go:78,
// 365, 604, 888): /{version}/interactions on the Gemini API, and
// /{version}/projects/{project}/locations/{location}/interactions on
// Vertex AI, the path genai's Interactions client builds there
// (client.go:436-441).
var (
	geminiInteractions = regexp.MustCompile(`^/(v1|v1beta|v1alpha)/interactions(?:/([^/:]+)(/cancel)?)?$`)
	vertexInteractions = regexp.MustCompile(`^/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)/interactions(?:/([^/:]+)(/cancel)?)?$`)
)

// parseInteractionRoute returns the Interactions route of a request, and
// false when it names none.
func parseInteractionRoute(method string, u *url.URL) (route, string, bool) {
	path := slashes.ReplaceAllString(u.Path, "/")
	var (
		r              route
		id, cancelPath string
	)
	if m := geminiInteractions.FindStringSubmatch(path); m != nil {
		r = route{backend: genai.BackendGeminiAPI, version: m[1]}
		id, cancelPath = m[2], m[3]
	} else if m := vertexInteractions.FindStringSubmatch(path); m != nil {
		r = route{backend: genai.BackendVertexAI, version: m[1], project: m[2], location: m[3]}
		id, cancelPath = m[4], m[5]
	} else {
		return route{}, "", false
	}
	switch {
	case id == "" && method == http.MethodPost:
		r.method = MethodCreateInteraction
	case id != "" && cancelPath != "" && method == http.MethodPost:
		r.method = MethodCancelInteraction
	case id != "" && cancelPath == "" && method == http.MethodGet:
		r.method = MethodGetInteraction
	case id != "" && cancelPath == "" && method == http.MethodDelete:
		r.method = MethodDeleteInteraction
	default:
		return route{}, "", false
	}
	return r, id, true
}

// storedInteraction is an interaction the server keeps: one created with
// store (the default), which later requests may name.
type storedInteraction struct {
	id, model string
	owner     string // the key or token that created it: no one else reaches it
	previous  string
	status    string
	input     []iw.Step // the request's input
	output    []iw.Step // the model's steps
	history   []iw.Step // the whole conversation: the previous interactions', input and output
	usage     *iw.Usage
	token     string    // the continuation token it issued, if any
	events    []ixEvent // its stream, for a stream resumed with last_event_id
	// checkpoints are the steps after each checkpoint of its stream, by
	// token: what a continuation from that token answers.
	checkpoints map[string][]iw.Step
	created     time.Time
	updated     time.Time
	errors      []iw.Error

	background bool
	timer      *time.Timer // a background interaction's completion
}

// ExpireInteractions forgets the stored interactions with these ids, or
// all of them when none is given, as the API's retention does (55 days on
// paid tiers, 1 day on the free one): a request naming one of them as its
// previous_interaction_id is then answered 404, as an unknown id is.
func (s *Server) ExpireInteractions(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(ids) == 0 {
		for _, ix := range s.interactions {
			if ix.timer != nil {
				ix.timer.Stop()
			}
		}
		s.interactions = nil
		return
	}
	for _, id := range ids {
		if ix := s.interactions[id]; ix != nil && ix.timer != nil {
			ix.timer.Stop()
		}
		delete(s.interactions, id)
	}
}

// InteractionIDs returns the ids of the interactions the server keeps, in
// the order they were created.
func (s *Server) InteractionIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.interactions))
	for id := range s.interactions {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return s.interactions[a].created.Compare(s.interactions[b].created)
	})
	return ids
}

// interaction returns the stored interaction id that owner may reach, or nil.
func (s *Server) interaction(id, owner string) *storedInteraction {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.interactions[id]
	if ix == nil || ix.owner != owner {
		return nil
	}
	return ix
}

// ownerOf is who a request authenticates as.
func ownerOf(c credentials) string {
	if c.token != "" {
		return "token:" + c.token
	}
	return "key:" + c.apiKey
}

// serveInteraction serves one request to an Interactions route.
func (s *Server) serveInteraction(w http.ResponseWriter, r *http.Request, rt route, id string) {
	creds := credentialsOf(r)
	req := Request{Header: r.Header.Clone(), Query: r.URL.Query(), APIKey: creds.apiKey, Token: creds.token,
		Backend: rt.backend, APIVersion: rt.version, Project: rt.project, Location: rt.location, Method: rt.method, InteractionID: id}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req.Body = body
	in := &ixInput{srv: s, backend: rt.backend, version: rt.version, project: rt.project, creds: creds, body: body,
		method: rt.method, id: id, owner: ownerOf(creds), inputTokenLimit: s.tokenLimit()}
	var rej *Rejection
	switch {
	case err != nil:
		rej = &Rejection{Rule: "route", Err: *invalidRequest(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxBody))}
	default:
		rej = checkInteraction(in)
	}
	if in.req != nil {
		req.Model, req.PreviousInteractionID, req.Store, req.Stream = in.req.Model, in.req.PreviousInteractionID, in.req.Store, in.req.Stream
	}
	if rt.method == MethodGetInteraction {
		req.Stream = req.Query.Get("stream") == "true"
	}

	rec := &record{req: req}
	if in.req != nil {
		rec.canonical, rec.input = in.canonical()
	}
	create := rt.method == MethodCreateInteraction
	var given *Reply
	if in.resume != nil {
		given = &Reply{} // the rest of a stream answers: answerInteraction makes it
	}
	reply := s.take(rec, rej, create, given)
	seq := rec.req.Seq
	if rej != nil {
		s.log("fake: #%d %s %s: rejected by rule %q: %d %s", seq, r.Method, r.URL.Path, rej.Rule, rej.Err.httpCode(), rej.Err.Message)
		in.writeError(w, &rej.Err)
		return
	}
	switch rt.method {
	case MethodGetInteraction:
		s.getInteraction(w, r, in)
		return
	case MethodDeleteInteraction:
		s.mu.Lock()
		delete(s.interactions, id)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, []byte("{}"))
		return
	case MethodCancelInteraction:
		s.cancelInteraction(w, in)
		return
	}
	if reply == nil {
		in.writeError(w, s.unscripted(rec))
		return
	}
	s.log("fake: #%d %s %s: %s", seq, req.Method, req.Model, describe(reply))
	s.answerInteraction(w, r, in, reply, rec)
}

// getInteraction answers GET: the interaction, or its stream from the
// event after last_event_id.
func (s *Server) getInteraction(w http.ResponseWriter, r *http.Request, in *ixInput) {
	ix := s.interaction(in.id, in.owner)
	if ix == nil {
		in.writeError(w, notFound(in.id))
		return
	}
	q := r.URL.Query()
	s.mu.Lock()
	events := ix.events
	body := ix.wire(q.Get("include_input") == "true")
	s.mu.Unlock()
	if q.Get("stream") != "true" {
		writeJSON(w, http.StatusOK, mustWire(body))
		return
	}
	start := 0
	if last := q.Get("last_event_id"); last != "" {
		start = slices.IndexFunc(events, func(e ixEvent) bool { return e.id == last }) + 1
		if start == 0 {
			in.writeError(w, invalidRequest(fmt.Sprintf("last_event_id %q is not an event of interaction %s.", last, in.id)))
			return
		}
	}
	sw := newIxStreamWriter(w)
	for _, e := range events[start:] {
		sw.event(e)
	}
	sw.done()
}

// cancelInteraction answers POST …/cancel: a background interaction in
// progress stops, with status cancelled.
func (s *Server) cancelInteraction(w http.ResponseWriter, in *ixInput) {
	s.mu.Lock()
	ix := s.interactions[in.id]
	if ix == nil || ix.owner != in.owner {
		s.mu.Unlock()
		in.writeError(w, notFound(in.id))
		return
	}
	if !ix.background || ix.status != iw.StatusInProgress {
		status := ix.status
		s.mu.Unlock()
		in.writeError(w, invalidRequest(fmt.Sprintf("Only a background interaction in progress can be cancelled; interaction %s is %s.", in.id, status)))
		return
	}
	if ix.timer != nil {
		ix.timer.Stop()
	}
	ix.status, ix.updated, ix.output, ix.usage = iw.StatusCancelled, s.timeNowLocked(), nil, nil
	body := ix.wire(false)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, mustWire(body))
}

// wire returns the interaction as the API sends it. With input, the
// request's input is there too. The caller holds s.mu.
func (ix *storedInteraction) wire(input bool) map[string]any {
	m := map[string]any{
		"id":      ix.id,
		"status":  ix.status,
		"model":   ix.model,
		"created": ix.created.UTC().Format(time.RFC3339Nano),
		"updated": ix.updated.UTC().Format(time.RFC3339Nano),
	}
	if len(ix.output) > 0 {
		m["steps"] = ix.output
	}
	if ix.usage != nil {
		m["usage"] = ix.usage
	}
	if ix.previous != "" {
		m["previous_interaction_id"] = ix.previous
	}
	if ix.token != "" {
		m["continuation_token"] = ix.token
	}
	if len(ix.errors) > 0 {
		m["errors"] = ix.errors
	}
	if input && len(ix.input) > 0 {
		m["input"] = ix.input
	}
	return m
}

// mustWire encodes v, built by this package, as the API sends it.
func mustWire(v any) []byte {
	b, err := iw.Marshal(v)
	if err != nil {
		panic("fake: " + err.Error())
	}
	return b
}

// timeNowLocked is timeNow for a caller that holds s.mu.
func (s *Server) timeNowLocked() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// notFound is the answer to an id the server does not hold (or that
// belongs to someone else).
func notFound(id string) *APIError {
	return &APIError{Code: http.StatusNotFound, Status: "NOT_FOUND", Message: fmt.Sprintf("Interaction %s was not found.", id)}
}

func invalidRequest(message string) *APIError {
	return &APIError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: message}
}

// ixCode is the string code of an Interactions error for e: the status in
// lower case, invalid_request for INVALID_ARGUMENT (the code the API sends
// for a refused request).
func ixCode(e *APIError) string {
	if s := e.status(); s != "INVALID_ARGUMENT" {
		return strings.ToLower(s)
	}
	return "invalid_request"
}

// ixWire returns e in the Interactions API's error shape, with a
// RetryInfo detail for its RetryDelay.
func ixWire(e *APIError) iw.ErrorBody {
	body := iw.ErrorBody{Error: iw.Error{Code: ixCode(e), Message: e.Message, Details: copyDetails(e.Details)}}
	if e.RetryDelay > 0 {
		body.Error.Details = append(body.Error.Details, map[string]any{"@type": typeRetryInfo, "retryDelay": durationString(e.RetryDelay)})
	}
	return body
}

// writeError sends e as the Interactions API does: in its own shape with a
// string code, but for the credentials errors, which Google's front end
// sends in the google.rpc shape of every Google API before the request
// reaches the service.
func (in *ixInput) writeError(w http.ResponseWriter, e *APIError) {
	if in.authFailed {
		writeJSON(w, e.httpCode(), mustJSON(e.wire()))
		return
	}
	writeJSON(w, e.httpCode(), mustWire(ixWire(e)))
}

// canonical returns the request as the record keeps it: the whole
// conversation as generateContent's request (so that a test reads
// Contents, Tools and the config the same way on both APIs), and the
// input's own contents.
func (in *ixInput) canonical() (canonical, input []byte) {
	if in.conversation == nil && in.req.Input == nil {
		return nil, nil
	}
	contents, err := iw.Contents(in.conversation)
	if err != nil {
		return nil, nil
	}
	w := wireRequest{Model: in.req.Model, Contents: contents}
	si, tools, tc, gc, err := iw.GenAIConfig(in.req)
	if err == nil {
		w.SystemInstruction, w.Tools, w.ToolConfig = si, tools, tc
		if gc != nil {
			w.GenerationConfig = &generationConfig{GenerationConfig: *gc}
		}
	}
	w.ServiceTier, w.Labels = genai.ServiceTier(in.req.ServiceTier), in.req.Labels
	canonical, _ = json.Marshal(&w)
	own, err := iw.Contents(in.req.Input)
	if err == nil {
		input, _ = json.Marshal(own)
	}
	return canonical, input
}
