package geminitest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// recordThenReplay runs fn once recording file from upstream (reached at
// baseURL with httpClient), then once replaying it, and returns what each
// run returned.
func recordThenReplay[T any](t *testing.T, file, baseURL string, httpClient *http.Client, fn func(t *testing.T, client *genai.Client) T) (recorded, replayed T) {
	t.Helper()
	t.Run("record", func(t *testing.T) {
		t.Setenv(geminitest.RecordEnv, "1")
		t.Setenv("CI", "")
		c := geminitest.Replay(t, file, &geminitest.ReplayOptions{BaseURL: baseURL, APIKey: secretKey, HTTPClient: httpClient})
		recorded = fn(t, c.Client())
	})
	t.Run("replay", func(t *testing.T) {
		t.Setenv(geminitest.RecordEnv, "")
		replayed = fn(t, geminitest.Replay(t, file, nil).Client())
	})
	if t.Failed() {
		t.FailNow()
	}
	return recorded, replayed
}

// The tier that served a call, which the Gemini API says in the
// X-Gemini-Service-Tier header, survives a recording: the agent's
// Usage.ServiceTier is the same replayed as recorded, for a call and a
// stream. Headers of one moment or one connection are not written.
func TestReplayServiceTierHeader(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tier.json")
	srv := geminitest.Start(t)
	srv.Enqueue(geminitest.Text("Unary."), geminitest.Text("Streamed."))
	run := func(t *testing.T, client *genai.Client) [2]genai.ServiceTier {
		a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-2.5-flash",
			GenerateConfig: &genai.GenerateContentConfig{ServiceTier: genai.ServiceTierFlex}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), genai.Text("Hello"))
		if err != nil {
			t.Fatal(err)
		}
		var last *agent.Event
		for ev, err := range a.Stream(context.Background(), genai.Text("Hello again")) {
			if err != nil {
				t.Fatal(err)
			}
			last = ev
		}
		return [2]genai.ServiceTier{res.Usage.ServiceTier, last.Result.Usage.ServiceTier}
	}
	recorded, replayed := recordThenReplay(t, file, srv.URL, srv.ClientConfig().HTTPClient, run)
	want := [2]genai.ServiceTier{genai.ServiceTierFlex, genai.ServiceTierFlex}
	if recorded != want {
		t.Fatalf("recorded Usage.ServiceTier (run, stream) = %q, want %q: the fake does not answer the tier", recorded, want)
	}
	if replayed != want {
		t.Errorf("replayed Usage.ServiceTier (run, stream) = %q, want %q", replayed, want)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"X-Gemini-Service-Tier": [`)) {
		t.Errorf("the recording lacks the tier header:\n%s", data)
	}
	for _, noise := range []string{`"Date"`, `"Content-Length"`, `"Content-Type"`} {
		if bytes.Contains(data, []byte(noise)) {
			t.Errorf("the recording keeps the header %s:\n%s", noise, data)
		}
	}
}

// uploadID is the upload session filesAPI opens.
const uploadID = "geminitest-upload-1"

// filesAPI stands in for the Gemini API's Files API, as genai's
// Files.Upload and Files.Download speak to it: a resumable upload opened
// by a start command (answered with X-Goog-Upload-URL and
// X-Goog-Upload-Status), the bytes sent with "upload, finalize" (answered
// with the file and X-Goog-Upload-Status final), and a download of what was
// uploaded.
func filesAPI(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	var stored []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		command := r.Header.Get("X-Goog-Upload-Command")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/upload/v1beta/files" && command == "start":
			w.Header().Set("X-Goog-Upload-Url", "https://generativelanguage.googleapis.com/upload/v1beta/files?upload_id="+uploadID+"&upload_protocol=resumable")
			w.Header().Set("X-Goog-Upload-Status", "active")
			w.Header().Set("X-Goog-Upload-Chunk-Granularity", "8388608")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		case r.Method == http.MethodPost && r.URL.Path == "/upload/v1beta/files" && r.URL.Query().Get("upload_id") == uploadID &&
			command == "upload, finalize" && r.Header.Get("X-Goog-Upload-Offset") == "0":
			mu.Lock()
			stored = body
			mu.Unlock()
			sum := sha256.Sum256(body)
			w.Header().Set("X-Goog-Upload-Status", "final")
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			fmt.Fprintf(w, `{"file": {"name": "files/upload1", "mimeType": "application/octet-stream", "sizeBytes": "%d", "sha256Hash": %q, `+
				`"uri": "https://generativelanguage.googleapis.com/v1beta/files/upload1", `+
				`"downloadUri": "https://generativelanguage.googleapis.com/v1beta/files/upload1:download?alt=media", "state": "ACTIVE", "source": "UPLOADED"}}`,
				len(body), base64.StdEncoding.EncodeToString(sum[:]))
		case r.Method == http.MethodGet && r.URL.Path == "/v1beta/files/upload1:download" && r.URL.Query().Get("alt") == "media":
			mu.Lock()
			b := stored
			mu.Unlock()
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(b)
		default:
			t.Errorf("the Files API got %s %s (command %q)", r.Method, r.URL, command)
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A genai Files.Upload of bytes that are not UTF-8, and the download of
// the file, record and then replay offline with the same result: the
// upload's headers replay, and the bytes sent and received are stored in
// base64, byte for byte.
func TestReplayFileUpload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "upload.json")
	upstream := filesAPI(t)
	content := make([]byte, 0, 600)
	for i := range 600 {
		content = append(content, byte(i*7))
	}
	if utf8.Valid(content) {
		t.Fatal("the test's content is UTF-8")
	}
	type outcome struct {
		File       string
		Downloaded []byte
	}
	run := func(t *testing.T, client *genai.Client) outcome {
		f, err := client.Files.Upload(context.Background(), bytes.NewReader(content), &genai.UploadFileConfig{MIMEType: "application/octet-stream"})
		if err != nil {
			t.Fatalf("Files.Upload: %v", err)
		}
		got, err := client.Files.Download(context.Background(), genai.NewDownloadURIFromFile(f), nil)
		if err != nil {
			t.Fatalf("Files.Download: %v", err)
		}
		j, _ := json.Marshal(f)
		return outcome{string(j), got}
	}
	recorded, replayed := recordThenReplay(t, file, upstream.URL, upstream.Client(), run)
	if !bytes.Equal(recorded.Downloaded, content) {
		t.Fatalf("recorded download = %q, want the uploaded bytes", recorded.Downloaded)
	}
	if replayed.File != recorded.File {
		t.Errorf("replayed file = %s\nrecorded: %s", replayed.File, recorded.File)
	}
	if !bytes.Equal(replayed.Downloaded, content) {
		t.Errorf("replayed download = %q\nwant %q", replayed.Downloaded, content)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"body_base64": "` + base64.StdEncoding.EncodeToString(content) + `"`; bytes.Count(data, []byte(want)) != 2 {
		t.Errorf("the recording does not hold the bytes sent and received in base64 (%s):\n%s", want, data)
	}
	if !utf8.Valid(data) || !json.Valid(data) {
		t.Errorf("the recording is not UTF-8 JSON:\n%q", data)
	}
}

// Response headers survive the recording file as they were kept, and a
// recording without headers or base64 bodies, as files written before
// either, reads as it did.
func TestRecordingFileHeadersAndBase64(t *testing.T) {
	in := geminitest.Exchange{Method: "POST", URL: "/upload/v1beta/files?upload_id=x&upload_protocol=resumable", Body: []byte{0xff, 0x00, 'a'},
		Status: 200, ContentType: "application/json",
		Header:   http.Header{"X-Goog-Upload-Status": {"final"}, "X-Many": {"one", "two <&>"}},
		Response: []byte{0xc3, 0x28}}
	out := geminitest.RoundTripExchange(t, in)
	if got, want := fmt.Sprintf("%q %q %v %q", out.Body, out.Response, out.Header, out.URL), fmt.Sprintf("%q %q %v %q", in.Body, in.Response, in.Header, in.URL); got != want {
		t.Errorf("round trip = %s, want %s", got, want)
	}
	// The committed recording of examples/eval predates headers.
	file, err := filepath.Abs(filepath.Join("..", "examples", "eval", "testdata", "geminitest", "TestRecorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	tb := &fakeTB{TB: t, name: "TestRecorded"}
	tb.run(func() { geminitest.Replay(tb, file, nil) })
	if tb.fatal != "" {
		t.Errorf("an older recording does not read: %s", tb.fatal)
	}
}
