package fake

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"google.golang.org/genai"
)

// This file serves context caching (see the package documentation,
// section "Context caching"): the cachedContents resource of both
// backends, its use by generateContent, and implicit caching. The facts
// and their sources are in ../shared/notes/caching.md; the refusals of a
// request that uses a cache are rules of validate.go.

// The cachedContents methods.
const (
	// MethodCreateCachedContent is POST …/cachedContents.
	MethodCreateCachedContent Method = "cachedContents.create"
	// MethodGetCachedContent is GET …/cachedContents/{id}.
	MethodGetCachedContent Method = "cachedContents.get"
	// MethodListCachedContents is GET …/cachedContents.
	MethodListCachedContents Method = "cachedContents.list"
	// MethodUpdateCachedContent is PATCH …/cachedContents/{id}.
	MethodUpdateCachedContent Method = "cachedContents.patch"
	// MethodDeleteCachedContent is DELETE …/cachedContents/{id}.
	MethodDeleteCachedContent Method = "cachedContents.delete"
)

// The routes of cachedContents: /v1beta/cachedContents on the Gemini API
// (ai.google.dev/api/caching; genai caches.go:539, 605, 692, 775, 830 with
// the API version of client.go:377), and
// /v1beta1/projects/{project}/locations/{location}/cachedContents on Vertex
// AI, the path genai builds from the resource name there (transformer.go:32-69).
// That v1alpha and Vertex AI's v1 serve them too is assumed.
var (
	geminiCaches = regexp.MustCompile(`^/(v1beta|v1alpha)/cachedContents(?:/([^/:]+))?$`)
	vertexCaches = regexp.MustCompile(`^/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)/cachedContents(?:/([^/:]+))?$`)
)

// DefaultCacheTTL is how long a cache lives when its create sets neither a
// TTL nor an expire time: one hour, on both backends (caching.md §3).
const DefaultCacheTTL = time.Hour

// ImplicitCacheLifetime is how long the server remembers a prompt's prefix
// for implicit caching, from the last request that sent it. The Gemini API
// keeps one "a few minutes" with no fixed time, Vertex AI up to 24 hours
// (caching.md §10); five minutes is the fake's deterministic choice.
const ImplicitCacheLifetime = 5 * time.Minute

// MinCacheTokens returns the fewest tokens a cache of model may hold, and
// the fewest a prompt prefix must share with an earlier one to be reported
// as implicitly cached; one table of the Gemini API's documentation serves
// both (caching.md §4). Its newest version (2026-06/07) gives 2048 for the
// Gemini 2.5 models, 4096 for Gemini 3.1 Pro and the Flash models from 3.5
// on; the one before it 1024 for Gemini 3 Flash Preview and 4096 for
// Gemini 3 Pro. Other models get 4096, the floor ADK hard-codes and an
// error showed for a model it did not name. Tokens are counted as
// usageMetadata counts them (about 4 bytes a token).
func MinCacheTokens(model string) int { return modelname.MinCacheTokens(model) }

// CachedContent is a cache the server keeps, as [Server.Caches] reports
// it: what it holds, for which model, and until when.
type CachedContent struct {
	// Name is the resource name: "cachedContents/{id}" on the Gemini API,
	// "projects/{project}/locations/{location}/cachedContents/{id}" on
	// Vertex AI, what a request names in cachedContent.
	Name        string
	DisplayName string
	// Backend is the API the cache was created on; a cache is reached only
	// there.
	Backend genai.Backend
	// Model is the model the cache is for, without any path
	// ("gemini-2.5-flash").
	Model string
	// What the cache holds, put before the contents of every request that
	// uses it.
	Contents          []*genai.Content
	SystemInstruction *genai.Content
	Tools             []*genai.Tool
	ToolConfig        *genai.ToolConfig
	// Tokens is its usageMetadata.totalTokenCount, what a request that
	// uses it reports as cachedContentTokenCount.
	Tokens                             int32
	CreateTime, UpdateTime, ExpireTime time.Time
}

// storedCache is a cache the server keeps.
type storedCache struct {
	name, displayName string
	backend           genai.Backend
	model             string // without a path
	wireModel         string // as the API answers it
	held              []byte // the canonical JSON of a wireRequest with what it holds
	tokens            int32
	seq               int // creation order
	created, updated  time.Time
	expires           time.Time
}

// holds decodes what c holds, a fresh copy.
func (c *storedCache) holds() *wireRequest {
	var w wireRequest
	if err := json.Unmarshal(c.held, &w); err != nil {
		panic("fake: a cache's contents do not decode: " + err.Error()) // they decoded once
	}
	return &w
}

