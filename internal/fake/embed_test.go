package fake_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func embedTexts(ss ...string) []*genai.Content {
	out := make([]*genai.Content, len(ss))
	for i, s := range ss {
		out[i] = genai.NewContentFromText(s, genai.RoleUser)
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func dims(n int32) *genai.EmbedContentConfig {
	return &genai.EmbedContentConfig{OutputDimensionality: &n}
}

// genai's EmbedContent against both backends: batchEmbedContents on the
// Gemini API, predict and embedContent on Vertex AI, each answered in its
// shape with the documented vectors.
func TestEmbedThroughGenai(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	in := []string{"I adopted a cat named Miso.", "The weather in Lisbon is sunny.", "I adopted a cat named Miso."}

	// Gemini API, full size: unit vectors of 3072, equal for equal texts.
	resp, err := srv.Client().Models.EmbedContent(ctx, "gemini-embedding-001", embedTexts(in...), nil)
	if err != nil {
		t.Fatal(err)
	}
	req := srv.LastRequest()
	if req.Method != fake.MethodBatchEmbedContents || req.Model != "gemini-embedding-001" || len(req.Contents) != 3 || req.Contents[1].Parts[0].Text != in[1] {
		t.Fatalf("recorded %s %s with %d contents", req.Method, req.Model, len(req.Contents))
	}
	if len(resp.Embeddings) != 3 || len(resp.Embeddings[0].Values) != 3072 || math.Abs(norm(resp.Embeddings[0].Values)-1) > 1e-5 {
		t.Fatalf("%d embeddings of %d values, norm %v; want 3 of 3072, norm 1", len(resp.Embeddings), len(resp.Embeddings[0].Values), norm(resp.Embeddings[0].Values))
	}
	if !slices.Equal(resp.Embeddings[0].Values, resp.Embeddings[2].Values) || slices.Equal(resp.Embeddings[0].Values, resp.Embeddings[1].Values) {
		t.Error("equal texts have different vectors, or different texts equal ones")
	}
	// outputDimensionality cuts the vector, not normalized again.
	resp, err = srv.Client().Models.EmbedContent(ctx, "gemini-embedding-001", embedTexts(in[0]),
		&genai.EmbedContentConfig{OutputDimensionality: genai.Ptr[int32](768), TaskType: "RETRIEVAL_DOCUMENT", Title: "pets"})
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.Embeddings[0].Values; len(v) != 768 || norm(v) >= 0.99 || !slices.Equal(v, fake.Embedding(in[0], 3072, 768)) {
		t.Errorf("768 values, norm %v; want fake.Embedding's first 768, norm below 1", norm(v))
	}

	// Vertex AI: gemini-embedding-001 by predict, one instance, with its statistics.
	vresp, err := srv.VertexClient().Models.EmbedContent(ctx, "gemini-embedding-001", embedTexts(in[1]), dims(256))
	if err != nil {
		t.Fatal(err)
	}
	if req := srv.LastRequest(); req.Method != fake.MethodPredict || req.Backend != genai.BackendVertexAI {
		t.Errorf("Vertex AI request: %s on %v", req.Method, req.Backend)
	}
	if e := vresp.Embeddings[0]; len(e.Values) != 256 || e.Statistics == nil || e.Statistics.TokenCount == 0 || e.Statistics.Truncated {
		t.Errorf("Vertex AI embedding: %d values, statistics %+v", len(e.Values), e.Statistics)
	}
	// text-embedding-005: 768 dimensions, many instances.
	vresp, err = srv.VertexClient().Models.EmbedContent(ctx, "text-embedding-005", embedTexts(in...), nil)
	if err != nil || len(vresp.Embeddings) != 3 || len(vresp.Embeddings[0].Values) != 768 {
		t.Fatalf("text-embedding-005: %v, %+v", err, vresp)
	}
	// gemini-embedding-2 by embedContent, one content.
	vresp, err = srv.VertexClient().Models.EmbedContent(ctx, "gemini-embedding-2", embedTexts(in[0]), dims(128))
	if err != nil || len(vresp.Embeddings) != 1 || len(vresp.Embeddings[0].Values) != 128 {
		t.Fatalf("gemini-embedding-2: %v, %+v", err, vresp)
	}
	if req := srv.LastRequest(); req.Method != fake.MethodEmbedContent {
		t.Errorf("gemini-embedding-2 on Vertex AI used %s", req.Method)
	}
	if rej := srv.Rejections(); len(rej) != 0 {
		t.Errorf("rejections: %+v", rej)
	}
}

// The API's limits and refusals, through genai.
func TestEmbedRefusals(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprint("text ", i)
	}
	long := strings.Repeat("word ", 3000) // over 2,048 tokens
	for _, tc := range []struct {
		name   string
		client *genai.Client
		model  string
		in     []string
		cfg    *genai.EmbedContentConfig
		code   int
		rule   string
		text   string
	}{
		{"retired model", srv.Client(), "text-embedding-004", []string{"x"}, nil, 404, "embed-model", "models/text-embedding-004 is not found for API version v1beta"},
		{"generation model", srv.Client(), "gemini-2.5-flash", []string{"x"}, nil, 404, "embed-model", "is not supported for embedContent"},
		{"101 requests", srv.Client(), "gemini-embedding-001", many, nil, 400, "embed-batch", "at most 100 requests"},
		{"two instances of gemini-embedding-001 on Vertex AI", srv.VertexClient(), "gemini-embedding-001", []string{"a", "b"}, nil, 400, "embed-batch", "batchSize must be 1 but the entered value was 2"},
		{"too many dimensions", srv.Client(), "gemini-embedding-001", []string{"x"}, dims(4096), 400, "embed-dimensionality", "between 1 and 3072"},
		{"unknown task type", srv.Client(), "gemini-embedding-001", []string{"x"}, &genai.EmbedContentConfig{TaskType: "RETRIEVAL"}, 400, "embed-task-type", "Invalid value"},
		{"a long text on Vertex AI is cut", srv.VertexClient(), "text-embedding-005", []string{long}, &genai.EmbedContentConfig{AutoTruncate: false}, 0, "", ""},
		{"autoTruncate true", srv.VertexClient(), "text-embedding-005", []string{long}, &genai.EmbedContentConfig{AutoTruncate: true}, 0, "", ""},
		{"empty text", srv.Client(), "gemini-embedding-001", []string{""}, nil, 400, "embed-content", "no text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.Rejections())
			_, err := tc.client.Models.EmbedContent(ctx, tc.model, embedTexts(tc.in...), tc.cfg)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tc.code || !strings.Contains(apiErr.Message, tc.text) {
				t.Fatalf("error %v; want %d with %q", err, tc.code, tc.text)
			}
			rej := srv.Rejections()
			if len(rej) != before+1 || rej[len(rej)-1].Rule != tc.rule {
				t.Errorf("rejections %+v; want one by rule %q", rej[before:], tc.rule)
			}
		})
	}
	// genai sends autoTruncate only when true; false, sent raw, refuses a long text.
	code, body := postRaw(t, srv, "/v1beta1/projects/p/locations/l/publishers/google/models/text-embedding-005:predict", true,
		`{"instances":[{"content":"`+long+`"}],"parameters":{"autoTruncate":false}}`)
	if code != 400 || !strings.Contains(body, "input token count") {
		t.Errorf("autoTruncate false: %d %s", code, body)
	}
	// A long text is cut otherwise, and says so.
	resp, err := srv.VertexClient().Models.EmbedContent(ctx, "text-embedding-005", embedTexts(long), nil)
	if err != nil || !resp.Embeddings[0].Statistics.Truncated {
		t.Errorf("a long text: %v, %+v; want it truncated", err, resp)
	}
}

