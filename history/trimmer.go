package history

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// Defaults of the Trimmer fields whose zero value means "the default".
const (
	// DefaultMaxTokens is three quarters of the 1,048,576-token input
	// limit of the Gemini 2.5 and 3 models.
	DefaultMaxTokens       = 786_432
	DefaultKeepToolOutputs = 2
	DefaultToolOutputBytes = 1024
)

// A Trimmer keeps the history each model call sends within a token budget:
// past MaxTokens, it first shortens old tool outputs, then drops the oldest
// exchanges, until the prompt is down to a cut point: MaxTokens or under,
// by whole steps of MaxTokens - TargetTokens, so that the runs of a growing
// conversation cut at the same place until the next step is due. Its
// Prepare method is an [agent.HistoryFunc]:
//
//	a, err := agent.New(agent.Config{
//		…,
//		PrepareHistory: history.Trimmer{MaxTokens: 200_000}.Prepare,
//	})
//
// The zero value trims at DefaultMaxTokens. A Trimmer is a value without
// state: one may serve any number of concurrent runs. See the package
// documentation for what it keeps and what it costs.
type Trimmer struct {
	// MaxTokens is the prompt size, in tokens, past which the history is
	// trimmed: the system instruction and the tool declarations count, as
	// the API counts them. Zero means DefaultMaxTokens. Set it below the
	// model's input limit, leaving room for the estimate's error on the
	// first call of a run (see the package documentation).
	MaxTokens int

	// TargetTokens is what a trim brings the prompt down to when it has
	// just passed MaxTokens, so that the calls after it do not trim again
	// at once (a trim changes the start of the prompt, which the API's
	// implicit cache then misses). MaxTokens - TargetTokens is the step of
	// the cut points (see the package documentation): a trim saves a
	// whole number of steps, and the prompt grows back from about
	// TargetTokens to MaxTokens between cuts. Equal to MaxTokens, a trim
	// saves just enough, and a stored conversation is cut a little further
	// each run. Zero means three quarters of MaxTokens.
	TargetTokens int

	// KeepToolOutputs is how many of the most recent tool turns (the user
	// contents holding function responses) keep their outputs whole. Zero
	// means DefaultKeepToolOutputs (2); a negative value keeps none.
	KeepToolOutputs int

	// ToolOutputBytes is the size, in bytes of JSON, above which an older
	// tool output is shortened: to a note saying so and a preview of its
	// start, half that size in all. Zero means DefaultToolOutputBytes
	// (1024).
	ToolOutputBytes int

	// DropFirstMessage lets a trim drop the first user message like any
	// other. By default it is kept, since it often states the task.
	DropFirstMessage bool
}

// Prepare returns h.Contents when the prompt fits MaxTokens, and a trimmed
// copy of it otherwise. It never modifies h.Contents or the contents it
// holds: a shortened content is a new one.
//
// The prompt's size is the previous model call's prompt token count, which
// the API reported (h.PromptTokens), plus an [Estimate] of the model turn
// and tool answers added since; on a run's first call, which has no count,
// it is the Estimate of every content.
func (t Trimmer) Prepare(_ context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
	s, err := t.settings()
	if err != nil {
		return nil, err
	}
	if total, over := s.over(h); over {
		return s.trim(h.Contents, total).contents, nil
	}
	return h.Contents, nil
}

// over returns the prompt's size in tokens, as Prepare measures it, and
// whether it is past the threshold.
func (s settings) over(h *agent.HistoryInfo) (int, bool) {
	contents := h.Contents
	if n := len(contents); h.PromptTokens > 0 && n >= 2 {
		// Contents is what the previous call sent, then one model turn and
		// its tool answers (see agent.HistoryInfo).
		total := h.PromptTokens + Estimate(contents[n-2:]...)
		return total, total > s.max
	}
	total := Estimate(contents...)
	return total, total > s.max
}