// wireCachedContent is the JSON of the CachedContent resource, as create
// and patch send it (google.ai.generativelanguage.v1beta.CachedContent and
// google.cloud.aiplatform.v1beta1.CachedContent, merged; the output-only
// fields are accepted and ignored, as proto JSON reads them).
type wireCachedContent struct {
	Name              string                            `json:"name,omitempty"`
	DisplayName       string                            `json:"displayName,omitempty"`
	Model             string                            `json:"model,omitempty"`
	Contents          []*genai.Content                  `json:"contents,omitempty"`
	SystemInstruction *genai.Content                    `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool                     `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig                 `json:"toolConfig,omitempty"`
	TTL               string                            `json:"ttl,omitempty"`
	ExpireTime        string                            `json:"expireTime,omitempty"`
	CreateTime        string                            `json:"createTime,omitempty"`
	UpdateTime        string                            `json:"updateTime,omitempty"`
	UsageMetadata     *genai.CachedContentUsageMetadata `json:"usageMetadata,omitempty"`
	EncryptionSpec    *encryptionSpec                   `json:"encryptionSpec,omitempty"`
}

// encryptionSpec is Vertex AI's customer-managed key of a cache.
type encryptionSpec struct {
	KmsKeyName string `json:"kmsKeyName,omitempty"`
}

// parseCacheRoute returns the cachedContents route of a request and the
// id it names, and false when it names none.
func parseCacheRoute(method string, u *url.URL) (route, string, bool) {
	path := slashes.ReplaceAllString(u.Path, "/")
	var (
		r  route
		id string
	)
	if m := geminiCaches.FindStringSubmatch(path); m != nil {
		r, id = route{backend: genai.BackendGeminiAPI, version: m[1]}, m[2]
	} else if m := vertexCaches.FindStringSubmatch(path); m != nil {
		r, id = route{backend: genai.BackendVertexAI, version: m[1], project: m[2], location: m[3]}, m[4]
	} else {
		return route{}, "", false
	}
	switch {
	case id == "" && method == http.MethodPost:
		r.method = MethodCreateCachedContent
	case id == "" && method == http.MethodGet:
		r.method = MethodListCachedContents
	case id != "" && method == http.MethodGet:
		r.method = MethodGetCachedContent
	case id != "" && method == http.MethodPatch:
		r.method = MethodUpdateCachedContent
	case id != "" && method == http.MethodDelete:
		r.method = MethodDeleteCachedContent
	default:
		return route{}, "", false
	}
	return r, id, true
}

// cacheName is the resource name of the cache id on rt's backend.
func cacheName(rt route, id string) string {
	if rt.backend == genai.BackendVertexAI {
		return fmt.Sprintf("projects/%s/locations/%s/cachedContents/%s", rt.project, rt.location, id)
	}
	return "cachedContents/" + id
}

// cacheNotFound is the answer for a cache that does not exist, expired or
// was deleted, reached through the cachedContents routes: on Vertex AI 404
// NOT_FOUND "Cached content {id} is not found." (caching.md §6, measured
// 2026-10 per sub2api, for GET and PATCH; DELETE assumed alike); on the
// Gemini API the 403 PERMISSION_DENIED its generateContent answers
// (assumed for these routes).
func cacheNotFound(vertex bool, name string) *APIError {
	if vertex {
		return &APIError{Code: http.StatusNotFound, Status: "NOT_FOUND",
			Message: fmt.Sprintf("Cached content %s is not found.", name[strings.LastIndexByte(name, '/')+1:])}
	}
	return &APIError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED", Message: cachedContentNotFound}
}

// cachedContentNotFound is the Gemini API's text for a cache it does not
// have (caching.md §6).
const cachedContentNotFound = "CachedContent not found (or permission denied)"

