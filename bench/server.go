package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// cities are the arguments of the scripted calls, in order.
var cities = []string{"Paris", "London", "Tokyo", "Lima", "Oslo", "Cairo", "Delhi", "Quito"}

// A server is the scripted fake Gemini API that every contestant talks to:
// one instance per contestant and scenario, on loopback.
//
// It is stateless: it reads the conversation in the request, counts the
// model turns already in it, and answers with the next scripted reply: a
// tool turn of sc.calls parallel functionCall parts while fewer than
// sc.turns tool turns happened, else the text answer. Every reply is encoded
// once, up front, so that serving costs the same small amount for every
// contestant (the server's allocations are counted with the contestant's).
//
// Every request is checked (see [server.check]); a malformed one is answered
// with a 400 and recorded, and the runner then fails loudly. Three
// deviations that the peers show and that the API has tolerated (Gemini 3
// rejects the first two) are counted instead and printed as notes: a
// functionResponse without its call's id, a model turn sent back without its
// thoughtSignature, a tool turn under role "tool".
//
// Routes: POST /v1beta/models/{model}:generateContent (JSON),
// :streamGenerateContent?alt=sse (SSE events "data: {...}\r\n\r\n"), and
// :streamGenerateContent without alt=sse (a JSON array of the same chunks,
// as langchaingo's REST client expects). The key is accepted in the
// x-goog-api-key header or the key query parameter.
type server struct {
	sc  scenario
	srv *httptest.Server

	// replies[k] is the reply to a request that holds k model turns.
	replies []reply
	// wantIDs[k][i] and wantCities[k][i] are the id and city argument of
	// call i of tool turn k.
	wantIDs, wantCities [][]string

	requests atomic.Int64 // requests served
	answers  atomic.Int64 // text answers served: conversations completed
	turns    atomic.Int64 // tool turns answered by the client
	noIDs    atomic.Int64 // tool turns answered without the calls' ids
	noSigs   atomic.Int64 // model turns sent back without their thoughtSignature
	oddRoles atomic.Int64 // tool turns answered under a role other than user
	oddRole  atomic.Pointer[string]

	mu  sync.Mutex
	err error // first malformed request

	// states holds the memory of finished requests for the next ones. A
	// channel rather than a sync.Pool, which the runner's runtime.GC calls
	// would empty.
	states chan *requestState
}

// A reply is one scripted answer in the three encodings the routes need.
type reply struct {
	json, array []byte   // unary body; streamGenerateContent without alt=sse
	sse         [][]byte // one "data: ...\r\n\r\n" event per chunk
	jsonLen     []string // Content-Length of json, ready for the header map
	arrayLen    []string
}

// Header values shared by every response (net/http only reads them).
var (
	ctJSON = []string{"application/json; charset=UTF-8"}
	ctSSE  = []string{"text/event-stream"}
)

// newServer starts a scripted server for sc.
func newServer(sc scenario) *server {
	s := newScripted(sc)
	s.srv = httptest.NewServer(s)
	return s
}

// newScripted returns a scripted server for sc, not yet started.
func newScripted(sc scenario) *server {
	s := &server{sc: sc}
	for k := 0; k <= sc.turns; k++ {
		s.replies = append(s.replies, s.buildReply(k))
	}
	for k := 0; k < sc.turns; k++ {
		ids, cs := make([]string, sc.calls), make([]string, sc.calls)
		for i := range sc.calls {
			ids[i], cs[i] = callID(k, i), cities[(k*sc.calls+i)%len(cities)]
		}
		s.wantIDs, s.wantCities = append(s.wantIDs, ids), append(s.wantCities, cs)
	}
	s.states = make(chan *requestState, 4)
	return s
}

// URL is the base URL to give the contestant.
func (s *server) URL() string { return s.srv.URL }

// Close shuts the server down.
func (s *server) Close() { s.srv.Close() }

