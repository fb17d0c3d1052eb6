package geminitest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// secretKey is the API key the recorder is given; it must never reach
// the file.
const secretKey = "AIzaSyTEST-secret-key-0123456789abcdef"

// fakeTB is a testing.TB whose failures are recorded, for the tests of
// what Replay reports; Fatalf ends the goroutine, as testing's does.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	name     string
	errors   []string
	fatal    string
	cleanups []func()
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errors) > 0 || f.fatal != ""
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Logf(string, ...any)      {}
func (f *fakeTB) Cleanup(fn func())        { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Context() context.Context { return context.Background() }

// end runs the cleanups, last first, as the end of a test does.
func (f *fakeTB) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.cleanups = nil
}

// run calls fn as a test body: a Fatalf ends it.
func (f *fakeTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// capture is a transport that keeps every response body it passes on.
type capture struct {
	base   http.RoundTripper
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

type cityIn struct {
	City string `json:"city"`
}

// converse has a conversation of two turns with an agent on client: one
// run (unary calls) and one stream, each with a tool call.
func converse(t testing.TB, client *genai.Client) (*agent.Result, error) {
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(weather)})
	if err != nil {
		return nil, err
	}
	res, err := a.Run(context.Background(), genai.Text("Weather in Paris?"))
	if err != nil {
		return res, err
	}
	var last *agent.Event
	for ev, err := range a.Stream(context.Background(), append(res.History, genai.NewContentFromText("And in Oslo?", genai.RoleUser))) {
		if err != nil {
			return nil, err
		}
		last = ev
	}
	return last.Result, nil
}

// script queues the fake model's side of converse.
func script(srv *geminitest.Server) {
	srv.Enqueue(
		geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.Text("Sunny in Paris, and a fine day to use key "+secretKey+"."),
		geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Oslo"})),
		geminitest.Text("Sunny in Oslo.").WithTextChunk(5),
	)
}

// record records converse against the fake standing in for the API.
func record(t *testing.T, file string, scrub func(*geminitest.Exchange)) (*agent.Result, *capture) {
	t.Helper()
	srv := geminitest.Start(t)
	script(srv)
	t.Setenv(geminitest.RecordEnv, "1")
	t.Setenv("CI", "")
	upstream := &capture{base: srv.ClientConfig().HTTPClient.Transport}
	var res *agent.Result
	t.Run("record", func(t *testing.T) {
		c := geminitest.Replay(t, file, &geminitest.ReplayOptions{BaseURL: srv.URL, APIKey: secretKey,
			HTTPClient: &http.Client{Transport: upstream}, Scrub: scrub})
		if !c.Recording() {
			t.Fatal("GEMINITEST_RECORD=1 does not record")
		}
		var err error
		if res, err = converse(t, c.Client()); err != nil {
			t.Fatal(err)
		}
	})
	srv.AssertComplete(t)
	return res, upstream
}

