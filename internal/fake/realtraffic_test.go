package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/httprr"
)

// TestRealTraffic holds the fake against real traffic: the recordings of
// the Gemini API and Vertex AI in ../shared/realtraffic (beside the
// repository's root), made by other projects' test suites. Every request the
// API answered 200 must be accepted; every request the API refused for what
// the request says must be refused with the same status, and the same
// message and field violations where the recording has them. Refusals the
// fake cannot reproduce from the request alone (see [unjudged]) are counted
// by reason.
func TestRealTraffic(t *testing.T) {
	files, exchanges := realTraffic(t)
	srv := NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(*Request) *Reply { return Text("ok") })
	client := newTrafficClient(srv)
	var tally conformanceTally
	for _, ex := range exchanges {
		v := judge(t, client, srv, ex)
		tally.add(ex, v)
		if v.judged && !v.agrees {
			t.Errorf("%v:\n\t%s", ex, v.detail)
		}
	}
	t.Log(tally.summary(files))
}

// The rules' annotations cite the recordings by name: every cited trace
// (adk-go-0123456789ab) and cassette (some_test.yaml) is in the traffic.
func TestRealTrafficCitations(t *testing.T) {
	_, exchanges := realTraffic(t)
	var sources strings.Builder
	for _, ex := range exchanges {
		fmt.Fprintf(&sources, "%s %s\n", ex.File, ex.Req.Header.Get("X-Realtraffic-Source"))
	}
	cited := regexp.MustCompile(`\b(?:[a-z]+(?:-go)?-[0-9a-f]{12}|[A-Za-z0-9_.\-]+\.yaml)\b`)
	n := 0
	for _, r := range rules {
		for _, name := range cited.FindAllString(r.verified+" "+r.assumed, -1) {
			n++
			// A source names its cassette "…<name>.yaml@<blob>.yaml"; a trace
			// is "<name>.httprr".
			want := name + "@"
			if !strings.HasSuffix(name, ".yaml") {
				want = name + ".httprr "
			}
			if !strings.Contains(sources.String(), want) {
				t.Errorf("rule %q cites %s, which is in no recording's name or source", r.name, name)
			}
		}
	}
	if n == 0 {
		t.Error("no rule cites a recording")
	}
}

