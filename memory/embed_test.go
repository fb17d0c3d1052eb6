package memory_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"google.golang.org/genai"
)

// GeminiEmbedder through the real genai client: batches of at most 100 on
// the Gemini API, one at a time for gemini-embedding-001 on Vertex AI,
// the task types, the dimensions, and vectors scaled to length 1.
func TestGeminiEmbedder(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := context.Background()
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = "memory number " + string(rune('a'+i%26))
	}
	e := &memory.GeminiEmbedder{Models: srv.Client().Models}
	vs, err := e.Embed(ctx, texts, memory.EmbedDocument)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 150 || len(vs[0]) != memory.DefaultEmbeddingDimensions {
		t.Fatalf("%d vectors of %d; want 150 of %d", len(vs), len(vs[0]), memory.DefaultEmbeddingDimensions)
	}
	reqs := srv.EmbedContentRequests()
	if len(reqs) != 2 || len(reqs[0].Contents) != 100 || len(reqs[1].Contents) != 50 || reqs[0].Method != geminitest.MethodBatchEmbedContents {
		t.Fatalf("%d requests; want batches of 100 and 50", len(reqs))
	}
	if !slices.Contains([]string{string(reqs[0].Body)}, "") && !containsAll(string(reqs[0].Body), `"taskType":"RETRIEVAL_DOCUMENT"`, `"outputDimensionality":768`) {
		t.Errorf("the request body %.300s lacks the task type or the dimensions", reqs[0].Body)
	}
	want := geminitest.Embedding(memory.DefaultEmbeddingModel, texts[3], 768)
	var n float64
	for _, x := range vs[3] {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) > 1e-5 || !sameDirection(vs[3], want) {
		t.Errorf("vector of length² %v, not the server's scaled to 1", n)
	}
	q, err := e.Embed(ctx, []string{"a query"}, memory.EmbedQuery)
	if err != nil || len(q) != 1 {
		t.Fatal(err)
	}
	if last := srv.LastRequest(); !containsAll(string(last.Body), `"RETRIEVAL_QUERY"`) {
		t.Errorf("a query was embedded with %s", last.Body)
	}

	v := &memory.GeminiEmbedder{Models: srv.VertexClient().Models, Backend: genai.BackendVertexAI, Dimensions: 256}
	before := len(srv.EmbedContentRequests())
	if vs, err := v.Embed(ctx, texts[:3], memory.EmbedDocument); err != nil || len(vs) != 3 || len(vs[0]) != 256 {
		t.Fatalf("Vertex AI: %v, %d vectors", err, len(vs))
	}
	if n := len(srv.EmbedContentRequests()) - before; n != 3 {
		t.Errorf("Vertex AI gemini-embedding-001: %d requests for 3 texts, want one each", n)
	}

	srv.EnqueueEmbed(geminitest.Error(500, "boom"), geminitest.Error(500, "boom"), geminitest.Error(500, "boom"))
	_, err = e.Embed(ctx, texts[:1], memory.EmbedDocument)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 500 {
		t.Errorf("an outage: %v, want the API's 500", err)
	}
	srv.AssertComplete(t)
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !contains(s, x) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func sameDirection(a, b []float32) bool {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot/math.Sqrt(na*nb) > 0.99999
}

// Hybrid search end to end with the fake's embeddings through genai: a
// memory found by meaning alone, and an embedding outage that falls back
// to lexical search, says so, and heals.
func TestHybridWithGemini(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := context.Background()
	var events []*memory.Event
	svc, err := memory.New(memory.Config{
		Embedder: &memory.GeminiEmbedder{Models: srv.Client().Models},
		Observer: memory.ObserverFunc(func(_ context.Context, e *memory.Event) { events = append(events, e) }),
		Logger:   discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	if _, err := svc.Remember(ctx, "alice", memory.Fact{Text: "My favourite colour is teal."}, memory.Fact{Text: "I commute by bicycle."}); err != nil {
		t.Fatal(err)
	}
	svc.Wait(ctx)
	res, err := svc.Search(ctx, "alice", "favorite color", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Text != "My favourite colour is teal." || res[0].Vector != 1 || res[0].Lexical != 0 {
		t.Fatalf("hybrid search = %+v; want the colour fact, by its vector", res)
	}
	// An outage: the query cannot be embedded.
	srv.EnqueueEmbed(geminitest.Overloaded(), geminitest.Overloaded(), geminitest.Overloaded(), geminitest.Overloaded())
	res, err = svc.Search(ctx, "alice", "bicycle commute", nil)
	if err != nil || len(res) == 0 || res[0].Text != "I commute by bicycle." {
		t.Fatalf("search during an outage: %+v, %v", res, err)
	}
	last := events[len(events)-1]
	if !last.Fallback || last.Err == nil {
		t.Errorf("the search's event: fallback %v, err %v; want the fallback reported", last.Fallback, last.Err)
	}
}
