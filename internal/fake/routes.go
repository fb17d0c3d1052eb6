package fake

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"google.golang.org/genai"
)

// The routes the server serves, with the backend each belongs to:
//
//   - Gemini API: POST /{v1,v1beta,v1alpha}/models/{model}:{method}
//     (genai models.go:4541, 4607; gemini-wire.md §1.1).
//   - Vertex AI: POST /{v1,v1beta1}/projects/{project}/locations/{location}/publishers/google/models/{model}:{method},
//     what genai sends with a project and a location (api_client.go:165-194,
//     transformer.go:87-95), and the same without projects/…/locations/…,
//     what it sends in Vertex AI express mode (an API key, no project).
//     These are bindings of PredictionService.GenerateContent in
//     google/cloud/aiplatform/v1beta1/prediction_service.proto.
//
// {method} is generateContent or streamGenerateContent. A run of slashes
// counts as one: the Gemini API answered 200 to
// POST //v1beta/models/gemini-2.0-flash:generateContent, the path a base
// URL with a trailing slash makes (ten requests of adk-go's tests in the
// real traffic, June and July 2025, e.g. the trace adk-go-0df626341f91).
// That Vertex AI does the same is assumed.
var (
	geminiRoute = regexp.MustCompile(`^/(v1|v1beta|v1alpha)/models/([^/:]+):([A-Za-z]+)$`)
	vertexRoute = regexp.MustCompile(`^/(v1|v1beta1)/(?:projects/([^/]+)/locations/([^/]+)/)?publishers/google/models/([^/:]+):([A-Za-z]+)$`)
	slashes     = regexp.MustCompile(`//+`)
)

// route is what a request's method and path name.
type route struct {
	backend           genai.Backend
	version           string
	project, location string // Vertex AI project routes only
	model             string
	method            Method
}

// parseRoute returns the route of a request, and false when nothing is
// served there.
func parseRoute(method string, u *url.URL) (route, bool) {
	if method != http.MethodPost {
		return route{}, false
	}
	var r route
	path := slashes.ReplaceAllString(u.Path, "/")
	if m := geminiRoute.FindStringSubmatch(path); m != nil {
		r = route{backend: genai.BackendGeminiAPI, version: m[1], model: m[2], method: Method(m[3])}
	} else if m := vertexRoute.FindStringSubmatch(path); m != nil {
		r = route{backend: genai.BackendVertexAI, version: m[1], project: m[2], location: m[3], model: m[4], method: Method(m[5])}
	} else {
		return route{}, false
	}
	return r, r.method == MethodGenerateContent || r.method == MethodStreamGenerateContent
}

// credentials are what a request authenticates with.
type credentials struct {
	apiKey        string // x-goog-api-key, or the key query parameter
	authorization string // the Authorization header as sent
	token         string // its bearer token
}

// credentialsOf reads a request's credentials. The API takes the key in the
// x-goog-api-key header (what genai sends, api_client.go:337-346) or in the
// key query parameter, Google APIs' standard parameter (the REST examples of
// the Gemini API used ?key=; CLIProxyAPI#17 shows a request sent that way).
func credentialsOf(r *http.Request) credentials {
	c := credentials{apiKey: r.Header.Get("X-Goog-Api-Key"), authorization: r.Header.Get("Authorization")}
	if c.apiKey == "" {
		c.apiKey = r.URL.Query().Get("key")
	}
	if scheme, token, ok := strings.Cut(c.authorization, " "); ok && strings.EqualFold(scheme, "Bearer") {
		c.token = strings.TrimSpace(token)
	}
	return c
}

// streamFormat is how a streamGenerateContent answer is framed.
type streamFormat int

const (
	// streamSSE: `data: <json>` events, for alt=sse (what genai sends).
	streamSSE streamFormat = iota
	// streamJSONArray: one JSON array whose elements arrive as they are
	// generated, without alt or with alt=json (what the legacy Go SDK and
	// langchaingo read, through gax's ProtoJSONStream).
	streamJSONArray
)

// streamFormatOf returns the framing a stream request asks for with its
// alt (or $alt) query parameter, and false for a value the server cannot
// serve. "json;enum-encoding=int" (the legacy Go SDK's) asks for enums by
// number in the answer; the server sends names, which proto JSON readers
// also accept.
func streamFormatOf(q url.Values) (streamFormat, bool) {
	alt := q.Get("alt")
	if alt == "" {
		alt = q.Get("$alt")
	}
	alt, _, _ = strings.Cut(alt, ";")
	switch strings.ToLower(strings.TrimSpace(alt)) {
	case "sse":
		return streamSSE, true
	case "", "json":
		return streamJSONArray, true
	}
	return 0, false
}