// A conversation recorded against the fake standing in for the API replays
// through the real genai client, offline, byte for byte: every response
// the client reads is the one the server sent, and the agent's result is
// the same. The file is readable JSON without the key.
func TestRecordReplayRoundTrip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "weather.json")
	recorded, upstream := record(t, file, nil)

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secretKey)) || bytes.Contains(bytes.ToLower(data), []byte("x-goog-api-key")) {
		t.Fatalf("the key reached the file:\n%s", data)
	}
	for _, want := range []string{`"geminitest": "geminitest replay v1"`, `"url": "/v1beta/models/gemini-3-flash-preview:generateContent"`,
		`"url": "/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse"`, `"event_separator": "\r\n\r\n"`,
		`"text": "Weather in Paris?"`, `"content_type": "text/event-stream"`, "REDACTED"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the recording lacks %s:\n%s", want, data)
		}
	}
	var parsed any
	if err := json.Unmarshal(data, &parsed); err != nil {
		t.Fatalf("the recording is not JSON: %v", err)
	}

	replayed := &capture{}
	var result *agent.Result
	t.Run("replay", func(t *testing.T) {
		t.Setenv(geminitest.RecordEnv, "")
		c := geminitest.Replay(t, file, nil)
		if c.Recording() {
			t.Fatal("replaying records")
		}
		cfg := c.ClientConfig()
		replayed.base = cfg.HTTPClient.Transport
		cfg.HTTPClient = &http.Client{Transport: replayed}
		client, err := genai.NewClient(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if result, err = converse(t, client); err != nil {
			t.Fatal(err)
		}
	})
	if len(replayed.bodies) != 4 || len(upstream.bodies) != 4 {
		t.Fatalf("%d responses replayed, %d recorded; want 4", len(replayed.bodies), len(upstream.bodies))
	}
	for i := range upstream.bodies {
		want := bytes.ReplaceAll(upstream.bodies[i], []byte(secretKey), []byte("REDACTED"))
		if !bytes.Equal(replayed.bodies[i], want) {
			t.Errorf("response %d replayed:\n%q\nrecorded:\n%q", i+1, replayed.bodies[i], want)
		}
	}
	got, _ := json.Marshal(result.History)
	want, _ := json.Marshal(recorded.History)
	want = bytes.ReplaceAll(want, []byte(secretKey), []byte("REDACTED"))
	if !bytes.Equal(got, want) {
		t.Errorf("the replayed conversation differs:\n%s\nrecorded:\n%s", got, want)
	}
}

// A request that differs from the recording fails the test with a diff,
// and the client gets an error it does not retry; recorded exchanges left
// unused fail it too.
func TestReplayMismatch(t *testing.T) {
	file := filepath.Join(t.TempDir(), "weather.json")
	record(t, file, nil)
	t.Setenv(geminitest.RecordEnv, "")

	tb := &fakeTB{TB: t, name: "TestChanged"}
	var err error
	tb.run(func() {
		client := geminitest.Replay(tb, file, nil).Client()
		_, err = client.Models.GenerateContent(context.Background(), "gemini-3-flash-preview", genai.Text("Weather in Lyon?"), nil)
	})
	var apiErr genai.APIError
	if !errorsAs(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "no recorded exchange") {
		t.Errorf("the client got %v; want the 400", err)
	}
	if len(tb.errors) != 1 {
		t.Fatalf("errors reported: %q", tb.errors)
	}
	msg := tb.errors[0]
	for _, want := range []string{"POST /v1beta/models/gemini-3-flash-preview:generateContent matches no unused exchange recorded in " + file,
		"The closest recorded request (-recorded +sent):", "\n-", `"text": "Weather in Paris?"`, "\n+", `"text": "Weather in Lyon?"`, "  …",
		"-geminitest.record"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the report lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(msg, `-       "functionDeclarations": [`) {
		t.Errorf("the report does not show the tools the request lacks:\n%s", msg)
	}

	// Fewer requests than recorded: the rest is reported at the end.
	tb = &fakeTB{TB: t, name: "TestFewer"}
	tb.run(func() {
		client := geminitest.Replay(tb, file, nil).Client()
		converseFirstTurnOnly(t, client)
	})
	tb.end()
	if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], "2 exchanges recorded in "+file+" were never requested") ||
		!strings.Contains(tb.errors[0], "streamGenerateContent?alt=sse") {
		t.Errorf("unused exchanges: %q", tb.errors)
	}
}

func converseFirstTurnOnly(t testing.TB, client *genai.Client) {
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(weather)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), genai.Text("Weather in Paris?")); err != nil {
		t.Error(err)
	}
}

