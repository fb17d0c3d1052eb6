package a2aagent_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/a2aagent"
)

// paths records the paths of the requests a client sends.
type paths struct {
	mu   sync.Mutex
	seen []string
	base http.RoundTripper
}

func (p *paths) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.seen = append(p.seen, r.URL.Path)
	p.mu.Unlock()
	return p.base.RoundTrip(r)
}

func (p *paths) rpc() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range p.seen {
		if !strings.HasSuffix(s, ".json") && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// RemoteTool speaks A2A 1.0 to an agent whose card lists a 1.0 interface
// (JSON-RPC first, as the card orders them; HTTP+JSON when it is the only
// one), and 0.3 to the url of a card that lists none: the tests' server,
// behind cards that list what each case says.
func TestRemoteToolVersions(t *testing.T) {
	srv := startServer(t)
	resp, err := http.Get(srv.URL + a2aagent.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	union, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, tc := range []struct {
		name string
		card func(map[string]any) // edits the served card
		want string               // the path the tool's requests go to
	}{
		{"both", func(map[string]any) {}, "/a2a/v1"},
		{"1.0 only", func(c map[string]any) {
			for _, k := range []string{"url", "preferredTransport", "protocolVersion", "additionalInterfaces"} {
				delete(c, k)
			}
			c["supportedInterfaces"] = c["supportedInterfaces"].([]any)[:2]
		}, "/a2a/v1"},
		{"1.0 over HTTP+JSON", func(c map[string]any) {
			c["supportedInterfaces"] = c["supportedInterfaces"].([]any)[1:]
		}, "/a2a/v1/rest/message:stream"},
		{"0.3 only", func(c map[string]any) { delete(c, "supportedInterfaces") }, "/a2a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var card map[string]any
			if err := json.Unmarshal(union, &card); err != nil {
				t.Fatal(err)
			}
			tc.card(card)
			cards := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(card)
			}))
			defer cards.Close()
			p := &paths{base: bearer{"alice", http.DefaultTransport}}
			c := newCaller(t, cards.URL+"/card.json", &a2aagent.RemoteOptions{HTTPClient: &http.Client{Transport: p}}, 0)
			if got, e := c.ask(context.Background(), "v", map[string]any{"request": "weather in Oslo"}); got != `Done: get_weather {"result":"sunny in Oslo"}` {
				t.Errorf("answer %v (%s)", got, e)
			}
			if got := p.rpc(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("the requests went to %v, want %s", got, tc.want)
			}
		})
	}
}
