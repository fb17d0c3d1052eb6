package agentserver_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// Every bad request is answered with a 4xx JSON error before anything
// runs: nothing reaches the model, nothing is stored.
func TestBadInput(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.MaxBodyBytes = 1 << 10 }})
	for _, tc := range []struct {
		name, user, contentType, body string
		status                        int
		code                          string
	}{
		{"no user", "", "application/json", `{"thread":"t1","text":"hi"}`, 401, "unauthenticated"},
		{"malformed JSON", "alice", "application/json", `{"thread":"t1",`, 400, "bad_json"},
		{"two JSON values", "alice", "application/json", `{"thread":"t1","text":"hi"} {}`, 400, "bad_json"},
		{"a field of the wrong type", "alice", "application/json", `{"thread":7,"text":"hi"}`, 400, "bad_field"},
		{"not JSON", "alice", "text/plain", `hello`, 415, "bad_content_type"},
		// What another site's page may post without asking the browser.
		{"JSON of no type", "alice", "", `{"thread":"t1","text":"hi"}`, 415, "bad_content_type"},
		{"JSON as a form", "alice", "application/x-www-form-urlencoded", `{"thread":"t1","text":"hi"}`, 415, "bad_content_type"},
		{"too large", "alice", "application/json", `{"thread":"t1","text":"` + strings.Repeat("x", 2000) + `"}`, 413, "too_large"},
		{"no thread", "alice", "application/json", `{"text":"hi"}`, 400, "bad_thread"},
		{"a thread id with a control character", "alice", "application/json", `{"thread":"t\u0001","text":"hi"}`, 400, "bad_thread"},
		{"a thread id too long", "alice", "application/json", `{"thread":"` + strings.Repeat("t", 201) + `","text":"hi"}`, 400, "bad_thread"},
		{"no message", "alice", "application/json", `{"thread":"t1"}`, 400, "no_message"},
		{"decisions with no run", "alice", "application/json", `{"thread":"t1","decisions":[{"callId":"x","approved":true}]}`, 409, "unknown_call"},
	} {
		resp := h.do(bg, tc.user, "POST", "/run", tc.contentType, strings.NewReader(tc.body))
		if resp.status != tc.status || resp.errorCode() != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, resp.status, resp.body, tc.status, tc.code)
		}
		if !strings.HasPrefix(resp.body, `{"error":{"code":`) {
			t.Errorf("%s: body %q is not the JSON error", tc.name, resp.body)
		}
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
	if list, _ := h.srv.Threads(bg, "alice", agentserver.ThreadsOptions{}); len(list.Threads) != 0 {
		t.Errorf("threads were written: %+v", list)
	}
}