// serveCache answers a request to the cachedContents routes.
func (s *Server) serveCache(w http.ResponseWriter, r *http.Request, rt route, id string) {
	creds := credentialsOf(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req := Request{Header: r.Header.Clone(), Query: r.URL.Query(), APIKey: creds.apiKey, Token: creds.token, Body: body,
		Method: rt.method, Backend: rt.backend, APIVersion: rt.version, Project: rt.project, Location: rt.location}
	if id != "" {
		req.CachedContent = cacheName(rt, id)
	}
	in := &input{backend: rt.backend, version: rt.version, method: rt.method, project: rt.project, creds: creds, body: body,
		caches: s.lookupCache, cacheName: req.CachedContent, query: req.Query, now: s.timeNow().UTC()}
	var rej *Rejection
	if err != nil {
		rej = &Rejection{Rule: "route", Err: *invalidArgument(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxBody))}
	} else {
		rej = checkCache(in)
	}
	rec := &record{}
	if cc := in.cc; cc != nil && rt.method == MethodCreateCachedContent {
		// A create is recorded with what the cache is to hold.
		req.Model = bareModel(cc.Model)
		rec.canonical = mustJSON(cc.held())
	}
	rec.req = req
	s.take(rec, rej, false, nil)
	if rej != nil {
		s.log("fake: #%d %s %s: rejected by rule %q: %d %s", rec.req.Seq, r.Method, r.URL.Path, rej.Rule, rej.Err.httpCode(), rej.Err.Message)
		writeError(w, in, &rej.Err)
		return
	}
	var (
		resp any
		e    *APIError
	)
	switch rt.method {
	case MethodCreateCachedContent:
		resp = s.createCache(rt, in)
	case MethodGetCachedContent:
		resp, e = s.getCache(in)
	case MethodUpdateCachedContent:
		resp, e = s.updateCache(in)
	case MethodDeleteCachedContent:
		resp, e = s.deleteCache(in)
	case MethodListCachedContents:
		resp = s.listCaches(rt, in)
	}
	if e != nil { // the cache expired or went since the rules looked
		s.log("fake: #%d %s %s: %d %s", rec.req.Seq, r.Method, r.URL.Path, e.httpCode(), e.Message)
		writeError(w, in, e)
		return
	}
	s.log("fake: #%d %s %s", rec.req.Seq, r.Method, r.URL.Path)
	writeJSON(w, http.StatusOK, mustJSON(resp))
}

// checkCache runs [cacheRules] on in and returns the first failure, or nil.
func checkCache(in *input) *Rejection {
	for _, r := range cacheRules {
		if err := r.check(in); err != nil {
			return &Rejection{Rule: r.name, Err: *err}
		}
	}
	return nil
}

// held is what a cache described by cc holds, as a request would carry it.
func (cc *wireCachedContent) held() *wireRequest {
	return &wireRequest{Contents: cc.Contents, SystemInstruction: cc.SystemInstruction, Tools: cc.Tools, ToolConfig: cc.ToolConfig}
}

// writesCache reports whether in is a create or a patch, whose body is a
// CachedContent.
func (in *input) writesCache() bool {
	return in.method == MethodCreateCachedContent || in.method == MethodUpdateCachedContent
}

// The rules of cacheRules (validate.go).

func checkCacheFields(in *input) *APIError {
	if !in.writesCache() {
		return nil
	}
	cc, _, violations := decodeBody[wireCachedContent](in.backend, in.version, in.tree)
	if len(violations) > 0 {
		return payloadErrors(violations)
	}
	in.cc = cc
	return nil
}

func checkCacheModel(in *input) *APIError {
	if in.method == MethodCreateCachedContent && in.cc.Model == "" {
		return invalidArgument("CachedContent.model is required.")
	}
	return nil
}

func checkCacheExpiration(in *input) *APIError {
	if !in.writesCache() {
		return nil
	}
	cc := in.cc
	switch {
	case cc.TTL != "" && cc.ExpireTime != "":
		return invalidArgument("Invalid JSON payload received. Oneof field 'expiration' is already set. Cannot set 'expireTime'")
	case cc.TTL != "":
		d, err := parseDuration(cc.TTL)
		if err != nil {
			return invalidArgument(fmt.Sprintf("Invalid value at 'ttl' (type.googleapis.com/google.protobuf.Duration), %q", cc.TTL))
		}
		in.expires = in.now.Add(d)
	case cc.ExpireTime != "":
		t, err := time.Parse(time.RFC3339Nano, cc.ExpireTime)
		if err != nil {
			return invalidArgument(fmt.Sprintf("Invalid value at 'expire_time' (type.googleapis.com/google.protobuf.Timestamp), %q", cc.ExpireTime))
		}
		in.expires = t.UTC()
	case in.method == MethodCreateCachedContent:
		in.expires = in.now.Add(DefaultCacheTTL)
	}
	return nil
}

// updatableFields are the fields of a cache a patch may change: its
// expiration, named in an updateMask in snake_case or camelCase.
var updatableFields = []string{"ttl", "expire_time", "expireTime"}