// Err returns the first malformed request, if any.
func (s *server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// notes describes the tolerated deviations seen so far, or "".
func (s *server) notes() string {
	var n []string
	turns := s.turns.Load()
	if c := s.noIDs.Load(); c > 0 {
		n = append(n, fmt.Sprintf("functionResponse parts without the call's id in %d/%d tool turns (Gemini 3 requires the id)", c, turns))
	}
	if c := s.oddRoles.Load(); c > 0 {
		n = append(n, fmt.Sprintf("role %q instead of user in %d/%d tool turns (the API documents user and model)", *s.oddRole.Load(), c, turns))
	}
	if c := s.noSigs.Load(); c > 0 {
		n = append(n, fmt.Sprintf("thoughtSignature dropped from %d/%d model turns sent back (Gemini 3 rejects that)", c, turns))
	}
	return strings.Join(n, "; ")
}

// callID is the id of call i of tool turn k.
func callID(k, i int) string { return "fc-" + strconv.Itoa(k) + "-" + strconv.Itoa(i) }

// signature is the thoughtSignature of the first call of tool turn k, and of
// the answer's last part, as the API sends them: opaque, padded base64.
func signature(k int) string {
	return base64.StdEncoding.EncodeToString([]byte("bench-thought-signature-" + strconv.Itoa(k)))
}

// Wire shapes of a response, in the API's field order.
type (
	wireResponse struct {
		Candidates    []wireCandidate `json:"candidates"`
		UsageMetadata *wireUsage      `json:"usageMetadata,omitempty"`
		ModelVersion  string          `json:"modelVersion"`
		ResponseID    string          `json:"responseId"`
	}
	wireCandidate struct {
		Content      wireOutContent `json:"content"`
		FinishReason string         `json:"finishReason,omitempty"`
		Index        int            `json:"index"`
	}
	wireOutContent struct {
		Parts []map[string]any `json:"parts"`
		Role  string           `json:"role"`
	}
	wireUsage struct {
		PromptTokenCount     int              `json:"promptTokenCount"`
		CandidatesTokenCount int              `json:"candidatesTokenCount"`
		TotalTokenCount      int              `json:"totalTokenCount"`
		PromptTokensDetails  []map[string]any `json:"promptTokensDetails"`
	}
)

// buildReply encodes the reply to a request holding k model turns.
func (s *server) buildReply(k int) reply {
	sc := s.sc
	in := 12 + 40*sc.tools + k*(18+22*sc.calls) // prompt tokens: grow with tools and history
	usage := func(out int) *wireUsage {
		return &wireUsage{
			PromptTokenCount: in, CandidatesTokenCount: out, TotalTokenCount: in + out,
			PromptTokensDetails: []map[string]any{{"modality": "TEXT", "tokenCount": in}},
		}
	}
	respID := fmt.Sprintf("bench-%s-%02d-Xk9fQ2", sc.name, k)
	chunk := func(parts []map[string]any, finish string, u *wireUsage) []byte {
		b, err := json.Marshal(wireResponse{
			Candidates:    []wireCandidate{{Content: wireOutContent{Parts: parts, Role: "model"}, FinishReason: finish}},
			UsageMetadata: u, ModelVersion: benchModel, ResponseID: respID,
		})
		if err != nil {
			panic(err)
		}
		return b
	}
	var chunks [][]byte // the streamed form; the unary form merges them
	var unary []byte
	if k < sc.turns {
		parts := make([]map[string]any, sc.calls)
		for i := range parts {
			parts[i] = map[string]any{"functionCall": map[string]any{
				"id": callID(k, i), "name": weatherTool,
				"args": map[string]any{"city": cities[(k*sc.calls+i)%len(cities)]},
			}}
		}
		parts[0]["thoughtSignature"] = signature(k)
		unary = chunk(parts, "STOP", usage(11*sc.calls))
		chunks = [][]byte{unary}
	} else {
		half := strings.Index(answer, " and ") + 1
		last := map[string]any{"text": answer[half:], "thoughtSignature": signature(k)}
		chunks = [][]byte{
			chunk([]map[string]any{{"text": answer[:half]}}, "", usage(4)),
			chunk([]map[string]any{last}, "STOP", usage(14)),
		}
		unary = chunk([]map[string]any{{"text": answer[:half]}, last}, "STOP", usage(14))
	}
	r := reply{json: unary}
	r.array = append([]byte("[\n"), bytes.Join(chunks, []byte(",\n"))...)
	r.array = append(r.array, "\n]"...)
	for _, c := range chunks {
		r.sse = append(r.sse, append(append([]byte("data: "), c...), "\r\n\r\n"...))
	}
	r.jsonLen = []string{strconv.Itoa(len(r.json))}
	r.arrayLen = []string{strconv.Itoa(len(r.array))}
	return r
}

// ServeHTTP routes, checks and answers one request.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	const prefix = "/v1beta/models/"
	path := r.URL.Path
	colon := strings.LastIndexByte(path, ':')
	if r.Method != http.MethodPost || !strings.HasPrefix(path, prefix) || colon < len(prefix) {
		s.fail(w, http.StatusNotFound, "NOT_FOUND", fmt.Errorf("unexpected request %s %s", r.Method, r.URL))
		return
	}
	if model := strings.TrimPrefix(path[len(prefix):colon], "models/"); model != benchModel {
		s.fail(w, http.StatusNotFound, "NOT_FOUND", fmt.Errorf("model %q, want %q", model, benchModel))
		return
	}
	method := path[colon+1:]
	var sse bool
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		sse = hasQuery(r.URL.RawQuery, "alt=sse")
	default:
		s.fail(w, http.StatusNotFound, "NOT_FOUND", fmt.Errorf("unknown method %q", method))
		return
	}
	if r.Header.Get("X-Goog-Api-Key") != apiKey && !hasQuery(r.URL.RawQuery, "key="+apiKey) {
		s.fail(w, http.StatusForbidden, "PERMISSION_DENIED", errors.New("no valid API key in x-goog-api-key or ?key="))
		return
	}

	st := s.getState()
	defer s.putState(st)
	if err := st.decode(r.Body); err != nil {
		s.fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", err)
		return
	}
	k, err := s.check(&st.req)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", err)
		return
	}
	if k == s.sc.turns {
		s.answers.Add(1)
	}

	rep := &s.replies[k]
	h := w.Header()
	switch {
	case method == "generateContent":
		h["Content-Type"], h["Content-Length"] = ctJSON, rep.jsonLen
		w.Write(rep.json)
	case sse:
		h["Content-Type"] = ctSSE
		f, _ := w.(http.Flusher)
		for _, ev := range rep.sse {
			w.Write(ev)
			if f != nil {
				f.Flush()
			}
		}
	default:
		h["Content-Type"], h["Content-Length"] = ctJSON, rep.arrayLen
		w.Write(rep.array)
	}
}

