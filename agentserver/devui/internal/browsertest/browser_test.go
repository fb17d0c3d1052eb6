package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/devui"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// model is a Gemini 3 model: the fake gives calls ids and thought
// signatures, and checks that the signatures come back.
const model = "gemini-3-flash-preview"

// hang bounds every wait of a test: it only guards against a hang, and
// never decides whether a test passes.
const hang = 60 * time.Second

// chromium returns the path of the browser, or skips the test (fails it
// when TOOLNEXUS_BROWSER_REQUIRED=1, as .ci/run sets).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("TOOLNEXUS_BROWSER_REQUIRED") == "1" {
		t.Fatal("no chromium on PATH, and TOOLNEXUS_BROWSER_REQUIRED=1: install it (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); set TOOLNEXUS_BROWSER_REQUIRED=1 to fail instead")
	return ""
}

// browser starts a headless Chromium with the flags this machine needs and
// a fresh profile (and extra options), and returns a context for a new
// tab of it. JavaScript errors in the page's console, uncaught exceptions
// and errors the browser logs (a failed load, a refused script or style)
// fail the test.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			p = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				p += " " + ev.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == "assert" {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				p = "log (" + string(ev.Entry.Source) + "): " + ev.Entry.Text + " " + ev.Entry.URL
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, log.Enable, cdp.Empty{})
	}
	if err == nil {
		_, err = chromedp.Call(ctx, runtime.Enable, cdp.Empty{})
	}
	if err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("the page's console: %s", p)
		}
	})
	return ctx
}

