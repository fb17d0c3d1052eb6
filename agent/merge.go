package agent

import (
	"cmp"
	"reflect"
	"slices"
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
// Candidates are merged by their index, never by their position in a
// chunk: with GenerateContentConfig.CandidateCount above 1, each chunk may
// carry any of them. The response lists them in index order. The loop
// continues the first one (index 0), as it does for a non-streaming call.
type merger struct {
	resp   genai.GenerateContentResponse
	first  candidateMerger    // index 0
	others []*candidateMerger // other indexes, in the order they came
}

// A candidateMerger merges the chunks of one candidate.
type candidateMerger struct {
	cand  genai.Candidate
	parts []*genai.Part
	text  strings.Builder // text of the open part, parts[len(parts)-1]
	open  bool            // the last part is a text part still taking text
}

// add folds one chunk in. It hands each text part of the first candidate
// that carries new text to onText, when set, in order; it stops and
// returns false as soon as onText does.
func (m *merger) add(chunk *genai.GenerateContentResponse, onText func(p *genai.Part) bool) bool {
	if chunk == nil {
		return true
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
	for _, c := range chunk.Candidates {
		if c == nil {
			continue
		}
		cm := m.candidate(c.Index)
		for _, p := range cm.addMeta(c) {
			if cm.addPart(p) && p.Text != "" && cm == &m.first && onText != nil && !onText(p) {
				return false
			}
		}
	}
	return true
}

// candidate returns the merger of the candidate with this index.
func (m *merger) candidate(index int32) *candidateMerger {
	if index == 0 {
		return &m.first
	}
	for _, cm := range m.others {
		if cm.cand.Index == index {
			return cm
		}
	}
	cm := &candidateMerger{}
	cm.cand.Index = index
	m.others = append(m.others, cm)
	return cm
}

// addMeta folds in everything of a chunk's candidate but its parts, and
// returns the parts, for addPart.
func (cm *candidateMerger) addMeta(c *genai.Candidate) []*genai.Part {
	if c.FinishReason != "" {
		cm.cand.FinishReason = c.FinishReason
		cm.cand.FinishMessage = c.FinishMessage
	}
	if c.SafetyRatings != nil {
		cm.cand.SafetyRatings = c.SafetyRatings
	}
	if c.CitationMetadata != nil {
		cm.cand.CitationMetadata = c.CitationMetadata
	}
	if c.GroundingMetadata != nil {
		cm.cand.GroundingMetadata = c.GroundingMetadata
	}
	if c.URLContextMetadata != nil {
		cm.cand.URLContextMetadata = c.URLContextMetadata
	}
	if c.Content == nil {
		return nil
	}
	if cm.cand.Content == nil {
		cm.cand.Content = &genai.Content{Role: c.Content.Role}
	}
	return c.Content.Parts
}

// addPart folds one part in and reports whether it is a text part: text,
// the thought flag and a signature at most.
func (cm *candidateMerger) addPart(p *genai.Part) (isText bool) {
	if p == nil {
		return false
	}
	if !plainText(p) {
		cm.close()
		cm.parts = append(cm.parts, p)
		return false
	}
	if p.Text == "" && p.ThoughtSignature == nil {
		return true // nothing to keep; sent back, it would be an empty part
	}
	last := cm.last()
	switch {
	case p.Text == "" && p.ThoughtSignature != nil && cm.open:
		// The turn's trailing signature: it belongs to the open part.
		last.ThoughtSignature = p.ThoughtSignature
		cm.close()
	case cm.open && last.Thought == p.Thought:
		cm.text.WriteString(p.Text)
		if p.ThoughtSignature != nil {
			last.ThoughtSignature = p.ThoughtSignature
			cm.close()
		}
	default:
		cm.close()
		np := &genai.Part{Text: p.Text, Thought: p.Thought, ThoughtSignature: p.ThoughtSignature}
		cm.parts = append(cm.parts, np)
		if np.ThoughtSignature == nil {
			cm.open = true
			cm.text.WriteString(p.Text)
		}
	}
	return true
}

func (cm *candidateMerger) last() *genai.Part {
	if len(cm.parts) == 0 {
		return nil
	}
	return cm.parts[len(cm.parts)-1]
}

// close ends the open text part, if any, writing its text.
func (cm *candidateMerger) close() {
	if cm.open {
		cm.last().Text = cm.text.String()
		cm.text.Reset()
		cm.open = false
	}
}

// candidate returns the merged candidate, or nil when no chunk carried
// anything of it.
func (cm *candidateMerger) candidate() *genai.Candidate {
	cm.close()
	if cm.cand.Content == nil && cm.cand.FinishReason == "" {
		return nil
	}
	cand := cm.cand
	if cand.Content != nil {
		cand.Content.Parts = cm.parts
	}
	return &cand
}

// response returns the merged response: its candidates in index order.
func (m *merger) response() *genai.GenerateContentResponse {
	resp := m.resp
	if c := m.first.candidate(); c != nil {
		resp.Candidates = append(resp.Candidates, c)
	}
	if len(m.others) > 0 {
		slices.SortFunc(m.others, func(a, b *candidateMerger) int { return cmp.Compare(a.cand.Index, b.cand.Index) })
		for _, cm := range m.others {
			if c := cm.candidate(); c != nil {
				resp.Candidates = append(resp.Candidates, c)
			}
		}
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