// hasQuery reports whether the raw query holds the parameter p ("name=value").
func hasQuery(raw, p string) bool {
	for raw != "" {
		var q string
		q, raw, _ = strings.Cut(raw, "&")
		if q == p {
			return true
		}
	}
	return false
}

// fail records err (the first one wins) and answers with the API's error
// shape.
func (s *server) fail(w http.ResponseWriter, code int, status string, err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": err.Error(), "status": status}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	w.Write(body)
}

// check validates a request against the script and returns how many model
// turns it holds. The request must be: the user's prompt; then, for every
// tool turn so far, the model's turn sent back unchanged (the same calls in
// the same order, with their arguments) and one user turn of exactly one
// functionResponse part per call; and the declared tools.
func (s *server) check(req *wireRequest) (int, error) {
	sc := s.sc
	cs := req.Contents
	if len(cs) == 0 || len(cs)%2 == 0 {
		return 0, fmt.Errorf("%d contents: want the prompt, then pairs of a model turn and a user turn of function responses", len(cs))
	}
	k := (len(cs) - 1) / 2
	if k > sc.turns {
		return 0, fmt.Errorf("%d model turns: the script has only %d tool turns", k, sc.turns)
	}
	if err := checkPrompt(&cs[0]); err != nil {
		return 0, err
	}
	for j := range k {
		if err := s.checkModelTurn(j, &cs[1+2*j], j == k-1); err != nil {
			return 0, fmt.Errorf("contents[%d] (model turn %d): %w", 1+2*j, j+1, err)
		}
		if err := s.checkToolTurn(j, &cs[2+2*j], j == k-1); err != nil {
			return 0, fmt.Errorf("contents[%d] (answer to tool turn %d): %w", 2+2*j, j+1, err)
		}
	}
	return k, checkTools(req.Tools, sc.tools)
}

// checkPrompt checks the first content: the user's prompt, as text.
func checkPrompt(c *wireContent) error {
	if !c.Role.is("user") {
		return fmt.Errorf("contents[0] has role %q, want user", c.Role.String())
	}
	if len(c.Parts) == 0 {
		return errors.New("contents[0] has no parts")
	}
	for i := range c.Parts {
		if c.Parts[i].Text != nonEmpty {
			return fmt.Errorf("contents[0].parts[%d] is not a non-empty text part", i)
		}
	}
	return nil
}

