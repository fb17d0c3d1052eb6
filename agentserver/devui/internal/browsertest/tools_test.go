package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// On the Agent page, a tool runs by hand: its arguments prefilled from its
// schema, checked by the server, its result and its timing shown, and
// arguments that fail the schema answered as the model would read them.
func TestRunToolByHand(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the agent", chromedp.Navigate(b.http.URL+"/#agent"))
	until(t, ctx, "the Run forms", `document.querySelectorAll('.tool-decl form.run-tool').length === 4`)
	var prefilled string
	eval(t, ctx, `document.querySelector('.tool-decl[data-tool=get_weather] textarea').value`, &prefilled)
	if prefilled != "{\n  \"city\": \"\"\n}" {
		t.Errorf("get_weather's arguments at first: %q", prefilled)
	}
	form := func(tool string) string { return `.tool-decl[data-tool=` + tool + `] form.run-tool` }
	setArgs := func(tool, args string) {
		t.Helper()
		var ok bool
		eval(t, ctx, `(document.querySelector('`+form(tool)+` textarea').value = `+jsString(args)+`) !== null`, &ok)
	}

	// Arguments that fail the schema: the tool does not run.
	setArgs("get_weather", `{"city": 7}`)
	run(t, ctx, "running get_weather", chromedp.Click(chromedp.CSS(form("get_weather")+" button")))
	until(t, ctx, "the invalid arguments", `document.querySelector('`+form("get_weather")+` .run-result').dataset.state === 'invalid'`)
	var invalid string
	eval(t, ctx, `document.querySelector('`+form("get_weather")+` .run-result').textContent`, &invalid)
	if !strings.Contains(invalid, "the tool did not run") || !strings.Contains(invalid, "city") || b.arrived.Load() != 0 {
		t.Errorf("invalid arguments: %q (the tool ran %d times)", invalid, b.arrived.Load())
	}
	// Not JSON: said on the page, nothing sent.
	setArgs("get_weather", `{city:`)
	run(t, ctx, "running get_weather", chromedp.Click(chromedp.CSS(form("get_weather")+" button")))
	until(t, ctx, "not JSON", `document.querySelector('`+form("get_weather")+` .run-result').textContent.startsWith('The arguments are not JSON')`)

	// A run: its result and timing; its progress does not matter here.
	b.releaseSlow()
	run(t, ctx, "running slow_task", chromedp.Click(chromedp.CSS(form("slow_task")+" button")))
	until(t, ctx, "the result", `document.querySelector('`+form("slow_task")+` .run-result').dataset.state === 'done'`)
	var done string
	eval(t, ctx, `document.querySelector('`+form("slow_task")+` .run-result').textContent`, &done)
	if !strings.HasPrefix(done, "result · ") || !strings.HasSuffix(done, "finished") {
		t.Errorf("the result: %q", done)
	}
	var scrolled bool
	eval(t, ctx, `(document.querySelector('`+form("slow_task")+`').scrollIntoView(), true)`, &scrolled)
	shot(t, ctx, "agent-run-tool")
	run(t, ctx, "narrowing the window", chromedp.EmulateViewport(420, 860))
	eval(t, ctx, `(document.querySelector('`+form("slow_task")+`').scrollIntoView(), true)`, &scrolled)
	shot(t, ctx, "agent-run-tool-narrow")
}
