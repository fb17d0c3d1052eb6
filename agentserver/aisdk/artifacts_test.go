package aisdk_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/artifacttest"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"google.golang.org/genai"
)

// get fetches path from the env's server as user ("" for none), with
// headers, and returns the response and its body.
func (e *env) get(user, method, path string, body []byte, headers ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.HTTP.URL+path, bytes.NewReader(body))
	if user != "" {
		req.Header.Set("X-User", user)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.HTTP.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// fileChunks returns the stream's file chunks.
func fileChunks(r *reply) []map[string]any {
	var out []map[string]any
	for _, c := range r.chunks {
		if c["type"] == "file" {
			out = append(out, c)
		}
	}
	return out
}

// A tool that makes a chart and a CSV in a served run: the stream carries
// a file part for each, whose URL downloads it (inline, with its type
// checked; a range of it); the thread's history refers to them rather
// than holding their bytes, the model read them inline, and the messages
// route links them.
func TestArtifactsServed(t *testing.T) {
	e := newEnv(t, servertest.Charts, servertest.Artifacts(nil))
	e.Model.SetReplyFunc(servertest.Scripted)
	r := e.do("POST", "/api/chat", chatBody("t-files", "m1", "Draw a chart of the weather"))
	files := fileChunks(r)
	if len(files) != 2 {
		t.Fatalf("file chunks: %v (chunks %v)", files, r.types())
	}
	want := map[string]struct {
		mediaType, url, body, served, disposition string
	}{
		"chart.png": {"image/png", "/artifacts/t-files/chart.png?version=1", string(servertest.ChartPNG()), "image/png", `inline; filename=chart.png`},
		"data.csv":  {"text/csv", "/artifacts/t-files/data.csv?version=1", servertest.ChartCSV, "text/plain; charset=utf-8", `inline; filename=data.csv`},
	}
	for _, f := range files {
		meta := f["providerMetadata"].(map[string]any)["toolnexus"].(map[string]any)
		w, ok := want[meta["name"].(string)]
		if !ok || f["url"] != w.url || f["mediaType"] != w.mediaType || meta["toolCallId"] == "" {
			t.Errorf("file chunk %v", f)
			continue
		}
		resp, body := e.get("", "GET", w.url, nil)
		h := resp.Header
		if resp.StatusCode != 200 || string(body) != w.body || h.Get("Content-Type") != w.served || h.Get("Content-Disposition") != w.disposition ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "sandbox" || h.Get("ETag") == "" {
			t.Errorf("GET %s: %d %v, %d bytes", w.url, resp.StatusCode, h, len(body))
		}
	}
	resp, body := e.get("", "GET", "/artifacts/t-files/chart.png", nil, "Range", "bytes=1-3")
	if resp.StatusCode != http.StatusPartialContent || string(body) != "PNG" || resp.Header.Get("Content-Range") == "" {
		t.Errorf("a range of the chart: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = e.get("", "GET", "/artifacts/t-files", nil)
	var list struct{ Files []map[string]any }
	if json.Unmarshal(body, &list); resp.StatusCode != 200 || len(list.Files) != 2 || list.Files[0]["name"] != "chart.png" {
		t.Errorf("the list: %d %s", resp.StatusCode, body)
	}

	history, err := e.Srv.History(bg, "local", "t-files")
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(history)
	if bytes.Contains(stored, []byte(base64.StdEncoding.EncodeToString(servertest.ChartPNG())[:40])) ||
		!bytes.Contains(stored, []byte(`"fileUri":"artifact:chart.png?version=1"`)) {
		t.Errorf("the stored thread holds the chart's bytes, or no reference: %.600s", stored)
	}
	reqs := e.Model.Requests()
	if sent := string(reqs[len(reqs)-1].Body); !strings.Contains(sent, base64.StdEncoding.EncodeToString(servertest.ChartPNG())) {
		t.Errorf("the model did not get the chart inline")
	}

	m := e.do("GET", "/api/chat/t-files/messages", "")
	if !strings.Contains(m.body, `"type":"file","mediaType":"image/png","url":"/artifacts/t-files/chart.png?version=1"`) {
		t.Errorf("the messages route does not link the chart: %s", m.body)
	}

	// The next chart is version 2; version 1 stays as it was.
	e.do("POST", "/api/chat", chatBody("t-files", "m2", "Another chart please"))
	var vs struct{ Versions []map[string]any }
	if _, body := e.get("", "GET", "/artifacts/t-files/chart.png?versions", nil); json.Unmarshal(body, &vs) != nil || len(vs.Versions) != 2 {
		t.Errorf("versions: %s", body)
	}
}

// A user's upload through the protocol becomes a file of the thread: the
// stored message refers to it, the model reads it (inline), and the next
// turn does not send the stored message's bytes again with the message.
func TestArtifactsUpload(t *testing.T) {
	e := newEnv(t, nil, servertest.Artifacts(nil))
	e.Model.SetReplyFunc(servertest.Scripted)
	csv := "name,score\nada,10\n"
	body, _ := json.Marshal(map[string]any{"id": "t-up", "messages": []any{map[string]any{"id": "u1", "role": "user", "parts": []any{
		map[string]any{"type": "file", "mediaType": "text/csv", "filename": "scores.csv", "url": "data:text/csv;base64," + base64.StdEncoding.EncodeToString([]byte(csv))},
		map[string]any{"type": "text", "text": "What is in the file?"},
	}}}})
	if r := e.do("POST", "/api/chat", string(body)); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	list, err := e.Srv.Artifacts().Store().List(bg, "local", "t-up")
	if err != nil || len(list) != 1 || list[0].Name != "scores.csv" || list[0].ContentType != "text/csv" {
		t.Fatalf("the thread's files: %+v, %v", list, err)
	}
	history, _ := e.Srv.History(bg, "local", "t-up")
	if p := history[0].Parts[0]; p.FileData == nil || p.FileData.FileURI != "artifact:scores.csv?version=1" || p.InlineData != nil {
		t.Errorf("the stored message's file: %+v", p)
	}
	sent := string(e.Model.Requests()[0].Body)
	if !strings.Contains(sent, `"inlineData":{"data":"`+base64.StdEncoding.EncodeToString([]byte(csv))+`","mimeType":"text/plain"`) {
		t.Errorf("the model did not read the upload: %.400s", sent)
	}
	m := e.do("GET", "/api/chat/t-up/messages", "")
	if !strings.Contains(m.body, `"url":"/artifacts/t-up/scores.csv?version=1","filename":"scores.csv"`) {
		t.Errorf("the messages route does not link the upload: %s", m.body)
	}
	// A reference to the thread's file is taken from a client; a file of
	// another thread is not.
	ref := func(thread string) string {
		b, _ := json.Marshal(map[string]any{"id": thread, "messages": []any{map[string]any{"id": "u2", "role": "user", "parts": []any{
			map[string]any{"type": "file", "mediaType": "text/csv", "url": "artifact:scores.csv?version=1"},
			map[string]any{"type": "text", "text": "Again?"}}}}})
		return string(b)
	}
	if r := e.do("POST", "/api/chat", ref("t-up")); r.status != 200 {
		t.Errorf("a reference to the thread's file: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/api/chat", ref("t-other")); r.status != 400 || r.code() != "bad_part" {
		t.Errorf("a reference to another thread's file: %d %s", r.status, r.body)
	}
}

// Another user's file, thread or version answers exactly as one that does
// not exist; names that would escape their folder are refused; an HTML
// (or SVG, or a file whose bytes lie about their type) upload is served
// as an attachment, sandboxed, never rendered.
func TestArtifactsHostile(t *testing.T) {
	e := newEnv(t, nil, byHeader, servertest.Artifacts(nil))
	put := func(user, path, contentType, body string) (*http.Response, []byte) {
		return e.get(user, "PUT", path, []byte(body), "Content-Type", contentType)
	}
	if resp, body := put("alice", "/artifacts/t1/secret.txt", "text/plain", "alice's secret"); resp.StatusCode != 201 {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	_, none := e.get("alice", "GET", "/artifacts/t1/nothing.txt", nil)
	for _, path := range []string{"/artifacts/t1/secret.txt", "/artifacts/t1/secret.txt?version=1", "/artifacts/t1/secret.txt?versions"} {
		resp, body := e.get("bob", "GET", path, nil)
		if resp.StatusCode != 404 || string(body) != string(none) {
			t.Errorf("bob GET %s: %d %s; want what a file that does not exist gets: %s", path, resp.StatusCode, body, none)
		}
	}
	if resp, body := e.get("bob", "GET", "/artifacts/t1", nil); resp.StatusCode != 200 || string(body) != `{"files":[]}`+"\n" && string(body) != `{"files":[]}` {
		t.Errorf("bob's list of alice's thread: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.get("bob", "DELETE", "/artifacts/t1/secret.txt", nil); resp.StatusCode != 404 {
		t.Errorf("bob's DELETE of alice's file: %d", resp.StatusCode)
	}
	for _, name := range []string{"..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "a%5Cb", "nul%00", "bell%07", "a%2F%2Fb", "dir%2F"} {
		if resp, body := put("alice", "/artifacts/t1/"+name, "text/plain", "x"); resp.StatusCode != 400 || servertest.ErrorCode(string(body)) != "bad_name" {
			t.Errorf("PUT of a hostile name %s: %d %s", name, resp.StatusCode, body)
		}
	}
	for _, name := range artifacttest.HostileNames {
		if _, err := (artifact.Scope{User: "alice", Thread: "t1"}).Key(name); err == nil {
			t.Errorf("the name %q is taken", name)
		}
	}
	for _, tc := range []struct{ name, contentType, body, served, disposition string }{
		{"page.html", "text/html", "<html><script>alert(document.cookie)</script></html>", "text/html", "attachment"},
		{"logo.svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, "image/svg+xml", "attachment"},
		{"fake.png", "image/png", "<html><script>alert(1)</script>", "application/octet-stream", "attachment"},
		{"notes.txt", "text/plain", "<script>alert(1)</script>", "application/octet-stream", "attachment"},
		{"data.xml", "application/xml", "<?xml version='1.0'?><a/>", "application/xml", "attachment"},
	} {
		if resp, body := put("alice", "/artifacts/t1/"+tc.name, tc.contentType, tc.body); resp.StatusCode != 201 {
			t.Fatalf("PUT %s: %d %s", tc.name, resp.StatusCode, body)
		}
		resp, body := e.get("alice", "GET", "/artifacts/t1/"+tc.name, nil)
		h := resp.Header
		if string(body) != tc.body || h.Get("Content-Type") != tc.served || !strings.HasPrefix(h.Get("Content-Disposition"), tc.disposition) ||
			h.Get("Content-Security-Policy") != "sandbox" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %v", tc.name, h)
		}
	}
}

// Per-user quotas: an upload (through the protocol or PUT) past the
// user's bytes is refused 429 artifact_quota, and nothing is kept.
func TestArtifactsQuota(t *testing.T) {
	keeper := artifact.NewKeeper(artifact.NewMemory(0), artifact.KeeperOptions{MaxBytesPerUser: 1000})
	e := newEnv(t, nil, servertest.Artifacts(keeper))
	e.Model.SetReplyFunc(servertest.Scripted)
	if resp, body := e.get("", "PUT", "/artifacts/t/a.bin", make([]byte, 800), "Content-Type", "application/octet-stream"); resp.StatusCode != 201 {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.get("", "PUT", "/artifacts/t/b.bin", make([]byte, 300), "Content-Type", "application/octet-stream"); resp.StatusCode != 429 || servertest.ErrorCode(string(body)) != "artifact_quota" {
		t.Errorf("PUT past the quota: %d %s", resp.StatusCode, body)
	}
	body, _ := json.Marshal(map[string]any{"id": "t", "messages": []any{map[string]any{"id": "u1", "role": "user", "parts": []any{
		map[string]any{"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64," + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 300))},
		map[string]any{"type": "text", "text": "hi"}}}}})
	if r := e.do("POST", "/api/chat", string(body)); r.status != 429 || r.code() != "artifact_quota" {
		t.Errorf("an upload past the quota: %d %s", r.status, r.body)
	}
	if n, _ := keeper.Store().Usage(bg, "local"); n != 800 {
		t.Errorf("Usage = %d after refused uploads, want 800", n)
	}
	if _, err := e.Srv.History(bg, "local", "t"); err == nil {
		t.Error("a refused message was stored")
	}
}

// DeleteThread deletes the thread's conversation and files, not the
// user's own nor another thread's.
func TestArtifactsDeleteThread(t *testing.T) {
	e := newEnv(t, servertest.Charts, servertest.Artifacts(nil))
	e.Model.SetReplyFunc(servertest.Scripted)
	e.do("POST", "/api/chat", chatBody("doomed", "m1", "Draw a chart"))
	e.do("POST", "/api/chat", chatBody("kept", "m1", "Draw a chart"))
	e.get("", "PUT", "/artifacts/doomed/user:profile.txt", []byte("mine"), "Content-Type", "text/plain")
	if err := e.Srv.DeleteThread(bg, "local", "doomed"); err != nil {
		t.Fatal(err)
	}
	store := e.Srv.Artifacts().Store()
	if list, _ := store.List(bg, "local", "doomed"); len(list) != 0 {
		t.Errorf("the deleted thread's files: %+v", list)
	}
	if list, _ := store.List(bg, "local", "kept"); len(list) != 2 {
		t.Errorf("another thread's files: %+v", list)
	}
	if list, _ := store.List(bg, "local", ""); len(list) != 1 {
		t.Errorf("the user's own files: %+v", list)
	}
	if _, err := e.Srv.History(bg, "local", "doomed"); err == nil {
		t.Error("the deleted thread's conversation is there")
	}
	if err := e.Srv.DeleteThread(bg, "local", "doomed"); err == nil {
		t.Error("deleting a deleted thread: no error")
	}
}

// Files survive a restart on the durable stores: a thread's chart made
// before, downloaded and read by the model after, on SQLite and
// PostgreSQL.
func TestArtifactsRestart(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "app.db")
		restart(t, func() (session.Store, artifact.Store) {
			s, err := sqlitestore.Open(bg, path)
			if err != nil {
				t.Fatal(err)
			}
			return s, artifactsOf(t, s.Close, s.Artifacts)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		db := pgtest.Database(t)
		restart(t, func() (session.Store, artifact.Store) {
			s, err := pgstore.Open(bg, db)
			if err != nil {
				t.Fatal(err)
			}
			return s, artifactsOf(t, s.Close, s.Artifacts)
		})
	})
}

// artifactsOf returns the artifact store artifacts makes, with the store
// it belongs to closed (closer) when t ends.
func artifactsOf[A artifact.Store](t *testing.T, closer func() error, artifacts func(context.Context) (A, error)) artifact.Store {
	t.Cleanup(func() { closer() })
	a, err := artifacts(bg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// restart serves a server on the stores open returns, makes a chart,
// closes it, and serves another on the stores opened again.
func restart(t *testing.T, open func() (session.Store, artifact.Store)) {
	serve := func() *env {
		sess, files := open()
		e := newEnv(t, servertest.Charts, servertest.Artifacts(artifact.NewKeeper(files, artifact.KeeperOptions{})),
			func(c *agentserver.Config) { c.Store = sess })
		e.Model.SetReplyFunc(servertest.Scripted)
		return e
	}
	first := serve()
	if r := first.do("POST", "/api/chat", chatBody("t-r", "m1", "Draw a chart")); len(fileChunks(r)) != 2 {
		t.Fatalf("the first server's run: %v", r.types())
	}
	if err := first.Srv.Close(bg); err != nil {
		t.Fatal(err)
	}

	second := serve()
	resp, body := second.get("", "GET", "/artifacts/t-r/chart.png?version=1", nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, servertest.ChartPNG()) {
		t.Fatalf("the chart after a restart: %d, %d bytes", resp.StatusCode, len(body))
	}
	if r := second.do("POST", "/api/chat", chatBody("t-r", "m2", "What did the chart show?")); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	reqs := second.Model.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Body), base64.StdEncoding.EncodeToString(servertest.ChartPNG())) {
		t.Error("the model did not get the chart after the restart")
	}
}

// A user's upload larger than the inline limit reaches the model through
// the Files API: uploaded once, named by its URI in each request of the
// thread's later turns too.
func TestArtifactsUploadFilesAPI(t *testing.T) {
	var e *env
	keeper := artifact.NewKeeper(artifact.NewMemory(0), artifact.KeeperOptions{Uploader: uploaderFunc(func() artifact.Uploader { return e.Model.Client().Files }), InlineLimit: 1024})
	e = newEnv(t, nil, servertest.Artifacts(keeper))
	e.Model.SetReplyFunc(servertest.Scripted)
	pdf := "%PDF-1.7\n" + strings.Repeat("report ", 1000)
	body, _ := json.Marshal(map[string]any{"id": "t-big", "messages": []any{map[string]any{"id": "u1", "role": "user", "parts": []any{
		map[string]any{"type": "file", "mediaType": "application/pdf", "filename": "report.pdf", "url": "data:application/pdf;base64," + base64.StdEncoding.EncodeToString([]byte(pdf))},
		map[string]any{"type": "text", "text": "Summarize it."}}}}})
	if r := e.do("POST", "/api/chat", string(body)); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	e.do("POST", "/api/chat", chatBody("t-big", "u2", "And its title?"))
	files := e.Model.Files()
	if len(files) != 1 || string(files[0].Data) != pdf || files[0].MIMEType != "application/pdf" {
		t.Fatalf("uploads: %d", len(files))
	}
	var named int
	for _, r := range e.Model.Requests() {
		if r.Method == "generateContent" || r.Method == "streamGenerateContent" {
			if !strings.Contains(string(r.Body), `"fileUri":"`+files[0].URI+`"`) || strings.Contains(string(r.Body), "JVBERi0") {
				t.Errorf("request #%d does not name the upload, or sends the bytes", r.Seq)
			}
			named++
		}
	}
	if named != 2 {
		t.Errorf("%d model calls, want 2", named)
	}
}

// uploaderFunc is an Uploader made once the fake exists.
type uploaderFunc func() artifact.Uploader

func (f uploaderFunc) Upload(ctx context.Context, r io.Reader, config *genai.UploadFileConfig) (*genai.File, error) {
	return f().Upload(ctx, r, config)
}