func checkCacheUpdateMask(in *input) *APIError {
	if in.method != MethodUpdateCachedContent {
		return nil
	}
	mask := in.query.Get("updateMask")
	for f := range strings.SplitSeq(mask, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(updatableFields, f) {
			return invalidArgument(fmt.Sprintf("The update mask names %q: only the expiration (ttl or expire_time) of a cached content can be updated.", f))
		}
	}
	cc := in.cc
	if mask == "" && (cc.DisplayName != "" || cc.Model != "" || len(cc.Contents) > 0 || cc.SystemInstruction != nil || len(cc.Tools) > 0 || cc.ToolConfig != nil) {
		return invalidArgument("Only the expiration (ttl or expire_time) of a cached content can be updated.")
	}
	return nil
}

func checkCacheExists(in *input) *APIError {
	if in.cacheName == "" {
		return nil
	}
	if in.caches == nil || in.caches(in.backend, in.cacheName) == nil {
		return cacheNotFound(in.vertex(), in.cacheName)
	}
	return nil
}

func checkCacheSize(in *input) *APIError {
	if in.method != MethodCreateCachedContent {
		return nil
	}
	var u usageCounter
	u.prompt(in.cc.held())
	n, floor := tokens(u.promptBytes), MinCacheTokens(bareModel(in.cc.Model))
	if int(n) >= floor {
		in.cachedTokens = n
		return nil
	}
	if in.vertex() {
		return invalidArgument(fmt.Sprintf("The cached content is of %d tokens. The minimum token count to start caching is %d.", n, floor))
	}
	return invalidArgument(fmt.Sprintf("Cached content is too small. total_token_count=%d, min_total_token_count=%d", n, floor))
}

// parseDuration reads a google.protobuf.Duration in JSON: seconds with an
// optional fraction and an "s" ("3600s", "1.5s"; genai writes "%.0fs").
func parseDuration(s string) (time.Duration, error) {
	num, ok := strings.CutSuffix(s, "s")
	if !ok {
		return 0, fmt.Errorf("no s suffix")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(f * float64(time.Second)), nil
}

// createCache makes the cache in describes, on rt's backend; the rules
// checked it.
func (s *Server) createCache(rt route, in *input) any {
	cc, model := in.cc, bareModel(in.cc.Model)
	wireModel := "models/" + model
	if rt.backend == genai.BackendVertexAI {
		wireModel = fmt.Sprintf("projects/%s/locations/%s/publishers/google/models/%s", rt.project, rt.location, model)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cacheSeq++
	// Vertex AI's cache ids are numbers (the id in "Invalid resource state
	// for cache content {numeric id}."); the Gemini API's are lowercase
	// letters and digits.
	id := fmt.Sprintf("fakecache%d", s.cacheSeq)
	if rt.backend == genai.BackendVertexAI {
		id = strconv.Itoa(1000000 + s.cacheSeq)
	}
	c := &storedCache{name: cacheName(rt, id), displayName: cc.DisplayName, backend: rt.backend, model: model, wireModel: wireModel,
		held: mustJSON(cc.held()), tokens: in.cachedTokens, seq: s.cacheSeq, created: in.now, updated: in.now, expires: in.expires}
	if s.caches == nil {
		s.caches = map[string]*storedCache{}
	}
	s.caches[c.name] = c
	return cacheJSON(c)
}

// bareModel returns a model's name without its path ("models/",
// "projects/…/publishers/google/models/").
func bareModel(model string) string {
	if i := strings.LastIndex(model, "models/"); i >= 0 {
		return model[i+len("models/"):]
	}
	return model
}

// liveCache returns the cache name names on backend, if it exists and has
// not expired at now; an expired one is forgotten. s.mu must be held.
func (s *Server) liveCache(backend genai.Backend, name string, now time.Time) (*storedCache, bool) {
	c, ok := s.caches[name]
	if !ok || c.backend != backend {
		return nil, false
	}
	if !now.Before(c.expires) {
		delete(s.caches, name)
		return nil, false
	}
	return c, true
}

func (s *Server) getCache(in *input) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.liveCache(in.backend, in.cacheName, in.now)
	if !ok {
		return nil, cacheNotFound(in.vertex(), in.cacheName)
	}
	return cacheJSON(c), nil
}

// updateCache sets the expiration of a live cache, if the patch sets one.
func (s *Server) updateCache(in *input) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.liveCache(in.backend, in.cacheName, in.now)
	if !ok {
		return nil, cacheNotFound(in.vertex(), in.cacheName)
	}
	if !in.expires.IsZero() {
		c.expires, c.updated = in.expires, in.now
	}
	return cacheJSON(c), nil
}

