package geminitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/internal/textdiff"
	"google.golang.org/genai"
)

// RecordEnv is the environment variable that, like the -geminitest.record
// flag, makes [Replay] record: "1" or "true" records every test's
// traffic, any other non-empty value is a regular expression that picks
// the recording files to write. Unlike the flag, it can be set for go test
// ./... across packages that do not import geminitest.
const RecordEnv = "GEMINITEST_RECORD"

// recordFlag is -geminitest.record, defined in test binaries only.
var recordFlag = &recordValue{}

func init() {
	if testing.Testing() {
		flag.Var(recordFlag, "geminitest.record", "record the Gemini API traffic of tests that use geminitest.Replay, from the real API, "+
			"into their files; alone, every file; with a `regexp`, the files it matches (needs GEMINI_API_KEY)")
	}
}

// recordValue is the flag's value: "" (replay), "true" (record all) or a
// regular expression of files.
type recordValue struct{ s string }

func (v *recordValue) String() string { return v.s }
func (v *recordValue) Set(s string) error {
	if _, err := recordPattern(s); err != nil {
		return err
	}
	v.s = s
	return nil
}
func (v *recordValue) IsBoolFlag() bool { return true }

// recordPattern returns the regular expression a flag or environment
// value selects files with; nil for none.
func recordPattern(s string) (*regexp.Regexp, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false":
		return nil, nil
	case "1", "true":
		return regexp.MustCompile(""), nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, fmt.Errorf("geminitest: record: %w", err)
	}
	return re, nil
}

// Recording reports whether [Replay] records file rather than replaying
// it: whether -geminitest.record or GEMINITEST_RECORD selects it.
func Recording(file string) bool {
	for _, s := range []string{recordFlag.s, os.Getenv(RecordEnv)} {
		if re, err := recordPattern(s); err == nil && re != nil && re.MatchString(filepath.ToSlash(file)) {
			return true
		}
	}
	return false
}

// ReplayOptions configure [Replay]. The zero value records from the
// Gemini API with GEMINI_API_KEY, and replays for it.
type ReplayOptions struct {
	// Backend is genai.BackendGeminiAPI (zero means it) or
	// genai.BackendVertexAI.
	Backend genai.Backend
	// APIKey is the Gemini API key sent when recording; zero means
	// GEMINI_API_KEY, else GOOGLE_API_KEY. It is never written to the
	// file.
	APIKey string
	// BaseURL is where recording sends requests; zero means genai's
	// default for the backend, the real API. A test of the recorder points
	// it at a [Server].
	BaseURL string
	// HTTPClient sends the requests when recording; zero means
	// http.DefaultClient. For Vertex AI, it must add the credentials: an
	// authenticated client (the bearer token it sends is never written).
	HTTPClient *http.Client
	// Project and Location are the Vertex AI project and location sent
	// when recording. The file records the paths without them, so a
	// replay works with any.
	Project, Location string
	// Scrub, when set, edits each exchange before it is written, to remove
	// what else must not be stored. It is called in record mode only.
	Scrub func(*Exchange)
}

// An Exchange is one request and its response, as a recording stores
// them. Request headers are not stored; of the response's, every one but
// those [Replay] documents as dropped.
type Exchange struct {
	// Method and URL are the request's: URL is the path and the query,
	// without the key parameter, and for Vertex AI without the project and
	// location ("/v1beta1/projects/{project}/locations/{location}/…").
	Method, URL string
	// Body is the request's body.
	Body []byte
	// Status, ContentType and Response are the response's status, its
	// Content-Type and its body, byte for byte.
	Status      int
	ContentType string
	Response    []byte
	// Header holds the response's other headers: all but Content-Type and
	// the ones dropped as noise (see [Replay]). Nil when there are none.
	Header http.Header
}

