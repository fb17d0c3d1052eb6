package fake

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"google.golang.org/genai"
)

// Method is the API method a request called.
type Method string

const (
	// MethodGenerateContent is POST …/models/{model}:generateContent.
	MethodGenerateContent Method = "generateContent"
	// MethodStreamGenerateContent is POST …/models/{model}:streamGenerateContent.
	MethodStreamGenerateContent Method = "streamGenerateContent"
)

// Request is one request the server received, decoded. The server records
// every request before it decides the answer, including rejected ones.
//
// Values returned by [Server.Requests], [Server.LastRequest] and passed to a
// reply function are fresh copies: the caller owns them and may modify them.
type Request struct {
	// Seq numbers requests from 1 in order of arrival.
	Seq int
	// Method is the API method, or "" when the route was unknown:
	// generateContent's two, or the Interactions API's four
	// (MethodCreateInteraction…).
	Method Method
	// Backend is the API the route belongs to: genai.BackendGeminiAPI for
	// /v1beta/models/…, genai.BackendVertexAI for
	// /v1beta1/projects/…/publishers/google/models/… and
	// /v1beta1/publishers/google/models/… (express mode).
	Backend genai.Backend
	// Model is the model name from the path, without "models/" or
	// "publishers/google/models/" ("gemini-2.5-flash").
	Model string
	// APIVersion is the version segment of the path ("v1beta", "v1beta1").
	APIVersion string
	// Project and Location are those of a Vertex AI project route; empty
	// otherwise.
	Project, Location string
	// Header holds the request headers (User-Agent, X-Goog-Api-Client,
	// X-Server-Timeout…).
	Header http.Header
	// Query holds the query parameters (alt=sse for genai's streams).
	Query url.Values
	// APIKey is the value of the x-goog-api-key header, or of the key query
	// parameter.
	APIKey string
	// Token is the bearer token of the Authorization header.
	Token string

	// The decoded body. They are nil when the body could not be decoded
	// (see Rejection). GenerationConfig lacks imageConfig, which genai's
	// GenerationConfig has no field for; Body has it.
	Contents          []*genai.Content
	SystemInstruction *genai.Content
	Tools             []*genai.Tool
	ToolConfig        *genai.ToolConfig
	GenerationConfig  *genai.GenerationConfig
	SafetySettings    []*genai.SafetySetting
	Labels            map[string]string
	ServiceTier       genai.ServiceTier
	// ContinuationToken is the token of a request that continues a long
	// answer (see the package documentation, "Long answers").
	ContinuationToken []byte
	// CachedContent is the cache a generateContent request names, or the
	// one a request to the cachedContents routes reads, updates or deletes
	// (its resource name). A create of a cache
	// (MethodCreateCachedContent) has the model and what the cache is to
	// hold in Model, Contents, SystemInstruction, Tools and ToolConfig.
	CachedContent string

	// Body is the raw body as received.
	Body []byte
	// The Interactions API's requests (Method MethodCreateInteraction and
	// the others) also have these. Their Contents, SystemInstruction,
	// Tools, ToolConfig and GenerationConfig say the whole conversation as
	// generateContent's request would: the previous interactions' steps
	// and the input, so that a test reads them the same way on both APIs.
	//
	// InteractionID is the interaction a get, delete or cancel names;
	// PreviousInteractionID, Store and Stream are the create's fields (a
	// get's Stream is its stream query parameter); Input holds the
	// contents of the create's own input, what it sent.
	InteractionID         string
	PreviousInteractionID string
	Store                 *bool
	Stream                bool
	Input                 []*genai.Content

	// Rejection is set when validation rejected the request: which rule, and
	// the error that was sent.
	Rejection *Rejection
	// Unscripted is set when no reply was scripted for the request and it
	// was answered with the "no reply scripted" error.
	Unscripted bool
}

// Rejection records a request that failed validation: the name of the rule
// it broke (see the package documentation) and the error sent for it.
type Rejection struct {
	// Seq is the rejected request's [Request.Seq].
	Seq int
	// Rule names the rule, e.g. "function-response-count".
	Rule string
	// Err is the error that was sent.
	Err APIError
}

// clone returns a deep copy of r, or nil.
func (r *Rejection) clone() *Rejection {
	if r == nil {
		return nil
	}
	c := *r
	c.Err = *r.Err.clone()
	return &c
}

// record is the server's own copy of a request. It keeps the canonical JSON
// of the decoded body and decodes a fresh copy for every reader.
type record struct {
	req       Request // Header and Body only; the decoded fields stay nil
	canonical []byte  // nil when the body was not decoded
	input     []byte  // an interaction's input contents, as JSON
}

// request returns a deep copy of the recorded request.
func (r *record) request() *Request {
	out := r.req
	out.Header = r.req.Header.Clone()
	out.Query = cloneValues(r.req.Query)
	out.Body = slices.Clone(r.req.Body)
	out.Rejection = r.req.Rejection.clone()
	if r.canonical != nil {
		var w wireRequest
		if err := json.Unmarshal(r.canonical, &w); err != nil {
			panic("fake: recorded request does not decode: " + err.Error()) // it decoded once
		}
		setDecoded(&out, &w)
	}
	out.Store = cloneBool(r.req.Store)
	if r.input != nil {
		if err := json.Unmarshal(r.input, &out.Input); err != nil {
			panic("fake: recorded input does not decode: " + err.Error())
		}
	}
	return &out
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := maps.Clone(v)
	for k, vs := range out {
		out[k] = slices.Clone(vs)
	}
	return out
}

func setDecoded(r *Request, w *wireRequest) {
	r.Contents = w.Contents
	r.SystemInstruction = w.SystemInstruction
	r.Tools = w.Tools
	r.ToolConfig = w.ToolConfig
	r.SafetySettings = w.SafetySettings
	r.Labels = w.Labels
	r.ServiceTier = w.ServiceTier
	r.ContinuationToken = w.ContinuationToken
	if w.CachedContent != "" {
		r.CachedContent = w.CachedContent
	}
	if w.GenerationConfig != nil {
		r.GenerationConfig = &w.GenerationConfig.GenerationConfig
	}
}

// Requests returns copies of all requests received so far, in order of
// arrival. It is safe to call concurrently with requests in flight.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.records))
	for i, r := range s.records {
		out[i] = r.request()
	}
	return out
}

// LastRequest returns a copy of the most recent request, or nil if there
// has been none.
func (s *Server) LastRequest() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.records) == 0 {
		return nil
	}
	return s.records[len(s.records)-1].request()
}

// Rejections returns copies of the rejections of all requests that failed
// validation, in order of arrival; a client that speaks the protocol
// correctly causes none. Requests to unknown routes are rejected too, by the
// rule "route".
func (s *Server) Rejections() []*Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Rejection
	for _, r := range s.records {
		if r.req.Rejection != nil {
			out = append(out, r.req.Rejection.clone())
		}
	}
	return out
}

// Unscripted returns how many requests found neither a queued reply nor a
// reply function, and were answered with the "no reply scripted" error.
func (s *Server) Unscripted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.records {
		if r.req.Unscripted {
			n++
		}
	}
	return n
}