func (s *Server) deleteCache(in *input) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.liveCache(in.backend, in.cacheName, in.now); !ok {
		return nil, cacheNotFound(in.vertex(), in.cacheName)
	}
	delete(s.caches, in.cacheName)
	return struct{}{}, nil
}

// Listing: a page holds pageSize caches, 100 when unset and at most 1000
// (the Gemini API documents both numbers for its list methods; assumed for
// caches and for Vertex AI); the page token is the offset of the next one.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

func checkCacheListPage(in *input) *APIError {
	if in.method != MethodListCachedContents {
		return nil
	}
	in.pageSize = defaultPageSize
	if v := in.query.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalidArgument(fmt.Sprintf("Invalid value at 'page_size' (TYPE_INT32), %q", v))
		}
		if n > 0 {
			in.pageSize = min(n, maxPageSize)
		}
	}
	if v := in.query.Get("pageToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalidArgument("Invalid page token.")
		}
		in.pageOffset = n
	}
	return nil
}

// listCaches answers a list: the live caches of rt's backend (on Vertex AI,
// of its project and location), oldest first, in.pageSize from
// in.pageOffset on.
func (s *Server) listCaches(rt route, in *input) any {
	now, size, offset := in.now, in.pageSize, in.pageOffset
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := cacheName(rt, "")
	var live []*storedCache
	for name := range s.caches {
		if c, ok := s.liveCache(rt.backend, name, now); ok && strings.HasPrefix(name, prefix) {
			live = append(live, c)
		}
	}
	slices.SortFunc(live, func(a, b *storedCache) int { return a.seq - b.seq })
	type page struct {
		CachedContents []any  `json:"cachedContents,omitempty"`
		NextPageToken  string `json:"nextPageToken,omitempty"`
	}
	var p page
	for i := offset; i < len(live) && i < offset+size; i++ {
		p.CachedContents = append(p.CachedContents, cacheJSON(live[i]))
	}
	if offset+size < len(live) {
		p.NextPageToken = strconv.Itoa(offset + size)
	}
	return p
}

// cacheJSON is a cache as the API answers it: its name, display name,
// model, times (expireTime always) and usage; never what it holds
// (caching.md §2).
func cacheJSON(c *storedCache) any {
	type usage struct {
		TotalTokenCount int32 `json:"totalTokenCount"`
	}
	return struct {
		Name          string `json:"name"`
		DisplayName   string `json:"displayName,omitempty"`
		Model         string `json:"model"`
		CreateTime    string `json:"createTime"`
		UpdateTime    string `json:"updateTime"`
		ExpireTime    string `json:"expireTime"`
		UsageMetadata usage  `json:"usageMetadata"`
	}{c.name, c.displayName, c.wireModel, timestamp(c.created), timestamp(c.updated), timestamp(c.expires), usage{c.tokens}}
}

// timestamp writes t as a google.protobuf.Timestamp in JSON.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// Caches returns the caches the server keeps, those not deleted and not
// expired at the server's time (see [Server.SetTimeNowFunc]), in the order
// they were created. The caller owns the copies.
func (s *Server) Caches() []*CachedContent {
	now := s.timeNow()
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []*storedCache
	for name, c := range s.caches {
		if _, ok := s.liveCache(c.backend, name, now); ok {
			live = append(live, c)
		}
	}
	slices.SortFunc(live, func(a, b *storedCache) int { return a.seq - b.seq })
	out := make([]*CachedContent, len(live))
	for i, c := range live {
		h := c.holds()
		out[i] = &CachedContent{Name: c.name, DisplayName: c.displayName, Backend: c.backend, Model: c.model,
			Contents: h.Contents, SystemInstruction: h.SystemInstruction, Tools: h.Tools, ToolConfig: h.ToolConfig,
			Tokens: c.tokens, CreateTime: c.created, UpdateTime: c.updated, ExpireTime: c.expires}
	}
	return out
}

// ExpireCaches ends the caches with these names, or all of them when none
// is given, as their expiry does: a request that uses one is then refused
// as the API refuses a cache that is gone, and the cachedContents routes
// answer that it is not found. It also forgets every prompt remembered for
// implicit caching when no name is given.
func (s *Server) ExpireCaches(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(names) == 0 {
		s.caches, s.implicit = nil, nil
		return
	}
	for _, n := range names {
		delete(s.caches, n)
	}
}

// The request rules of a generateContent that names a cache (validate.go).

