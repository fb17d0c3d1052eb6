package geminiinteractions_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// continued returns a reply whose answer the API cut with a continuation
// token.
func continued(text, token string) *fake.Reply {
	r := fake.Text(text)
	r.Response.Candidates[0].FinishReason = genai.FinishReasonContinuation
	r.Response.Candidates[0].ContinuationToken = []byte(token)
	return r
}

// A long answer the API cut (requires_continuation) is a CONTINUATION
// answer with a token; sent back with that token, the same request
// continues the interaction that issued it, with no input, as the
// Interactions SDK's own continuation does; and the next turn continues
// the last hop, whose history holds the whole answer.
func TestContinuationHops(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	ctx := context.Background()
	contents := user("A long story?")
	srv.Enqueue(continued("Once upon a time, ", "tok-1"), fake.Text("the end."), fake.Text("Glad you liked it."))

	hop1, err := m.GenerateContent(ctx, model, contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := hop1.Candidates[0]
	if c.FinishReason != genai.FinishReasonContinuation || len(c.ContinuationToken) == 0 {
		t.Fatalf("hop 1 = %+v; want CONTINUATION and a token", c)
	}
	hop2, err := m.GenerateContent(ctx, model, contents, &genai.GenerateContentConfig{ContinuationToken: c.ContinuationToken})
	if err != nil {
		t.Fatal(err)
	}
	if hop2.Candidates[0].FinishReason != genai.FinishReasonStop {
		t.Fatalf("hop 2 = %+v", hop2.Candidates[0])
	}
	reqs := creates(srv)
	if r := reqs[1]; r.PreviousInteractionID != hop1.ResponseID || len(r.Input) != 0 || !contains(r.Body, `"continuation_token":"tok-1"`) {
		t.Errorf("hop 2 sent previous %q, %d contents, body %s; want hop 1's id, no input and the token", r.PreviousInteractionID, len(r.Input), r.Body)
	}
	// The loop joins the hops' answers into one content.
	answer := &genai.Content{Role: genai.RoleModel, Parts: slices.Concat(hop1.Candidates[0].Content.Parts, hop2.Candidates[0].Content.Parts)}
	next := append(slices.Clone(contents), answer, genai.NewContentFromText("Nice.", genai.RoleUser))
	if _, err := m.GenerateContent(ctx, model, next, nil); err != nil {
		t.Fatal(err)
	}
	if r := creates(srv)[2]; r.PreviousInteractionID != hop2.ResponseID || len(r.Input) != 1 {
		t.Errorf("the next turn sent previous %q and %d contents; want hop 2's id and the new message", r.PreviousInteractionID, len(r.Input))
	}
	// The server's conversation holds the whole answer once.
	got := srv.LastRequest().Contents
	if len(got) != 3 || got[1].Parts[len(got[1].Parts)-1].Text != "the end." {
		t.Errorf("the server's conversation = %d contents", len(got))
	}
}

// A token handed to another process (a durable run resumed on another
// worker) still names the interaction that issued it.
func TestContinuationInAnotherProcess(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	contents := user("A long story?")
	srv.Enqueue(continued("Once upon a time, ", "tok-1"), fake.Text("the end."))
	hop1, err := geminiinteractions.New(srv.Client(), geminiinteractions.Config{}).GenerateContent(ctx, model, contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	token := hop1.Candidates[0].ContinuationToken
	if _, err := other.GenerateContent(ctx, model, roundTrip(t, contents), &genai.GenerateContentConfig{ContinuationToken: token}); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.PreviousInteractionID != hop1.ResponseID || len(r.Input) != 0 {
		t.Errorf("hop 2 sent previous %q and %d contents", r.PreviousInteractionID, len(r.Input))
	}
}

// Without store a hop sends the original input again, with the token.
func TestContinuationStateless(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{Stateless: true})
	ctx := context.Background()
	contents := user("A long story?")
	srv.Enqueue(continued("Once upon a time, ", "tok-1"), fake.Text("the end."))
	hop1, err := m.GenerateContent(ctx, model, contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.GenerateContent(ctx, model, contents, &genai.GenerateContentConfig{ContinuationToken: hop1.Candidates[0].ContinuationToken}); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.PreviousInteractionID != "" || len(r.Input) != 1 || !contains(r.Body, `"continuation_token":"tok-1"`) {
		t.Errorf("hop 2 sent previous %q, %d contents, body %s", r.PreviousInteractionID, len(r.Input), r.Body)
	}
}

// A streamed answer the API cut ends with CONTINUATION and the token.
func TestContinuationStreamed(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	srv.Enqueue(continued("Once upon a time, ", "tok-1").WithTextChunk(4))
	var last *genai.GenerateContentResponse
	for chunk, err := range m.GenerateContentStream(context.Background(), model, user("A long story?"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		last = chunk
	}
	if c := last.Candidates[0]; c.FinishReason != genai.FinishReasonContinuation || len(c.ContinuationToken) == 0 {
		t.Errorf("the last chunk = %+v", c)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