// checkModelTurn checks model turn j as sent back; last says whether it is
// the newest turn (the one whose deviations are counted).
func (s *server) checkModelTurn(j int, c *wireContent, last bool) error {
	if !c.Role.is("model") {
		return fmt.Errorf("role %q, want model", c.Role.String())
	}
	if len(c.Parts) != s.sc.calls {
		return fmt.Errorf("%d parts, want the %d functionCall parts the server sent", len(c.Parts), s.sc.calls)
	}
	for i := range c.Parts {
		p := &c.Parts[i]
		fc := &p.FunctionCall
		switch {
		case !fc.Name.set():
			return fmt.Errorf("parts[%d] is not a functionCall part", i)
		case !fc.Name.is(weatherTool):
			return fmt.Errorf("parts[%d] calls %q, want %s", i, fc.Name.String(), weatherTool)
		case !fc.Args.City.is(s.wantCities[j][i]):
			return fmt.Errorf("parts[%d] has args.city %q, want %q", i, fc.Args.City.String(), s.wantCities[j][i])
		case fc.ID.set() && !fc.ID.is(s.wantIDs[j][i]):
			return fmt.Errorf("parts[%d] has id %q, want %q", i, fc.ID.String(), s.wantIDs[j][i])
		case p.Text != absent || p.FunctionResponse.Name.set():
			return fmt.Errorf("parts[%d] holds more than the functionCall", i)
		}
	}
	if last && c.Parts[0].ThoughtSignature != nonEmpty {
		s.noSigs.Add(1)
	}
	return nil
}

// checkToolTurn checks the user turn that answers tool turn j: exactly one
// functionResponse part per call, in any order, matched by id when the
// parts carry ids. The role should be user; tool and function are counted
// as deviations (older Genkit and Gemini samples sent them), anything else
// fails.
func (s *server) checkToolTurn(j int, c *wireContent, last bool) error {
	oddRole := !c.Role.is("user")
	if oddRole && !c.Role.is("tool") && !c.Role.is("function") {
		return fmt.Errorf("role %q, want user", c.Role.String())
	}
	if len(c.Parts) != s.sc.calls {
		return fmt.Errorf("%d parts: want one functionResponse part for each of the %d calls", len(c.Parts), s.sc.calls)
	}
	var seen uint64 // bit i: call i answered
	withIDs := 0
	for i := range c.Parts {
		p := &c.Parts[i]
		fr := &p.FunctionResponse
		switch {
		case !fr.Name.set():
			return fmt.Errorf("parts[%d] is not a functionResponse part", i)
		case !fr.Name.is(weatherTool):
			return fmt.Errorf("parts[%d] answers %q, want %s", i, fr.Name.String(), weatherTool)
		case fr.Response != nonEmpty:
			return fmt.Errorf("parts[%d] has no response object", i)
		case p.Text != absent || p.FunctionCall.Name.set():
			return fmt.Errorf("parts[%d] holds more than the functionResponse", i)
		}
		if !fr.ID.set() {
			continue
		}
		withIDs++
		n := -1
		for m, id := range s.wantIDs[j] {
			if fr.ID.is(id) {
				n = m
			}
		}
		if n < 0 || seen&(1<<n) != 0 {
			return fmt.Errorf("parts[%d] has id %q: not a call of this turn, or answered twice", i, fr.ID.String())
		}
		seen |= 1 << n
	}
	if withIDs != 0 && withIDs != len(c.Parts) {
		return fmt.Errorf("%d of %d functionResponse parts carry an id", withIDs, len(c.Parts))
	}
	if last {
		s.turns.Add(1)
		if withIDs == 0 {
			s.noIDs.Add(1)
		}
		if oddRole {
			s.oddRoles.Add(1)
			if s.oddRole.Load() == nil {
				role := c.Role.String()
				s.oddRole.CompareAndSwap(nil, &role)
			}
		}
	}
	return nil
}

// checkTools checks the declarations: want of them in all, get_weather among
// them, each with a schema, and no empty tool group (the API rejects {}).
func checkTools(tools []wireTool, want int) error {
	n, weather := 0, false
	for g := range tools {
		ds := tools[g].FunctionDeclarations
		if len(ds) == 0 {
			return fmt.Errorf("tools[%d] declares no function (the API rejects an empty tool)", g)
		}
		for d := range ds {
			if ds[d].Parameters != nonEmpty && ds[d].ParametersJSONSchema != nonEmpty {
				return fmt.Errorf("tools[%d].functionDeclarations[%d] (%s) has no parameters", g, d, ds[d].Name.String())
			}
			weather = weather || ds[d].Name.is(weatherTool)
		}
		n += len(ds)
	}
	if n != want || !weather {
		return fmt.Errorf("%d functions declared (get_weather among them: %t), want %d", n, weather, want)
	}
	return nil
}

