package browsertest

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"
)

// A model call's request is a tree: what is large is folded at first, a
// click or Enter on its bracket unfolds it, and its text stays the whole
// JSON, folded or not.
func TestJSONTree(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/tree"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "What is the weather in Paris and Tokyo?")
	until(t, ctx, "the answer", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)

	run(t, ctx, "opening the runs", chromedp.Click(chromedp.CSS("#nav-runs")))
	until(t, ctx, "the timeline", `document.querySelector('#timeline .bar-seg.k-model:not(.k-failed)') != null`)
	run(t, ctx, "clicking the model call", chromedp.Click(chromedp.CSS(`#timeline .bar-seg.k-model:not(.k-failed)`)))
	until(t, ctx, "the request's tree", `document.querySelector('#call-request > .jt') != null`)

	// The outermost object is open; the config, with the tools'
	// declarations, is folded; its text is the whole request.
	const cfg = `[...document.querySelectorAll('#call-request .jt')].find(j => j.previousSibling?.textContent.endsWith('"config": ')).firstChild`
	var first struct {
		Outer, Config string
		Hidden        bool
		More, Text    string
	}
	eval(t, ctx, `({outer: document.querySelector('#call-request > .jt > .jt-tog').getAttribute('aria-expanded'),
		config: `+cfg+`.getAttribute('aria-expanded'), hidden: `+cfg+`.nextSibling.hidden,
		more: getComputedStyle(`+cfg+`, '::after').content, text: document.querySelector('#call-request').textContent})`, &first)
	var req struct {
		Config struct {
			Tools []struct {
				FunctionDeclarations []struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal([]byte(first.Text), &req); err != nil || len(req.Config.Tools) != 1 || len(req.Config.Tools[0].FunctionDeclarations) != 5 {
		t.Errorf("the folded request's text is not the request: %v\n%s", err, first.Text)
	}
	if first.Outer != "true" || first.Config != "false" || !first.Hidden || first.More == "none" || first.More == "" {
		t.Errorf("the request's tree at first: %+v", first)
	}
	var scrolled bool
	eval(t, ctx, `(document.querySelector('#call-request').scrollIntoView(), true)`, &scrolled)
	shot(t, ctx, "json-folded")

	// Enter on the focused bracket unfolds it; a click folds it again.
	var marked bool
	eval(t, ctx, `(`+cfg+`.id = 'config-tog') !== ''`, &marked)
	run(t, ctx, "focusing the config", chromedp.Focus(chromedp.CSS("#config-tog")))
	run(t, ctx, "pressing Enter", chromedp.KeyEvent("\r"))
	until(t, ctx, "the config unfolded", cfg+`.getAttribute('aria-expanded') === 'true' && !`+cfg+`.nextSibling.hidden && document.activeElement === `+cfg)
	shot(t, ctx, "json-unfolded")
	run(t, ctx, "clicking the config", chromedp.Click(chromedp.CSS("#config-tog")))
	until(t, ctx, "the config folded", cfg+`.getAttribute('aria-expanded') === 'false' && `+cfg+`.nextSibling.hidden`)
	run(t, ctx, "narrowing the window", chromedp.EmulateViewport(420, 860))
	eval(t, ctx, `(document.querySelector('#call-request').scrollIntoView(), true)`, &scrolled)
	shot(t, ctx, "json-narrow")
}
