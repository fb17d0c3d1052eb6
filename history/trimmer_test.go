package history_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"google.golang.org/genai"
)

// conversation returns a first message, then exchanges of a message, one
// step calling get_weather with an output of outputBytes, and an answer,
// then a last message.
func conversation(exchanges, outputBytes int) []*genai.Content {
	cs := []*genai.Content{userText("You are planning a trip."), modelText("Sure.", []byte("s0"))}
	for i := range exchanges {
		cs = append(cs, userText(fmt.Sprintf("Weather in city %d?", i)))
		cs = append(cs, step([]byte(fmt.Sprint("sig", i)), bigOutput(outputBytes), fmt.Sprint("city", i))...)
		cs = append(cs, modelText(fmt.Sprintf("Sunny in city %d.", i), []byte(fmt.Sprint("end", i))))
	}
	return append(cs, userText("And now?"))
}

func output(c *genai.Content) string {
	s, _ := c.Parts[0].FunctionResponse.Response["result"].(string)
	return s
}

func TestUnderTheLimitNothingChanges(t *testing.T) {
	contents := conversation(5, 1000)
	tr := history.Trimmer{MaxTokens: history.Estimate(contents...)}
	out, err := tr.Prepare(ctx, info(contents))
	if err != nil || len(out) != len(contents) || &out[0] != &contents[0] {
		t.Errorf("Prepare() at the limit = %d contents (same slice: %v), %v; want the input itself", len(out), len(out) > 0 && &out[0] == &contents[0], err)
	}
}

// Old tool outputs are shortened first, oldest first, and the most recent
// ones are kept whole; when that is enough, nothing is dropped.
func TestOldToolOutputsAreShortenedFirst(t *testing.T) {
	contents := conversation(6, 8000)
	before, _ := json.Marshal(contents)
	all := history.Estimate(contents...)
	tr := history.Trimmer{MaxTokens: all - 1, TargetTokens: all - 3*2500, KeepToolOutputs: 2}
	out, err := tr.Prepare(ctx, info(contents))
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(contents); string(after) != string(before) {
		t.Fatalf("Prepare modified its input")
	}
	if len(out) != len(contents) {
		t.Fatalf("%d contents of %d: an exchange was dropped, though shortening was enough", len(out), len(contents))
	}
	var shortened []int
	for i, c := range out {
		if c.Parts[0].FunctionResponse == nil {
			if c != contents[i] {
				t.Errorf("content %d, not a tool turn, was replaced", i)
			}
			continue
		}
		if s := output(c); strings.HasPrefix(s, "[shortened to save context: the output was 8007 bytes; its first ") {
			shortened = append(shortened, i)
			if len(s) > 512+10 || !strings.Contains(s, "] city") || !strings.HasSuffix(s, "…") {
				t.Errorf("content %d: shortened to %d bytes: %.120q", i, len(s), s)
			}
			fr, orig := c.Parts[0].FunctionResponse, contents[i].Parts[0].FunctionResponse
			if fr.ID != orig.ID || fr.Name != orig.Name {
				t.Errorf("content %d: the shortened response answers %s %s, not %s %s", i, fr.Name, fr.ID, orig.Name, orig.ID)
			}
		} else if c != contents[i] {
			t.Errorf("content %d: replaced but not shortened: %.80q", i, s)
		}
	}
	// Six tool turns, at 4, 8, 12…: the three oldest are enough.
	if fmt.Sprint(shortened) != "[4 8 12]" {
		t.Errorf("shortened tool turns %v; want the three oldest, [4 8 12]", shortened)
	}
	// Trimmed once, it fits: the next call changes nothing.
	again, _ := tr.Prepare(ctx, info(out))
	if &again[0] != &out[0] || len(again) != len(out) {
		t.Errorf("a second Prepare trimmed again")
	}
}

// When shortening is not enough, the oldest exchanges go, whole, and the
// first message stays, unless DropFirstMessage.
func TestOldestExchangesAreDropped(t *testing.T) {
	contents := conversation(10, 100) // small outputs: nothing to shorten
	for _, dropFirst := range []bool{false, true} {
		tr := history.Trimmer{MaxTokens: 600, DropFirstMessage: dropFirst}
		out, err := tr.Prepare(ctx, info(contents))
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, c := range out {
			if isMessage(c) {
				texts = append(texts, c.Parts[0].Text)
			}
		}
		got := strings.Join(texts, " | ")
		want := "Weather in city 7? | Weather in city 8? | Weather in city 9? | And now?"
		if !dropFirst {
			want = "You are planning a trip. | " + want
		}
		if got != want {
			t.Errorf("DropFirstMessage=%v: messages kept: %s\nwant: %s", dropFirst, got, want)
		}
		// The fewest exchanges went: with the last one dropped, the
		// estimate would be over the cut point (the whole history less
		// the fewest steps of 150 tokens, MaxTokens - TargetTokens, that
		// bring it to 600 or under).
		est := history.Estimate(out...)
		goal := cutPoint(history.Estimate(contents...), 600, 450)
		if dropped := history.Estimate(contents[37:42]...); est > goal || est+dropped <= goal || goal > 600 {
			t.Errorf("DropFirstMessage=%v: %d tokens left (%d with the last exchange dropped); want at most %d, and over it with that one", dropFirst, est, est+dropped, goal)
		}
		for _, c := range out { // every kept content is the original
			found := false
			for _, o := range contents {
				found = found || o == c
			}
			if !found {
				t.Errorf("a kept content was changed")
			}
		}
	}
}