func postRaw(t *testing.T, srv *fake.Server, path string, vertex bool, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if vertex {
		req.Header.Set("Authorization", "Bearer "+fake.AccessToken)
	} else {
		req.Header.Set("x-goog-api-key", "key")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// What genai cannot send, sent raw: unknown fields, a request of another
// model in a batch, no credentials, the Gemini API's embedContent.
func TestEmbedRaw(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct {
		name, path string
		vertex     bool
		body       string
		code       int
		text       string
	}{
		{"embedContent", "/v1beta/models/gemini-embedding-001:embedContent", false,
			`{"content":{"parts":[{"text":"hello"}]},"task_type":"RETRIEVAL_QUERY","outputDimensionality":64}`, 200, `"embedding"`},
		{"unknown field", "/v1beta/models/gemini-embedding-001:batchEmbedContents", false,
			`{"requests":[{"content":{"parts":[{"text":"x"}]},"dimensions":8}]}`, 400, `Unknown name \"dimensions\"`},
		{"another model in the batch", "/v1beta/models/gemini-embedding-001:batchEmbedContents", false,
			`{"requests":[{"model":"models/gemini-embedding-2","content":{"parts":[{"text":"x"}]}}]}`, 400, "the model of each request"},
		{"no requests", "/v1beta/models/gemini-embedding-001:batchEmbedContents", false, `{"requests":[]}`, 400, "requests"},
		{"Vertex AI's config on the Gemini API", "/v1beta/models/gemini-embedding-2:embedContent", false,
			`{"content":{"parts":[{"text":"x"}]},"embedContentConfig":{"taskType":"RETRIEVAL_QUERY"}}`, 400, "embedContentConfig"},
		{"not JSON", "/v1beta/models/gemini-embedding-001:batchEmbedContents", false, `{"requests":`, 400, "Invalid JSON payload"},
		{"predict of gemini-embedding-2", "/v1beta1/projects/p/locations/l/publishers/google/models/gemini-embedding-2:predict", true,
			`{"instances":[{"content":"x"}]}`, 404, "was not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postRaw(t, srv, tc.path, tc.vertex, tc.body)
			if code != tc.code || !strings.Contains(body, tc.text) {
				t.Errorf("%d %s; want %d with %q", code, body, tc.code, tc.text)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/models/gemini-embedding-001:batchEmbedContents", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("without a key: %d, want 403", resp.StatusCode)
	}
}

// Faults queued with EnqueueEmbed answer the embedding requests, and only
// them.
func TestEnqueueEmbed(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	srv.Enqueue(fake.Text("generated"))
	srv.EnqueueEmbed(fake.RateLimited(time.Second), fake.Overloaded())
	for _, code := range []int{429, 503} {
		_, err := srv.Client().Models.EmbedContent(ctx, "gemini-embedding-001", embedTexts("x"), nil)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != code {
			t.Errorf("error %v; want %d", err, code)
		}
	}
	if _, err := srv.Client().Models.EmbedContent(ctx, "gemini-embedding-001", embedTexts("x"), nil); err != nil {
		t.Errorf("after the faults: %v", err)
	}
	resp, err := srv.Client().Models.GenerateContent(ctx, "gemini-2.5-flash", embedTexts("hi"), nil)
	if err != nil || resp.Text() != "generated" {
		t.Errorf("the generateContent reply was taken by an embedding request: %v %v", resp, err)
	}
}

// Every embedding rule says what backs it, and the table tests above
// reach every one of them.
func TestEmbedRulesSayWhatBacksThem(t *testing.T) {
	for _, r := range fake.EmbedRules() {
		if r[1] == "" {
			t.Errorf("rule %q is neither verified nor assumed", r[0])
		}
	}
}
