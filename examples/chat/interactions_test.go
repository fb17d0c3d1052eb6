package main

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/internal/offline"
)

// -api interactions runs the same chat on the Interactions API, offline on
// the fake's, with the same answers; -trace names its model calls so.
func TestOfflineInteractions(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	input := weatherQuestion + "And in Oslo?\nwhat is (12+7)*3\n/trip Lisbon\n"
	timing := regexp.MustCompile(`\([\d.]+[nµm]?s\)|· [\d.]+[nµm]?s\]`)
	// Tool results are printed as calls complete, in either order: compare
	// the lines.
	lines := func(s string) string {
		l := strings.Split(timing.ReplaceAllString(s, ""), "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	// Results are cut to the width, after their varying durations: no cut.
	wide := func() int { return 1000 }
	want := lines(chatOutput(t, options{width: wide}, input))
	var trees bytes.Buffer
	got := lines(chatOutput(t, options{api: "interactions", trace: true, traceOut: &trees, width: wide}, input))
	if got != want {
		t.Errorf("on Interactions the chat said\n%s\non generateContent\n%s", got, want)
	}
	if n := strings.Count(trees.String(), "create_interaction "+offline.ModelName); n < 4 || strings.Contains(trees.String(), "generate_content") {
		t.Errorf("%d create_interaction spans:\n%s", n, trees.String())
	}
	var out bytes.Buffer
	if err := run(t.Context(), options{api: "responses"}, strings.NewReader(""), &out); err == nil || !strings.Contains(err.Error(), "interactions") {
		t.Errorf("-api responses: %v", err)
	}
}

// With a key, -api interactions talks to the Gemini API's Interactions
// routes with that key (the fake stands in for it at the base URL genai
// reads from the environment).
func TestKeyInteractions(t *testing.T) {
	srv := geminitest.Start(t)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	srv.Enqueue(
		geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.Text("Sunny in Paris (made-up data)."),
		geminitest.Text("Still sunny."),
	)
	out := chatOutput(t, options{apiKey: "a-real-key", api: "interactions", model: "gemini-3.5-flash"}, "What's the weather in Paris?\nAnd now?\n")
	if !strings.Contains(out, "Sunny in Paris (made-up data).") || !strings.Contains(out, "Still sunny.") {
		t.Errorf("output:\n%s", out)
	}
	srv.AssertComplete(t)
	reqs := srv.Requests()
	for _, r := range reqs {
		if r.Method != geminitest.MethodCreateInteraction || r.APIKey != "a-real-key" || r.Model != "gemini-3.5-flash" {
			t.Errorf("request #%d: %s with key %q for %s", r.Seq, r.Method, r.APIKey, r.Model)
		}
	}
	if last := reqs[len(reqs)-1]; last.PreviousInteractionID == "" || len(last.Input) != 1 {
		t.Errorf("the second message sent previous %q and %d contents", last.PreviousInteractionID, len(last.Input))
	}
}
