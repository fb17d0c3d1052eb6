package history_test

import (
	"context"
	"encoding/json"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// Trimming random histories under random settings always leaves a history
// the fake accepts (calls with their responses, signatures of the current
// turn where they were), keeps the current exchange and the first message,
// never modifies its input, and brings the estimate under the limit
// unless nothing more could go.
func TestTrimRandomHistories(t *testing.T) {
	srv := newServer(t)
	client := srv.Client()
	for seed := range uint64(120) {
		checkRandomTrim(t, srv, client, seed)
	}
}

// FuzzTrim is TestTrimRandomHistories with the fuzzer choosing the seeds.
func FuzzTrim(f *testing.F) {
	for _, seed := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(seed)
	}
	srv := newServer(f)
	client := srv.Client()
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkRandomTrim(t, srv, client, seed)
	})
}

func checkRandomTrim(t *testing.T, srv *fake.Server, client *genai.Client, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	contents := randomHistory(r)
	if err := accepted(srv, client, contents); err != nil {
		t.Fatalf("seed %d: the generated history itself is refused: %v", seed, err)
	}
	all := history.Estimate(contents...)
	tr := history.Trimmer{
		MaxTokens:        1 + r.IntN(all+all/5+1),
		KeepToolOutputs:  r.IntN(5) - 1,
		ToolOutputBytes:  r.IntN(1000),
		DropFirstMessage: r.IntN(4) == 0,
	}
	tr.TargetTokens = 1 + r.IntN(tr.MaxTokens)
	h := &agent.HistoryInfo{Contents: contents, Model: model3}
	if n := len(contents); r.IntN(2) == 0 && n > 2 {
		// A later call: the previous one's count, as the API reports it.
		h.Turn = 1
		h.PromptTokens = history.Estimate(contents[:n-2]...) * (50 + r.IntN(100)) / 100
	}
	before, _ := json.Marshal(contents)

	out, err := tr.Prepare(ctx, h)
	if err != nil {
		t.Fatalf("seed %d: Prepare() = %v", seed, err)
	}
	if after, _ := json.Marshal(contents); string(after) != string(before) {
		t.Fatalf("seed %d: Prepare modified its input", seed)
	}
	if err := accepted(srv, client, out); err != nil {
		t.Fatalf("seed %d (%+v): the trimmed history (%d of %d contents) is refused: %v", seed, tr, len(out), len(contents), err)
	}

	// A Summarizer trims the same way and adds one summary where the
	// dropped contents were; the fake accepts that too.
	sum := &history.Summarizer{Trimmer: tr, Models: summaryStub{}}
	summarized, err := sum.Prepare(ctx, h)
	if err != nil {
		t.Fatalf("seed %d: Summarizer.Prepare() = %v", seed, err)
	}
	withoutSummary := slices.DeleteFunc(slices.Clone(summarized), func(c *genai.Content) bool {
		return c.Parts[0].Text == history.SummaryPrefix+"stub summary"
	})
	if d := len(summarized) - len(withoutSummary); d > 1 || (d == 1) != (len(out) < len(contents)) {
		t.Fatalf("seed %d: the Summarizer added %d summaries where the Trimmer dropped %d contents", seed, d, len(contents)-len(out))
	}
	if len(out) != len(withoutSummary) {
		t.Fatalf("seed %d: the Summarizer kept %d contents besides its summary; the Trimmer %d", seed, len(withoutSummary), len(out))
	}
	for i := range out {
		if !sameContent(out[i], withoutSummary[i]) {
			t.Fatalf("seed %d: the Summarizer's content %d differs from the Trimmer's", seed, i)
		}
	}
	if err := accepted(srv, client, summarized); err != nil {
		t.Fatalf("seed %d: the summarized history is refused: %v", seed, err)
	}

	// out is contents in order, each content the same or, for tool turns,
	// a shortened copy answering the same calls.
	kept := make([]int, len(out)) // out[i] is contents[kept[i]]
	j := 0
	for i, c := range out {
		for j < len(contents) && !sameContent(contents[j], c) {
			j++
		}
		if j == len(contents) {
			t.Fatalf("seed %d: out[%d] is not a content of the input, in order", seed, i)
		}
		if c != contents[j] && c.Role == genai.RoleModel {
			t.Fatalf("seed %d: model content %d was changed", seed, j)
		}
		kept[i] = j
		j++
	}
	// The current exchange stays, its model turns untouched; so does the
	// first message, unless it may go.
	current := 0
	for i, c := range contents {
		if isMessage(c) {
			current = i
		}
	}
	for i := current; i < len(contents); i++ {
		if !slices.Contains(kept, i) {
			t.Fatalf("seed %d: content %d of the current exchange (from %d) was dropped", seed, i, current)
		}
	}
	first := slices.IndexFunc(contents, isMessage)
	if !tr.DropFirstMessage && !slices.Contains(kept, first) {
		t.Fatalf("seed %d: the first message was dropped", seed)
	}
	// Under the limit nothing changes; over it, the estimate comes under
	// the limit, unless all that could go went.
	if len(out) == len(contents) && &out[0] == &contents[0] {
		return
	}
	if h.PromptTokens == 0 && all <= tr.MaxTokens {
		t.Fatalf("seed %d: trimmed a history under the limit (%d <= %d)", seed, all, tr.MaxTokens)
	}
	if h.PromptTokens == 0 && history.Estimate(out...) > tr.MaxTokens {
		rest := len(contents) - current
		if first >= 0 && first < current && !tr.DropFirstMessage {
			rest++
		}
		if len(out) != rest {
			t.Fatalf("seed %d: %d tokens left over a limit of %d, with %d contents that could still go",
				seed, history.Estimate(out...), tr.MaxTokens, len(out)-rest)
		}
	}
}

// cutPoint is what a trim of a prompt of total tokens brings it down to,
// as the package documentation says: total less the fewest whole steps
// (maxTokens - target) that bring it to maxTokens or under.
func cutPoint(total, maxTokens, target int) int {
	step := maxTokens - target
	if step == 0 || total <= maxTokens {
		return target
	}
	return total - (total-maxTokens+step-1)/step*step
}

// sameContent reports whether c is orig, or a copy of it whose function
// responses answer the same calls.
func sameContent(orig, c *genai.Content) bool {
	if orig == c {
		return true
	}
	if orig.Role != c.Role || len(orig.Parts) != len(c.Parts) {
		return false
	}
	for i, p := range orig.Parts {
		q := c.Parts[i]
		if p.FunctionResponse == nil {
			if p != q {
				return false
			}
			continue
		}
		if q.FunctionResponse == nil || q.FunctionResponse.ID != p.FunctionResponse.ID || q.FunctionResponse.Name != p.FunctionResponse.Name {
			return false
		}
	}
	return true
}

// isMessage reports whether c is a user message, not only function
// responses.
func isMessage(c *genai.Content) bool {
	if c.Role == genai.RoleModel {
		return false
	}
	for _, p := range c.Parts {
		if p.FunctionResponse == nil {
			return true
		}
	}
	return false
}

// summaryStub is a model that answers every call with "stub summary".
type summaryStub struct{}

func (summaryStub) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: genai.NewContentFromText("stub summary", genai.RoleModel)}}}, nil
}

func (summaryStub) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(func(*genai.GenerateContentResponse, error) bool) {}
}