// settings are a Trimmer's, with the defaults filled in.
type settings struct {
	max, target, keep, outputBytes int
	dropFirst                      bool
}

func (t Trimmer) settings() (settings, error) {
	s := settings{max: t.MaxTokens, target: t.TargetTokens, keep: t.KeepToolOutputs,
		outputBytes: t.ToolOutputBytes, dropFirst: t.DropFirstMessage}
	if s.max < 0 || s.target < 0 || s.outputBytes < 0 {
		return s, fmt.Errorf("history: negative Trimmer setting (MaxTokens %d, TargetTokens %d, ToolOutputBytes %d)",
			t.MaxTokens, t.TargetTokens, t.ToolOutputBytes)
	}
	if s.max == 0 {
		s.max = DefaultMaxTokens
	}
	switch {
	case s.target == 0:
		s.target = s.max / 4 * 3
	case s.target > s.max:
		return s, fmt.Errorf("history: Trimmer.TargetTokens (%d) is above MaxTokens (%d)", s.target, s.max)
	}
	switch {
	case s.keep == 0:
		s.keep = DefaultKeepToolOutputs
	case s.keep < 0:
		s.keep = 0
	}
	if s.outputBytes == 0 {
		s.outputBytes = DefaultToolOutputBytes
	}
	return s, nil
}

// trimmed is the outcome of a trim.
type trimmed struct {
	contents []*genai.Content // what is sent
	dropped  []*genai.Content // the exchanges dropped, oldest first, outputs shortened
	at       int              // where in contents the dropped ones were
}

// trim returns contents brought down from total tokens to the target, as
// far as it can: old tool outputs shortened, oldest first, then the oldest
// exchanges dropped. The current exchange (from the last user message on)
// is never dropped: the API checks the thought signatures of its function
// calls. When there is nothing it can do, it returns contents itself.
func (s settings) trim(contents []*genai.Content, total int) trimmed {
	sizes := make([]int, len(contents))
	sum := 0
	for i, c := range contents {
		sizes[i] = contentTokens(c)
		sum += sizes[i]
	}
	// Sizes are estimates; total may be the API's count. Savings are
	// scaled into the units of total, so that the two agree.
	scale := float64(total) / float64(max(sum, 1))
	goal := s.cutPoint(total)
	over := func() bool { return float64(total) > float64(goal) }
	save := func(tokens int) { total -= int(float64(tokens) * scale) }

	out := contents // copied on the first change

	// 1. Shorten the outputs of the older tool turns, oldest first.
	var toolTurns []int
	for i, c := range out {
		if hasResponses(c) {
			toolTurns = append(toolTurns, i)
		}
	}
	for _, i := range toolTurns[:max(len(toolTurns)-s.keep, 0)] {
		if !over() {
			return trimmed{contents: out}
		}
		if c, ok := s.shorten(out[i]); ok {
			if &out[0] == &contents[0] {
				out = slices.Clone(contents)
			}
			out[i] = c
			size := contentTokens(c)
			save(sizes[i] - size)
			sizes[i] = size
		}
	}

	// 2. Drop the oldest exchanges, each whole: from a user message up to
	// the next one, so that calls and their responses go together.
	// The cut point is chosen anew from the prompt with every older
	// output shortened, which only grows with the conversation, so that
	// where exchanges are dropped does not depend on how many outputs the
	// conversation has let age.
	goal = s.cutPoint(total)
	starts := exchangeStarts(out)
	if len(starts) < 2 || !over() {
		return trimmed{contents: out}
	}
	first := -1 // the first user message, which stays; what answered it may go
	if !s.dropFirst {
		first = slices.IndexFunc(out, isMessage)
	}
	dropped, n := make([]bool, len(out)), 0
	for k := 0; k+1 < len(starts) && over(); k++ {
		for i := starts[k]; i < starts[k+1]; i++ {
			if i != first {
				dropped[i] = true
				save(sizes[i])
				n++
			}
		}
	}
	if n == 0 {
		return trimmed{contents: out}
	}
	t := trimmed{contents: make([]*genai.Content, 0, len(out)-n), dropped: make([]*genai.Content, 0, n), at: -1}
	for i, c := range out {
		if dropped[i] {
			if t.at < 0 {
				t.at = len(t.contents)
			}
			t.dropped = append(t.dropped, c)
			continue
		}
		t.contents = append(t.contents, c)
	}
	return t
}

