package fake

import (
	"encoding/json"

	"google.golang.org/genai"
)

// usageCounter computes usageMetadata the way this package approximates
// it: a token is 4 bytes, rounded up. The prompt counts the JSON of the
// request's contents, system instruction and tools; the candidates count
// the text of non-thought parts and the JSON of their other data; thoughts
// count the text of thought parts. Counts are running totals over the
// content added so far, so stream events carry growing usage as the API's do.
//
// cached is how many of the prompt's tokens came from a cache, explicit or
// implicit: usage reports them as cachedContentTokenCount, with
// cacheTokensDetails, and still counts them in promptTokenCount, as the
// API does (caching.md §7).
type usageCounter struct {
	promptBytes, candidateBytes, thoughtBytes int
	cached                                    int32
}

func (u *usageCounter) prompt(req *wireRequest) {
	if req == nil {
		return
	}
	for _, v := range []any{req.Contents, req.SystemInstruction, req.Tools} {
		b, _ := json.Marshal(v) // decoded request values always marshal
		if string(b) != "null" {
			u.promptBytes += len(b)
		}
	}
}

func (u *usageCounter) add(c *genai.Content) {
	if c == nil {
		return
	}
	for _, p := range c.Parts {
		switch {
		case p.Thought:
			u.thoughtBytes += len(p.Text)
		case isPlainText(p):
			u.candidateBytes += len(p.Text)
		default:
			q := *p
			q.ThoughtSignature = nil
			b, _ := json.Marshal(&q)
			u.candidateBytes += len(b)
		}
	}
}

func tokens(n int) int32 {
	return int32((n + 3) / 4)
}

func (u *usageCounter) metadata() *genai.GenerateContentResponseUsageMetadata {
	prompt, cand, thoughts := tokens(u.promptBytes), tokens(u.candidateBytes), tokens(u.thoughtBytes)
	m := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:     prompt,
		CandidatesTokenCount: cand,
		ThoughtsTokenCount:   thoughts,
		TotalTokenCount:      prompt + cand + thoughts,
		PromptTokensDetails:  []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: prompt}},
	}
	if cached := min(u.cached, prompt); cached > 0 {
		m.CachedContentTokenCount = cached
		m.CacheTokensDetails = []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: cached}}
	}
	return m
}
