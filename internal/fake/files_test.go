package fake_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// genai's Files.Upload speaks the resumable protocol to the server as to
// the API: the file comes back with its name, URI, size, type and
// expiry, and get, list and delete see it.
func TestFilesUpload(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.SetTimeNowFunc(func() time.Time { return start })
	c := srv.Client()
	// Two chunks: genai sends 8 MiB at a time.
	data := bytes.Repeat([]byte("0123456789abcdef"), (9<<20)/16)
	f, err := c.Files.Upload(ctx, bytes.NewReader(data), &genai.UploadFileConfig{MIMEType: "application/pdf", DisplayName: "report.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Name, "files/") || f.URI != "https://generativelanguage.googleapis.com/v1beta/"+f.Name ||
		f.MIMEType != "application/pdf" || f.DisplayName != "report.pdf" || f.SizeBytes == nil || *f.SizeBytes != int64(len(data)) ||
		f.State != genai.FileStateActive || !f.ExpirationTime.Equal(start.Add(48*time.Hour)) {
		t.Fatalf("Upload = %+v", f)
	}
	held := srv.Files()
	if len(held) != 1 || !bytes.Equal(held[0].Data, data) || held[0].URI != f.URI {
		t.Fatalf("Files() = %d files; want the one uploaded, byte for byte", len(held))
	}
	uploads := 0
	for _, r := range srv.Requests() {
		if r.Method == fake.MethodUploadFile {
			uploads++
			if r.Header.Get("X-Goog-Upload-Command") == "start" && r.Header.Get("X-Goog-Upload-Protocol") != "resumable" {
				t.Errorf("the start was sent with protocol %q", r.Header.Get("X-Goog-Upload-Protocol"))
			}
		}
	}
	if uploads != 3 {
		t.Errorf("%d upload requests; want 3 (the start, then two chunks)", uploads)
	}

	got, err := c.Files.Get(ctx, f.Name, nil)
	if err != nil || got.URI != f.URI || *got.SizeBytes != int64(len(data)) {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	for range 11 {
		if _, err := c.Files.Upload(ctx, strings.NewReader("x"), &genai.UploadFileConfig{MIMEType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.Files.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 10 || page.NextPageToken == "" {
		t.Errorf("the first page holds %d files, next %q; want 10 and a token", len(page.Items), page.NextPageToken)
	}
	n := 0
	for _, err := range c.Files.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 12 {
		t.Errorf("All lists %d files; want 12", n)
	}
	if _, err := c.Files.Delete(ctx, f.Name, nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.Files.Get(ctx, f.Name, nil)
	wantAPIError(t, "Get of a deleted file", err, http.StatusForbidden, "PERMISSION_DENIED",
		"You do not have permission to access the File "+strings.TrimPrefix(f.Name, "files/")+" or it may not exist.")
}

// A generateContent takes the files the server holds, by their URI, at
// the top of a content and in a function response, and refuses one it
// does not hold, one that expired, and an artifact reference sent
// unresolved.
func TestFilesInRequests(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.SetTimeNowFunc(func() time.Time { return start })
	c := srv.Client()
	f, err := c.Files.Upload(ctx, strings.NewReader("\x89PNG\r\n\x1a\n"), &genai.UploadFileConfig{MIMEType: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(uri string) error {
		srv.Enqueue(fake.Text("A picture."))
		_, err := c.Models.GenerateContent(ctx, "gemini-3-flash-preview", []*genai.Content{{Role: genai.RoleUser,
			Parts: []*genai.Part{genai.NewPartFromURI(uri, "image/png"), genai.NewPartFromText("What is it?")}}}, nil)
		return err
	}
	if err := ask(f.URI); err != nil {
		t.Fatalf("a request naming an uploaded file: %v", err)
	}
	wantAPIError(t, "a file never uploaded", ask("https://generativelanguage.googleapis.com/v1beta/files/nosuchfile"),
		http.StatusForbidden, "PERMISSION_DENIED", "You do not have permission to access the File nosuchfile or it may not exist.")
	wantAPIError(t, "an artifact reference", ask("artifact:chart.png?version=1"),
		http.StatusBadRequest, "INVALID_ARGUMENT", "Unsupported file uri: artifact:chart.png?version=1")

	// In a function response, for gemini-3.
	srv.Enqueue(fake.Text("It is a chart."))
	_, err = c.Models.GenerateContent(ctx, "gemini-3-flash-preview", []*genai.Content{
		genai.NewContentFromText("Draw.", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "draw"}, ThoughtSignature: []byte("sig")}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "draw", Response: map[string]any{},
			Parts: []*genai.FunctionResponsePart{{FileData: &genai.FunctionResponseFileData{FileURI: f.URI, MIMEType: "image/png"}}}}}}},
	}, &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "draw"}}}}})
	if err != nil {
		t.Fatalf("a function response naming an uploaded file: %v", err)
	}

	srv.AdvanceTime(48 * time.Hour)
	id := strings.TrimPrefix(f.Name, "files/")
	wantAPIError(t, "a file 48 hours after its upload", ask(f.URI), http.StatusForbidden, "PERMISSION_DENIED",
		"You do not have permission to access the File "+id+" or it may not exist.")
	if held := srv.Files(); len(held) != 0 {
		t.Errorf("Files() holds %d files after their expiry", len(held))
	}
}