// A Cassette is the recording of one test's Gemini API traffic, in a file
// that [Replay] reads or writes. Its clients, in replay mode, answer every
// request from the file, without a network; in record mode, they talk to
// the real API and the file is written when the test ends.
type Cassette struct {
	tb        testing.TB
	file      string
	opts      ReplayOptions
	recording bool

	mu        sync.Mutex
	exchanges []*stored // replay: the file's; record: what was sent, in order
	secrets   []string  // keys and tokens seen, scrubbed from what is written
}

// stored is an exchange as kept in memory, with its request decoded for
// matching.
type stored struct {
	Exchange
	request any // the body, decoded; nil when it is not JSON
	used    bool
	done    bool // record mode: the response was read to its end
}

// Replay returns the cassette of file for the test tb. By default it
// replays: file must exist, and its clients answer each request with the
// recorded response of an unused exchange whose request matches it (the
// same method, URL and JSON body, whatever the order of its keys), in any
// order, so that concurrent requests replay too. A request that matches
// none fails tb with a diff against the closest recorded request, and is
// answered 400 FAILED_PRECONDITION, which genai does not retry. When tb
// ends without failing, exchanges left unused fail it too: the code makes
// fewer requests than it did.
//
// With -geminitest.record (or GEMINITEST_RECORD=1) it records instead:
// its clients send the requests to the real API, with the key of
// GEMINI_API_KEY, and when tb ends the file is written, human-readable,
// with no request header, no key query parameter, and the key and bearer
// tokens replaced by REDACTED wherever they appear whole in a URL, a
// header or a body (a model that spells one out across stream events is
// ReplayOptions.Scrub's to catch). Recording refuses to run where the CI
// environment variable is set. Re-recording is the same command.
//
// The response's headers are kept, and replayed, since genai and the code
// above it read them (X-Gemini-Service-Tier, the tier that served a call;
// X-Goog-Upload-URL and X-Goog-Upload-Status, which Files.Upload needs;
// any header through SDKHTTPResponse), but for those that only describe
// one connection or one moment, or that a client does not read: the
// hop-by-hop headers (Connection, Keep-Alive, Proxy-Authenticate,
// Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade),
// Content-Length (a replay sets it from the body), Date, Age, Expires,
// Server, Server-Timing, Alt-Svc, Set-Cookie, and the browser directives
// Vary, X-Content-Type-Options, X-Frame-Options and X-XSS-Protection.
//
// Bodies are written as JSON when they are JSON, a stream as its events,
// other text as a string, and bytes that are not UTF-8 (an uploaded or
// downloaded file) in base64, so that every body replays byte for byte.
//
// An empty file means testdata/geminitest/<test name>.json, a file per
// test and subtest. opts may be nil.
//
//	func TestWeather(t *testing.T) {
//		client := geminitest.Replay(t, "", nil).Client()
//		got, err := forecast(context.Background(), client, "Paris") // the code under test
//		…
//	}
//
//	go test -run TestWeather -geminitest.record   # once, with GEMINI_API_KEY set
//	go test -run TestWeather                      # offline, ever after
func Replay(tb testing.TB, file string, opts *ReplayOptions) *Cassette {
	tb.Helper()
	if file == "" {
		file = DefaultReplayFile(tb)
	}
	c := &Cassette{tb: tb, file: file, recording: Recording(file)}
	if opts != nil {
		c.opts = *opts
	}
	if c.recording {
		c.startRecording()
		return c
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("geminitest: no recording %s: record it once with go test -run '^%s$' -geminitest.record (with GEMINI_API_KEY set)", file, tb.Name())
	}
	if err != nil {
		tb.Fatalf("geminitest: %v", err)
	}
	exchanges, err := parseCassette(data)
	if err != nil {
		tb.Fatalf("geminitest: %s: %v", file, err)
	}
	c.exchanges = exchanges
	tb.Cleanup(c.checkUsed)
	return c
}

