package fake_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// texts returns the text of the first part of each chunk.
func texts(chunks []*genai.GenerateContentResponse) []string {
	var out []string
	for _, c := range chunks {
		out = append(out, c.Candidates[0].Content.Parts[0].Text)
	}
	return out
}

func TestStreamSplitsText(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("hello world").WithTextChunk(4))
	chunks, err := stream(context.Background(), srv.Client(), model, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(chunks), []string{"hell", "o wo", "rld"}; !cmp.Equal(got, want) {
		t.Fatalf("chunk texts = %q; want %q", got, want)
	}
	var prev *genai.GenerateContentResponseUsageMetadata
	for i, c := range chunks {
		last := i == len(chunks)-1
		if (c.Candidates[0].FinishReason == genai.FinishReasonStop) != last {
			t.Errorf("chunk %d finishReason %q; want STOP on the last chunk only", i, c.Candidates[0].FinishReason)
		}
		if c.ResponseID != chunks[0].ResponseID || c.ResponseID == "" || c.ModelVersion != model {
			t.Errorf("chunk %d responseId %q, modelVersion %q; want the same id on every chunk and %s", i, c.ResponseID, c.ModelVersion, model)
		}
		u := c.UsageMetadata
		if u == nil || prev != nil && (u.CandidatesTokenCount < prev.CandidatesTokenCount || u.TotalTokenCount < prev.TotalTokenCount || u.PromptTokenCount != prev.PromptTokenCount) {
			t.Errorf("chunk %d usage %+v after %+v; want running totals that only grow", i, u, prev)
		}
		prev = u
	}
	if prev.CandidatesTokenCount != 3 { // 11 bytes
		t.Errorf("last usage %+v; want candidatesTokenCount 3", prev)
	}
}

func TestStreamSplitsOnRuneBoundaries(t *testing.T) {
	srv := newServer(t)
	const text = "héllo wörld ✓✓"
	srv.Enqueue(fake.Text(text).WithTextChunk(2))
	chunks, err := stream(context.Background(), srv.Client(), model, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	joined := ""
	for i, s := range texts(chunks) {
		if !utf8.ValidString(s) || len(s) > 2 && utf8.RuneCountInString(s) > 1 {
			t.Errorf("chunk %d = %q; want valid UTF-8 of at most 2 bytes or one rune", i, s)
		}
		joined += s
	}
	if joined != text {
		t.Errorf("joined chunks = %q; want %q", joined, text)
	}
}

func TestStreamPartsAndCalls(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Parts(
		&genai.Part{Text: "thinking", Thought: true},
		&genai.Part{Text: "I'll check."},
		&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Paris"})},
		&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "London"})},
	))
	chunks, err := stream(context.Background(), srv.Client(), model, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 4 {
		t.Fatalf("%d chunks; want one per part", len(chunks))
	}
	if !chunks[0].Candidates[0].Content.Parts[0].Thought || chunks[3].FunctionCalls()[0].Args["city"] != "London" {
		t.Errorf("chunks = %v; want the parts in order", chunks)
	}
	u := chunks[3].UsageMetadata
	if u.ThoughtsTokenCount != 2 || u.CandidatesTokenCount <= 3 {
		t.Errorf("usage %+v; want 2 thought tokens and the calls counted", u)
	}
	for i, c := range chunks {
		for _, fc := range c.FunctionCalls() {
			if fc.ID != "" || len(c.Candidates[0].Content.Parts[0].ThoughtSignature) != 0 {
				t.Errorf("chunk %d: call %+v got an id or a signature; gemini-2.5 gets them only when scripted", i, fc)
			}
		}
	}
}

