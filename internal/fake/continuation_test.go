package fake_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// noContinuation is a config that turns genai's automatic continuation
// off, so that a test sees each hop.
func noContinuation() *genai.GenerateContentConfig {
	off := false
	return &genai.GenerateContentConfig{AutomaticContinuation: &off}
}

// A long answer in hops, unary: each cut hop finishes with CONTINUATION
// and a token; the request that sends it back continues; each hop's prompt
// count reads the answer so far again.
func TestHopsUnary(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Hops(fake.Text("one "), fake.Text("two "), fake.Text("three"))...)
	models := srv.Client().Models
	contents := []*genai.Content{user("count")}
	cfg := noContinuation()
	var prompts []int32
	var text strings.Builder
	for hop := 0; ; hop++ {
		resp, err := models.GenerateContent(context.Background(), model, contents, cfg)
		if err != nil {
			t.Fatalf("hop %d: %v", hop, err)
		}
		c := resp.Candidates[0]
		text.WriteString(resp.Text())
		prompts = append(prompts, resp.UsageMetadata.PromptTokenCount)
		if hop < 2 && (c.FinishReason != genai.FinishReasonContinuation || len(c.ContinuationToken) == 0) {
			t.Fatalf("hop %d: finish %s, token %q; want CONTINUATION and a token", hop, c.FinishReason, c.ContinuationToken)
		}
		if hop == 2 {
			if c.FinishReason != genai.FinishReasonStop || c.ContinuationToken != nil {
				t.Errorf("last hop: finish %s, token %q; want STOP and none", c.FinishReason, c.ContinuationToken)
			}
			break
		}
		cfg = noContinuation()
		cfg.ContinuationToken = c.ContinuationToken
	}
	if text.String() != "one two three" || !(prompts[0] < prompts[1] && prompts[1] < prompts[2]) {
		t.Errorf("text %q, prompts %v; want the answer, and growing prompts", text.String(), prompts)
	}
	if reqs := srv.Requests(); !bytes.Equal(reqs[2].ContinuationToken, cfg.ContinuationToken) {
		t.Errorf("Request.ContinuationToken = %q, want %q", reqs[2].ContinuationToken, cfg.ContinuationToken)
	}
}

// genai's own automatic continuation reads the fake's hops: it merges them.
func TestHopsGenaiContinues(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Hops(fake.Text("one "), fake.Text("two"))...)
	resp, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("count")}, nil)
	if err != nil || resp.Text() != "one two" || len(srv.Requests()) != 2 {
		t.Fatalf("GenerateContent = %q, %v after %d requests; want the hops merged", resp.Text(), err, len(srv.Requests()))
	}
	if first := resp.InitialPromptTokenCount(); first >= resp.UsageMetadata.PromptTokenCount {
		t.Errorf("initial prompt %d, summed %d", first, resp.UsageMetadata.PromptTokenCount)
	}
}

// A token the server did not send, or one sent back with another request,
// is refused.
func TestContinuationTokenChecked(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("one ").WithContinuation())
	models := srv.Client().Models
	resp, err := models.GenerateContent(context.Background(), model, []*genai.Content{user("count")}, noContinuation())
	if err != nil {
		t.Fatal(err)
	}
	token := resp.Candidates[0].ContinuationToken
	for _, tc := range []struct {
		name     string
		contents []*genai.Content
		token    []byte
		want     string
	}{
		{"unknown token", []*genai.Content{user("count")}, []byte("forged"), "was not sent by this server"},
		{"other contents", []*genai.Content{user("count to four")}, token, "the request that received it, plus the token"},
	} {
		cfg := noContinuation()
		cfg.ContinuationToken = tc.token
		srv.Enqueue(fake.Text("two"))
		_, err := models.GenerateContent(context.Background(), model, tc.contents, cfg)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, tc.want) {
			t.Errorf("%s: %v, want 400 saying %q", tc.name, err, tc.want)
		}
		rej := srv.Rejections()
		if rej[len(rej)-1].Rule != "continuation-token" {
			t.Errorf("%s: rule %q", tc.name, rej[len(rej)-1].Rule)
		}
	}
}

// A stream's checkpoints carry tokens; a stream cut after one resumes from
// it with the rest of the answer, and the hop's last event has CONTINUATION
// and the hop's token.
func TestStreamCheckpoints(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("abcdefghij").WithTextChunk(2).WithCheckpoints(2).WithContinuation().WithFault(fake.FaultCutStream, 3))
	models := srv.Client().Models
	var got strings.Builder
	var checkpoint []byte
	var cut error
	for chunk, err := range models.GenerateContentStream(context.Background(), model, []*genai.Content{user("letters")}, noContinuation()) {
		if err != nil {
			cut = err
			break
		}
		got.WriteString(chunk.Text())
		if c := chunk.Candidates[0]; len(c.ContinuationToken) > 0 {
			if c.FinishReason != "" {
				t.Errorf("a checkpoint with finish reason %s", c.FinishReason)
			}
			checkpoint = c.ContinuationToken
		}
	}
	if cut == nil || got.String() != "abcdef" || checkpoint == nil {
		t.Fatalf("read %q, checkpoint %q, error %v; want three events, the second a checkpoint, then a cut", got.String(), checkpoint, cut)
	}
	cfg := noContinuation()
	cfg.ContinuationToken = checkpoint
	var rest strings.Builder
	var last *genai.Candidate
	for chunk, err := range models.GenerateContentStream(context.Background(), model, []*genai.Content{user("letters")}, cfg) {
		if err != nil {
			t.Fatalf("resumed stream: %v", err)
		}
		rest.WriteString(chunk.Text())
		last = chunk.Candidates[0]
	}
	if rest.String() != "efghij" {
		t.Errorf("resumed from the checkpoint after %q with %q; want the rest, %q", "abcd", rest.String(), "efghij")
	}
	if last.FinishReason != genai.FinishReasonContinuation || len(last.ContinuationToken) == 0 || bytes.Equal(last.ContinuationToken, checkpoint) {
		t.Errorf("last event: finish %s, token %q; want CONTINUATION and the hop's own token", last.FinishReason, last.ContinuationToken)
	}
	if srv.Pending() != 0 || len(srv.Requests()) != 2 {
		t.Errorf("%d replies pending after %d requests", srv.Pending(), len(srv.Requests()))
	}
}