// DefaultReplayFile returns the recording file of tb when Replay is given
// none: testdata/geminitest/<test name>.json, each subtest level a
// directory, characters other than letters, digits, '.', '-' and '_'
// replaced by '_'.
func DefaultReplayFile(tb testing.TB) string {
	parts := []string{"testdata", "geminitest"}
	for _, p := range strings.Split(tb.Name(), "/") {
		p = strings.Map(func(r rune) rune {
			if r == '.' || r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
				return r
			}
			return '_'
		}, p)
		if p == "" || p == "." || p == ".." {
			p = "_"
		}
		parts = append(parts, p)
	}
	return filepath.Join(parts...) + ".json"
}

// File returns the cassette's file.
func (c *Cassette) File() string { return c.file }

// Recording reports whether the cassette records.
func (c *Cassette) Recording() bool { return c.recording }

// ClientConfig returns a new genai client configuration for the cassette:
// in replay mode, one that reaches nothing but the recording and consults
// no environment variable or credential; in record mode, one for the real
// API (or ReplayOptions.BaseURL) that records. Each call returns a fresh
// configuration.
func (c *Cassette) ClientConfig() *genai.ClientConfig {
	cfg := &genai.ClientConfig{Backend: c.opts.Backend}
	if cfg.Backend == genai.BackendUnspecified {
		cfg.Backend = genai.BackendGeminiAPI
	}
	if !c.recording {
		cfg.HTTPClient = &http.Client{Transport: replayTransport{c}}
		cfg.HTTPOptions.BaseURL = "https://geminitest.replay/"
		if cfg.Backend == genai.BackendVertexAI {
			cfg.Project, cfg.Location = VertexProject, VertexLocation
		} else {
			cfg.APIKey = "geminitest-replay"
		}
		return cfg
	}
	base := c.opts.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	client := *base
	client.Transport = recordTransport{c: c, base: rt}
	cfg.HTTPClient = &client
	cfg.HTTPOptions.BaseURL = c.opts.BaseURL
	if cfg.Backend == genai.BackendVertexAI {
		cfg.Project, cfg.Location = c.opts.Project, c.opts.Location
	} else {
		cfg.APIKey = c.apiKey()
	}
	return cfg
}

// Client returns a genai client built from [Cassette.ClientConfig].
func (c *Cassette) Client() *genai.Client {
	client, err := genai.NewClient(c.tb.Context(), c.ClientConfig())
	if err != nil {
		c.tb.Fatalf("geminitest: genai.NewClient: %v", err)
	}
	return client
}

func (c *Cassette) apiKey() string {
	if c.opts.APIKey != "" {
		return c.opts.APIKey
	}
	if k := os.Getenv("GEMINI_API_KEY"); k != "" {
		return k
	}
	return os.Getenv("GOOGLE_API_KEY")
}

func (c *Cassette) startRecording() {
	c.tb.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "0" && ci != "false" {
		c.tb.Fatalf("geminitest: refusing to record %s: the CI environment variable is set, and recording sends requests to the real API", c.file)
	}
	if c.opts.Backend == genai.BackendVertexAI {
		if c.opts.HTTPClient == nil {
			c.tb.Fatalf("geminitest: recording %s on Vertex AI needs ReplayOptions.HTTPClient, an authenticated client", c.file)
		}
	} else if c.apiKey() == "" {
		c.tb.Fatalf("geminitest: recording %s needs an API key: set GEMINI_API_KEY", c.file)
	}
	if k := c.apiKey(); k != "" {
		c.secrets = append(c.secrets, k)
	}
	c.tb.Cleanup(c.write)
}

