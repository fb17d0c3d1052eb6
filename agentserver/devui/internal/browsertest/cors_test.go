package browsertest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
