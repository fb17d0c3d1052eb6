package fake

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The conformance test's own parts, on traces written here: a harness that
// cannot see a disagreement would pass on any fake.

// trace builds an httprr trace of exchanges, each a request and a response
// as net/http writes them (CRLF line ends), counted.
func trace(exchanges ...[2]string) string {
	var b strings.Builder
	b.WriteString(httprrHeader)
	for _, e := range exchanges {
		fmt.Fprintf(&b, "%d %d\n%s%s", len(e[0]), len(e[1]), e[0], e[1])
	}
	return b.String()
}

// httpRequest and httpResponse write a request to path with a JSON body and
// a response with status and body, in net/http's wire form.
func httpRequest(path, body string) string {
	return fmt.Sprintf("POST https://generativelanguage.googleapis.com%s HTTP/1.1\r\nHost: generativelanguage.googleapis.com\r\n"+
		"Content-Length: %d\r\nContent-Type: application/json\r\nX-Realtraffic-Source: test/repo cassette.yaml@0\r\n\r\n%s", path, len(body), body)
}

func httpResponse(status int, contentType, body string) string {
	return fmt.Sprintf("HTTP/2.0 %d %s\r\nContent-Type: %s\r\n\r\n%s", status, http.StatusText(status), contentType, body)
}

const (
	unaryPath  = "/v1beta/models/gemini-2.5-flash:generateContent"
	streamPath = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	helloBody  = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	sseBody    = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\ndata: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n"
)

func TestReadHTTPRR(t *testing.T) {
	exchanges := [][2]string{
		{httpRequest(streamPath, helloBody), httpResponse(200, "text/event-stream", sseBody)},
		{httpRequest(unaryPath, helloBody), httpResponse(400, "application/json", `{"error":{"code":400,"message":"m"}}`)},
	}
	counted := trace(exchanges...)
	// The same trace after a checkout rewrote its line ends: the counts no
	// longer fit.
	stripped := strings.ReplaceAll(counted, "\r\n", "\n")
	for name, data := range map[string]string{"counted": counted, "line ends rewritten": stripped} {
		t.Run(name, func(t *testing.T) {
			got, err := readHTTPRR("t.httprr", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("read %d exchanges; want 2", len(got))
			}
			if got[0].req.URL.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || string(got[0].body) != helloBody ||
				got[0].resp.StatusCode != 200 || !strings.Contains(string(got[0].rbody), `"finishReason":"STOP"`) {
				t.Errorf("exchange 0 = %s %s %q -> %d %q", got[0].req.Method, got[0].req.URL, got[0].body, got[0].resp.StatusCode, got[0].rbody)
			}
			if got[1].resp.StatusCode != 400 || string(got[1].body) != helloBody || recordedError(got[1].rbody).Message != "m" {
				t.Errorf("exchange 1 = %q -> %d %q", got[1].body, got[1].resp.StatusCode, got[1].rbody)
			}
			if s := got[1].String(); s != "t.httprr#1 test/repo cassette.yaml@0" {
				t.Errorf("String() = %q", s)
			}
		})
	}
	if _, err := readHTTPRR("bad.httprr", []byte("not a trace\n")); err == nil {
		t.Error("a file without the httprr header was read")
	}
}

func TestRecordedError(t *testing.T) {
	for _, tc := range []struct{ body, status, message string }{
		{`{"error":{"code":400,"message":"a","status":"INVALID_ARGUMENT"}}`, "INVALID_ARGUMENT", "a"},
		{`[{"error":{"code":400,"message":"b","status":"INVALID_ARGUMENT"}}]`, "INVALID_ARGUMENT", "b"},
		// A recording edited by hand: a trailing comma where a field was cut.
		{"[{\"error\": {\"code\": 400, \"message\": \"c \\\"q\\\"\",\n \"status\": \"INVALID_ARGUMENT\",\n }}]", "INVALID_ARGUMENT", `c "q"`},
	} {
		if got := recordedError([]byte(tc.body)); got.Status != tc.status || got.Message != tc.message {
			t.Errorf("recordedError(%s) = %+v; want %s %q", tc.body, got, tc.status, tc.message)
		}
	}
}

