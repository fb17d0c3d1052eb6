package browsertest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/devui"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// noButtons is a JavaScript expression: the tool card of the last answer
// named name shows no button (a decided call's Approve and Deny are gone).
func noButtons(name string) string {
	return `[...` + lastAnswer + `.querySelectorAll('.tool[data-name=` + name + `] button')].every(b => !b.checkVisibility())`
}

// A decided call keeps no Approve or Deny button: not live, not after a
// reload that reads the run again from its start, not after a reload that
// renders the stored history. A denied call is shown denied in all three,
// and after a restart of the server, never as a tool that failed.
func TestDecidedCalls(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/decided"), chromedp.WaitVisible(chromedp.CSS("#input")))

	// Approved: the buttons go with the click, and stay gone while the
	// call runs, and after a reload that reads the run from its start.
	send(t, ctx, "Deploy the site")
	until(t, ctx, "the approval buttons", lastAnswer+`?.querySelector('.tool[data-name=deploy][data-state=waiting] button.approve')?.checkVisibility()`)
	run(t, ctx, "approving", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('button.approve')`)))
	<-b.deployStart
	until(t, ctx, "the approved call running, without buttons", lastAnswer+`?.querySelector('.tool[data-name=deploy]').dataset.state === 'running' && `+noButtons("deploy"))
	var marked bool
	eval(t, ctx, `window.beforeReload = true`, &marked)
	run(t, ctx, "reloading", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#input")))
	until(t, ctx, "the approved call after the reload", `!window.beforeReload && `+lastAnswer+`?.querySelector('.tool[data-name=deploy][data-state=running]') != null`)
	var status string
	eval(t, ctx, lastAnswer+`.querySelector('.tool[data-name=deploy] .status').textContent`, &status)
	if status != "approved, running" {
		t.Errorf("the approved call's status after the reload: %q", status)
	}
	until(t, ctx, "no buttons on the approved call after the reload", noButtons("deploy"))
	shot(t, ctx, "approved-reloaded")
	b.releaseDeploy()
	until(t, ctx, "the run's end", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null && `+lastAnswer+`.querySelector('.tool[data-name=deploy]').dataset.state === 'done'`)
	if !evalBool(t, ctx, noButtons("deploy")) {
		t.Error("the finished call shows buttons")
	}

	// Denied, with a reason: shown denied live and after a reload.
	send(t, ctx, "Send an email to Bob")
	until(t, ctx, "the approval buttons", lastAnswer+`?.querySelector('.tool[data-name=send_email][data-state=waiting] button.deny')?.checkVisibility()`)
	run(t, ctx, "denying",
		chromedp.SendKeys(chromedp.JSPath(lastAnswer+`.querySelector('input.reason')`), "not today"),
		chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('button.deny')`)))
	until(t, ctx, "the run's end", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	type card struct{ State, Status string }
	const cardOf = `(() => { const c = ` + lastAnswer + `.querySelector('.tool[data-name=send_email]');
		return {state: c.dataset.state, status: c.querySelector('.status').textContent}; })()`
	var live card
	eval(t, ctx, cardOf, &live)
	if live.State != "denied" || live.Status != "denied: not today" || !evalBool(t, ctx, noButtons("send_email")) {
		t.Errorf("the denied call, live: %+v", live)
	}
	select {
	case to := <-b.emails:
		t.Errorf("send_email ran though it was denied (to %s)", to)
	default:
	}
	// Reloaded, the page renders the stored history: the call denied,
	// no buttons anywhere.
	reloaded := func(after string) {
		t.Helper()
		eval(t, ctx, `window.beforeReload = true`, &marked)
		run(t, ctx, "reloading "+after, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#input")))
		until(t, ctx, "the stored conversation", `!window.beforeReload && document.querySelectorAll('#messages .tool').length === 2`)
		var stored card
		eval(t, ctx, cardOf, &stored)
		if stored.State != "denied" || stored.Status != "denied: not today" {
			t.Errorf("the denied call %s: %+v", after, stored)
		}
		if !evalBool(t, ctx, `[...document.querySelectorAll('#messages .tool button')].every(b => !b.checkVisibility())`) {
			t.Errorf("a stored call shows buttons %s", after)
		}
	}
	reloaded("after a reload")
	shot(t, ctx, "denied-reloaded")
	// After a restart, nothing recorded: the stored history says the
	// call was denied, and the page shows it so.
	b.restart()
	reloaded("after a restart")
}

// A call approved before the other call of its pause waits for the
// other's decision before it runs (a pause is resolved whole): its card
// says so, not "running", until the other call is decided; then it runs,
// and its card and the timeline count its running time from the other
// decision, the wait for it shown apart.
func TestApprovedBeforeSibling(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/siblings"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "Deploy the site and email Bob")
	const emailCard = lastAnswer + `.querySelector('.tool[data-name=send_email]')`
	const deployCard = lastAnswer + `.querySelector('.tool[data-name=deploy]')`
	until(t, ctx, "both calls waiting for approval", lastAnswer+`?.querySelectorAll('.tool[data-state=waiting] button.approve').length === 2`)
	run(t, ctx, "approving the email", chromedp.Click(chromedp.JSPath(emailCard+`.querySelector('button.approve')`)))
	until(t, ctx, "the email approved, waiting for the deployment's decision",
		emailCard+`.dataset.state === 'queued' && `+emailCard+`.querySelector('.status').textContent === 'approved, waiting for the other decision'`)
	shot(t, ctx, "approved-before-sibling")
	select {
	case to := <-b.emails:
		t.Fatalf("send_email ran (to %s) before the other call was decided", to)
	default:
	}
	run(t, ctx, "approving the deployment", chromedp.Click(chromedp.JSPath(deployCard+`.querySelector('button.approve')`)))
	<-b.deployStart
	<-b.emails
	until(t, ctx, "the email sent while the deployment runs", emailCard+`.dataset.state === 'done' && `+deployCard+`.dataset.state === 'running'`)
	b.releaseDeploy()
	until(t, ctx, "the run's end", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	until(t, ctx, "the email's card: waited for its approval, then for the other decision",
		emailCard+`.querySelector('.dur').textContent.includes('for the other decisions')`)

	run(t, ctx, "opening the timeline", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('.timeline-link')`)))
	until(t, ctx, "the email's wait for the other decision in the timeline", `document.querySelector('#timeline .bar-seg.k-queued[data-name=send_email]') != null`)
	var bars struct{ QueuedFrom, QueuedTo, RanFrom, DeployDecided float64 }
	eval(t, ctx, `(() => {
		const q = document.querySelector('#timeline .bar-seg.k-queued[data-name=send_email]');
		const ran = document.querySelector('#timeline .bar-seg.k-tool[data-name=send_email]');
		const deployWait = document.querySelector('#timeline .bar-seg.k-wait[data-name=deploy]');
		return {queuedFrom: +q.dataset.from, queuedTo: +q.dataset.to, ranFrom: +ran.dataset.from, deployDecided: +deployWait.dataset.to};
	})()`, &bars)
	if bars.QueuedTo != bars.DeployDecided || bars.RanFrom < bars.DeployDecided || bars.QueuedFrom >= bars.QueuedTo {
		t.Errorf("the email's bars: %+v; want its wait for the other decision to end when the deployment was decided, and its run to start there", bars)
	}
	shot(t, ctx, "approved-before-sibling-timeline")
}