func errorsAs(err error, target *genai.APIError) bool {
	for err != nil {
		if e, ok := err.(genai.APIError); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// Concurrent requests replay in any order: each takes an unused exchange
// whose request matches.
func TestReplayConcurrent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "many.json")
	srv := geminitest.Start(t)
	srv.SetReplyFunc(func(req *geminitest.Request) *geminitest.Reply { return geminitest.Text("echo: " + req.Text()) })
	questions := []string{"one", "two", "three", "four", "five", "six"}
	ask := func(t *testing.T, client *genai.Client) {
		var wg sync.WaitGroup
		for _, q := range questions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text(q), nil)
				if err != nil || resp.Text() != "echo: "+q {
					t.Errorf("%s: %v %v", q, resp, err)
				}
			}()
		}
		wg.Wait()
	}
	t.Run("record", func(t *testing.T) {
		t.Setenv(geminitest.RecordEnv, "1")
		t.Setenv("CI", "")
		ask(t, geminitest.Replay(t, file, &geminitest.ReplayOptions{BaseURL: srv.URL, APIKey: secretKey, HTTPClient: srv.ClientConfig().HTTPClient}).Client())
	})
	t.Run("replay", func(t *testing.T) {
		ask(t, geminitest.Replay(t, file, nil).Client())
	})
}

