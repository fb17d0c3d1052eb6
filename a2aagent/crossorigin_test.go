package a2aagent_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// send sends a request to the test server with the headers given, the
// user's credentials among them, and returns its status and body.
func (l *local) send(method, path, contentType, body string, header map[string]string) (int, string) {
	l.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, l.http.URL+path, rd)
	req.Header.Set("Authorization", "Bearer alice")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := l.http.Client().Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A page of another site cannot change anything through any binding
// (issue 43: POST …/tasks/{id}:cancel, of no body and no type, cancelled
// a 1.0 task from another site's page): whatever a route reads, a request
// that may change something and that the browser says comes from another
// site is refused, 403 cross_origin, before it is read. Programs (no
// browser headers) and the server's own origin are served.
func TestCrossSiteRefused(t *testing.T) {
	l := newLocal(t, nil, false)
	l.model.Enqueue(fake.Calls(fake.Call("wait", nil)), fake.Text("waited"))
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"configuration":{"blocking":false},"message":{"messageId":"m1","role":"user","parts":[{"kind":"text","text":"wait"}]}}}`, "application/json", true)
	id, _ := path(m, "result", "id").(string)
	if id == "" {
		t.Fatalf("message/send: %s", jsonOf(m))
	}
	state := func() any {
		_, _, m := l.rpc(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+id+`"}}`, "application/json", true)
		return path(m, "result", "status", "state")
	}
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"` + method + `","params":` + params + `}`
	}
	for _, hd := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://other.localhost"},
		{"Origin": "http://evil.example"}, // a browser that sends no Sec-Fetch-Site
	} {
		for _, r := range []struct{ method, path, contentType, body string }{
			{"POST", "/a2a/v1/rest/tasks/" + id + ":cancel", "", ""}, // 1.0 HTTP+JSON, no body
			{"POST", "/a2a/v1/rest/tasks/" + id + ":cancel", "text/plain", "x"},
			{"POST", "/a2a/v1/rest/tasks/" + id + ":subscribe", "", ""},
			{"POST", "/a2a/v1/rest/message:send", "text/plain", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
			{"POST", "/a2a/v1/rest/tasks/" + id + "/pushNotificationConfigs", "", ""},
			{"DELETE", "/a2a/v1/rest/tasks/" + id + "/pushNotificationConfigs/c", "", ""},
			{"POST", "/a2a/v1", "text/plain", rpc("CancelTask", `{"id":"`+id+`"}`)}, // 1.0 JSON-RPC
			{"POST", "/a2a/v1", "", ""},
			{"POST", "/a2a", "text/plain", rpc("tasks/cancel", `{"id":"`+id+`"}`)}, // 0.3 JSON-RPC
			{"POST", "/a2a", "", ""},
		} {
			if status, body := l.send(r.method, r.path, r.contentType, r.body, hd); status != http.StatusForbidden || !strings.Contains(body, "cross_origin") {
				t.Errorf("%s %s (%q) with %v: %d %s, want 403 cross_origin", r.method, r.path, r.contentType, hd, status, body)
			}
		}
	}
	if s := state(); s != "working" {
		t.Fatalf("the task is %v after another site's requests, want working", s)
	}
	// The server's own origin (a page it serves) cancels.
	if status, body := l.send("POST", "/a2a/v1/rest/tasks/"+id+":cancel", "", "", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": l.http.URL}); status != http.StatusOK ||
		!strings.Contains(body, "TASK_STATE_CANCELED") {
		t.Errorf("a cancel of the server's own origin: %d %s", status, body)
	}
	if s := state(); s != "canceled" {
		t.Errorf("the task is %v, want canceled", s)
	}
	// The card is read from anywhere.
	if status, _ := l.send("GET", "/.well-known/agent-card.json", "", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}); status != http.StatusOK {
		t.Errorf("the card from another site: %d", status)
	}
}
