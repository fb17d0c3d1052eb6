package browsertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The runs are filtered by text (a run's id, conversation, message, a
// tool's name), by state and by a tool they called; the filter is in the
// address, and a reload keeps it.
func TestRunFilter(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/filter-a"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "What is the weather in Paris and Tokyo?")
	until(t, ctx, "the weather", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)
	send(t, ctx, "What about Berlin?")
	until(t, ctx, "Berlin", `document.querySelectorAll('#messages .end[data-finish=stop]').length === 2`)
	run(t, ctx, "another conversation", chromedp.Navigate(b.http.URL+"/#chat/filter-b"))
	until(t, ctx, "an empty chat", `document.querySelector('#chat-thread').textContent === 'filter-b' && document.querySelectorAll('#messages .msg').length === 0`)
	send(t, ctx, "Send an email to Bob")
	until(t, ctx, "the approval buttons", lastAnswer+`?.querySelector('.tool[data-name=send_email] button.approve') != null`)

	run(t, ctx, "opening the runs", chromedp.Click(chromedp.CSS("#nav-runs")))
	until(t, ctx, "the three runs", `document.querySelectorAll('#run-list li[data-run]').length === 3`)
	listed := func(what, want string) {
		t.Helper()
		until(t, ctx, what, `[...document.querySelectorAll('#run-list li[data-run] > div:first-child')].map(d => d.textContent).join(' | ') === `+jsString(want))
	}
	choose := func(sel, value string) {
		t.Helper()
		var ok bool
		eval(t, ctx, `(() => { const s = document.querySelector(`+jsString(sel)+`); s.value = `+jsString(value)+`; s.dispatchEvent(new Event('change')); return s.value === `+jsString(value)+`; })()`, &ok)
		if !ok {
			t.Fatalf("%s has no option %q", sel, value)
		}
	}

	// typing types text in the text box, what it held removed first.
	typing := func(text string) {
		t.Helper()
		var empty bool
		eval(t, ctx, `(document.querySelector('#run-q').value = '') === ''`, &empty)
		run(t, ctx, "typing "+text, chromedp.SendKeys(chromedp.CSS("#run-q"), text))
	}

	// Text: a tool's name, in another case; a conversation's id.
	typing("WEATHER")
	listed("the runs that called get_weather", "What is the weather in Paris and Tokyo?")
	typing("filter-b")
	listed("the runs of filter-b", "Send an email to Bob")
	typing("berlin")
	listed("the message", "What about Berlin?")
	typing("no such thing")
	until(t, ctx, "none", `document.querySelectorAll('#run-list li[data-run]').length === 0 && document.querySelector('#run-none')?.textContent.includes('3 runs')`)
	typing("B")
	run(t, ctx, "clearing the text", chromedp.KeyEvent("\b"))
	listed("all the runs again", "Send an email to Bob | What about Berlin? | What is the weather in Paris and Tokyo?")

	// State, then a tool.
	choose("#run-state-filter", "waiting")
	listed("the waiting run", "Send an email to Bob")
	choose("#run-state-filter", "done")
	listed("the done runs", "What about Berlin? | What is the weather in Paris and Tokyo?")
	choose("#run-tool", "get_weather")
	listed("the done runs that called get_weather", "What is the weather in Paris and Tokyo?")
	shot(t, ctx, "runs-filtered")

	// A reload keeps the filter.
	var hash string
	eval(t, ctx, `location.hash`, &hash)
	if !strings.Contains(hash, "state=done") || !strings.Contains(hash, "tool=get_weather") {
		t.Errorf("the address: %s", hash)
	}
	run(t, ctx, "reloading", chromedp.Reload())
	until(t, ctx, "the controls after the reload", `document.querySelector('#run-state-filter').value === 'done' && document.querySelector('#run-tool').value === 'get_weather'`)
	listed("the filtered runs after the reload", "What is the weather in Paris and Tokyo?")
	run(t, ctx, "narrowing the window", chromedp.EmulateViewport(420, 860))
	shot(t, ctx, "runs-filtered-narrow")

	// A click on a run keeps the filter.
	run(t, ctx, "picking the run", chromedp.Click(chromedp.CSS("#run-list li[data-run]")))
	until(t, ctx, "its timeline", `document.querySelector('#run-list li.active') != null && location.hash.includes('tool=get_weather')`)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