// canonicalURL returns a request's path and query as a recording stores
// them: without the key parameter, the query sorted, and a Vertex AI
// project path's project and location replaced by placeholders.
func canonicalURL(u *url.URL) string {
	path := vertexProject.ReplaceAllString(u.Path, "/projects/{project}/locations/{location}/")
	q := u.Query()
	q.Del("key")
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

var vertexProject = regexp.MustCompile(`/projects/[^/]+/locations/[^/]+/`)

// decodeBody decodes a JSON body for matching; nil when it is not JSON.
func decodeBody(b []byte) any {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// replayTransport answers requests from the recording.
type replayTransport struct{ c *Cassette }

func (t replayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	u, decoded := canonicalURL(req.URL), decodeBody(body)
	c := t.c
	c.mu.Lock()
	var match *stored
	for _, e := range c.exchanges {
		if !e.used && e.Method == req.Method && e.URL == u && (reflect.DeepEqual(e.request, decoded) && decoded != nil || decoded == nil && bytes.Equal(e.Body, body)) {
			match = e
			break
		}
	}
	if match != nil {
		match.used = true
	}
	var diff string
	if match == nil {
		diff = c.closest(req.Method, u, body)
	}
	c.mu.Unlock()
	if match == nil {
		c.tb.Errorf("geminitest: %s %s matches no unused exchange recorded in %s; re-record with -geminitest.record if the change is intended.\n%s",
			req.Method, u, c.file, diff)
		msg := fmt.Sprintf("geminitest: no recorded exchange in %s matches this request", c.file)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "FAILED_PRECONDITION"}})
		return response(req, http.StatusBadRequest, "application/json; charset=UTF-8", nil, b), nil
	}
	return response(req, match.Status, match.ContentType, match.Header, slices.Clone(match.Response)), nil
}

// response returns a replayed response: the headers kept, Content-Type and
// body.
func response(req *http.Request, status int, contentType string, header http.Header, body []byte) *http.Response {
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}

// closest returns the diff of a request that matched nothing against the
// recorded request closest to it: an unused one of the same method and
// URL if there is one, the one whose body differs the least.
func (c *Cassette) closest(method, u string, body []byte) string {
	sent := prettyJSON(body)
	best, bestSize := "", -1
	for _, sameURL := range []bool{true, false} {
		for _, e := range c.exchanges {
			if e.used || sameURL != (e.Method == method && e.URL == u) {
				continue
			}
			d := textdiff.Text(prettyJSON(e.Body), sent)
			if e.Method != method || e.URL != u {
				d = fmt.Sprintf("- %s %s\n+ %s %s\n", e.Method, e.URL, method, u) + d
			}
			size := 0
			for _, line := range strings.Split(d, "\n") {
				if strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "+ ") {
					size++
				}
			}
			if bestSize < 0 || size < bestSize {
				best, bestSize = d, size
			}
		}
		if bestSize >= 0 {
			break
		}
	}
	if bestSize < 0 {
		return "Every recorded exchange has been used: the code makes more requests than it did."
	}
	return "The closest recorded request (-recorded +sent):\n" + textdiff.Trim(best, 3)
}

