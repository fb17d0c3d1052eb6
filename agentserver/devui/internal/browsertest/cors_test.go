package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A page of an allowed origin (a dev server on another port) calls the
// protocols with credentials, as useChat and HttpAgent do: Chromium's own
// preflights and CORS checks pass, on the chat, the stop route (DELETE)
// and AG-UI. A page of another origin gets nothing: its fetch is refused
// by the browser.
func TestCORSFromAnotherOrigin(t *testing.T) {
	path := chromium(t)
	model := fake.NewServer()
	t.Cleanup(model.Close)
	model.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("Hello from the server.") })
	a, err := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew()})
	if err != nil {
		t.Fatal(err)
	}
	page := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>app</title><p>app</p>")
		}))
		t.Cleanup(s.Close)
		return s
	}
	allowed, other := page(), page()
	srv, err := agentserver.New(agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler),
		AllowedOrigins: []string{allowed.URL}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	chat, ag := aisdk.Handler(srv), agui.Handler(srv)
	mux.Handle("/api/chat", chat)
	mux.Handle("/api/chat/", chat)
	mux.Handle("/agui", ag)
	mux.Handle("/agui/", ag)
	api := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close(context.Background())
		api.Close()
	})

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, hang) // the browser's first call: it lives as long
	defer cancel()

	// call runs the fetches a page makes, and returns what each got: the
	// status and the body's end, or the browser's refusal.
	call := `(async () => {
		const api = %q, out = [];
		const get = async (path, init) => {
			try {
				const r = await fetch(api + path, { credentials: 'include', ...init });
				out.push(r.status + ' ' + (await r.text()).replace(/\s+/g, ' ').trim().slice(-40));
			} catch (e) { out.push('refused: ' + e.name); }
		};
		const json = { 'content-type': 'application/json', authorization: 'Bearer x' };
		await get('/api/chat', { method: 'POST', headers: json,
			body: JSON.stringify({ id: 'c1', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }) });
		await get('/api/chat/c1/stream', { method: 'DELETE' });
		await get('/api/chat/c1/messages', {});
		await get('/agui', { method: 'POST', headers: json,
			body: JSON.stringify({ threadId: 't1', runId: 'r1', messages: [{ id: 'm1', role: 'user', content: 'hi' }] }) });
		return out.join('\n');
	})()`
	for _, tc := range []struct {
		page *httptest.Server
		want []string
	}{
		{allowed, []string{"200 ", "404 ", "200 ", "200 "}},
		{other, []string{"refused: TypeError", "refused: TypeError", "refused: TypeError", "refused: TypeError"}},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(tc.page.URL)); err != nil {
			t.Fatalf("opening %s: %v", tc.page.URL, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(call, api.URL), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("the page's fetches: %v", err)
		}
		lines := strings.Split(got, "\n")
		if len(lines) != len(tc.want) {
			t.Fatalf("from %s:\n%s", tc.page.URL, got)
		}
		for i, want := range tc.want {
			if !strings.HasPrefix(lines[i], want) {
				t.Errorf("from %s, fetch %d = %q, want %q…", tc.page.URL, i, lines[i], want)
			}
		}
		if tc.page == allowed && (!strings.HasSuffix(lines[0], "data: [DONE]") || !strings.Contains(lines[2], "from the server.")) {
			t.Errorf("from %s:\n%s", tc.page.URL, got)
		}
	}
}

// A page of another site cannot cancel an A2A task, whatever it sends
// (issue 43: A2A 1.0's cancel takes no body, so a POST of none, which a
// page may send without a preflight, with the user's cookies, cancelled
// the task): Chromium's own requests (a fetch of no body, mode no-cors;
// a form) reach examples/server from a page of another site, and the
// task waits on, as it does for the 0.3 JSON-RPC sent as text.
func TestCrossSiteCancel(t *testing.T) {
	path := chromium(t)
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	api := exampleServer(t, root, "-approve")
	rpc := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(api+"/a2a", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	state := func(id string) any {
		t.Helper()
		m := rpc(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"` + id + `"}}`)
		res, _ := m["result"].(map[string]any)
		st, _ := res["status"].(map[string]any)
		return st["state"]
	}
	// get_weather needs approval: the task waits for the decision.
	m := rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"What is the weather in Paris?"}]}}}`)
	res, _ := m["result"].(map[string]any)
	id, _ := res["id"].(string)
	if id == "" || state(id) != "input-required" {
		t.Fatalf("message/send: %v", m)
	}

	// The page is another site's: localhost, where the server is 127.0.0.1.
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>evil</title><iframe name="sink"></iframe>`)
	}))
	t.Cleanup(page.Close)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(strings.Replace(page.URL, "127.0.0.1", "localhost", 1))); err != nil {
		t.Fatal(err)
	}
	attack := `(async () => {
		const api = %q, id = %q;
		await fetch(api + '/a2a/v1/rest/tasks/' + id + ':cancel', { method: 'POST', mode: 'no-cors', credentials: 'include' });
		await fetch(api + '/a2a', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' },
			body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { id } }) });
		// A form, posted into the frame: done once the frame loads the answer.
		const loaded = new Promise(r => document.querySelector('iframe').addEventListener('load', r, { once: true }));
		const f = Object.assign(document.createElement('form'), { method: 'POST', target: 'sink', action: api + '/a2a/v1/rest/tasks/' + id + ':cancel' });
		document.body.append(f);
		f.submit();
		await loaded;
		return 'sent';
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(attack, api, id), chromedp.EvalAwaitPromise))
	if err != nil || got != "sent" {
		t.Fatalf("the page's requests: %q, %v", got, err)
	}
	if s := state(id); s != "input-required" {
		t.Errorf("the task is %v after another site's requests, want input-required", s)
	}
}