// evalBool evaluates a boolean expression in the page.
func evalBool(t *testing.T, ctx context.Context, expr string) bool {
	t.Helper()
	var v bool
	eval(t, ctx, expr, &v)
	return v
}

// A run that waits for a decision says so wherever it is listed: in the
// runs, its timeline and the call's row, the conversations and the
// conversation's page (which shows no stray "null" either).
func TestWaitingRun(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/waiting"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "Send an email to Bob")
	until(t, ctx, "the approval buttons", lastAnswer+`?.querySelector('.tool[data-name=send_email] button.approve') != null`)

	run(t, ctx, "opening the runs", chromedp.Click(chromedp.CSS("#nav-runs")))
	until(t, ctx, "the run's timeline", `document.querySelector('#run-state') != null && document.querySelectorAll('#timeline .tl-row[data-kind=tool]').length === 1`)
	var runs struct{ List, State, Row string }
	eval(t, ctx, `({list: document.querySelector('#run-list li[data-run] .sub').textContent, state: document.querySelector('#run-state').textContent,
		row: document.querySelector('#timeline .tl-row[data-kind=tool] .tl-tokens').textContent})`, &runs)
	if !strings.HasPrefix(runs.List, "waiting for approval · ") || runs.State != "waiting for approval" || runs.Row != "waiting for approval" {
		t.Errorf("the waiting run in the runs: %+v", runs)
	}
	shot(t, ctx, "runs-waiting")

	run(t, ctx, "opening the conversations", chromedp.Click(chromedp.CSS("#nav-threads")))
	run(t, ctx, "opening the thread", chromedp.Click(chromedp.CSS(`#thread-list li[data-thread="waiting"]`)))
	until(t, ctx, "the conversation", `document.querySelector('#thread-detail .run-link') != null`)
	var threads struct{ Badge, Detail string }
	eval(t, ctx, `({badge: document.querySelector('#thread-list li[data-thread="waiting"] .badge').textContent,
		detail: document.querySelector('#thread-detail').textContent})`, &threads)
	if threads.Badge != "waiting for approval" || !strings.Contains(threads.Detail, "a run is waiting for approval") ||
		strings.Contains(threads.Detail, "running") || strings.Contains(threads.Detail, "null") {
		t.Errorf("the waiting run in the conversations: %+v", threads)
	}
	shot(t, ctx, "conversation-waiting")
}

