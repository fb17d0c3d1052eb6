package browsertest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// TestRunCost: a run whose prompt was read from a cache shows its cached
// tokens and the input's billed split, at the full price and at the cached
// price, in the run's head and in its model call's detail. The second
// message repeats the first's long prompt, which the fake caches
// implicitly.
func TestRunCost(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/cost"), chromedp.WaitVisible(chromedp.CSS("#input")))
	long := strings.Repeat("Tell me a story. ", 4*fake.MinCacheTokens(model)/17+1)
	var set bool
	eval(t, ctx, `(document.querySelector('#input').value = `+jsString(long)+`) !== ''`, &set)
	run(t, ctx, "sending the long message", chromedp.Click(chromedp.CSS("#send")))
	until(t, ctx, "the first answer", `document.querySelectorAll('#messages .end[data-finish=stop]').length === 1`)
	send(t, ctx, "And another?")
	until(t, ctx, "the second answer", `document.querySelectorAll('#messages .end[data-finish=stop]').length === 2`)

	run(t, ctx, "opening the timeline", chromedp.Click(chromedp.JSPath(lastAnswer+`.querySelector('.timeline-link')`)))
	until(t, ctx, "the timeline", `document.querySelector('#run-state')?.textContent === 'done' && document.querySelector('#run-billed') != null`)
	var head struct{ Tokens, Billed string }
	eval(t, ctx, `({tokens: [...document.querySelectorAll('table.kv tr')].find(r => r.firstChild.textContent === 'tokens').lastChild.textContent,
		billed: document.querySelector('#run-billed').textContent})`, &head)
	nums := func(s string) []int {
		var out []int
		for _, f := range strings.Fields(strings.ReplaceAll(s, ",", "")) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	tokens, billed := nums(head.Tokens), nums(head.Billed)
	if len(tokens) != 4 || len(billed) != 2 || !strings.Contains(head.Billed, "at full price") || !strings.Contains(head.Billed, "at cached price") {
		t.Fatalf("the run's head: tokens %q, billed %q", head.Tokens, head.Billed)
	}
	in, cached, full := tokens[0], tokens[3], billed[0]
	if billed[1] != cached || cached < fake.MinCacheTokens(model) || full == 0 || full+cached != in {
		t.Errorf("the run's head: tokens %q, billed %q; want the first message's prompt (at least %d) cached, the rest at full price",
			head.Tokens, head.Billed, fake.MinCacheTokens(model))
	}

	run(t, ctx, "clicking the model call", chromedp.Click(chromedp.CSS(`#timeline .bar-seg.k-model`)))
	until(t, ctx, "the model call's tokens", `document.querySelector('.tok-full') != null`)
	var call struct{ Cached, Full string }
	eval(t, ctx, `({cached: document.querySelector('.tok-cached').textContent, full: document.querySelector('.tok-full').textContent})`, &call)
	if c, f := nums(call.Cached), nums(call.Full); len(c) != 1 || len(f) != 1 || c[0] != cached || f[0] != full {
		t.Errorf("the model call's cached %q, full price %q; want %d, %d (the run's one call)", call.Cached, call.Full, cached, full)
	}
	shot(t, ctx, "run-cost")
}
