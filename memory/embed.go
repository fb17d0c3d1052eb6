package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"google.golang.org/genai"
)

// EmbedTask says what texts are embedded for.
type EmbedTask int

const (
	// EmbedDocument: memories, to be found.
	EmbedDocument EmbedTask = iota + 1
	// EmbedQuery: a query, to find them.
	EmbedQuery
)

// An Embedder turns texts into vectors whose cosine similarity says how
// close their meanings are. [GeminiEmbedder] is Gemini's.
type Embedder interface {
	// Embed returns one vector per text, in order, all of one length.
	Embed(ctx context.Context, texts []string, task EmbedTask) ([][]float32, error)
}

// EmbedModels is the part of genai's client a [GeminiEmbedder] uses:
// client.Models satisfies it.
type EmbedModels interface {
	EmbedContent(ctx context.Context, model string, contents []*genai.Content, config *genai.EmbedContentConfig) (*genai.EmbedContentResponse, error)
}

// Defaults of GeminiEmbedder.
const (
	DefaultEmbeddingModel      = "gemini-embedding-001"
	DefaultEmbeddingDimensions = 768
)

// GeminiEmbedder embeds with Gemini's embedding models, through genai's
// Models.EmbedContent: batchEmbedContents on the Gemini API, predict or
// embedContent on Vertex AI (genai chooses by model). Its zero value but
// Models is usable.
type GeminiEmbedder struct {
	// Models makes the calls: a genai client's Models. Required.
	Models EmbedModels

	// Model is the embedding model. Empty means DefaultEmbeddingModel
	// (gemini-embedding-001).
	Model string

	// Dimensions is the length of the vectors (outputDimensionality):
	// 128 to 3072 for Gemini's embedding models (768, 1536 and 3072 are
	// the sizes Google recommends). Zero means DefaultEmbeddingDimensions
	// (768). Vectors of one store must all have one length: changing it
	// means embedding every memory again.
	Dimensions int

	// DocumentTask and QueryTask are the task types sent with memories and
	// queries. Empty means RETRIEVAL_DOCUMENT and RETRIEVAL_QUERY; "-"
	// sends none (for a model that takes none).
	DocumentTask, QueryTask string

	// BatchSize bounds the texts of one call. Zero means what the API takes
	// of the model: 100 on the Gemini API (batchEmbedContents' limit), and
	// on Vertex AI 1 for Gemini models (gemini-embedding-001's predict takes
	// one instance, embedContent one content) and 250 for the others.
	BatchSize int

	// Backend is the backend of Models' client; it decides BatchSize's
	// default. Zero means the Gemini API.
	Backend genai.Backend
}

// Embed implements [Embedder]: the texts in batches, each vector scaled to
// length 1 (the API returns unit vectors only at the model's full size).
func (g *GeminiEmbedder) Embed(ctx context.Context, texts []string, task EmbedTask) ([][]float32, error) {
	if g.Models == nil {
		return nil, errors.New("memory: GeminiEmbedder.Models is nil")
	}
	model := g.Model
	if model == "" {
		model = DefaultEmbeddingModel
	}
	dims := int32(g.Dimensions)
	if dims == 0 {
		dims = DefaultEmbeddingDimensions
	}
	cfg := &genai.EmbedContentConfig{OutputDimensionality: &dims}
	taskType := g.DocumentTask
	if task == EmbedQuery {
		taskType = g.QueryTask
	}
	switch {
	case taskType == "" && task == EmbedQuery:
		cfg.TaskType = "RETRIEVAL_QUERY"
	case taskType == "":
		cfg.TaskType = "RETRIEVAL_DOCUMENT"
	case taskType != "-":
		cfg.TaskType = taskType
	}
	batch := g.BatchSize
	if batch <= 0 {
		batch = defaultBatch(g.Backend, model)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		contents := make([]*genai.Content, 0, end-start)
		for _, t := range texts[start:end] {
			contents = append(contents, genai.NewContentFromText(t, genai.RoleUser))
		}
		resp, err := g.Models.EmbedContent(ctx, model, contents, cfg)
		if err != nil {
			return nil, fmt.Errorf("memory: embedding %d texts with %s: %w", len(contents), model, err)
		}
		if len(resp.Embeddings) != len(contents) {
			return nil, fmt.Errorf("memory: embedding with %s: %d embeddings for %d texts", model, len(resp.Embeddings), len(contents))
		}
		for _, e := range resp.Embeddings {
			if e == nil || len(e.Values) == 0 {
				return nil, fmt.Errorf("memory: embedding with %s: an empty embedding", model)
			}
			out = append(out, normalize(e.Values))
		}
	}
	return out, nil
}

func defaultBatch(b genai.Backend, model string) int {
	if b != genai.BackendVertexAI {
		return 100
	}
	if strings.Contains(model, "gemini") {
		return 1
	}
	return 250
}

// normalize returns v scaled to length 1 (a copy), or v when it is zero.
func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// dot returns the dot product of a and b, over the shorter one: the cosine
// similarity of unit vectors.
func dot(a, b []float32) float64 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}