// run runs chromedp actions under the hang guard, failing the test with
// what it was doing.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// until waits until the expression, evaluated in the page, is true.
func until(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		var html string
		html, _ = chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.querySelector('main').innerText.slice(-3000)`))
		t.Fatalf("waiting for %s: %v\nthe page shows:\n%s", what, err, html)
	}
}

// eval evaluates an expression in the page into v.
func eval[T any](t *testing.T, ctx context.Context, expr string, v *T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	*v = got
}

// shot saves a screenshot of the page as name.png in DEVUI_SCREENSHOTS,
// or the test's temporary directory, and returns its path.
func shot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("DEVUI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// bench is the server the page talks to: an agent on a scripted fake
// model, served by agentserver with devui's handler and recorder.
type bench struct {
	t       *testing.T
	model   *fake.Server
	agent   *agent.Agent
	store   session.Store
	srv     *agentserver.Server          // the server serving now (see restart)
	handler atomic.Pointer[http.Handler] // its dev UI, which http serves
	http    *httptest.Server
	gated   *gatedModels

	barrier     chan struct{} // closed when both weather calls run
	arrived     atomic.Int32
	slowStart   chan struct{} // gets a value when slow_task starts
	slowDone    chan struct{} // slow_task returns when it is closed (releaseSlow)
	releaseSlow func()
	emails      chan string // the recipients of send_email, as it runs
	failOnce    atomic.Bool // the weather question's first model call fails
	// deploy, which needs approval, runs until releaseDeploy is called.
	deployStart   chan struct{}
	deployDone    chan struct{}
	releaseDeploy func()
}

type cityIn struct {
	City string `json:"city"`
}

type emailIn struct {
	To   string `json:"to"`
	Body string `json:"body"`
}

type nothing struct{}

func newBench(t *testing.T) *bench {
	b := &bench{t: t, model: fake.NewServer(), barrier: make(chan struct{}), slowStart: make(chan struct{}, 1),
		slowDone: make(chan struct{}), emails: make(chan string, 4), deployStart: make(chan struct{}, 1), deployDone: make(chan struct{})}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (map[string]any, error) {
		if b.arrived.Add(1) == 2 {
			close(b.barrier)
		}
		select { // both calls run at once: each waits for the other
		case <-b.barrier:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]any{"city": in.City, "sky": "sunny", "celsius": len(in.City) * 3}, nil
	})
	email := toolset.MustFunc("send_email", "Send an email", func(ctx context.Context, in emailIn) (string, error) {
		b.emails <- in.To
		return "sent to " + in.To, nil
	})
	slow := toolset.MustFunc("slow_task", "A task that takes a while", func(ctx context.Context, _ nothing) (string, error) {
		b.slowStart <- struct{}{}
		toolset.ReportProgress(ctx, 1, 4, "step 1 of 4")
		select {
		case <-b.slowDone:
			toolset.ReportProgress(ctx, 4, 4, "step 4 of 4")
			return "finished", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	deploy := toolset.MustFunc("deploy", "Deploy the site (needs approval)", func(ctx context.Context, _ nothing) (string, error) {
		b.deployStart <- struct{}{}
		select {
		case <-b.deployDone:
			return "deployed", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	b.model.SetReplyFunc(b.reply)
	b.gated = &gatedModels{Models: b.model.Client().Models}
	a, err := agent.New(agent.Config{Name: "demo", Models: b.gated, Model: model, Tools: toolset.MustNew(weather, email, slow, deploy),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)},
		NeedsApproval:  func(c *genai.FunctionCall) bool { return c.Name == "send_email" || c.Name == "deploy" },
		Retry:          agent.RetryPolicy{InitialDelay: 50 * time.Millisecond, MaxDelay: 50 * time.Millisecond, Jitter: -1}})
	if err != nil {
		t.Fatal(err)
	}
	b.agent, b.store = a, session.NewMemory()
	b.serve()
	b.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*b.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		b.http.Close()
		b.model.Close()
		for _, rj := range b.model.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
	})
	b.releaseSlow = sync.OnceFunc(func() { close(b.slowDone) })
	t.Cleanup(b.releaseSlow) // before the server closes, when a test fails early
	b.releaseDeploy = sync.OnceFunc(func() { close(b.deployDone) })
	t.Cleanup(b.releaseDeploy)
	return b
}

// serve starts a server, with a recorder of its own, on the bench's
// agent and store, and serves its dev UI at the bench's address.
func (b *bench) serve() {
	b.t.Helper()
	srv, err := agentserver.New(agentserver.Config{Agent: b.agent, Store: b.store, Observer: devui.NewRecorder(nil),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.t.Fatal(err)
	}
	var h http.Handler = devui.Handler(srv, &devui.Options{BrowserTools: []agentserver.ToolDecl{
		{Name: "get_location", Description: "The city the user is in: ask them"}}})
	b.srv = srv
	b.handler.Store(&h)
}

// restart closes the server and serves a new one on the same store, at
// the same address: what a restart of the process looks like to the
// page, the recorder's runs gone with the old one.
func (b *bench) restart() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.srv.Close(ctx); err != nil {
		b.t.Fatalf("Close: %v", err)
	}
	b.serve()
}

// question returns the user's latest message in a request.
func question(r *fake.Request) string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role != genai.RoleUser {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" {
				return p.Text
			}
		}
	}
	return ""
}

func text(s string) *fake.Reply {
	r := fake.Text(s).WithTextChunk(8)
	r.EventDelay = 5 * time.Millisecond
	return r
}

// reply plays the model.
func (b *bench) reply(r *fake.Request) *fake.Reply {
	q := question(r)
	last := r.Contents[len(r.Contents)-1]
	answered := last.Role == genai.RoleUser && len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil
	switch {
	case strings.Contains(q, "and email") && answered:
		return text("Deployed, and the email went out.")
	case strings.Contains(q, "and email"):
		return fake.Calls(fake.Call("deploy", map[string]any{}), fake.Call("send_email", map[string]any{"to": "bob@example.com", "body": "Deployed"}))
	case strings.Contains(q, "Paris and Tokyo") && answered:
		return text("Paris is sunny and Tokyo is sunny, says the weather tool.")
	case strings.Contains(q, "Paris and Tokyo"):
		if !b.failOnce.Swap(true) {
			return fake.Error(503, "The model is overloaded.")
		}
		return fake.Parts(&genai.Part{Text: "Two cities, so two calls at once.", Thought: true},
			genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Paris"}),
			genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Tokyo"}))
	case strings.Contains(q, "email") && answered:
		return text("The email went out.")
	case strings.Contains(q, "email"):
		return fake.Calls(fake.Call("send_email", map[string]any{"to": "bob@example.com", "body": "Hi Bob"}))
	case strings.Contains(q, "Deploy") && answered:
		return text("The deployment is over.")
	case strings.Contains(q, "Deploy"):
		return fake.Calls(fake.Call("deploy", map[string]any{}))
	case strings.Contains(q, "slow") && answered:
		return text("The slow task is finished.")
	case strings.Contains(q, "slow"):
		return fake.Calls(fake.Call("slow_task", map[string]any{}))
	case strings.Contains(q, "Where am I") && answered:
		loc := last.Parts[0].FunctionResponse.Response["result"]
		return text(fmt.Sprintf("You are in %v.", loc))
	case strings.Contains(q, "Where am I"):
		return fake.Calls(fake.Call("get_location", map[string]any{}))
	case strings.Contains(q, "Berlin"):
		return text(fmt.Sprintf("Berlin too; this conversation has %d contents before this answer.", len(r.Contents)))
	}
	return text("I do not know.")
}

// gatedModels holds the stream of a model call once its first piece of
// text is out, while the test has armed a gate: the text is seen streaming
// in, deterministically.
type gatedModels struct {
	agent.Models
	gate atomic.Pointer[chan struct{}]
}

func (g *gatedModels) arm() chan struct{} {
	c := make(chan struct{})
	g.gate.Store(&c)
	return c
}

func (g *gatedModels) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content,
	config *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		for resp, err := range g.Models.GenerateContentStream(ctx, model, contents, config) {
			if !yield(resp, err) {
				return
			}
			if err == nil && resp.Text() != "" {
				if gate := g.gate.Swap(nil); gate != nil {
					select {
					case <-*gate:
					case <-ctx.Done():
					}
				}
			}
		}
	}
}

// send types a message in the chat and sends it.
func send(t *testing.T, ctx context.Context, msg string) {
	t.Helper()
	run(t, ctx, "sending "+msg, chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SendKeys(chromedp.CSS("#input"), msg), chromedp.Click(chromedp.CSS("#send")))
}

// lastAnswer is a JavaScript expression for the last assistant message.
const lastAnswer = `[...document.querySelectorAll('#messages .msg.assistant')].at(-1)`

func TestChatTimelineConversations(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#input")))
	until(t, ctx, "the agent's name", `document.querySelector('#title').textContent.includes('demo')`)

	// The answer streams in: held after its first piece.
	gate := b.gated.arm()
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	send(t, ctx, "What is the weather in Paris and Tokyo?")
	until(t, ctx, "the first piece of text", lastAnswer+`?.querySelector(':scope > .body > .text')?.textContent === 'Paris is'`)
	var streaming struct {
		Ended bool
		Cards int
		Retry string
	}
	eval(t, ctx, `({ended: !!`+lastAnswer+`.querySelector('.end'), cards: `+lastAnswer+`.querySelectorAll('.tool').length,
		retry: `+lastAnswer+`.querySelector('.retry')?.textContent || ''})`, &streaming)
	if streaming.Ended || streaming.Cards != 2 || !strings.Contains(streaming.Retry, "the model's service is unavailable") {
		t.Errorf("while the answer streams: %+v", streaming)
	}
	shot(t, ctx, "chat-streaming")
	release()
	until(t, ctx, "the end of the run", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	until(t, ctx, "the calls' durations", `[...`+lastAnswer+`.querySelectorAll('.tool')].every(c => c.dataset.parallel === '1')`)

	var chat struct {
		Text    string
		Thought string
		Folded  bool
		Cards   []struct{ Name, State, Args, Output, Par, Dur string }
		Run     string
	}
	eval(t, ctx, `(() => { const m = `+lastAnswer+`; return {
		text: m.querySelector(':scope > .body > .text').textContent,
		thought: m.querySelector('details.thought .text').textContent,
		folded: !m.querySelector('details.thought').open,
		run: m.dataset.run,
		cards: [...m.querySelectorAll('.tool')].map(c => ({name: c.dataset.name, state: c.dataset.state,
			args: c.querySelector('.args').textContent, output: c.querySelector('.output')?.textContent || '',
			par: c.querySelector('.badge.par').textContent, dur: c.querySelector('.badge.dur').textContent}))}})()`, &chat)
	if chat.Text != "Paris is sunny and Tokyo is sunny, says the weather tool." || chat.Thought != "Two cities, so two calls at once." || !chat.Folded {
		t.Errorf("the answer: %+v", chat)
	}
	if len(chat.Cards) != 2 {
		t.Fatalf("tool cards: %+v", chat.Cards)
	}
	for i, city := range []string{"Paris", "Tokyo"} {
		c := chat.Cards[i]
		if c.Name != "get_weather" || c.State != "done" || c.Args != `{"city":"`+city+`"}` || !strings.Contains(c.Output, `"sky":"sunny"`) ||
			c.Par != "parallel with 1 other" || c.Dur == "" {
			t.Errorf("card %d: %+v", i, c)
		}
	}
	// What the server received: the model got both results, in one turn.
	var answers []string
	for _, r := range b.model.Requests() {
		for _, fr := range r.LastFunctionResponses("get_weather") {
			answers = append(answers, fmt.Sprint(fr.Response["result"]))
		}
	}
	if len(answers) != 2 || !strings.Contains(answers[0], "Paris") || !strings.Contains(answers[1], "Tokyo") {
		t.Errorf("the model received: %v", answers)
	}
	shot(t, ctx, "chat")

	// The run as a picture: the two calls side by side, the failed attempt.
	run(t, ctx, "opening the timeline", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('.timeline-link')`)))
	until(t, ctx, "the timeline", `document.querySelectorAll('#timeline .tl-row[data-kind=tool]').length === 2 && document.querySelector('#run-state')?.textContent === 'done'`)
	var bars []struct {
		Kind, Name string
		From, To   float64
		Row        int
		Failed     bool
	}
	eval(t, ctx, `[...document.querySelectorAll('#timeline .bar-seg.k-tool, #timeline .bar-seg.k-model')].map(s => ({kind: s.dataset.kind,
		name: s.dataset.name, from: +s.dataset.from, to: +s.dataset.to, failed: s.classList.contains('k-failed'),
		row: [...document.querySelectorAll('#timeline .tl-row')].indexOf(s.closest('.tl-row'))}))`, &bars)
	var tools, models []int
	for i, s := range bars {
		switch s.Kind {
		case "tool":
			tools = append(tools, i)
		case "model":
			models = append(models, i)
		}
	}
	if len(tools) != 2 || len(models) != 3 || !bars[models[0]].Failed || bars[models[1]].Failed {
		t.Fatalf("bars: %+v", bars)
	}
	p, q := bars[tools[0]], bars[tools[1]]
	if p.Row == q.Row || !(p.From < q.To && q.From < p.To) || p.From < bars[models[1]].To || q.From < bars[models[1]].To {
		t.Errorf("the calls are not side by side after their model call: %+v, %+v (model call %+v)", p, q, bars[models[1]])
	}
	var tokens string
	eval(t, ctx, `[...document.querySelectorAll('#timeline .tl-row[data-kind=model] .tl-tokens')].map(e => e.textContent).join(' | ')`, &tokens)
	if !strings.Contains(tokens, "failed (503 UNAVAILABLE)") || !strings.Contains(tokens, " in · ") || !strings.Contains(tokens, " cached") {
		t.Errorf("the model calls' tokens: %q", tokens)
	}
	shot(t, ctx, "timeline")
	// On a click, the exact request and the response.
	run(t, ctx, "clicking the model call", chromedp.Click(chromedp.CSS(`#timeline .bar-seg.k-model:not(.k-failed)`)))
	until(t, ctx, "the request", `document.querySelector('#call-request')?.textContent.includes('"functionDeclarations"')`)
	until(t, ctx, "the response", `document.querySelector('#call-response')?.textContent.includes('"functionCall"')`)
	var detail struct{ Request, Response, In string }
	eval(t, ctx, `({request: document.querySelector('#call-request').textContent, response: document.querySelector('#call-response').textContent,
		in: document.querySelector('.tok-in').textContent})`, &detail)
	var sent struct {
		Contents []struct{ Parts []struct{ Text string } }
		Config   struct {
			SystemInstruction struct{ Parts []struct{ Text string } }
		}
	}
	if err := json.Unmarshal([]byte(detail.Request), &sent); err != nil || len(sent.Contents) != 1 ||
		sent.Contents[0].Parts[0].Text != "What is the weather in Paris and Tokyo?" || sent.Config.SystemInstruction.Parts[0].Text != "Be brief." ||
		!strings.Contains(detail.Response, `"thoughtSignature": "(`) || detail.In == "0" {
		t.Errorf("the model call's detail: %v %+v\n%s", err, detail, detail.Response)
	}
	shot(t, ctx, "timeline-call")

	// Conversations: the thread, every part, signatures shown as present.
	run(t, ctx, "opening the conversations", chromedp.Click(chromedp.CSS("#nav-threads")))
	until(t, ctx, "the thread list", `document.querySelectorAll('#thread-list li[data-thread]').length === 1`)
	run(t, ctx, "opening the thread", chromedp.Click(chromedp.CSS("#thread-list li[data-thread]")))
	until(t, ctx, "the history", `document.querySelectorAll('#thread-detail .content').length === 4`)
	var parts []string
	eval(t, ctx, `[...document.querySelectorAll('#thread-detail .part')].map(p => p.dataset.kind + (p.querySelector('.signature') ? '+sig' : ''))`, &parts)
	if got := strings.Join(parts, " "); got != "text thought+sig functionCall functionCall functionResponse functionResponse text+sig" &&
		got != "text thought functionCall+sig functionCall functionResponse functionResponse text+sig" {
		t.Errorf("the parts: %s", got)
	}
	var page string
	eval(t, ctx, `document.querySelector('#thread-detail').textContent`, &page)
	for _, c := range b.model.Requests() {
		for _, content := range c.Contents {
			for _, part := range content.Parts {
				if len(part.ThoughtSignature) > 0 && strings.Contains(page, string(part.ThoughtSignature)) {
					t.Errorf("the page shows a signature's bytes")
				}
			}
		}
	}
	shot(t, ctx, "conversations")
	// Continue it in the chat.
	run(t, ctx, "continuing", chromedp.Click(chromedp.CSS("#continue")))
	until(t, ctx, "the stored conversation in the chat", `document.querySelectorAll('#messages .tool[data-state=done]').length === 2`)
	send(t, ctx, "What about Berlin?")
	until(t, ctx, "the answer that continues", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	var berlin string
	eval(t, ctx, lastAnswer+`.querySelector('.text').textContent`, &berlin)
	if berlin != "Berlin too; this conversation has 5 contents before this answer." {
		t.Errorf("the continued conversation: %q", berlin)
	}

	// A new conversation starts empty.
	run(t, ctx, "a new conversation", chromedp.Click(chromedp.CSS("#new-chat")))
	until(t, ctx, "an empty chat", `document.querySelectorAll('#messages .msg').length === 0 && location.hash.startsWith('#chat/chat-')`)

	// The agent.
	run(t, ctx, "opening the agent", chromedp.Click(chromedp.CSS("#nav-agent")))
	until(t, ctx, "the tools", `document.querySelectorAll('.tool-decl').length === 4`)
	var agentView struct{ Model, Decl, Limits string }
	eval(t, ctx, `({model: document.querySelector('#agent-model').textContent,
		decl: document.querySelector('.tool-decl[data-tool=get_weather] pre').textContent,
		limits: document.querySelector('#limits').textContent})`, &agentView)
	if agentView.Model != model || !strings.Contains(agentView.Decl, `"type": "OBJECT"`) || !strings.Contains(agentView.Limits, "model turns per run10") {
		t.Errorf("the agent: %+v", agentView)
	}
	shot(t, ctx, "agent")
}