// prettyJSON indents a JSON body, keys sorted, for diffs; a body that is
// not JSON is returned as it is.
func prettyJSON(b []byte) string {
	v := decodeBody(b)
	if v == nil {
		return string(b)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(b)
	}
	return string(out)
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// checkUsed fails the test when recorded exchanges were not requested.
func (c *Cassette) checkUsed() {
	if c.tb.Failed() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var unused []string
	for _, e := range c.exchanges {
		if !e.used {
			unused = append(unused, e.Method+" "+e.URL)
		}
	}
	if len(unused) > 0 {
		c.tb.Errorf("geminitest: %d exchanges recorded in %s were never requested (the code makes fewer requests than it did; re-record with -geminitest.record):\n  %s",
			len(unused), c.file, strings.Join(unused, "\n  "))
	}
}

// recordTransport sends requests to the real API and records them.
type recordTransport struct {
	c    *Cassette
	base http.RoundTripper
}

func (t recordTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	c := t.c
	e := &stored{Exchange: Exchange{Method: req.Method, URL: canonicalURL(req.URL), Body: body}}
	c.mu.Lock()
	c.exchanges = append(c.exchanges, e)
	for _, s := range []string{req.Header.Get("X-Goog-Api-Key"), req.URL.Query().Get("key"), bearerToken(req.Header.Get("Authorization"))} {
		if s != "" && !slices.Contains(c.secrets, s) {
			c.secrets = append(c.secrets, s)
		}
	}
	c.mu.Unlock()
	resp, err := t.base.RoundTrip(out)
	if err != nil {
		c.mu.Lock()
		c.exchanges = slices.DeleteFunc(c.exchanges, func(x *stored) bool { return x == e })
		c.mu.Unlock()
		return nil, err
	}
	c.mu.Lock()
	e.Status, e.ContentType, e.Header = resp.StatusCode, resp.Header.Get("Content-Type"), keptHeaders(resp.Header)
	c.mu.Unlock()
	resp.Body = &teeBody{ReadCloser: resp.Body, c: c, e: e}
	return resp, nil
}

func bearerToken(h string) string {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// droppedHeaders are the response headers a recording does not keep, by
// canonical name: hop-by-hop, recomputed, of one moment or one server, or
// for browsers only. Replay's doc lists them.
var droppedHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Connection": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true, "Content-Type": true, // Content-Type is Exchange.ContentType
	"Date": true, "Age": true, "Expires": true, "Server": true, "Server-Timing": true, "Alt-Svc": true, "Set-Cookie": true,
	"Vary": true, "X-Content-Type-Options": true, "X-Frame-Options": true, "X-Xss-Protection": true,
}

// keptHeaders returns the headers of h a recording keeps; nil for none.
func keptHeaders(h http.Header) http.Header {
	var out http.Header
	for k, vs := range h {
		if droppedHeaders[http.CanonicalHeaderKey(k)] {
			continue
		}
		if out == nil {
			out = http.Header{}
		}
		out[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	return out
}

// teeBody keeps what the client reads of a response.
type teeBody struct {
	io.ReadCloser
	c   *Cassette
	e   *stored
	buf bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF {
		b.finish()
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.finish()
	return b.ReadCloser.Close()
}

func (b *teeBody) finish() {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	if !b.e.done {
		b.e.Response, b.e.done = slices.Clone(b.buf.Bytes()), true
	}
}

// write writes the recording when the test ends.
func (c *Cassette) write() {
	c.mu.Lock()
	exchanges := make([]Exchange, 0, len(c.exchanges))
	for _, e := range c.exchanges {
		x := e.Exchange
		if !e.done {
			x.Response = nil
		}
		x.Header = x.Header.Clone()
		if c.opts.Scrub != nil {
			c.opts.Scrub(&x)
		}
		redact(&x, c.secrets)
		exchanges = append(exchanges, x)
	}
	c.mu.Unlock()
	data := formatCassette(exchanges)
	if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
		c.tb.Errorf("geminitest: %v", err)
		return
	}
	if err := os.WriteFile(c.file, data, 0o644); err != nil {
		c.tb.Errorf("geminitest: %v", err)
		return
	}
	c.tb.Logf("geminitest: recorded %d exchanges in %s", len(exchanges), c.file)
}

// redact replaces every secret of at least 8 bytes by REDACTED wherever a
// recording writes it: before the bodies are encoded, so that base64 hides
// none.
func redact(e *Exchange, secrets []string) {
	for _, s := range secrets {
		if len(s) < 8 {
			continue
		}
		e.URL = strings.ReplaceAll(e.URL, s, "REDACTED")
		e.ContentType = strings.ReplaceAll(e.ContentType, s, "REDACTED")
		e.Body = bytes.ReplaceAll(e.Body, []byte(s), []byte("REDACTED"))
		e.Response = bytes.ReplaceAll(e.Response, []byte(s), []byte("REDACTED"))
		for _, vs := range e.Header {
			for i := range vs {
				vs[i] = strings.ReplaceAll(vs[i], s, "REDACTED")
			}
		}
	}
}

// cassetteVersion heads every recording file.
const cassetteVersion = "geminitest replay v1"

// formatCassette writes a recording, indented: every request body that is
// JSON re-indented, every response body byte for byte (responseFields),
// other bodies as textFields writes them, and the response headers kept.
func formatCassette(exchanges []Exchange) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"geminitest\": %q,\n  \"exchanges\": [", cassetteVersion)
	for i, e := range exchanges {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    {\n      \"request\": {\n")
		fmt.Fprintf(&b, "        \"method\": %s,\n        \"url\": %s", quoteJSON(e.Method), quoteJSON(e.URL))
		if len(e.Body) > 0 {
			var body bytes.Buffer
			if utf8.Valid(e.Body) && json.Valid(e.Body) && json.Indent(&body, e.Body, "        ", "  ") == nil {
				fmt.Fprintf(&b, ",\n        \"body\": %s", body.Bytes())
			} else {
				b.WriteString(textFields(e.Body))
			}
		}
		b.WriteString("\n      },\n      \"response\": {\n")
		fmt.Fprintf(&b, "        \"status\": %d", e.Status)
		if e.ContentType != "" {
			fmt.Fprintf(&b, ",\n        \"content_type\": %s", quoteJSON(e.ContentType))
		}
		if len(e.Header) > 0 {
			var h bytes.Buffer
			enc := json.NewEncoder(&h)
			enc.SetEscapeHTML(false)
			enc.SetIndent("        ", "  ")
			_ = enc.Encode(e.Header)
			fmt.Fprintf(&b, ",\n        \"headers\": %s", bytes.TrimSuffix(h.Bytes(), []byte("\n")))
		}
		b.WriteString(responseFields(e.Response))
		b.WriteString("\n      }\n    }")
	}
	if len(exchanges) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	return b.Bytes()
}

// responseFields writes a response body's fields: "body" (a JSON value as
// it came, with "body_prefix" and "body_suffix" for the whitespace around
// it), or "events" and "event_separator" (server-sent events, data only),
// or textFields'.
func responseFields(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	if !utf8.Valid(body) {
		return textFields(body)
	}
	trimmed := bytes.TrimSpace(body)
	if json.Valid(trimmed) {
		start := bytes.Index(body, trimmed)
		s := ""
		if start > 0 {
			s += fmt.Sprintf(",\n        \"body_prefix\": %s", quoteJSON(string(body[:start])))
		}
		if end := start + len(trimmed); end < len(body) {
			s += fmt.Sprintf(",\n        \"body_suffix\": %s", quoteJSON(string(body[end:])))
		}
		return s + fmt.Sprintf(",\n        \"body\": %s", trimmed)
	}
	if events, sep, ok := splitEvents(body); ok {
		var b strings.Builder
		fmt.Fprintf(&b, ",\n        \"event_separator\": %s,\n        \"events\": [", quoteJSON(sep))
		for i, ev := range events {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n          %s", ev)
		}
		b.WriteString("\n        ]")
		return b.String()
	}
	return textFields(body)
}

// textFields writes a body that is not JSON: "body_text" when it is UTF-8,
// "body_base64" (standard encoding) when it is not, since a JSON string
// cannot hold other bytes.
func textFields(body []byte) string {
	if utf8.Valid(body) {
		return fmt.Sprintf(",\n        \"body_text\": %s", quoteJSON(string(body)))
	}
	return fmt.Sprintf(",\n        \"body_base64\": %q", base64.StdEncoding.EncodeToString(body))
}

// splitEvents splits a server-sent event stream whose every event is one
// data line of JSON, all ending with one separator ("\r\n\r\n" as the API
// sends them, or "\n\n"), into the events' JSON, exactly: joining them
// back gives body.
func splitEvents(body []byte) ([][]byte, string, bool) {
	for _, sep := range []string{"\r\n\r\n", "\n\n"} {
		var events [][]byte
		rest := body
		for len(rest) > 0 {
			data, ok := bytes.CutPrefix(rest, []byte("data: "))
			if !ok {
				break
			}
			end := bytes.Index(data, []byte(sep))
			if end < 0 || !json.Valid(data[:end]) || bytes.ContainsAny(data[:end], "\r\n") {
				break
			}
			events = append(events, data[:end])
			rest = data[end+len(sep):]
		}
		if len(rest) == 0 && len(events) > 0 {
			return events, sep, true
		}
	}
	return nil, "", false
}

func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// cassetteFile is a recording file, as read.
type cassetteFile struct {
	Version   string `json:"geminitest"`
	Exchanges []struct {
		Request struct {
			Method     string          `json:"method"`
			URL        string          `json:"url"`
			Body       json.RawMessage `json:"body"`
			BodyText   *string         `json:"body_text"`
			BodyBase64 *string         `json:"body_base64"`
		} `json:"request"`
		Response struct {
			Status         int               `json:"status"`
			ContentType    string            `json:"content_type"`
			Headers        http.Header       `json:"headers"`
			Body           json.RawMessage   `json:"body"`
			BodyPrefix     string            `json:"body_prefix"`
			BodySuffix     string            `json:"body_suffix"`
			Events         []json.RawMessage `json:"events"`
			EventSeparator string            `json:"event_separator"`
			BodyText       *string           `json:"body_text"`
			BodyBase64     *string           `json:"body_base64"`
		} `json:"response"`
	} `json:"exchanges"`
}

// parseCassette reads a recording file.
func parseCassette(data []byte) ([]*stored, error) {
	var f cassetteFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a recording: %w", err)
	}
	if f.Version != cassetteVersion {
		return nil, fmt.Errorf("not a recording of this version: \"geminitest\" is %s, want %q", strconv.Quote(f.Version), cassetteVersion)
	}
	var out []*stored
	for i, x := range f.Exchanges {
		e := &stored{Exchange: Exchange{Method: x.Request.Method, URL: x.Request.URL, Status: x.Response.Status, ContentType: x.Response.ContentType}}
		for k, vs := range x.Response.Headers {
			if e.Header == nil {
				e.Header = http.Header{}
			}
			e.Header[http.CanonicalHeaderKey(k)] = vs
		}
		switch {
		case x.Request.BodyBase64 != nil:
			b, err := base64.StdEncoding.DecodeString(*x.Request.BodyBase64)
			if err != nil {
				return nil, fmt.Errorf("exchange %d: request body_base64: %w", i+1, err)
			}
			e.Body = b
		case x.Request.BodyText != nil:
			e.Body = []byte(*x.Request.BodyText)
		case len(x.Request.Body) > 0:
			var compact bytes.Buffer
			if err := json.Compact(&compact, x.Request.Body); err != nil {
				return nil, fmt.Errorf("exchange %d: request body: %w", i+1, err)
			}
			e.Body = compact.Bytes()
		}
		e.request = decodeBody(e.Body)
		r := x.Response
		switch {
		case r.BodyBase64 != nil:
			b, err := base64.StdEncoding.DecodeString(*r.BodyBase64)
			if err != nil {
				return nil, fmt.Errorf("exchange %d: response body_base64: %w", i+1, err)
			}
			e.Response = b
		case r.BodyText != nil:
			e.Response = []byte(*r.BodyText)
		case len(r.Events) > 0:
			for _, ev := range r.Events {
				e.Response = append(append(append(e.Response, "data: "...), ev...), r.EventSeparator...)
			}
		case len(r.Body) > 0:
			e.Response = append(append([]byte(r.BodyPrefix), r.Body...), r.BodySuffix...)
		}
		if e.Method == "" || e.URL == "" || e.Status == 0 {
			return nil, fmt.Errorf("exchange %d: method, url and status are required", i+1)
		}
		out = append(out, e)
	}
	return out, nil
}