// Replay refuses what it cannot do, saying how to fix it.
func TestReplayRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		env   map[string]string
		file  string
		setup func()
		want  string
	}{
		{"no recording", nil, filepath.Join(dir, "missing.json"), nil,
			"no recording " + filepath.Join(dir, "missing.json") + ": record it once with go test -run '^TestX$' -geminitest.record"},
		{"not a recording", nil, filepath.Join(dir, "bad.json"), func() { os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"x": 1}`), 0o644) },
			"not a recording of this version"},
		{"recording in CI", map[string]string{geminitest.RecordEnv: "1", "CI": "true"}, filepath.Join(dir, "ci.json"), nil,
			"refusing to record " + filepath.Join(dir, "ci.json") + ": the CI environment variable is set"},
		{"recording without a key", map[string]string{geminitest.RecordEnv: "1", "CI": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}, filepath.Join(dir, "nokey.json"), nil,
			"needs an API key: set GEMINI_API_KEY"},
		{"recording Vertex AI without credentials", map[string]string{geminitest.RecordEnv: "1", "CI": ""}, filepath.Join(dir, "vertex.json"), nil,
			"on Vertex AI needs ReplayOptions.HTTPClient"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.setup != nil {
				tc.setup()
			}
			var opts *geminitest.ReplayOptions
			if strings.Contains(tc.name, "Vertex") {
				opts = &geminitest.ReplayOptions{Backend: genai.BackendVertexAI}
			}
			tb := &fakeTB{TB: t, name: "TestX"}
			tb.run(func() { geminitest.Replay(tb, tc.file, opts) })
			if !strings.Contains(tb.fatal, tc.want) {
				t.Errorf("Replay failed with %q; want %q", tb.fatal, tc.want)
			}
		})
	}
}

// The flag and the environment variable pick the files to record, by a
// regular expression or all of them; the default file of a test is named
// after it.
func TestRecordingSelection(t *testing.T) {
	t.Setenv(geminitest.RecordEnv, "")
	if geminitest.Recording("testdata/geminitest/TestX.json") {
		t.Error("records with nothing set")
	}
	t.Setenv(geminitest.RecordEnv, "true")
	if !geminitest.Recording("anything.json") {
		t.Error("GEMINITEST_RECORD=true does not record")
	}
	t.Setenv(geminitest.RecordEnv, "TestWeather")
	if !geminitest.Recording("testdata/geminitest/TestWeather/paris.json") || geminitest.Recording("testdata/geminitest/TestOther.json") {
		t.Error("a regular expression does not select the files it matches")
	}
	// The flag: alone it records everything, with a value the files it
	// matches.
	f := flag.Lookup("geminitest.record")
	if f == nil {
		t.Fatal("no -geminitest.record flag in the test binary")
	}
	t.Setenv(geminitest.RecordEnv, "")
	defer flag.Set("geminitest.record", "")
	if err := flag.CommandLine.Parse([]string{"-geminitest.record"}); err != nil || !geminitest.Recording("x.json") {
		t.Errorf("-geminitest.record alone: %v, recording %v", err, geminitest.Recording("x.json"))
	}
	if err := flag.Set("geminitest.record", "Paris"); err != nil || !geminitest.Recording("testdata/Paris.json") || geminitest.Recording("testdata/Oslo.json") {
		t.Errorf("-geminitest.record=Paris: %v", err)
	}
	if err := flag.Set("geminitest.record", "("); err == nil {
		t.Error("an invalid regular expression is accepted")
	}
	tb := &fakeTB{TB: t, name: "TestEval/set one/case:2"}
	if got, want := geminitest.DefaultReplayFile(tb), filepath.Join("testdata", "geminitest", "TestEval", "set_one", "case_2.json"); got != want {
		t.Errorf("DefaultReplayFile = %q, want %q", got, want)
	}
}

// Scrub edits exchanges before they are written.
func TestRecordScrub(t *testing.T) {
	file := filepath.Join(t.TempDir(), "scrubbed.json")
	record(t, file, func(e *geminitest.Exchange) {
		e.Body = bytes.ReplaceAll(e.Body, []byte("Paris"), []byte("Lutetia"))
		e.Response = bytes.ReplaceAll(e.Response, []byte("Paris"), []byte("Lutetia"))
	})
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("Sunny in Lutetia,")) || bytes.Contains(data, []byte("Paris")) {
		t.Errorf("Scrub did not edit the responses:\n%s", data)
	}
}

// Real API responses, from the shared traffic recorded by other projects,
// survive the recording file byte for byte: pretty-printed JSON bodies,
// server-sent event streams, errors.
func TestRealTrafficBodiesRoundTrip(t *testing.T) {
	dir := sharedTraffic(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.httprr"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		for _, ex := range readHTTPRR(t, f) {
			if !strings.Contains(ex.URL, "generateContent") && !strings.Contains(ex.URL, "GenerateContent") {
				continue
			}
			n++
			out := geminitest.RoundTripExchange(t, ex)
			if !bytes.Equal(out.Response, ex.Response) || out.Status != ex.Status || out.ContentType != ex.ContentType {
				t.Errorf("%s: a response of %s did not survive the recording file: %q\nwant %q", filepath.Base(f), ex.URL, out.Response, ex.Response)
			}
		}
	}
	if n == 0 {
		t.Fatal("no generateContent exchange in the shared traffic")
	}
	t.Logf("%d real responses round-tripped", n)
}

// sharedTraffic returns ../shared/realtraffic, looked for above the module,
// or skips.
func sharedTraffic(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		candidate := filepath.Join(dir, "shared", "realtraffic")
		if fi, err := os.Stat(candidate); err == nil && fi.IsDir() {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no shared/realtraffic directory above the module: the real traffic is not on this machine")
		}
		dir = parent
	}
}

// readHTTPRR reads an httprr trace into exchanges.
func readHTTPRR(t *testing.T, file string) []geminitest.Exchange {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(header) != "httprr trace v1" {
		return nil
	}
	var out []geminitest.Exchange
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		var n1, n2 int
		if _, err := fmt.Sscanf(string(line), "%d %d", &n1, &n2); !ok || err != nil || n1 < 0 || n2 < 0 || n1+n2 > len(after) {
			// Some traces were edited after they were recorded, and
			// their lengths no longer add up: what follows is lost.
			t.Logf("%s: the trace is corrupt after %d exchanges", filepath.Base(file), len(out))
			return out
		}
		reqBytes, respBytes := after[:n1], after[n1:n1+n2]
		rest = after[n1+n2:]
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(reqBytes)))
		if err != nil {
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(respBytes)), req)
		if err != nil {
			continue
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.Header.Get("Content-Encoding") != "" {
			continue
		}
		reqBody, _ := io.ReadAll(req.Body)
		out = append(out, geminitest.Exchange{Method: req.Method, URL: req.URL.RequestURI(), Body: reqBody,
			Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Response: body})
	}
	return out
}
