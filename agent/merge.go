package agent

import (
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// A merger folds the chunks of a streamed response into the one response a
// non-streaming call would have returned:
//
//   - the text of consecutive text parts of the same kind (thought or not)
//     is joined into one part, until a part carrying a thoughtSignature
//     closes it;
//   - a part with empty text whose only payload is a thoughtSignature (the
//     API streams a turn's final signature that way) puts the signature on
//     the text part it follows; with no open text part before it, it is
//     kept as it came;
//   - a text part with neither text nor signature is dropped (sent back, it
//     would be an empty part, which the API refuses);
//   - every other part (function calls with their ids and signatures,
//     inline data…) is kept whole, in order;
//   - the finish reason and the usage are the last ones seen (each chunk
//     carries the running usage totals); prompt feedback, model version and
//     response id are the first ones seen.
//
// Only the first candidate is merged: the loop never asks for more.
type merger struct {
	resp  genai.GenerateContentResponse
	cand  genai.Candidate
	parts []*genai.Part
	text  strings.Builder // text of the open part, parts[len(parts)-1]
	open  bool            // the last part is a text part still taking text
}

// add folds one chunk in.
func (m *merger) add(chunk *genai.GenerateContentResponse) {
	for _, p := range m.addMeta(chunk) {
		m.addPart(p)
	}
}

// addMeta folds in everything of a chunk but its parts, and returns the
// parts, for addPart.
func (m *merger) addMeta(chunk *genai.GenerateContentResponse) []*genai.Part {
	if chunk == nil {
		return nil
	}
	if m.resp.PromptFeedback == nil {
		m.resp.PromptFeedback = chunk.PromptFeedback
	}
	if m.resp.ModelVersion == "" {
		m.resp.ModelVersion = chunk.ModelVersion
	}
	if m.resp.ResponseID == "" {
		m.resp.ResponseID = chunk.ResponseID
	}
	if chunk.UsageMetadata != nil {
		m.resp.UsageMetadata = chunk.UsageMetadata
	}
	if chunk.SDKHTTPResponse != nil {
		m.resp.SDKHTTPResponse = chunk.SDKHTTPResponse
	}
	if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		return nil
	}
	c := chunk.Candidates[0]
	if c.FinishReason != "" {
		m.cand.FinishReason = c.FinishReason
		m.cand.FinishMessage = c.FinishMessage
	}
	if c.SafetyRatings != nil {
		m.cand.SafetyRatings = c.SafetyRatings
	}
	if c.CitationMetadata != nil {
		m.cand.CitationMetadata = c.CitationMetadata
	}
	if c.GroundingMetadata != nil {
		m.cand.GroundingMetadata = c.GroundingMetadata
	}
	if c.URLContextMetadata != nil {
		m.cand.URLContextMetadata = c.URLContextMetadata
	}
	m.cand.Index = c.Index
	if c.Content == nil {
		return nil
	}
	if m.cand.Content == nil {
		m.cand.Content = &genai.Content{Role: c.Content.Role}
	}
	return c.Content.Parts
}

// addPart folds one part in and reports whether it is a text part: text,
// the thought flag and a signature at most.
func (m *merger) addPart(p *genai.Part) (isText bool) {
	if p == nil {
		return false
	}
	if !plainText(p) {
		m.close()
		m.parts = append(m.parts, p)
		return false
	}
	if p.Text == "" && p.ThoughtSignature == nil {
		return true // nothing to keep; sent back, it would be an empty part
	}
	last := m.last()
	switch {
	case p.Text == "" && p.ThoughtSignature != nil && m.open:
		// The turn's trailing signature: it belongs to the open part.
		last.ThoughtSignature = p.ThoughtSignature
		m.close()
	case m.open && last.Thought == p.Thought:
		m.text.WriteString(p.Text)
		if p.ThoughtSignature != nil {
			last.ThoughtSignature = p.ThoughtSignature
			m.close()
		}
	default:
		m.close()
		np := &genai.Part{Text: p.Text, Thought: p.Thought, ThoughtSignature: p.ThoughtSignature}
		m.parts = append(m.parts, np)
		if np.ThoughtSignature == nil {
			m.open = true
			m.text.WriteString(p.Text)
		}
	}
	return true
}

func (m *merger) last() *genai.Part {
	if len(m.parts) == 0 {
		return nil
	}
	return m.parts[len(m.parts)-1]
}

// close ends the open text part, if any, writing its text.
func (m *merger) close() {
	if m.open {
		m.last().Text = m.text.String()
		m.text.Reset()
		m.open = false
	}
}

// response returns the merged response: one candidate, unless no chunk
// carried one.
func (m *merger) response() *genai.GenerateContentResponse {
	m.close()
	resp := m.resp
	if m.cand.Content != nil || m.cand.FinishReason != "" {
		cand := m.cand
		if cand.Content != nil {
			cand.Content.Parts = m.parts
		}
		resp.Candidates = []*genai.Candidate{&cand}
	}
	return &resp
}

// plainText reports whether p is a text part and nothing else: text, the
// thought flag and a signature at most.
func plainText(p *genai.Part) bool {
	if p.PartMetadata != nil {
		return false
	}
	q := *p
	q.Text, q.Thought, q.ThoughtSignature = "", false, nil
	return reflect.ValueOf(q).IsZero()
}