// judge agrees where the fake answers as the recording, disagrees where it
// does not, and sets aside what cannot be judged.
func TestJudge(t *testing.T) {
	srv := NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(*Request) *Reply { return Text("ok") })
	client := newTrafficClient(srv)
	unknownField := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"thinking":true}`
	unknownFieldErr := `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"thinking\": Cannot find field.","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":"Invalid JSON payload received. Unknown name \"thinking\": Cannot find field."}]}]}}`
	for _, tc := range []struct {
		name       string
		req, resp  string
		judged     bool
		agrees     bool
		wantReason string
	}{
		{"accepted, accepted", httpRequest(unaryPath, helloBody), httpResponse(200, "application/json", "{}"), true, true, ""},
		{"accepted, streamed", httpRequest(streamPath, helloBody), httpResponse(200, "text/event-stream", sseBody), true, true, ""},
		{"accepted by the API, refused by the fake", httpRequest(unaryPath, unknownField), httpResponse(200, "application/json", "{}"), true, false, ""},
		{"refused alike", httpRequest(unaryPath, unknownField), httpResponse(400, "application/json", unknownFieldErr), true, true, ""},
		{"refused with another message", httpRequest(unaryPath, unknownField),
			httpResponse(400, "application/json", `{"error":{"code":400,"message":"something else","status":"INVALID_ARGUMENT"}}`), true, false, ""},
		{"refused with other field violations", httpRequest(unaryPath, unknownField),
			httpResponse(400, "application/json", strings.Replace(unknownFieldErr, `[{"description"`, `[{"field":"x","description"`, 1)), true, false, ""},
		{"refused by the API, accepted by the fake", httpRequest(unaryPath, helloBody),
			httpResponse(400, "application/json", `{"error":{"code":400,"message":"no","status":"INVALID_ARGUMENT"}}`), true, false, ""},
		{"no credentials, replayed without", httpRequest(unaryPath, helloBody),
			httpResponse(403, "application/json", `{"error":{"code":403,"message":"`+unregisteredCallers+`","status":"PERMISSION_DENIED"}}`), true, true, ""},
		{"overloaded", httpRequest(unaryPath, helloBody),
			httpResponse(503, "application/json", `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`), false, false, "5xx"},
		{"a key the API did not take", httpRequest(unaryPath, helloBody),
			httpResponse(400, "application/json", `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`), false, false, "credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exs, err := readHTTPRR("t.httprr", []byte(trace([2]string{tc.req, tc.resp})))
			if err != nil {
				t.Fatal(err)
			}
			v := judge(t, client, srv, exs[0])
			if v.judged != tc.judged || v.agrees != tc.agrees || !strings.Contains(v.reason, tc.wantReason) {
				t.Errorf("judge() = %+v; want judged %t, agrees %t, reason containing %q", v, tc.judged, tc.agrees, tc.wantReason)
			}
			if v.judged && !v.agrees && !strings.Contains(v.detail, "the fake answered") {
				t.Errorf("a disagreement without its detail: %+v", v)
			}
		})
	}
}

func TestRealTrafficDir(t *testing.T) {
	// A clone without the recordings beside it: the test skips, saying why.
	t.Setenv(realTrafficEnv, "")
	clone := t.TempDir()
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module "+rootModule+"\n\ngo 1.25.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(clone, "internal", "fake")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	want := filepath.Join(filepath.Dir(clone), "shared", "realtraffic")
	if dir, why := realTrafficDir(); dir != "" || !strings.Contains(why, want+" does not exist") {
		t.Errorf("realTrafficDir() in a clone alone = %q, %q; want none, naming %s", dir, why, want)
	}
	// Beside it, they are found from the package's directory.
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, why := realTrafficDir(); dir != want {
		t.Errorf("realTrafficDir() = %q, %q; want %s", dir, why, want)
	}

	t.Setenv(realTrafficEnv, filepath.Join(t.TempDir(), "absent"))
	if dir, why := realTrafficDir(); dir != "" || !strings.Contains(why, "is not a directory") {
		t.Errorf("realTrafficDir() with a missing override = %q, %q", dir, why)
	}
	d := t.TempDir()
	t.Setenv(realTrafficEnv, d)
	if dir, _ := realTrafficDir(); dir != d {
		t.Errorf("realTrafficDir() = %q; want the override %q", dir, d)
	}

	// A linked worktree's .git file points into the main checkout.
	root := t.TempDir()
	main := filepath.Join(t.TempDir(), "main")
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mainWorktree(root); got != main {
		t.Errorf("mainWorktree() = %q; want %q", got, main)
	}
	if got := mainWorktree(t.TempDir()); got != "" {
		t.Errorf("mainWorktree() of a checkout without a .git file = %q; want \"\"", got)
	}
}