func TestTrailingSignatureChunk(t *testing.T) {
	srv := newServer(t)
	sig := []byte("scripted signature \x00\xff")
	reply := fake.Parts(&genai.Part{Text: "Answer.", ThoughtSignature: sig}).WithTrailingSignature()
	srv.Enqueue(reply)
	chunks, err := stream(context.Background(), srv.Client(), model, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 2 {
		t.Fatalf("%d chunks; want the text and a trailing signature chunk", len(chunks))
	}
	text, trailing := chunks[0].Candidates[0], chunks[1].Candidates[0]
	if p := text.Content.Parts[0]; p.Text != "Answer." || p.ThoughtSignature != nil || text.FinishReason != "" {
		t.Errorf("first chunk part %+v, finishReason %q; want the text without signature or finishReason", p, text.FinishReason)
	}
	want := &genai.Part{ThoughtSignature: sig}
	if len(trailing.Content.Parts) != 1 || !cmp.Equal(trailing.Content.Parts[0], want) || trailing.FinishReason != genai.FinishReasonStop {
		t.Errorf("trailing chunk %+v; want only %+v and finishReason STOP", trailing, want)
	}

	// On the wire, the part is an empty text part, as the API sends it.
	srv.Enqueue(reply)
	code, body := post(t, srv, http.MethodPost, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", fake.APIKey, `{"contents":[{"parts":[{"text":"hi"}]}]}`)
	wantPart := `{"text":"","thoughtSignature":"` + base64.StdEncoding.EncodeToString(sig) + `"}`
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"parts":[`+wantPart+`]`)) {
		t.Errorf("stream body %s; want the part %s", body, wantPart)
	}
}

func TestStreamFraming(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("a b c").WithTextChunk(2))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		strings.NewReader(`{"contents":[{"parts":[{"text":"hi"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Goog-Api-Key", "any key")
	resp, err := srv.ClientConfig().HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q; want text/event-stream", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(string(body), "\r\n\r\n")
	if len(events) != 4 || events[3] != "" {
		t.Fatalf("body %q; want 3 events, each ended by \\r\\n\\r\\n", body)
	}
	for i, ev := range events[:3] {
		if !strings.HasPrefix(ev, `data: {"candidates":`) || !strings.HasSuffix(ev, "}") || strings.ContainsAny(ev, "\r\n") {
			t.Errorf("event %d = %q; want one line `data: {json}`", i, ev)
		}
	}
}

func TestGemini3IDsAndSignatures(t *testing.T) {
	const gemini3 = "gemini-3-flash-preview"
	srv := newServer(t)
	c := srv.Client()
	calls := fake.Calls(fake.Call("f", nil), fake.Call("g", nil), &genai.FunctionCall{ID: "mine", Name: "h"})
	srv.Enqueue(calls, calls, fake.Text("done"), fake.Text("done").WithTextChunk(2))
	ctx := context.Background()
	resp, err := c.Models.GenerateContent(ctx, gemini3, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := stream(ctx, c, gemini3, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []*genai.Part
	for _, ch := range chunks {
		streamed = append(streamed, ch.Candidates[0].Content.Parts...)
	}
	// The stream ends as Gemini 3's do: an event whose only part is an
	// empty text part, with the finishReason.
	last := chunks[len(chunks)-1].Candidates[0]
	if n := len(streamed); n != 4 || streamed[3].Text != "" || streamed[3].FunctionCall != nil || last.FinishReason != genai.FinishReasonStop {
		t.Errorf("streamed %d parts, the last %+v finishing %q; want 3 calls and an empty text part finishing STOP", n, streamed[n-1], last.FinishReason)
	}
	streamed = streamed[:3]
	ids := map[string]bool{}
	for _, parts := range [][]*genai.Part{resp.Candidates[0].Content.Parts, streamed} {
		for i, p := range parts {
			if p.FunctionCall.ID == "" || ids[p.FunctionCall.ID] && p.FunctionCall.ID != "mine" {
				t.Errorf("call %d id %q; want a unique id", i, p.FunctionCall.ID)
			}
			ids[p.FunctionCall.ID] = true
			if hasSig := len(p.ThoughtSignature) > 0; hasSig != (i == 0) {
				t.Errorf("call %d has signature %t; want one on the first call only", i, hasSig)
			}
		}
		if parts[2].FunctionCall.ID != "mine" {
			t.Errorf("scripted id became %q", parts[2].FunctionCall.ID)
		}
	}
	text, err := c.Models.GenerateContent(ctx, gemini3, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(text.Candidates[0].Content.Parts[0].ThoughtSignature) == 0 {
		t.Error("text-only reply has no signature on its last part")
	}
	chunks, err = stream(ctx, c, gemini3, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range chunks {
		if hasSig := len(ch.Candidates[0].Content.Parts[0].ThoughtSignature) > 0; hasSig != (i == len(chunks)-1) {
			t.Errorf("streamed text chunk %d has signature %t; want it on the last piece only", i, hasSig)
		}
	}
}

func TestExplicitChunks(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	sig := []byte("sig")
	part := func(p *genai.Part) *genai.GenerateContentResponse {
		return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{p}}}}}
	}
	reply := &fake.Reply{Chunks: []*genai.GenerateContentResponse{
		part(&genai.Part{Text: "Hel"}), part(&genai.Part{Text: "lo"}), part(&genai.Part{ThoughtSignature: sig}),
	}}
	srv.Enqueue(reply, reply)
	chunks, err := stream(context.Background(), c, model, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(chunks); !cmp.Equal(got, []string{"Hel", "lo", ""}) || chunks[2].Candidates[0].FinishReason != genai.FinishReasonStop {
		t.Errorf("chunks %q with last finishReason %q; want the 3 chunks as scripted and STOP", got, chunks[2].Candidates[0].FinishReason)
	}
	resp, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []*genai.Part{{Text: "Hello", ThoughtSignature: sig}}
	if diff := cmp.Diff(want, resp.Candidates[0].Content.Parts); diff != "" {
		t.Errorf("unary answer to chunks (-want +got):\n%s", diff)
	}
}

func TestRawReply(t *testing.T) {
	srv := newServer(t)
	raw := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{{FunctionCall: fake.Call("f", nil)}}}}}}
	srv.Enqueue(&fake.Reply{Response: raw, Raw: true})
	resp, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-3-pro-preview", []*genai.Content{user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.SDKHTTPResponse = nil
	if diff := cmp.Diff(raw, resp); diff != "" {
		t.Errorf("raw reply (-sent +received):\n%s", diff)
	}
}

func TestEventDelayEndsWithTheContext(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(&fake.Reply{Response: fake.Text("a b").Response, TextChunk: 2, EventDelay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	var err error
	for chunk, e := range srv.Client().Models.GenerateContentStream(ctx, model, []*genai.Content{user("hi")}, nil) {
		if e != nil {
			err = e
			break
		}
		got = append(got, chunk.Text())
		cancel() // the server now waits an hour before the next event
	}
	if !cmp.Equal(got, []string{"a "}) || !errors.Is(err, context.Canceled) {
		t.Errorf("stream yielded %q, %v; want one chunk then context.Canceled", got, err)
	}
}

// genai's Chat records a streamed answer as one model content per chunk;
// the history it sends back must be accepted.
func TestChatStreamingHistoryIsAccepted(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(
		fake.Parts(&genai.Part{Text: "Let me check."},
			&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Paris"})},
			&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "London"})}),
		fake.Text("Sunny and rainy.").WithTextChunk(5).WithTrailingSignature(),
		fake.Text("You're welcome."),
	)
	ctx := context.Background()
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "get_weather", Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}},
	}}}}}
	chat, err := srv.Client().Chats.Create(ctx, "gemini-3-flash-preview", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(parts ...*genai.Part) []*genai.FunctionCall {
		t.Helper()
		var calls []*genai.FunctionCall
		for chunk, err := range chat.SendStream(ctx, parts...) {
			if err != nil {
				t.Fatalf("SendStream: %v", err)
			}
			calls = append(calls, chunk.FunctionCalls()...)
		}
		return calls
	}
	calls := send(genai.NewPartFromText("Weather in Paris and London?"))
	if len(calls) != 2 {
		t.Fatalf("%d calls; want 2", len(calls))
	}
	var answers []*genai.Part
	for _, c := range calls {
		p := genai.NewPartFromFunctionResponse(c.Name, map[string]any{"result": "ok"})
		p.FunctionResponse.ID = c.ID
		answers = append(answers, p)
	}
	send(answers...)
	send(genai.NewPartFromText("Thanks!"))
	if rej := srv.Rejections(); len(rej) != 0 {
		t.Errorf("Rejections() = %+v; want none", rej)
	}
	if n := len(srv.LastRequest().Contents); n < 8 {
		t.Errorf("last request has %d contents; want the history of one model content per chunk", n)
	}
}