func checkCachedContentExclusive(in *input) *APIError {
	r := in.req
	if r.CachedContent == "" || r.SystemInstruction == nil && len(r.Tools) == 0 && r.ToolConfig == nil {
		return nil
	}
	if in.vertex() {
		return invalidArgument("Tool config, tools and system instruction should not be set in the request when using cached content.")
	}
	return invalidArgument("CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.")
}

func checkCachedContentFound(in *input) *APIError {
	name := in.req.CachedContent
	if name == "" {
		return nil
	}
	var c *storedCache
	if in.caches != nil {
		c = in.caches(in.backend, name)
	}
	if c == nil {
		if in.vertex() {
			return &APIError{Code: http.StatusBadRequest, Status: "FAILED_PRECONDITION",
				Message: fmt.Sprintf("Invalid resource state for cache content %s.", name[strings.LastIndexByte(name, '/')+1:])}
		}
		return &APIError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED", Message: cachedContentNotFound}
	}
	in.cache = c
	return nil
}

// checkCachedContentModel checks that the cache is the request's model's,
// and puts what the cache holds into the request, as the API reads it: the
// cache's system instruction, tools and tool config, and its contents
// before the request's. The rules after it check that whole prompt.
func checkCachedContentModel(in *input) *APIError {
	c := in.cache
	if c == nil {
		return nil
	}
	if c.model != in.model {
		return invalidArgument(fmt.Sprintf("Model used by GenerateContent request (models/%s) and CachedContent (models/%s) has to be the same.", in.model, c.model))
	}
	h := c.holds()
	in.req.SystemInstruction, in.req.Tools, in.req.ToolConfig = h.SystemInstruction, h.Tools, h.ToolConfig
	in.req.Contents = append(h.Contents, in.req.Contents...)
	in.cachedTokens = c.tokens
	return nil
}

// lookupCache returns the live cache name names on backend, or nil.
func (s *Server) lookupCache(backend genai.Backend, name string) *storedCache {
	now := s.timeNow()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, _ := s.liveCache(backend, name, now)
	return c
}

// Implicit caching. The server remembers the prefixes of the prompts it
// answered, per backend and model, for [ImplicitCacheLifetime] after the
// last request that sent each; a later request reports the longest prefix
// it shares with them as cached, when that prefix reaches the model's
// [MinCacheTokens]. A prompt is read in whole items, in the order the API
// reads it (caching.md §10): the system instruction, each entry of tools,
// then each content; a prefix is a run of leading items equal, as JSON, to
// those of an earlier prompt. Its tokens are counted as usage counts the
// prompt's. The real API gives no such guarantee (hits are best effort,
// and were reported below the documented floor: 216 of 321 tokens of a
// gemini-2.5-flash prompt with a document in the real traffic's pydantic-ai
// cassettes); the fake's rule is deterministic, so that a test can count
// on a hit and on a miss.

// implicitKey names one remembered prefix.
type implicitKey struct {
	backend genai.Backend
	model   string
	sum     [sha256.Size]byte // of the prefix's items, chained
}

// implicitHit returns how many tokens of in's prompt an earlier prompt of
// the same backend and model shares, as implicit caching reports them, and
// remembers in's prefixes.
func (s *Server) implicitHit(in *input) int32 {
	var items [][]byte
	if si := in.req.SystemInstruction; si != nil {
		items = append(items, mustJSON(si))
	}
	for _, t := range in.req.Tools {
		items = append(items, mustJSON(t))
	}
	for _, c := range in.req.Contents {
		items = append(items, mustJSON(c))
	}
	keys := make([]implicitKey, len(items))
	var sum [sha256.Size]byte
	for i, it := range items {
		h := sha256.New()
		h.Write(sum[:])
		h.Write(it)
		copy(sum[:], h.Sum(nil))
		keys[i] = implicitKey{in.backend, in.model, sum}
	}
	now := s.timeNow()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, until := range s.implicit {
		if !now.Before(until) {
			delete(s.implicit, k)
		}
	}
	shared, bytes := 0, 0
	for i, k := range keys {
		if _, ok := s.implicit[k]; !ok {
			break
		}
		shared, bytes = i+1, bytes+len(items[i])
	}
	if s.implicit == nil {
		s.implicit = map[implicitKey]time.Time{}
	}
	for _, k := range keys {
		s.implicit[k] = now.Add(ImplicitCacheLifetime)
	}
	if n := tokens(bytes); shared > 0 && int(n) >= MinCacheTokens(in.model) {
		return n
	}
	return 0
}