func TestApprovalReloadBrowserTool(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/approvals"), chromedp.WaitVisible(chromedp.CSS("#input")))

	// A call that needs approval: nothing runs until the button is clicked.
	send(t, ctx, "Send an email to Bob")
	until(t, ctx, "the approval buttons", lastAnswer+`?.querySelector('.tool[data-state=waiting] button.approve') != null`)
	select {
	case to := <-b.emails:
		t.Fatalf("send_email ran before it was approved (to %s)", to)
	default:
	}
	shot(t, ctx, "approval")
	run(t, ctx, "approving", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('button.approve')`)))
	until(t, ctx, "the approved call's result", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	if to := <-b.emails; to != "bob@example.com" {
		t.Errorf("send_email ran for %s", to)
	}
	var card struct{ State, Output, Text string }
	eval(t, ctx, `({state: `+lastAnswer+`.querySelector('.tool').dataset.state, output: `+lastAnswer+`.querySelector('.tool .output').textContent,
		text: `+lastAnswer+`.querySelector(':scope > .body > .text').textContent})`, &card)
	if card.State != "done" || card.Output != "sent to bob@example.com" || card.Text != "The email went out." {
		t.Errorf("after the approval: %+v", card)
	}

	// A page reloaded mid-run finds the run going on.
	send(t, ctx, "Run the slow task")
	<-b.slowStart
	until(t, ctx, "the running call", lastAnswer+`?.querySelector('.tool[data-name=slow_task][data-state=running]') != null`)
	// Its progress: a bar on its card, at a quarter, with the tool's message.
	const slowProgress = `.tool[data-name=slow_task] .progress`
	until(t, ctx, "the call's progress bar", lastAnswer+`?.querySelector('`+slowProgress+`:not([hidden]) .progress-note')?.textContent === '25% step 1 of 4' &&
		`+lastAnswer+`.querySelector('`+slowProgress+` progress').value === 1 && `+lastAnswer+`.querySelector('`+slowProgress+` progress').max === 4`)
	shot(t, ctx, "progress")
	var marked bool
	eval(t, ctx, `window.beforeReload = true`, &marked)
	run(t, ctx, "reloading", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#input")))
	// The user's message (which the history holds only once the run is
	// saved), the call still running, the Stop button.
	until(t, ctx, "the run in progress after the reload", `!window.beforeReload && `+lastAnswer+`?.querySelector('.tool[data-name=slow_task][data-state=running]') != null &&
		`+lastAnswer+`.classList.contains('running') && !document.querySelector('#stop').hidden &&
		[...document.querySelectorAll('#messages .msg.user')].at(-1)?.textContent === 'Run the slow task'`)
	// The stream read again from the run's start shows the progress too.
	until(t, ctx, "the progress bar after the reload", lastAnswer+`?.querySelector('`+slowProgress+`:not([hidden]) .progress-note')?.textContent === '25% step 1 of 4'`)
	shot(t, ctx, "reloaded-mid-run")
	b.releaseSlow()
	until(t, ctx, "the run's end after the reload", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	var barHidden bool
	eval(t, ctx, lastAnswer+`.querySelector('`+slowProgress+`').hidden`, &barHidden)
	if !barHidden {
		t.Error("the progress bar is still shown on a call that has its result")
	}
	var end string
	eval(t, ctx, lastAnswer+`.querySelector(':scope > .body > .text').textContent`, &end)
	if end != "The slow task is finished." {
		t.Errorf("the resumed answer: %q", end)
	}

	// A browser tool: the page asks for its result.
	send(t, ctx, "Where am I?")
	until(t, ctx, "the browser tool's form", lastAnswer+`?.querySelector('.tool[data-name=get_location] textarea.browser-result') != null`)
	shot(t, ctx, "browser-tool")
	run(t, ctx, "answering the browser tool",
		chromedp.SendKeys(chromedp.CSS(`#messages .msg.assistant:last-child textarea.browser-result`), "Lisbon"),
		chromedp.Click(chromedp.CSS(`#messages .msg.assistant:last-child button.send-result`)))
	until(t, ctx, "the answer with the browser's result", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	var where string
	eval(t, ctx, lastAnswer+`.querySelector(':scope > .body > .text').textContent`, &where)
	if where != "You are in Lisbon." {
		t.Errorf("after the browser tool: %q", where)
	}
	found := false
	for _, r := range b.model.Requests() {
		for _, fr := range r.LastFunctionResponses("get_location") {
			found = fr.Response["result"] == "Lisbon"
		}
	}
	if !found {
		t.Error("the model never received the browser tool's result")
	}
}

// plan is a typed answer.
type plan struct {
	City string   `json:"city"`
	Days int      `json:"days"`
	See  []string `json:"see"`
}

func TestTypedAnswer(t *testing.T) {
	model := fake.NewServer()
	defer model.Close()
	model.SetReplyFunc(func(*fake.Request) *fake.Reply {
		return fake.Text(`{"city":"Lisbon","days":2,"see":["Alfama","Belém"]}`)
	})
	base, err := agent.New(agent.Config{Name: "planner", Models: model.Client().Models, Model: "gemini-3-flash-preview"})
	if err != nil {
		t.Fatal(err)
	}
	typed, err := agent.Typed[plan](base)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: typed, Observer: devui.NewRecorder(nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(devui.Handler(srv, nil))
	defer func() {
		srv.Close(context.Background())
		hs.Close()
	}()
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(hs.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "Plan two days in Lisbon")
	until(t, ctx, "the typed answer", lastAnswer+`?.querySelector('.output pre') != null && `+lastAnswer+`.querySelector('.end') != null`)
	var got plan
	var out string
	eval(t, ctx, lastAnswer+`.querySelector('.output pre').textContent`, &out)
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.City != "Lisbon" || got.Days != 2 || len(got.See) != 2 || !strings.Contains(out, "\n  \"days\": 2") {
		t.Errorf("the typed answer: %v %q", err, out)
	}
	shot(t, ctx, "typed")
}
