package fake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func TestUsageGrowsWithTheRequest(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	thought := &genai.Part{Text: "Let me think about it at some length.", Thought: true}
	srv.Enqueue(fake.Text("a"), fake.Parts(thought, &genai.Part{Text: "b"}))
	ctx := context.Background()
	first, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("short")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("short"), first.Candidates[0].Content, user(strings.Repeat("long ", 100))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u1, u2 := first.UsageMetadata, second.UsageMetadata
	if u2.PromptTokenCount <= u1.PromptTokenCount+100 {
		t.Errorf("promptTokenCount %d then %d; want it to grow with the history", u1.PromptTokenCount, u2.PromptTokenCount)
	}
	if u2.ThoughtsTokenCount < 9 || u1.ThoughtsTokenCount != 0 {
		t.Errorf("thoughtsTokenCount %d then %d; want 0 then about a quarter of the thought's bytes", u1.ThoughtsTokenCount, u2.ThoughtsTokenCount)
	}
	if first.ResponseID == second.ResponseID {
		t.Errorf("responseId %q twice; want one per reply", first.ResponseID)
	}
}