// A built-in tool's parts get ids, the response its call's, and for
// gemini-3 signatures; the grounding rides on the candidate.
func TestServerToolParts(t *testing.T) {
	srv := newServer(t)
	parts := append(fake.GoogleSearch("weather in Tokyo"), &genai.Part{Text: "Sunny."})
	srv.Enqueue(fake.Parts(parts...).WithGrounding(fake.WebGrounding("Sunny.", "https://weather.example/tokyo")))
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
		ToolConfig: &genai.ToolConfig{IncludeServerSideToolInvocations: genai.Ptr(true)}}
	resp, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-3-flash-preview", []*genai.Content{user("weather?")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps := resp.Candidates[0].Content.Parts
	call, result := ps[0].ToolCall, ps[1].ToolResponse
	if call == nil || result == nil || call.ID == "" || result.ID != call.ID || call.ToolType != genai.ToolTypeGoogleSearchWeb ||
		len(ps[0].ThoughtSignature) == 0 || len(ps[1].ThoughtSignature) == 0 {
		t.Errorf("parts %+v %+v; want a signed toolCall and its toolResponse, one id", ps[0], ps[1])
	}
	if g := resp.Candidates[0].GroundingMetadata; g == nil || g.GroundingChunks[0].Web.Title != "weather.example" {
		t.Errorf("grounding %+v", g)
	}
	// Sent back as received, with the next question.
	next := []*genai.Content{user("weather?"), resp.Candidates[0].Content, user("and tomorrow?")}
	srv.Enqueue(fake.Text("Rain."))
	if _, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-3-flash-preview", next, cfg); err != nil {
		t.Errorf("the history with the built-in tool's parts: %v", err)
	}
}

// The mix of built-in tools and functions, refused as each backend does.
func TestBuiltinToolsBesideFunctions(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	tools := []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}, {FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "f"}}}}
	for _, tc := range []struct {
		name   string
		client *genai.Client
		model  string
		flag   bool
		want   string
	}{
		{"Gemini API without the flag", srv.Client(), "gemini-3-flash-preview", false, "Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling."},
		{"Gemini API with it", srv.Client(), "gemini-3-flash-preview", true, ""},
		{"Vertex AI gemini-3", srv.VertexClient(), "gemini-3-flash-preview", false, ""},
		{"Vertex AI gemini-2.5", srv.VertexClient(), "gemini-2.5-flash", false, "Multiple tools are supported only when they are all search tools."},
	} {
		cfg := &genai.GenerateContentConfig{Tools: tools}
		if tc.flag {
			cfg.ToolConfig = &genai.ToolConfig{IncludeServerSideToolInvocations: genai.Ptr(true)}
		}
		srv.Enqueue(fake.Text("ok"))
		_, err := tc.client.Models.GenerateContent(context.Background(), tc.model, []*genai.Content{user("hi")}, cfg)
		var apiErr genai.APIError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.name, err)
		case tc.want != "" && (!errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Message != tc.want):
			t.Errorf("%s: %v, want 400 %q", tc.name, err, tc.want)
		}
		for srv.Pending() > 0 {
			_, _ = srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("drain")}, nil)
		}
	}
	// genai refuses the flag for Vertex AI before sending.
	cfg := &genai.GenerateContentConfig{Tools: tools, ToolConfig: &genai.ToolConfig{IncludeServerSideToolInvocations: genai.Ptr(true)}}
	if _, err := srv.VertexClient().Models.GenerateContent(context.Background(), "gemini-3-flash-preview", []*genai.Content{user("hi")}, cfg); err == nil ||
		!strings.Contains(err.Error(), "only supported in Gemini Developer API mode") {
		t.Errorf("Vertex AI with the flag: %v, want genai's refusal", err)
	}
}

// UnexpectedCall and Overloaded answer as the API does.
func TestUnexpectedCallAndOverloaded(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.UnexpectedCall("list_files", nil), fake.Overloaded())
	vertex := srv.VertexClient().Models
	resp, err := vertex.GenerateContent(context.Background(), "gemini-3-flash-preview", []*genai.Content{user("files?")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Candidates[0]
	if c.FinishReason != genai.FinishReasonUnexpectedToolCall || c.Content.Parts[0].FunctionCall.Name != "list_files" ||
		c.FinishMessage != "Unexpected tool call: Model tried to call an undeclared function: list_files" {
		t.Errorf("candidate %+v", c)
	}
	_, err = vertex.GenerateContent(context.Background(), "gemini-3-flash-preview", []*genai.Content{user("files?")}, nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 503 || apiErr.Message != fake.OverloadedMessage {
		t.Errorf("%v, want the 503", err)
	}
}
