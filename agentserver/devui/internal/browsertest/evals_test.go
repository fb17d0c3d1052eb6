package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A conversation saved as an eval case (Conversations, Save as eval case)
// is listed on the Evals page and run from there: passed while the agent
// does what it did, and, once the expected answer is another, failed with
// the metric's score and explanation.
func TestEvals(t *testing.T) {
	b := newBench(t)
	ctx := browser(t)
	run(t, ctx, "opening the page", chromedp.Navigate(b.http.URL+"/#chat/evalme"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "What is the weather in Paris and Tokyo?")
	until(t, ctx, "the answer", lastAnswer+`?.querySelector('.end[data-finish=stop]') != null`)

	run(t, ctx, "opening the conversation", chromedp.Navigate(b.http.URL+"/#threads/evalme"))
	until(t, ctx, "the Save as eval case button", `document.querySelector('#save-eval') != null`)
	run(t, ctx, "saving the case", chromedp.Click(chromedp.CSS("#save-eval")))
	until(t, ctx, "the saved case", `JSON.parse(localStorage.getItem('toolnexus.devui.evalCases') || '[]').length === 1`)
	// The page says so in a toast of a success's color, not a problem's.
	var toast struct{ Text, Color, Bad string }
	eval(t, ctx, `(() => { const t = document.querySelector('#toast');
		return {text: t.textContent, color: getComputedStyle(t).backgroundColor,
			bad: getComputedStyle(document.documentElement).getPropertyValue('--bad')}; })()`, &toast)
	if !strings.HasPrefix(toast.Text, "Saved evalme as an eval case") || toast.Color == "rgb(208, 68, 58)" {
		t.Errorf("the toast of the saved case: %q in %s (the problems' color is %s)", toast.Text, toast.Color, toast.Bad)
	}
	var saved struct {
		ID, Question, Answer string
		Calls                int
	}
	eval(t, ctx, `(() => { const c = JSON.parse(localStorage.getItem('toolnexus.devui.evalCases'))[0]; const turn = c.conversation[0];
		return {id: c.eval_id, question: turn.user_content.parts[0].text, answer: turn.final_response.parts[0].text,
			calls: turn.intermediate_data.tool_uses.length}; })()`, &saved)
	if saved.ID != "evalme" || saved.Question != "What is the weather in Paris and Tokyo?" || saved.Calls != 2 ||
		!strings.Contains(saved.Answer, "Paris is sunny") {
		t.Errorf("the saved case: %+v", saved)
	}

	run(t, ctx, "opening the evals", chromedp.Click(chromedp.CSS("#nav-evals")))
	until(t, ctx, "the case listed", `document.querySelector('#eval-cases li[data-case=evalme]') != null`)
	run(t, ctx, "running the set", chromedp.Click(chromedp.CSS("#run-evals")))
	until(t, ctx, "the report", `document.querySelector('#eval-report') != null`)
	type row struct{ Status, Score, Why string }
	metric := func(name string) row {
		t.Helper()
		var r row
		eval(t, ctx, `(() => { const tr = document.querySelector('#eval-report .eval-case[data-case=evalme] tr[data-metric=`+name+`]');
			return tr ? {status: tr.dataset.status, score: tr.querySelector('.score').textContent, why: tr.querySelector('.why').textContent} : {}; })()`, &r)
		return r
	}
	var status string
	eval(t, ctx, `document.querySelector('#eval-report').dataset.status`, &status)
	if traj, match := metric("tool_trajectory_avg_score"), metric("response_match_score"); status != "PASSED" ||
		traj.Status != "PASSED" || traj.Score != "1" || match.Status != "PASSED" || match.Score != "1" {
		t.Errorf("the first run: %s, trajectory %+v, response %+v", status, traj, match)
	}

	// The expected answer is another: the response match fails, and says why.
	var changed bool
	eval(t, ctx, `(() => { const cs = JSON.parse(localStorage.getItem('toolnexus.devui.evalCases'));
		cs[0].conversation[0].final_response.parts[0].text = 'It snows in Paris and it rains in Tokyo.';
		localStorage.setItem('toolnexus.devui.evalCases', JSON.stringify(cs)); return true; })()`, &changed)
	run(t, ctx, "reloading the evals", chromedp.Reload())
	until(t, ctx, "the case listed", `document.querySelector('#eval-cases li[data-case=evalme]') != null && document.querySelector('#eval-report') == null`)
	run(t, ctx, "running the set", chromedp.Click(chromedp.CSS("#run-evals")))
	until(t, ctx, "the report", `document.querySelector('#eval-report') != null`)
	eval(t, ctx, `document.querySelector('#eval-report').dataset.status`, &status)
	traj, match := metric("tool_trajectory_avg_score"), metric("response_match_score")
	if status != "FAILED" || traj.Status != "PASSED" || match.Status != "FAILED" || match.Score == "1" ||
		!strings.Contains(match.Why, "It snows in Paris") {
		t.Errorf("the second run: %s, trajectory %+v, response %+v", status, traj, match)
	}
	shot(t, ctx, "evals-failed")

	// Removing the case empties the set.
	run(t, ctx, "removing the case", chromedp.Click(chromedp.CSS(`#eval-cases li[data-case=evalme] button.remove`)))
	until(t, ctx, "no cases", `document.querySelector('#no-evals') != null && document.querySelector('#run-evals').disabled`)
}