// The current exchange, a run in progress, is never dropped, however
// large: its function calls keep their signatures. Its older tool outputs
// are shortened all the same.
func TestTheCurrentExchangeStays(t *testing.T) {
	contents := []*genai.Content{userText("Plan a trip through 8 cities.")}
	for i := range 8 {
		contents = append(contents, step([]byte(fmt.Sprint("sig", i)), bigOutput(4000), fmt.Sprint("city", i))...)
	}
	out, err := history.Trimmer{MaxTokens: 100}.Prepare(ctx, info(contents))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(contents) {
		t.Fatalf("%d contents of %d: the current exchange lost some", len(out), len(contents))
	}
	for i, c := range out {
		switch {
		case c.Role == genai.RoleModel && c != contents[i]:
			t.Errorf("model content %d changed", i)
		case i > 0 && c.Role == genai.RoleUser && i < len(out)-4 && !strings.HasPrefix(output(c), "[shortened"):
			t.Errorf("old tool output %d not shortened", i)
		case i >= len(out)-4 && c != contents[i]:
			t.Errorf("recent content %d changed", i)
		}
	}
	srv := newServer(t)
	if err := accepted(srv, srv.Client(), out); err != nil {
		t.Errorf("the fake refuses the result: %v", err)
	}
}

// After the first call of a run, the size is the API's count of the last
// prompt plus an estimate of what came since: a count under the limit
// means no trim, whatever the estimate of the whole says.
func TestPromptTokensDecide(t *testing.T) {
	contents := conversation(10, 4000)
	n := len(contents)
	tr := history.Trimmer{MaxTokens: 5000}
	h := &agent.HistoryInfo{Contents: contents, Turn: 1, Model: model3, PromptTokens: 100}
	if out, _ := tr.Prepare(ctx, h); len(out) != n || &out[0] != &contents[0] {
		t.Errorf("trimmed with a prompt count of 100 under a limit of 5000")
	}
	h.PromptTokens = 5000 - history.Estimate(contents[n-2:]...) + 1
	if out, _ := tr.Prepare(ctx, h); &out[0] == &contents[0] {
		t.Errorf("did not trim with a prompt count over the limit")
	}
}

// Outputs that are not the project's {"result": …} keep all their data in
// the preview, under "output"; media parts are left out, and said so.
func TestShortenedShapes(t *testing.T) {
	contents := conversation(3, 10)
	fr := contents[4].Parts[0].FunctionResponse
	fr.Response = map[string]any{"rows": []any{strings.Repeat("r", 3000)}, "count": 1.0}
	fr.Parts = []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: make([]byte, 100)}}}
	all := history.Estimate(contents...)
	out, err := history.Trimmer{MaxTokens: all - 1, TargetTokens: all - 500, KeepToolOutputs: -1}.Prepare(ctx, info(contents))
	if err != nil {
		t.Fatal(err)
	}
	got := out[4].Parts[0].FunctionResponse
	s, _ := got.Response["output"].(string)
	if len(got.Response) != 1 || !strings.HasPrefix(s, "[shortened to save context: the output was 3023 bytes, and its 1 media parts are left out; its first ") ||
		!strings.Contains(s, `] {"count":1,"rows":["rrr`) || got.Parts != nil {
		t.Errorf("shortened response = %v, %d parts", got.Response, len(got.Parts))
	}
	if fr.Parts == nil || contents[4].Parts[0].FunctionResponse != fr {
		t.Errorf("the input was modified")
	}
}

func TestSettingsErrors(t *testing.T) {
	for _, tr := range []history.Trimmer{
		{MaxTokens: -1},
		{TargetTokens: -1},
		{ToolOutputBytes: -5},
		{MaxTokens: 100, TargetTokens: 101},
	} {
		if _, err := tr.Prepare(ctx, info(conversation(1, 10))); err == nil {
			t.Errorf("%+v.Prepare() = nil error", tr)
		}
	}
}

func TestEstimate(t *testing.T) {
	text := userText(strings.Repeat("a", 3000))
	if got := history.Estimate(text); got < 1000 || got > 1020 {
		t.Errorf("Estimate(3000 bytes of text) = %d; want about 1000", got)
	}
	img := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: make([]byte, 10)}}}}
	if got := history.Estimate(img); got < history.MediaTokens {
		t.Errorf("Estimate(image) = %d; want at least MediaTokens", got)
	}
	// A struct output, as a tool returns it, is measured by its JSON.
	type weather struct{ Sky string }
	st := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: "w", Response: map[string]any{"result": weather{Sky: strings.Repeat("s", 3000)}}}}}}
	if got := history.Estimate(st); got < 1000 {
		t.Errorf("Estimate(struct output) = %d; want over 1000", got)
	}
	if history.Estimate() != 0 || history.Estimate(nil) != 0 {
		t.Errorf("Estimate of nothing is not 0")
	}
}

// When nothing can go, the input comes back as it is, not a copy.
func TestNothingToTrim(t *testing.T) {
	contents := []*genai.Content{userText(strings.Repeat("a long question ", 500))}
	out, err := history.Trimmer{MaxTokens: 10}.Prepare(ctx, info(contents))
	if err != nil || len(out) != 1 || &out[0] != &contents[0] {
		t.Errorf("Prepare() = %d contents (the input: %v), %v; want the input itself", len(out), len(out) == 1 && &out[0] == &contents[0], err)
	}
}
