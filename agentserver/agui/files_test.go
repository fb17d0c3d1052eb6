package agui_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// withFile is a run's input whose new message asks about a document of
// the given source.
func withFile(thread string, source map[string]any) map[string]any {
	return input(thread, "r1", map[string]any{"id": "u", "role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is this?"},
		map[string]any{"type": "document", "source": source},
	}})
}

func fileSource(uri string) map[string]any {
	return map[string]any{"type": "file", "value": uri, "mimeType": "application/pdf"}
}

// A file named by URI (Gemini would read it with the server's
// credentials) is refused unless Config.AllowFileURI allows the user
// that URI; a file sent inline is taken.
func TestFileURIs(t *testing.T) {
	t.Run("refused by default", func(t *testing.T) {
		e := newEnv(t, nil)
		r := e.post("/agui", withFile("t1", fileSource("gs://files/local/a.pdf")))
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
		if r := e.post("/agui", withFile("t1", fileSource("gs://files/local/a.pdf"))); r.last()["type"] != "RUN_FINISHED" {
			t.Fatalf("%d %v %s", r.status, r.types(), r.body)
		}
		p := e.Model.LastRequest().Contents[0].Parts[1]
		if p.FileData == nil || p.FileData.FileURI != "gs://files/local/a.pdf" || p.FileData.MIMEType != "application/pdf" {
			t.Errorf("the model got %+v", p)
		}
		r := e.post("/agui", withFile("t2", fileSource("gs://files/bob/a.pdf")))
		if r.status != 400 || r.code() != "bad_part" || !strings.Contains(r.body, `gs://files/bob/a.pdf`) || strings.Contains(r.body, "not a file of") {
			t.Errorf("another user's file: %d %s, want 400 bad_part naming it (and not the check's error)", r.status, r.body)
		}
		if n := len(e.Model.Requests()); n != 1 {
			t.Errorf("%d requests reached the model, want 1", n)
		}
	})
	t.Run("inline", func(t *testing.T) {
		e := newEnv(t, nil)
		e.Model.Enqueue(fake.Text("A report."))
		r := e.post("/agui", withFile("t1", map[string]any{"type": "data", "value": "JVBERi0=", "mimeType": "application/pdf"}))
		if r.last()["type"] != "RUN_FINISHED" {
			t.Fatalf("%d %v %s", r.status, r.types(), r.body)
		}
		p := e.Model.LastRequest().Contents[0].Parts[1]
		if p.InlineData == nil || string(p.InlineData.Data) != "%PDF-" || p.InlineData.MIMEType != "application/pdf" {
			t.Errorf("the model got %+v", p)
		}
	})
}