// The upload's refusals: a chunk of an upload never started, a chunk at
// the wrong offset, a size that is not the one declared, a protocol other
// than resumable, a start without credentials.
func TestFilesUploadRefusals(t *testing.T) {
	srv := newServer(t)
	client := &http.Client{}
	post := func(url string, header map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"X-Goog-Api-Key": fake.APIKey}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	start := with(map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
		"X-Goog-Upload-Header-Content-Length": "5", "X-Goog-Upload-Header-Content-Type": "text/plain"})
	if resp := post(srv.URL+"/upload/v1beta/files", map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start"}, "{}"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a start without a key: %d; want 403", resp.StatusCode)
	}
	if resp := post(srv.URL+"/upload/v1beta/files", with(map[string]string{"X-Goog-Upload-Protocol": "multipart"}), "x"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a multipart upload: %d; want 400", resp.StatusCode)
	}
	if resp := post(srv.URL+"/upload/v1beta/files?upload_id=nope", with(map[string]string{"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"}), "hello"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a chunk of an upload never started: %d; want 404", resp.StatusCode)
	}
	resp := post(srv.URL+"/upload/v1beta/files", start, `{"file":{"displayName":"a.txt"}}`)
	session := resp.Header.Get("X-Goog-Upload-URL")
	if resp.StatusCode != http.StatusOK || session == "" || resp.Header.Get("X-Goog-Upload-Status") != "active" {
		t.Fatalf("start: %d, session %q, status %q", resp.StatusCode, session, resp.Header.Get("X-Goog-Upload-Status"))
	}
	if resp := post(session, with(map[string]string{"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "3"}), "he"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a chunk at the wrong offset: %d; want 400", resp.StatusCode)
	}
	if resp := post(session, with(map[string]string{"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "0"}), "he"); resp.StatusCode != http.StatusOK || resp.Header.Get("X-Goog-Upload-Status") != "active" {
		t.Errorf("a first chunk: %d, status %q", resp.StatusCode, resp.Header.Get("X-Goog-Upload-Status"))
	}
	if resp := post(session, with(map[string]string{"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "2"}), "llo!"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an upload of 6 bytes declared 5: %d; want 400", resp.StatusCode)
	}
	if resp := post(session, with(map[string]string{"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "2"}), "llo"); resp.StatusCode != http.StatusOK || resp.Header.Get("X-Goog-Upload-Status") != "final" {
		t.Errorf("the last chunk: %d, status %q", resp.StatusCode, resp.Header.Get("X-Goog-Upload-Status"))
	}
	if files := srv.Files(); len(files) != 1 || string(files[0].Data) != "hello" || files[0].DisplayName != "a.txt" || files[0].MIMEType != "text/plain" {
		t.Errorf("Files() = %+v", files)
	}
}
