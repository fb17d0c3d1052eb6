//lint:file-ignore SA1019 sampling is deprecated from 2026-07-28 (SEP-2577) but still served: Input asks for it in every revision

package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// askSet is a set whose tool asks the client's user for a name, then its
// model for a greeting, in two rounds, and answers with both.
func askSet() *toolset.Set {
	greet := toolset.MustDefine(toolset.Tool{Name: "greet", Description: "Greets the user by name",
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"style": {Type: "string"}}},
		Run: func(ctx context.Context, args map[string]any) (any, error) {
			who, err := mcptools.Elicit(ctx, "name", &mcp.ElicitParams{Message: "What is your name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
			if err != nil {
				return nil, err
			}
			name, _ := who.Content["name"].(string)
			style, _ := args["style"].(string)
			said, err := mcptools.Sample(ctx, "greeting", &mcp.CreateMessageParams{MaxTokens: 20,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: style + " greeting for " + name}}}})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("%s, %s", said.Content[0].(*mcp.TextContent).Text, name), nil
		}})
	return toolset.MustNew(greet)
}

// askingClient is the client options of a user named Ada whose model says
// "Hello".
func askingClient(version string, asked *atomic.Int32) *mcptools.Options {
	return &mcptools.Options{ProtocolVersion: version, ClientOptions: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Hello"}}, nil
		},
	}}
}

// wire records what went over HTTP: each request's method, protocol
// version header and session ID, and whether a response set a session.
type wire struct {
	mu       sync.Mutex
	requests []string // "method version session"
	sessions int      // responses that set Mcp-Session-Id
}

func (wr *wire) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		// Recorded before it is served: the client may read the response,
		// and the test the record, before this handler returns.
		wr.mu.Lock()
		wr.requests = append(wr.requests, fmt.Sprintf("%s %s %q", m.Method, r.Header.Get("Mcp-Protocol-Version"), r.Header.Get("Mcp-Session-Id")))
		wr.mu.Unlock()
		h.ServeHTTP(w, r)
		wr.mu.Lock()
		defer wr.mu.Unlock()
		if w.Header().Get("Mcp-Session-Id") != "" {
			wr.sessions++
		}
	})
}

func (wr *wire) String() string {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	return strings.Join(wr.requests, "\n")
}

// Our server speaks 2026-07-28 statelessly to a client that speaks it
// (no initialize, no session), and the older revisions with a session;
// the tool that asks its client works in both, through input_required
// round trips or through requests on the session.
func TestServerBothRevisions(t *testing.T) {
	for _, tc := range []struct {
		version, want string
		stateless     bool
	}{
		{"", "2026-07-28", true},
		{"2025-11-25", "2025-11-25", false},
		{"2025-06-18", "2025-06-18", false},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var wr wire
			srv := httptest.NewServer(wr.wrap(mcptools.NewHTTPHandler(askSet(), nil, nil)))
			defer srv.Close()
			var asked atomic.Int32
			c := connect(t, mcptools.HTTP(srv.URL, nil), askingClient(tc.version, &asked))
			if got := c.ProtocolVersion(); got != tc.want {
				t.Fatalf("ProtocolVersion() = %q, want %q", got, tc.want)
			}
			r := call(t, c, "greet", map[string]any{"style": "warm"})
			if r.IsError || r.Output != "Hello, Ada" {
				t.Fatalf("greet = %+v, want Hello, Ada", r)
			}
			if asked.Load() != 2 {
				t.Errorf("the client was asked %d times, want 2", asked.Load())
			}
			c.Close()
			log := wr.String()
			if tc.stateless {
				if wr.sessions != 0 || strings.Contains(log, "initialize") {
					t.Errorf("a 2026-07-28 client got a session (%d) or initialized:\n%s", wr.sessions, log)
				}
				// Three rounds of the call: nothing asked, the name, the greeting.
				if n := strings.Count(log, "tools/call 2026-07-28"); n != 3 {
					t.Errorf("%d tools/call requests, want 3:\n%s", n, log)
				}
			} else if wr.sessions == 0 || !strings.Contains(log, "initialize") {
				t.Errorf("a %s client got no session:\n%s", tc.want, log)
			}
		})
	}
}