// cutPoint returns what a trim brings a prompt of total tokens down to:
// total itself when it fits MaxTokens; else total less the fewest whole
// steps of MaxTokens - TargetTokens that bring it to MaxTokens or under
// (TargetTokens when the two are equal). As a conversation grows, its cut
// point stays where it was until it has grown by another step: the runs
// that trim it afresh then drop the same exchanges, and send the same
// prefix.
func (s settings) cutPoint(total int) int {
	step := s.max - s.target
	switch {
	case total <= s.max:
		return total
	case step == 0:
		return s.target
	}
	return total - (total-s.max+step-1)/step*step
}

// exchangeStarts returns where each exchange begins: at 0, and at each
// user message (a user content that is not only function responses). The
// last one begins the current exchange, the API's "current turn", whose
// function calls must keep their thought signatures.
func exchangeStarts(cs []*genai.Content) []int {
	starts := []int{0}
	for i, c := range cs {
		if i > 0 && isMessage(c) {
			starts = append(starts, i)
		}
	}
	return starts
}

// isMessage reports whether c is a user message: a user content with a
// part that is not a function response.
func isMessage(c *genai.Content) bool {
	if c == nil || c.Role == genai.RoleModel {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse == nil {
			return true
		}
	}
	return false
}

func hasResponses(c *genai.Content) bool {
	if c == nil || c.Role == genai.RoleModel {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// shorten returns a copy of c whose function responses larger than the
// limit are replaced by a preview, and whether there was any.
func (s settings) shorten(c *genai.Content) (*genai.Content, bool) {
	var parts []*genai.Part
	for i, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil {
			continue
		}
		fr, ok := s.shortResponse(p.FunctionResponse)
		if !ok {
			continue
		}
		if parts == nil {
			parts = append([]*genai.Part(nil), c.Parts...)
		}
		q := *p
		q.FunctionResponse = fr
		parts[i] = &q
	}
	if parts == nil {
		return c, false
	}
	return &genai.Content{Role: c.Role, Parts: parts}, true
}

// shortResponse returns a copy of fr whose response is a preview of it,
// if its output is over the limit or it carries media.
func (s settings) shortResponse(fr *genai.FunctionResponse) (*genai.FunctionResponse, bool) {
	size := valueSize(fr.Response)
	if size <= s.outputBytes && len(fr.Parts) == 0 {
		return nil, false
	}
	// The project's responses are {"result": output} or {"error":
	// message}; the key says which, and stays.
	key, value := "output", any(fr.Response)
	if len(fr.Response) == 1 {
		for k, v := range fr.Response {
			if k == "result" || k == "error" {
				key, value = k, v
			}
		}
	}
	var text string
	switch v := value.(type) {
	case string:
		text = v
	default:
		b, _ := json.Marshal(v) // it was sent: it encodes
		text = string(b)
	}
	note := fmt.Sprintf("[shortened to save context: the output was %d bytes", len(text))
	if n := len(fr.Parts); n > 0 {
		note += fmt.Sprintf(", and its %d media parts are left out", n)
	}
	// The note and the preview take half the limit, so that a shortened
	// output is never shortened again.
	preview := text
	if budget := max(s.outputBytes/2-len(note)-40, 0); len(text) > budget {
		cut := budget
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		preview = text[:cut] + "…"
		note += fmt.Sprintf("; its first %d bytes follow", cut)
	}
	short := *fr
	short.Response = map[string]any{key: note + "] " + preview}
	short.Parts = nil
	return &short, true
}
