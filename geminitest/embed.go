package geminitest

import "github.com/toolnexus/toolnexus-go/internal/fake"

// The embedding methods a [Request] may have (see "Embeddings" in the
// package documentation).
const (
	MethodEmbedContent       = fake.MethodEmbedContent
	MethodBatchEmbedContents = fake.MethodBatchEmbedContents
	MethodPredict            = fake.MethodPredict
)

// EmbedContentRequests returns the embedding requests received so far, in
// order: each [Request] holds the texts it embedded as Contents.
func (s *Server) EmbedContentRequests() []*Request {
	var out []*Request
	for _, r := range s.srv.Requests() {
		switch r.Method {
		case MethodEmbedContent, MethodBatchEmbedContents, MethodPredict:
			out = append(out, r)
		}
	}
	return out
}

// EnqueueEmbed queues replies for the embedding requests to take, one
// each, in order, before the server computes their vectors: an error
// ([Error], [RateLimited], [Overloaded]) or a fault ([Drop], [Malformed])
// answers the request, and a [Reply.Delay] delays it. A request that finds
// none queued gets its vectors. Replies queued with Enqueue never answer
// embedding requests, nor these generateContent.
func (s *Server) EnqueueEmbed(replies ...*Reply) { s.srv.EnqueueEmbed(replies...) }

// Embedding returns the vector the server answers for text with model at
// dims dimensions (0: the model's full size): a deterministic function of
// the text's words and their character trigrams, of length 1 at the
// model's full size, cut (not scaled again) below it, as Gemini's
// embedding models return with outputDimensionality. It returns nil for a
// model the server does not embed with.
func Embedding(model, text string, dims int) []float32 {
	m, ok := fake.EmbeddingModels[model]
	if !ok {
		return nil
	}
	if dims <= 0 {
		dims = m.Dimensions
	}
	return fake.Embedding(text, m.Dimensions, dims)
}