// A stateless server behind two instances, with the same StateKey, needs
// no session affinity: the rounds of one call alternate between them.
func TestStatelessTwoInstances(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	var hits [2]atomic.Int32
	var backends [2]*httptest.Server
	for i := range backends {
		h := mcptools.NewHTTPHandler(askSet(), nil, &mcptools.HandlerOptions{StateKey: key})
		backends[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(backends[i].Close) // after the client's Close: it holds a subscriptions/listen open
	}
	var next atomic.Int32
	// A balancer without affinity: each request goes to the other
	// instance, its answer streamed back as it comes.
	balancer := httptest.NewServer(&httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(mustParse(backends[next.Add(1)%2].URL))
	}})
	t.Cleanup(balancer.Close)
	var asked atomic.Int32
	c := connect(t, mcptools.HTTP(balancer.URL, nil), askingClient("", &asked))
	for i := range 3 {
		if r := call(t, c, "greet", map[string]any{"style": fmt.Sprint(i)}); r.IsError || r.Output != "Hello, Ada" {
			t.Fatalf("greet = %+v", r)
		}
	}
	if hits[0].Load() < 4 || hits[1].Load() < 4 {
		t.Errorf("the instances served %d and %d requests: the balancer did not alternate", hits[0].Load(), hits[1].Load())
	}

	// Instances with keys of their own refuse each other's state.
	var alone [2]*httptest.Server
	for i := range alone {
		alone[i] = httptest.NewServer(mcptools.NewHTTPHandler(askSet(), nil, nil))
		defer alone[i].Close()
	}
	first := post26(t, alone[0].URL, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}})
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || state == "" {
		t.Fatalf("first round = %v, want input_required with a requestState", first)
	}
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	second := post26(t, alone[0].URL, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}, "inputResponses": answer, "requestState": state})
	if second["resultType"] != "input_required" {
		t.Fatalf("second round on the same instance = %v, want the next question", second)
	}
	refused := postRaw(t, alone[1].URL, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}, "inputResponses": answer, "requestState": second["requestState"]})
	if !strings.Contains(refused, "invalid requestState") {
		t.Errorf("another key's state was not refused: %s", refused)
	}
}

// A requestState is for its call: tampered with, or echoed with other
// arguments, it is refused.
func TestStatelessStateChecked(t *testing.T) {
	srv := httptest.NewServer(mcptools.NewHTTPHandler(askSet(), nil, nil))
	defer srv.Close()
	first := post26(t, srv.URL, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"style": "warm"}})
	state := first["requestState"].(string)
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	for name, tc := range map[string]struct {
		args  map[string]any
		state string
		want  string
	}{
		"tampered":        {map[string]any{"style": "warm"}, state + "x", "signature does not match"},
		"malformed":       {map[string]any{"style": "warm"}, "nonsense", "malformed"},
		"other arguments": {map[string]any{"style": "cold"}, state, "another call"},
	} {
		got := postRaw(t, srv.URL, "tools/call", map[string]any{"name": "greet", "arguments": tc.args, "inputResponses": answer, "requestState": tc.state})
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "-32602") {
			t.Errorf("%s: %s, want an invalid params error saying %q", name, got, tc.want)
		}
	}
	// Without a state, an answer given at once is taken: the first question
	// is answered, the second asked.
	got := post26(t, srv.URL, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}, "inputResponses": answer})
	if reqs, _ := got["inputRequests"].(map[string]any); got["resultType"] != "input_required" || reqs["greeting"] == nil {
		t.Errorf("answered at once: %v, want the greeting asked", got)
	}
}

// A client that did not declare elicitation is not asked: the tool is
// told, and the call fails with that.
func TestStatelessNoCapability(t *testing.T) {
	srv := httptest.NewServer(mcptools.NewHTTPHandler(askSet(), nil, nil))
	defer srv.Close()
	got := post26(t, srv.URL, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, withCaps(map[string]any{"sampling": map[string]any{}}))
	if got["isError"] != true || !strings.Contains(fmt.Sprint(got["content"]), "did not declare elicitation") {
		t.Errorf("got %v, want an error result saying elicitation was not declared", got)
	}
}

// Input outside a served call fails rather than hang.
func TestInputOutsideACall(t *testing.T) {
	if _, err := mcptools.Input(context.Background(), "k", &mcp.ElicitParams{}); err == nil {
		t.Error("Input outside a call succeeded")
	}
	if errors.Is(mcptools.ErrInputRequired, mcptools.ErrNoCapability) {
		t.Error("the errors are not distinct")
	}
}

type postOption func(params map[string]any)

func withCaps(caps map[string]any) postOption {
	return func(params map[string]any) {
		params["_meta"].(map[string]any)[mcp.MetaKeyClientCapabilities] = caps
	}
}

