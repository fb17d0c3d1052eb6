package aisdk_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// withFile is a chat request whose new message asks about the file at
// url.
func withFile(chat, url string) map[string]any {
	return map[string]any{"id": chat, "messages": []any{map[string]any{"id": "u", "role": "user", "parts": []any{
		map[string]any{"type": "text", "text": "What is this?"},
		map[string]any{"type": "file", "mediaType": "application/pdf", "url": url},
	}}}}
}

// A file named by a URL other than a data: URL (Gemini would read it with
// the server's credentials) is refused unless Config.AllowFileURI allows
// the user that URI. (TestFilePart: a data: URL is taken.)
func TestFileURIs(t *testing.T) {
	t.Run("refused by default", func(t *testing.T) {
		e := newEnv(t, nil)
		r := e.chat(withFile("c1", "gs://files/local/a.pdf"))
		if r.status != 400 || r.code() != "bad_part" || !strings.Contains(r.body, `gs://files/local/a.pdf`) || !strings.Contains(r.body, "inline") {
			t.Errorf("%d %s, want 400 bad_part naming the file", r.status, r.body)
		}
		if n := len(e.Model.Requests()); n != 0 {
			t.Errorf("%d requests reached the model", n)
		}
	})
	t.Run("the user's own, allowed", func(t *testing.T) {
		e := newEnv(t, nil, servertest.OwnFiles)
		e.Model.Enqueue(fake.Text("A report."))
		if r := e.chat(withFile("c1", "gs://files/local/a.pdf")); r.status != 200 || r.chunks[len(r.chunks)-1]["type"] != "finish" {
			t.Fatalf("%d %v %s", r.status, r.types(), r.body)
		}
		p := e.Model.LastRequest().Contents[0].Parts[1]
		if p.FileData == nil || p.FileData.FileURI != "gs://files/local/a.pdf" || p.FileData.MIMEType != "application/pdf" {
			t.Errorf("the model got %+v", p)
		}
		r := e.chat(withFile("c2", "gs://files/bob/a.pdf"))
		if r.status != 400 || r.code() != "bad_part" || !strings.Contains(r.body, `gs://files/bob/a.pdf`) {
			t.Errorf("another user's file: %d %s, want 400 bad_part naming it", r.status, r.body)
		}
		if n := len(e.Model.Requests()); n != 1 {
			t.Errorf("%d requests reached the model, want 1", n)
		}
	})
}
