package a2aagent_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	a2a "github.com/a2aproject/a2a-go/v2/a2a"
	a2aclient "github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// The 1.0 bindings speak A2A 1.0 only (issue 43: A2A-Version 0.3 and 9.9
// were answered as 1.0): another version, asked for with the A2A-Version
// header or query parameter, gets VersionNotSupportedError (A2A 1.0
// §3.6.2), -32009 on JSON-RPC and 400 FAILED_PRECONDITION on HTTP+JSON
// (§5.4), each with an ErrorInfo VERSION_NOT_SUPPORTED; no version is
// 1.0, and so is a patch of it.
func TestV1VersionRefused(t *testing.T) {
	l := newLocal(t, nil, false)
	rpc := `{"jsonrpc":"2.0","id":"q7","method":"GetTask","params":{"id":"nope"}}`
	type req struct {
		binding, method, path, body string
	}
	reqs := []req{
		{"JSON-RPC", "POST", "/a2a/v1", rpc},
		{"HTTP+JSON", "GET", "/a2a/v1/rest/tasks/nope", ""},
		{"HTTP+JSON", "POST", "/a2a/v1/rest/tasks/nope:cancel", ""},
	}
	send := func(r req, header, query string) (int, string) {
		t.Helper()
		p := r.path
		if query != "" {
			p += "?A2A-Version=" + url.QueryEscape(query)
		}
		ct := ""
		if r.body != "" {
			ct = "application/json"
		}
		hd := map[string]string{}
		if header != "" {
			hd["A2A-Version"] = header
		}
		return l.send(r.method, p, ct, r.body, hd)
	}
	for _, v := range []string{"0.3", "9.9", "1.1", "1", "1.0x", "0.3.0"} {
		for _, r := range reqs {
			for _, byQuery := range []bool{false, true} {
				header, query := v, ""
				if byQuery {
					header, query = "", v
				}
				status, body := send(r, header, query)
				var ok bool
				if r.binding == "JSON-RPC" {
					ok = status == http.StatusOK && strings.Contains(body, `"code":-32009`) && strings.Contains(body, `"id":"q7"`)
				} else {
					ok = status == http.StatusBadRequest && strings.Contains(body, `"status":"FAILED_PRECONDITION"`)
				}
				if !ok || !strings.Contains(body, `"reason":"VERSION_NOT_SUPPORTED"`) || !strings.Contains(body, "this interface speaks A2A 1.0") {
					t.Errorf("%s %s, A2A-Version %q (query %v): %d %s", r.binding, r.path, v, byQuery, status, body)
				}
			}
		}
	}
	for _, v := range []string{"", "1.0", "1.0.1"} {
		for _, r := range reqs {
			status, body := send(r, v, "")
			if strings.Contains(body, "VERSION_NOT_SUPPORTED") || (r.binding == "JSON-RPC") != (status == http.StatusOK) {
				t.Errorf("%s %s, A2A-Version %q: %d %s, want the task not found", r.binding, r.path, v, status, body)
			}
		}
	}
	// a2a-go/v2's clients read the error as theirs.
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), l.http.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range v1Bindings {
		old := &http.Client{Transport: bearer{"alice", version{"0.3", http.DefaultTransport}}}
		opt := a2aclient.WithJSONRPCTransport(old)
		if b == a2a.TransportProtocolHTTPJSON {
			opt = a2aclient.WithRESTTransport(old)
		}
		c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithDefaultsDisabled(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: v1Text("hi")}); !errors.Is(err, a2a.ErrVersionNotSupported) {
			t.Errorf("%s: SendMessage as 0.3 = %v, want ErrVersionNotSupported", b, err)
		}
	}
	if n := len(l.model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}

// version sets A2A-Version on every request.
type version struct {
	v    string
	base http.RoundTripper
}

func (v version) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("A2A-Version", v.v)
	return v.base.RoundTrip(r)
}