// realTraffic reads the recordings and returns how many traces there are
// and their exchanges, in the order of the files' names. It skips the test,
// saying why, when there are none, and fails it when TOOLNEXUS_REALTRAFFIC
// names a directory that is not there.
func realTraffic(t *testing.T) (files int, exchanges []httprr.Exchange) {
	t.Helper()
	dir, why := httprr.Dir()
	if dir == "" && os.Getenv(httprr.Env) != "" {
		t.Fatal(why)
	}
	if dir == "" {
		t.Skip(why)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.httprr"))
	if err != nil || len(paths) == 0 {
		t.Skipf("no *.httprr traces in %s (%v)", dir, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		exs, err := httprr.Read(filepath.Base(p), data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		exchanges = append(exchanges, exs...)
	}
	return len(paths), exchanges
}

// newTrafficClient returns a client of srv, whose connections srv.Close
// closes, with a generous timeout as a hang guard.
func newTrafficClient(srv *Server) *http.Client {
	c := *srv.srv.Client()
	c.Timeout = time.Minute
	return &c
}

// verdict is how the fake answered one recorded exchange.
type verdict struct {
	judged bool
	reason string // why the exchange was not judged
	agrees bool
	detail string // what the API said and what the fake said, when they differ
}

// unjudged lists the refusals the fake cannot reproduce from the request
// alone, with the reason reported for them. The first that matches decides.
var unjudged = []struct {
	reason string
	match  func(status int, message string) bool
}{
	{"server unavailable or failing (5xx): not about the request", func(s int, _ string) bool { return s >= 500 }},
	{"quota (429): not about the request", func(s int, _ string) bool { return s == http.StatusTooManyRequests }},
	{"credentials the API did not take: keys and tokens are scrubbed from the recordings", func(s int, m string) bool {
		// 400 "API key not valid. Please pass a valid API key." (the
		// opentelemetry-python-contrib cassette test_gemini.yaml), 401
		// ACCESS_TOKEN_TYPE_UNSUPPORTED (pydantic-ai's
		// test_google_vertexai_image_generation.yaml). A refusal for no
		// credentials at all is judged: see [credentialsMissing].
		return s == http.StatusUnauthorized || s == http.StatusForbidden || strings.HasPrefix(m, "API key not valid")
	}},
	{"a model that does not exist: the fake serves any model name", func(s int, m string) bool {
		return s == http.StatusNotFound && strings.Contains(m, "not found")
	}},
	{"content the fake does not read: media bytes, URLs it would have to fetch", func(s int, m string) bool {
		// "Provided image is not valid." (pydantic-ai test_image_url_input),
		// "The document has no pages." (pydantic-ai test_document_url_input),
		// "Cannot fetch content from the provided URL. …" (pydantic-ai
		// test_multimodal_tool_return_matrix, Vertex AI).
		return s == http.StatusBadRequest && (m == "Provided image is not valid." || m == "The document has no pages." ||
			strings.HasPrefix(m, "Cannot fetch content from the provided URL."))
	}},
}

// credentialsMissing reports whether a recorded refusal says the request
// carried no credentials at all. Such a request is replayed as it was
// recorded, without the credentials [replay] adds for the scrubbed ones.
func credentialsMissing(status int, message string) bool {
	return status == http.StatusForbidden && message == unregisteredCallers ||
		status == http.StatusUnauthorized && message == missingCredential
}

// judge sends ex's request to srv and compares the answers.
func judge(t *testing.T, client *http.Client, srv *Server, ex httprr.Exchange) verdict {
	t.Helper()
	want := ex.Resp.StatusCode
	wantErr := recordedError(ex.RespBody)
	anonymous := credentialsMissing(want, wantErr.Message)
	if want != http.StatusOK && !anonymous {
		for _, u := range unjudged {
			if u.match(want, wantErr.Message) {
				return verdict{reason: u.reason}
			}
		}
	}
	if want == http.StatusOK && namesCache(ex.Body) {
		return verdict{reason: "a cache the recorded API made: the fake's caches have names of their own"}
	}
	// The files of the Files API the request names were uploaded by the
	// recorded project: the fake is given files of the same names first.
	holdFiles(t, client, srv, ex.Body)
	got, gotBody, rej := replay(t, client, srv, ex, !anonymous)
	v := verdict{judged: true}
	var gotErr recorded
	if got != http.StatusOK {
		gotErr = recordedError(gotBody)
	}
	switch {
	case want == http.StatusOK:
		v.agrees = got == http.StatusOK
	case wantErr.Message == "":
		v.agrees = got == want
	default:
		v.agrees = got == want && gotErr.Message == wantErr.Message && (wantErr.Status == "" || gotErr.Status == wantErr.Status) &&
			(wantErr.violations() == nil || slices.Equal(gotErr.violations(), wantErr.violations()))
	}
	if !v.agrees {
		rule := ""
		if rej != nil {
			rule = fmt.Sprintf(" (rule %q)", rej.Rule)
		}
		v.detail = fmt.Sprintf("the API answered %d %s %q\n\tthe fake answered %d %s %q%s\n\trequest: %s %s\n\tbody: %.600s",
			want, wantErr.Status, wantErr.Message, got, gotErr.Status, gotErr.Message, rule, ex.Req.Method, ex.Req.URL, ex.Body)
	}
	return v
}

// namesCache reports whether a request body names a cache (cachedContent,
// or cached_content as proto JSON also reads it).
func namesCache(body []byte) bool {
	var b struct {
		Camel string `json:"cachedContent"`
		Snake string `json:"cached_content"`
	}
	return json.Unmarshal(body, &b) == nil && (b.Camel != "" || b.Snake != "")
}

// holdFiles uploads to srv, through its resumable upload, a file of each
// name the Files API URIs of a request body name that srv does not hold.
func holdFiles(t *testing.T, client *http.Client, srv *Server, body []byte) {
	t.Helper()
	for _, m := range fileURIInBody.FindAllSubmatch(body, -1) {
		id := string(m[1])
		if srv.lookupFile(id) != nil {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/upload/v1beta/files", strings.NewReader(`{"file":{"name":"files/`+id+`"}}`))
		req.Header.Set("X-Goog-Api-Key", APIKey)
		req.Header.Set("X-Goog-Upload-Protocol", "resumable")
		req.Header.Set("X-Goog-Upload-Command", "start")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		req, _ = http.NewRequest(http.MethodPost, resp.Header.Get("X-Goog-Upload-URL"), strings.NewReader("x"))
		req.Header.Set("X-Goog-Api-Key", APIKey)
		req.Header.Set("X-Goog-Upload-Command", "upload, finalize")
		req.Header.Set("X-Goog-Upload-Offset", "0")
		if resp, err = client.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("uploading files/%s to the fake: %s", id, resp.Status)
		}
	}
}

// fileURIInBody matches a Files API file's URI in a request body, and its
// id.
var fileURIInBody = regexp.MustCompile(`"(?:fileUri|file_uri)"\s*:\s*"https?://[^/"]+/v1(?:beta|alpha)?/files/([a-z0-9-]+)"`)

// replay sends ex's request to srv, with the credentials the recording's
// scrubbing removed when creds is set, and returns the status, the body and
// the rejection.
func replay(t *testing.T, client *http.Client, srv *Server, ex httprr.Exchange, creds bool) (int, []byte, *Rejection) {
	t.Helper()
	u := *ex.Req.URL
	target := srv.URL + u.EscapedPath()
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	req, err := http.NewRequest(ex.Req.Method, target, bytes.NewReader(ex.Body))
	if err != nil {
		t.Fatalf("%v: %v", ex, err)
	}
	for k, vs := range ex.Req.Header {
		if k == "X-Realtraffic-Source" || k == "Content-Length" {
			continue
		}
		req.Header[k] = vs
	}
	if creds && req.Header.Get("X-Goog-Api-Key") == "" && req.Header.Get("Authorization") == "" && u.Query().Get("key") == "" {
		if vertexHost.MatchString(u.Host) && strings.Contains(u.Path, "/projects/") {
			req.Header.Set("Authorization", "Bearer "+AccessToken)
		} else {
			req.Header.Set("X-Goog-Api-Key", APIKey)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%v: %v", ex, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%v: reading the fake's answer: %v", ex, err)
	}
	var rej *Rejection
	if last := srv.LastRequest(); last != nil {
		rej = last.Rejection
	}
	return resp.StatusCode, body, rej
}

// vertexHost matches the hosts of Vertex AI: aiplatform.googleapis.com and
// its regional forms, {location}-aiplatform.googleapis.com.
var vertexHost = regexp.MustCompile(`(^|-)aiplatform\.googleapis\.com$`)

// recorded is the error of an error response.
type recorded struct {
	Status, Message string
	Details         []struct {
		Type            string `json:"@type"`
		FieldViolations []struct {
			Field, Description string
		}
	}
}

// violations returns the fields and descriptions of the error's
// google.rpc.BadRequest detail, or nil.
func (r recorded) violations() []string {
	var out []string
	for _, d := range r.Details {
		if d.Type == typeBadRequest {
			for _, v := range d.FieldViolations {
				out = append(out, v.Field+": "+v.Description)
			}
		}
	}
	return out
}

// recordedError reads the error of an error response: {"error": {…}}, or
// [{"error": {…}}] from a stream framed as a JSON array. Some recordings
// were edited by hand and are not JSON any more (a trailing comma where a
// field was cut): their fields are then read one by one.
func recordedError(body []byte) recorded {
	var e struct {
		Error recorded `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		return e.Error
	}
	var es []struct {
		Error recorded `json:"error"`
	}
	if json.Unmarshal(body, &es) == nil && len(es) > 0 {
		return es[0].Error
	}
	return recorded{Status: jsonStringField(body, "status"), Message: jsonStringField(body, "message")}
}

// jsonStringField returns the first string value of key in a text that is
// almost JSON.
func jsonStringField(body []byte, key string) string {
	m := regexp.MustCompile(`"` + key + `"\s*:\s*("(?:[^"\\]|\\.)*")`).FindSubmatch(body)
	if m == nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[1], &s) != nil {
		return ""
	}
	return s
}

// conformanceTally counts the verdicts.
type conformanceTally struct {
	exchanges, judged, agreeing, accepted, refused, vertex int
	notJudged                                              map[string][]string // by reason, the exchanges
}

func (c *conformanceTally) add(ex httprr.Exchange, v verdict) {
	c.exchanges++
	if !v.judged {
		if c.notJudged == nil {
			c.notJudged = map[string][]string{}
		}
		c.notJudged[v.reason] = append(c.notJudged[v.reason], fmt.Sprintf("%s#%d", ex.File, ex.Index))
		return
	}
	c.judged++
	if ex.Resp.StatusCode == http.StatusOK {
		c.accepted++
	} else {
		c.refused++
	}
	if vertexHost.MatchString(ex.Req.URL.Host) {
		c.vertex++
	}
	if v.agrees {
		c.agreeing++
	}
}

func (c *conformanceTally) summary(files int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "real traffic: %d exchanges in %d recordings; judged %d (%d answered 200, %d refused; %d Gemini API, %d Vertex AI), "+
		"agreeing %d, disagreeing %d; not judged %d",
		c.exchanges, files, c.judged, c.accepted, c.refused, c.judged-c.vertex, c.vertex, c.agreeing, c.judged-c.agreeing, c.exchanges-c.judged)
	reasons := make([]string, 0, len(c.notJudged))
	for r := range c.notJudged {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		fmt.Fprintf(&b, "\n\tnot judged, %s: %d (%s)", r, len(c.notJudged[r]), strings.Join(c.notJudged[r], ", "))
	}
	return b.String()
}