// postRaw sends one 2026-07-28 request, as a client of that revision
// does, and returns the response's body.
func postRaw(t *testing.T, url, method string, params map[string]any, opts ...postOption) string {
	t.Helper()
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "test", "version": "1"},
	}
	for _, o := range opts {
		o(params)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("a stateless response set the session %q", sid)
	}
	return string(b)
}

// post26 is postRaw's result, decoded from JSON or an event stream.
func post26(t *testing.T, url, method string, params map[string]any, opts ...postOption) map[string]any {
	t.Helper()
	raw := postRaw(t, url, method, params, opts...)
	for line := range strings.Lines(raw) {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			raw = data
		}
	}
	var resp struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &resp); err != nil || resp.Result == nil {
		t.Fatalf("%s: %s (%v)", method, raw, err)
	}
	return resp.Result
}

func mustParse(u string) *url.URL {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	return p
}

// A tool that fails with a *jsonrpc.Error is answered with that protocol
// error, not a result the model reads.
func TestToolProtocolError(t *testing.T) {
	refuse := toolset.MustDefine(toolset.Tool{Name: "refuse", Description: "Needs sampling",
		InputSchema: &jsonschema.Schema{Type: "object"},
		Run: func(context.Context, map[string]any) (any, error) {
			return nil, fmt.Errorf("refused: %w", &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "sampling required"})
		}})
	srv := httptest.NewServer(mcptools.NewHTTPHandler(toolset.MustNew(refuse), nil, nil))
	defer srv.Close()
	got := postRaw(t, srv.URL, "tools/call", map[string]any{"name": "refuse", "arguments": map[string]any{}})
	if !strings.Contains(got, fmt.Sprint(mcp.CodeMissingRequiredClientCapabilities)) || !strings.Contains(got, "sampling required") {
		t.Errorf("got %s, want the -32021 error", got)
	}
}

// Without the MCP-Protocol-Version header, the body says which handler
// answers: a 2026-07-28 request (its _meta) is told the header is
// missing (-32020), not refused as unknown to sessions; an over-large
// body is refused before it is read whole.
func TestRevisionFromBody(t *testing.T) {
	srv := httptest.NewServer(mcptools.NewHTTPHandler(demoSet(), nil, &mcptools.HandlerOptions{
		Streamable: &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 1 << 10}}))
	defer srv.Close()
	send := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if status != http.StatusBadRequest || !strings.Contains(body, fmt.Sprint(mcp.CodeHeaderMismatch)) {
		t.Errorf("a 2026-07-28 body without the header: %d %s, want 400 with %d", status, body, mcp.CodeHeaderMismatch)
	}
	status, _ = send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 2<<10) + `"}}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("an over-large body: %d, want 413", status)
	}
}

// The answers a requestState carries stand (issue 43: a state carrying
// name=Ada with inputResponses name=Mallory answered "Hello, Mallory",
// though StateKey's doc says the signature keeps a client from forging
// earlier answers): the next round's inputResponses answer only what
// the state does not. A state may be echoed again within its TTL.
func TestStatelessEarlierAnswersStand(t *testing.T) {
	srv := httptest.NewServer(mcptools.NewHTTPHandler(askSet(), nil, nil))
	defer srv.Close()
	call := func(state any, answers map[string]any) map[string]any {
		t.Helper()
		params := map[string]any{"name": "greet", "arguments": map[string]any{}, "inputResponses": answers}
		if state != nil {
			params["requestState"] = state
		}
		return post26(t, srv.URL, "tools/call", params)
	}
	first := call(nil, nil)
	name := func(n string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{"name": n}}
	}
	greeting := map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "Hello"}}
	second := call(first["requestState"], map[string]any{"name": name("Ada")})
	if reqs, _ := second["inputRequests"].(map[string]any); second["resultType"] != "input_required" || reqs["greeting"] == nil {
		t.Fatalf("second round = %v, want the greeting asked", second)
	}
	third := call(second["requestState"], map[string]any{"name": name("Mallory"), "greeting": greeting})
	if got := fmt.Sprint(third["content"]); !strings.Contains(got, "Hello, Ada") {
		t.Errorf("a third round re-answering the name: %v, want Hello, Ada", third)
	}
	// Replayed: the second round's state again, the greeting answered
	// again, gives the same answer.
	again := call(second["requestState"], map[string]any{"greeting": greeting})
	if got := fmt.Sprint(again["content"]); !strings.Contains(got, "Hello, Ada") {
		t.Errorf("the second round's state replayed: %v, want Hello, Ada", again)
	}
}
