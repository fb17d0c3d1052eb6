package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func chunk(parts ...*genai.Part) *genai.GenerateContentResponse {
	return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: "model", Parts: parts}}}}
}

func TestMerger(t *testing.T) {
	sig := []byte("sig")
	call := &genai.Part{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "f", Args: map[string]any{"a": 1.0}}, ThoughtSignature: sig}
	for _, tc := range []struct {
		name   string
		chunks []*genai.GenerateContentResponse
		want   []*genai.Part
	}{
		{"text joined", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "Hel"}), chunk(&genai.Part{Text: "lo"}), chunk(&genai.Part{Text: "!"})},
			[]*genai.Part{{Text: "Hello!"}}},
		{"trailing signature folds onto the text", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "Hi"}), chunk(&genai.Part{Text: " there"}), chunk(&genai.Part{ThoughtSignature: sig})},
			[]*genai.Part{{Text: "Hi there", ThoughtSignature: sig}}},
		{"signature on the last text chunk", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "a"}), chunk(&genai.Part{Text: "b", ThoughtSignature: sig})},
			[]*genai.Part{{Text: "ab", ThoughtSignature: sig}}},
		{"a signature closes the part", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "a", ThoughtSignature: sig}), chunk(&genai.Part{Text: "b"})},
			[]*genai.Part{{Text: "a", ThoughtSignature: sig}, {Text: "b"}}},
		{"thoughts apart from text", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "hmm", Thought: true}), chunk(&genai.Part{Text: " ok", Thought: true}), chunk(&genai.Part{Text: "Answer"})},
			[]*genai.Part{{Text: "hmm ok", Thought: true}, {Text: "Answer"}}},
		{"function calls kept whole", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "Let me check."}), chunk(call), chunk(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c2", Name: "f"}})},
			[]*genai.Part{{Text: "Let me check."}, call, {FunctionCall: &genai.FunctionCall{ID: "c2", Name: "f"}}}},
		{"signature-only part after a call is kept", []*genai.GenerateContentResponse{chunk(call), chunk(&genai.Part{ThoughtSignature: []byte("s2")})},
			[]*genai.Part{call, {ThoughtSignature: []byte("s2")}}},
		{"empty text dropped", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: ""}), chunk(&genai.Part{Text: "x"}), chunk()},
			[]*genai.Part{{Text: "x"}}},
		{"several parts in one chunk", []*genai.GenerateContentResponse{chunk(&genai.Part{Text: "a", Thought: true}, &genai.Part{Text: "b"}), chunk(&genai.Part{Text: "c"})},
			[]*genai.Part{{Text: "a", Thought: true}, {Text: "bc"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m merger
			for _, c := range tc.chunks {
				m.add(c, nil)
			}
			got := m.response()
			if len(got.Candidates) != 1 {
				t.Fatalf("response() has %d candidates", len(got.Candidates))
			}
			if diff := cmp.Diff(tc.want, got.Candidates[0].Content.Parts); diff != "" {
				t.Errorf("merged parts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergerMetadata(t *testing.T) {
	var m merger
	first := chunk(&genai.Part{Text: "a"})
	first.ResponseID, first.ModelVersion = "r1", "gemini-x"
	first.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, TotalTokenCount: 11}
	last := chunk(&genai.Part{Text: "b"})
	last.Candidates[0].FinishReason = genai.FinishReasonStop
	last.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 5, TotalTokenCount: 15}
	m.add(first, nil)
	m.add(nil, nil)
	m.add(&genai.GenerateContentResponse{}, nil)
	m.add(last, nil)
	got := m.response()
	if got.ResponseID != "r1" || got.ModelVersion != "gemini-x" || got.Candidates[0].FinishReason != genai.FinishReasonStop ||
		got.UsageMetadata.TotalTokenCount != 15 || got.Candidates[0].Content.Role != "model" {
		t.Errorf("merged metadata = %+v, candidate %+v", got, got.Candidates[0])
	}
}

func TestMergerNoCandidate(t *testing.T) {
	var m merger
	m.add(&genai.GenerateContentResponse{PromptFeedback: &genai.GenerateContentResponsePromptFeedback{BlockReason: genai.BlockedReasonSafety}}, nil)
	got := m.response()
	if len(got.Candidates) != 0 || got.PromptFeedback == nil {
		t.Errorf("response() = %+v, want no candidate and the prompt feedback", got)
	}
}
