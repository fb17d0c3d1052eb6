package browsertest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/devui"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/memory"
)

// An agent that remembers: in the chat, an answer shows the memories its
// run was given, from another conversation; on its timeline, the memory
// search is a span whose detail shows the query and what it found.
func TestMemoriesUsed(t *testing.T) {
	model := fake.NewServer()
	defer model.Close()
	model.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		if strings.Contains(question(r), "called?") {
			return text("Your cat is called Miso.")
		}
		return text("Noted.")
	})
	rec := devui.NewRecorder(nil)
	svc, err := memory.New(memory.Config{Observer: rec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	pre := &memory.Preload{Service: svc, User: agentserver.RunUser}
	a, err := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview", PrepareHistory: pre.Prepare})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a, Observer: rec, Remember: svc.RememberRun, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(devui.Handler(srv, nil))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	}()

	ctx := browser(t)
	run(t, ctx, "opening a conversation", chromedp.Navigate(hs.URL+"/#chat/monday"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "My cat is called Miso.")
	until(t, ctx, "the first answer", `document.querySelectorAll('#messages .end[data-finish=stop]').length === 1`)
	run(t, ctx, "opening another", chromedp.Navigate(hs.URL+"/#chat/friday"), chromedp.WaitVisible(chromedp.CSS("#input")))
	until(t, ctx, "the empty conversation", `document.querySelectorAll('#messages .msg').length === 0`)
	send(t, ctx, "What is my cat called?")
	until(t, ctx, "the memories used", lastAnswer+`.querySelector('details.memories') != null`)
	var shown struct{ Summary, Items string }
	eval(t, ctx, `({summary: `+lastAnswer+`.querySelector('details.memories summary').textContent,
		items: `+lastAnswer+`.querySelector('details.memories ul').textContent})`, &shown)
	if !strings.HasSuffix(shown.Summary, "used") || !strings.Contains(shown.Items, "My cat is called Miso.") || !strings.Contains(shown.Items, "in monday") {
		t.Errorf("the memories shown: %+v", shown)
	}
	run(t, ctx, "unfolding them", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('details.memories summary')`)))
	shot(t, ctx, "chat-memories")

	run(t, ctx, "opening the timeline", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('.timeline-link')`)))
	until(t, ctx, "the memory span", `document.querySelector('#timeline .bar-seg.k-memory') != null`)
	run(t, ctx, "clicking it", chromedp.Click(chromedp.CSS(`#timeline .bar-seg.k-memory`)))
	until(t, ctx, "its detail", `document.querySelector('#span-detail ol.memory-list') != null`)
	var detail string
	eval(t, ctx, `document.querySelector('#span-detail').textContent`, &detail)
	if !strings.Contains(detail, "Memory search") || !strings.Contains(detail, "What is my cat called?") || !strings.Contains(detail, "My cat is called Miso.") {
		t.Errorf("the span's detail: %q", detail)
	}
	shot(t, ctx, "timeline-memory")
}
