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
//     response id are the first ones seen; the continuation token is the
//     last one seen, and none once a chunk ends the answer for good.
//
// Candidates are merged by their index, never by their position in a
// chunk: with GenerateContentConfig.CandidateCount above 1, each chunk may
// carry any of them. The response lists them in index order. The loop
// continues the first one (index 0), as it does for a non-streaming call.
type merger struct {
	resp   genai.GenerateContentResponse
	first  candidateMerger    // index 0
	others []*candidateMerger // other indexes, in the order they came
	cp     checkpoint         // the newest checkpoint, if any (see checkpoint)
}

// A candidateMerger merges the chunks of one candidate.
type candidateMerger struct {
	cand  genai.Candidate
	parts []*genai.Part
	text  strings.Builder // text of the open part, parts[len(parts)-1]
	open  bool            // the last part is a text part still taking text
}

// add folds one chunk in. It hands each part of the first candidate that
// carries new text, or that is a built-in tool's invocation or result, to
// onPart, when set, in order; it stops and returns false as soon as onPart
// does.
func (m *merger) add(chunk *genai.GenerateContentResponse, onPart func(p *genai.Part) bool) bool {
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
			text := cm.addPart(p)
			if cm != &m.first || onPart == nil {
				continue
			}
			if text && p.Text != "" || !text && p != nil && (serverCall(p) || serverResult(p)) {
				m.cp.passed = true
				if !onPart(p) {
					return false
				}
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
	if c.ContinuationToken != nil {
		cm.cand.ContinuationToken = c.ContinuationToken
	} else if !resumable(c.FinishReason) {
		cm.cand.ContinuationToken = nil
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

// A checkpoint is where a stream can resume: a chunk of the first
// candidate carried a continuation token (and no finish reason). It holds
// what the merger had then, so that the answer can be taken back to it.
type checkpoint struct {
	token  []byte
	parts  int             // parts of the first candidate
	open   bool            // its last part was a text part taking text
	sig    []byte          // its last part's signature
	cand   genai.Candidate // its other fields
	passed bool            // something reached the Stream consumer since
}

// checkpointToken returns the continuation token of a stream chunk that is
// a checkpoint: one whose first candidate carries a token and no finish
// reason (the chunk that ends an answer the API cut says CONTINUATION).
func checkpointToken(chunk *genai.GenerateContentResponse) []byte {
	if chunk == nil || len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		return nil
	}
	c := chunk.Candidates[0]
	if len(c.ContinuationToken) == 0 || (c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified) {
		return nil
	}
	return c.ContinuationToken
}

// checkpoint records the checkpoint of token: where the merger is now.
func (m *merger) checkpoint(token []byte) {
	cm := &m.first
	m.cp = checkpoint{token: token, parts: len(cm.parts), open: cm.open, cand: cm.cand}
	if last := cm.last(); last != nil {
		m.cp.sig = last.ThoughtSignature
	}
}

// cutAt returns what a stream that failed with err returns: a
// *checkpointCut when it can resume from the newest checkpoint (the loop
// continues answers, and nothing reached the consumer since), else err
// itself.
func (m *merger) cutAt(hops int, streamed bool, err error) (*genai.GenerateContentResponse, bool, error) {
	if hops == 0 || m.cp.token == nil || m.cp.passed {
		return nil, streamed, err
	}
	return nil, streamed, &checkpointCut{resp: m.rewind(m.cp), err: err}
}

// rewind takes the first candidate back to cp, and returns the response
// so far as the answer of a hop the API cut there: finish reason
// CONTINUATION and cp's token. Nothing of the candidate's reached the
// consumer since cp, so what came since is parts that are not text (a
// function call), a signature on the open text part or one that closed
// it, and other fields: all of it is dropped, the resumed request sending
// it again.
func (m *merger) rewind(cp checkpoint) *genai.GenerateContentResponse {
	cm := &m.first
	if cp.open && !cm.open {
		last := cm.parts[cp.parts-1]
		cm.text.Reset()
		cm.text.WriteString(last.Text)
		cm.open = true
	}
	cm.parts = cm.parts[:cp.parts]
	if last := cm.last(); last != nil && plainText(last) {
		last.ThoughtSignature = cp.sig
	}
	content := cm.cand.Content
	cm.cand = cp.cand
	cm.cand.Content = content
	cm.cand.FinishReason, cm.cand.FinishMessage, cm.cand.ContinuationToken = genai.FinishReasonContinuation, "", cp.token
	return m.response()
}