// requestState is the reusable memory of one request being served.
type requestState struct {
	body bytes.Buffer
	src  bytes.Reader
	// dec is kept from request to request: a json.Decoder reuses its
	// buffers and scanner state, where json.Unmarshal allocates them anew.
	dec *json.Decoder
	req wireRequest
}

// getState returns the memory of a finished request, or new memory.
func (s *server) getState() *requestState {
	select {
	case st := <-s.states:
		return st
	default:
		return new(requestState)
	}
}

// putState keeps st for a later request.
func (s *server) putState(st *requestState) {
	select {
	case s.states <- st:
	default:
	}
}

// decode reads body and decodes it into st.req.
func (st *requestState) decode(body io.Reader) error {
	st.body.Reset()
	if _, err := st.body.ReadFrom(body); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	st.src.Reset(st.body.Bytes())
	if st.dec == nil {
		st.dec = json.NewDecoder(&st.src)
	}
	st.req.reset()
	err := st.dec.Decode(&st.req)
	if err == nil && st.dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err != nil {
		st.dec = nil // its state is unknown now
		return fmt.Errorf("decoding the request: %w", err)
	}
	return nil
}

// The parts of a request that check reads. They decode without allocating
// (see shortStr and presence) into memory reused across requests, so that
// checking costs every contestant the same, little.
type (
	wireRequest struct {
		Contents []wireContent `json:"contents"`
		Tools    []wireTool    `json:"tools"`
	}
	wireContent struct {
		Role  shortStr   `json:"role"`
		Parts []wirePart `json:"parts"`
	}
	wirePart struct {
		Text             presence `json:"text"`
		ThoughtSignature presence `json:"thoughtSignature"`
		FunctionCall     wireCall `json:"functionCall"`
		FunctionResponse wireCall `json:"functionResponse"`
	}
	wireCall struct {
		ID   shortStr `json:"id"`
		Name shortStr `json:"name"`
		Args struct {
			City shortStr `json:"city"`
		} `json:"args"`
		Response presence `json:"response"`
	}
	wireTool struct {
		FunctionDeclarations []wireDeclaration `json:"functionDeclarations"`
	}
	wireDeclaration struct {
		Name                 shortStr `json:"name"`
		Parameters           presence `json:"parameters"`
		ParametersJSONSchema presence `json:"parametersJsonSchema"`
	}
)

// reset empties r for the next decode, keeping its slices' memory.
// encoding/json decodes into the existing elements of a slice without
// zeroing them first, so every element within capacity is zeroed here.
func (r *wireRequest) reset() {
	cs := r.Contents[:cap(r.Contents)]
	for i := range cs {
		ps := cs[i].Parts[:cap(cs[i].Parts)]
		clear(ps)
		cs[i] = wireContent{Parts: ps[:0]}
	}
	r.Contents = cs[:0]
	ts := r.Tools[:cap(r.Tools)]
	for i := range ts {
		ds := ts[i].FunctionDeclarations[:cap(ts[i].FunctionDeclarations)]
		clear(ds)
		ts[i] = wireTool{FunctionDeclarations: ds[:0]}
	}
	r.Tools = ts[:0]
}

// A shortStr is a JSON string of at most 32 bytes, decoded without
// allocating. Longer strings and strings with escapes fail the decode: the
// names, ids, roles and cities of this script have neither.
type shortStr struct {
	n uint8
	b [32]byte
}

// UnmarshalJSON implements [json.Unmarshaler].
func (s *shortStr) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		s.n = 0
		return nil
	}
	if len(data) < 2 || data[0] != '"' || len(data)-2 > len(s.b) || bytes.IndexByte(data, '\\') >= 0 {
		return fmt.Errorf("unexpected value %.40s where a short string belongs", data)
	}
	s.n = uint8(copy(s.b[:], data[1:len(data)-1]))
	return nil
}

func (s *shortStr) set() bool        { return s.n > 0 }
func (s *shortStr) is(v string) bool { return string(s.b[:s.n]) == v }
func (s *shortStr) String() string   { return string(s.b[:s.n]) }

// presence records whether a JSON value was there and whether it had
// content, without keeping it.
type presence uint8

const (
	absent   presence = iota // not in the JSON
	empty                    // "", {}, [], null or false
	nonEmpty                 // anything else
)

// UnmarshalJSON implements [json.Unmarshaler].
func (p *presence) UnmarshalJSON(data []byte) error {
	switch string(bytes.TrimSpace(data)) {
	case `""`, `{}`, `[]`, `null`, `false`:
		*p = empty
	default:
		*p = nonEmpty
	}
	return nil
}