// At 420 px the header stays on one row with every view's link in full,
// and nothing scrolls sideways. An agent without a name (agent.Config.Name)
// says how to give it one; the agent's page shows no stray "null".
func TestNarrowPageUnnamedAgent(t *testing.T) {
	model := fake.NewServer()
	defer model.Close()
	model.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("Hello.") })
	a, err := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a, Observer: devui.NewRecorder(nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(devui.Handler(srv, nil))
	defer func() {
		srv.Close(context.Background())
		hs.Close()
	}()
	ctx := browser(t)
	run(t, ctx, "opening the page at 420 px", chromedp.EmulateViewport(420, 800), chromedp.Navigate(hs.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "Hi")
	until(t, ctx, "the answer", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	// One row: every visible item of the header is on the same line;
	// every link whole, inside the window; no sideways scroll.
	const layout = `(() => {
		const items = [...document.querySelectorAll('header > *, header nav a')].filter(e => e.checkVisibility());
		const mid = (e) => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; };
		const links = [...document.querySelectorAll('header nav a')].map(a => a.getBoundingClientRect());
		return {
			oneRow: items.every(e => Math.abs(mid(e) - mid(document.querySelector('header nav'))) < 2) &&
				document.querySelector('header').getBoundingClientRect().height < 50,
			linksWhole: links.length === 5 && links.every(r => r.left >= 0 && r.right <= innerWidth && r.width > 0),
			noSideways: document.documentElement.scrollWidth <= innerWidth,
		}; })()`
	var got struct{ OneRow, LinksWhole, NoSideways bool }
	eval(t, ctx, layout, &got)
	if !got.OneRow || !got.LinksWhole || !got.NoSideways {
		t.Errorf("the chat at 420 px: %+v", got)
	}
	shot(t, ctx, "narrow-chat")
	for _, view := range []string{"runs", "threads", "agent"} {
		run(t, ctx, "opening "+view, chromedp.Click(chromedp.CSS("#nav-"+view)))
		until(t, ctx, view, `!document.querySelector('#view-`+view+`').hidden && document.querySelector('#nav-`+view+`').classList.contains('active')`)
		eval(t, ctx, layout, &got)
		if !got.OneRow || !got.LinksWhole || !got.NoSideways {
			t.Errorf("%s at 420 px: %+v", view, got)
		}
		if view == "runs" {
			until(t, ctx, "the run's timeline", `document.querySelector('#timeline') != null`)
			shot(t, ctx, "narrow-runs")
		}
	}
	until(t, ctx, "the agent's page", `document.querySelector('#agent-name') != null`)
	var page struct{ Name, Text string }
	eval(t, ctx, `({name: document.querySelector('#agent-name').textContent, text: document.querySelector('#agent-detail').textContent})`, &page)
	if page.Name != "(no name: set agent.Config.Name)" || strings.Contains(page.Text, "null") {
		t.Errorf("the unnamed agent's page: %+v", page)
	}
	shot(t, ctx, "narrow-agent")
}
