package a2aagent_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// fileMessage is a JSON-RPC request of method whose message holds a file
// part naming uri.
func fileMessage(method, uri string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"messageId":"m","role":"user","parts":[` +
		`{"kind":"text","text":"look"},{"kind":"file","file":{"uri":"` + uri + `","mimeType":"application/pdf"}}]}}}`
}

// rpcErrorOf returns the code and message of a JSON-RPC error response.
func rpcErrorOf(m map[string]any) (float64, string) {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return code, msg
}

// A file part with a URI (Gemini would read the file with the server's
// credentials) is refused with invalid params unless Config.AllowFileURI
// allows the user that URI. (TestMessageParts: bytes are taken.)
func TestFileURIs(t *testing.T) {
	t.Run("refused by default", func(t *testing.T) {
		l := newLocal(t, nil, false)
		for _, method := range []string{"message/send", "message/stream"} {
			status, _, m := l.rpc(fileMessage(method, "gs://files/alice/b.pdf"), "application/json", true)
			if code, msg := rpcErrorOf(m); status != 200 || code != -32602 || !strings.Contains(msg, "gs://files/alice/b.pdf") || !strings.Contains(msg, "inline") {
				t.Errorf("%s: %d %s, want invalid params naming the file", method, status, jsonOf(m))
			}
		}
		if n := len(l.model.Requests()); n != 0 {
			t.Errorf("%d requests reached the model", n)
		}
	})
	t.Run("the user's own, allowed", func(t *testing.T) {
		l := newLocal(t, nil, false, ownFiles)
		l.model.Enqueue(fake.Text("A report."))
		_, _, m := l.rpc(fileMessage("message/send", "gs://files/alice/b.pdf"), "application/json", true)
		if res, _ := m["result"].(map[string]any); res == nil || res["status"].(map[string]any)["state"] != "completed" {
			t.Fatalf("message/send %s", jsonOf(m))
		}
		if p := l.model.LastRequest().Contents[0].Parts[1]; p.FileData == nil || p.FileData.FileURI != "gs://files/alice/b.pdf" {
			t.Errorf("the model got %s", jsonOf(p))
		}
		status, _, m := l.rpc(fileMessage("message/send", "gs://files/bob/b.pdf"), "application/json", true)
		if code, msg := rpcErrorOf(m); status != 200 || code != -32602 || !strings.Contains(msg, "gs://files/bob/b.pdf") {
			t.Errorf("another user's file: %d %s, want invalid params naming it", status, jsonOf(m))
		}
		if n := len(l.model.Requests()); n != 1 {
			t.Errorf("%d requests reached the model, want 1", n)
		}
	})
}
