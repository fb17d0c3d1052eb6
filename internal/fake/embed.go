package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"google.golang.org/genai"
)

// This file serves embeddings (see the package documentation,
// "Embeddings"): embedContent and batchEmbedContents on the Gemini API,
// predict and embedContent on Vertex AI, as genai's Models.EmbedContent
// sends them (models.go:4632-4706, 5871-5886), with deterministic vectors.

// The embedding methods.
const (
	// MethodEmbedContent is POST …/models/{model}:embedContent, on both
	// backends.
	MethodEmbedContent Method = "embedContent"
	// MethodBatchEmbedContents is POST /v1beta/models/{model}:batchEmbedContents
	// on the Gemini API: what genai sends there, for one content or many.
	MethodBatchEmbedContents Method = "batchEmbedContents"
	// MethodPredict is POST …/publishers/google/models/{model}:predict on
	// Vertex AI: what genai sends for gemini-embedding-001 and the
	// text-embedding models there.
	MethodPredict Method = "predict"
)

// An EmbeddingModel is what the server knows of an embedding model.
type EmbeddingModel struct {
	// Dimensions is the length of its vectors at full size, what it
	// returns without outputDimensionality; a request may ask for fewer,
	// down to 1.
	Dimensions int
	// InputTokens bounds each text; a longer one is cut there (the
	// statistics say truncated), or refused on Vertex AI with autoTruncate
	// false.
	InputTokens int
	// Vertex is the method Vertex AI serves it with (predict or
	// embedContent); "" for a model Vertex AI does not serve.
	Vertex Method
	// MaxInstances bounds the instances of one Vertex AI predict request.
	MaxInstances int
	// Gemini says whether the Gemini API serves it.
	Gemini bool
}

// EmbeddingModels are the models the server embeds with, by name. Each
// other name is answered 404, as the API answers a model that does not
// exist or was retired (embedding-001 and text-embedding-004 on the Gemini
// API, August 2025 and January 2026).
var EmbeddingModels = map[string]EmbeddingModel{
	"gemini-embedding-001":            {Dimensions: 3072, InputTokens: 2048, Vertex: MethodPredict, MaxInstances: 1, Gemini: true},
	"gemini-embedding-2":              {Dimensions: 3072, InputTokens: 8192, Vertex: MethodEmbedContent, Gemini: true},
	"gemini-embedding-2-preview":      {Dimensions: 3072, InputTokens: 8192, Vertex: MethodEmbedContent, Gemini: true},
	"text-embedding-005":              {Dimensions: 768, InputTokens: 2048, Vertex: MethodPredict, MaxInstances: 250},
	"text-multilingual-embedding-002": {Dimensions: 768, InputTokens: 2048, Vertex: MethodPredict, MaxInstances: 250},
}

// The API's limits on embedding requests.
const (
	// MaxBatchEmbedRequests bounds the requests of one batchEmbedContents.
	MaxBatchEmbedRequests = 100
	// MaxPredictTokens bounds the tokens of all the instances of one
	// Vertex AI predict request.
	MaxPredictTokens = 20000
)

// embedTaskTypes are the task types the API takes (genai types.go TaskType;
// ai.google.dev/api/embeddings#tasktype).
var embedTaskTypes = map[string]bool{"TASK_TYPE_UNSPECIFIED": true, "RETRIEVAL_QUERY": true, "RETRIEVAL_DOCUMENT": true,
	"SEMANTIC_SIMILARITY": true, "CLASSIFICATION": true, "CLUSTERING": true, "QUESTION_ANSWERING": true,
	"FACT_VERIFICATION": true, "CODE_RETRIEVAL_QUERY": true}

// parseEmbedRoute returns the route of an embedding request, and false
// for other requests.
func parseEmbedRoute(method string, u *url.URL) (route, bool) {
	if method != http.MethodPost {
		return route{}, false
	}
	path := slashes.ReplaceAllString(u.Path, "/")
	if m := geminiRoute.FindStringSubmatch(path); m != nil {
		r := route{backend: genai.BackendGeminiAPI, version: m[1], model: m[2], method: Method(m[3])}
		return r, r.method == MethodEmbedContent || r.method == MethodBatchEmbedContents
	}
	if m := vertexRoute.FindStringSubmatch(path); m != nil {
		r := route{backend: genai.BackendVertexAI, version: m[1], project: m[2], location: m[3], model: m[4], method: Method(m[5])}
		return r, r.method == MethodEmbedContent || r.method == MethodPredict
	}
	return route{}, false
}

// The wire forms of the embedding requests. Names are read as proto JSON
// reads them (camelCase or snake_case), unknown ones refused.
type (
	wireEmbedRequest struct {
		Model                string         `json:"model,omitempty"`
		Content              *genai.Content `json:"content,omitempty"`
		TaskType             string         `json:"taskType,omitempty"`
		Title                string         `json:"title,omitempty"`
		OutputDimensionality *int           `json:"outputDimensionality,omitempty"`
		// Vertex AI's embedContent.
		EmbedContentConfig *wireEmbedConfig `json:"embedContentConfig,omitempty"`
	}
	wireEmbedConfig struct {
		TaskType             string `json:"taskType,omitempty"`
		Title                string `json:"title,omitempty"`
		OutputDimensionality *int   `json:"outputDimensionality,omitempty"`
		AutoTruncate         *bool  `json:"autoTruncate,omitempty"`
		DocumentOcr          *bool  `json:"documentOcr,omitempty"`
		AudioTrackExtraction *bool  `json:"audioTrackExtraction,omitempty"`
	}
	wireBatchEmbed struct {
		Requests []*wireEmbedRequest `json:"requests"`
	}
	wirePredict struct {
		Instances  []*wireInstance `json:"instances"`
		Parameters *struct {
			OutputDimensionality *int  `json:"outputDimensionality,omitempty"`
			AutoTruncate         *bool `json:"autoTruncate,omitempty"`
		} `json:"parameters,omitempty"`
	}
	wireInstance struct {
		Content  string `json:"content"`
		TaskType string `json:"taskType,omitempty"`
		Title    string `json:"title,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
	}
)

// embedInput is one text to embed, as a request asks for it.
type embedInput struct {
	field        string // where it is, for errors: "requests[0]"
	model        string // the request's own model field, "" if none
	text         string
	hasText      bool
	taskType     string
	dims         *int
	autoTruncate *bool
}

// embedRequest is an embedding request, decoded.
type embedRequest struct {
	rt     route
	model  EmbeddingModel
	known  bool
	inputs []embedInput
}

// embedRules are the checks of an embedding request, in order, as [rules]
// are generateContent's: each says what backs it, and a refusal is
// recorded as a [Rejection] named after the rule.
var embedRules = []embedRule{
	{name: "auth", check: func(in *input, _ *embedRequest) *APIError { return checkAuth(in) },
		verified: "generateContent's rule \"auth\", on the same front end."},
	{name: "embed-json", check: checkEmbedJSON,
		verified: "the bodies genai sends: batchEmbedContents {requests:[{model, content, taskType, title, " +
			"outputDimensionality}]} on the Gemini API (models.go:807-854, 667-702); on Vertex AI predict " +
			"{instances:[{content: text, task_type, title, mimeType}], parameters:{outputDimensionality, autoTruncate}} " +
			"and embedContent {content, embedContentConfig:{taskType, title, outputDimensionality, autoTruncate, " +
			"documentOcr, audioTrackExtraction}} (models.go:704-805, 856-915; transformer.go:255-278); the Gemini " +
			"API's embedContent {content, taskType, title, outputDimensionality} (ai.google.dev/api/embeddings). " +
			"Malformed JSON and unknown names are refused as generateContent's body is (rules json-syntax, json-fields).",
		assumed: "the texts of these refusals."},
	{name: "embed-model", check: checkEmbedModel,
		verified: "a model that does not embed, or was retired, is 404 NOT_FOUND \"models/{model} is not found for " +
			"API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available " +
			"models and their supported methods.\", text verified (arabold/docs-mcp-server#363, embedding-001, " +
			"March 2026); embedding-001 and gemini-embedding-exp-03-07 retired on August 14, 2025, text-embedding-004 " +
			"on January 14, 2026 (simonw/llm-gemini#102, quoting Google's announcement); the models and their sizes: " +
			"gemini-embedding-001 3072 dimensions and 2,048 input tokens, gemini-embedding-2 3072 and 8,192 " +
			"(ai.google.dev/gemini-api/docs/models/gemini-embedding-001 and …/gemini-embedding-2); Vertex AI's " +
			"text-embedding-005 and text-multilingual-embedding-002 768 dimensions (cloud.google.com/vertex-ai/" +
			"generative-ai/docs/embeddings/get-text-embeddings); genai's choice of predict or embedContent on " +
			"Vertex AI by name (transformer.go:575-581).",
		assumed: "Vertex AI's text of the 404 (its generateContent's \"Publisher Model … was not found\" form); " +
			"that the Gemini API serves neither text-embedding-005 nor text-multilingual-embedding-002."},
	{name: "embed-batch", check: checkEmbedBatch,
		verified: "batchEmbedContents takes at most 100 requests (vercel/ai#16575: more are refused with 400, July " +
			"2026), each of the URL's model (BatchEmbedContentsRequest.requests: \"The model in each of these requests " +
			"must match the model specified BatchEmbedContentsRequest.model\"); Vertex AI's predict of " +
			"gemini-embedding-001 takes one instance (\"Unable to submit request because batchSize must be 1 but the " +
			"entered value was 56\", RooCodeInc/Roo-Code#5123), the text-embedding models 250, with 20,000 tokens in " +
			"all (get-text-embeddings: \"Each request is limited to 250 input texts\", \"maximum of 20,000 input " +
			"tokens\").",
		assumed: "the texts, but for batchSize's; that an empty list of requests or instances is refused."},
	{name: "embed-content", check: checkEmbedContent,
		assumed: "a content without text is refused (the API embeds text parts; genai refuses one without parts " +
			"for Vertex AI, transformer.go:261-268)."},
	{name: "embed-task-type", check: checkEmbedTaskType,
		verified: "the task types of genai's TaskType and ai.google.dev/api/embeddings#tasktype; an unknown enum " +
			"value is refused as generateContent's are (\"Invalid value at '…' (type.googleapis.com/…TaskType)\")."},
	{name: "embed-dimensionality", check: checkEmbedDimensionality,
		verified: "outputDimensionality cuts the vector (Matryoshka representation learning): 128 to 3072 are " +
			"supported for the Gemini models, 768, 1536 and 3072 recommended (the model pages above).",
		assumed: "a value below 1 or above the model's size is refused; 1 to 127, below the documented range, " +
			"is answered (a client validating 1..3072 was accepted by the API, garrytan/gbrain#4824)."},
	{name: "embed-truncate", check: checkEmbedTruncate,
		verified: "on Vertex AI an input over the model's token limit is cut unless autoTruncate is false, then " +
			"refused with 400 (get-text-embeddings: \"Each input text is limited to 2,048 tokens; any excess is " +
			"silently truncated. You can also disable silent truncation by setting autoTruncate to false\").",
		assumed: "the text; that the Gemini API, which has no autoTruncate (genai refuses it there, " +
			"models.go:689-691), cuts silently too."},
}

type embedRule struct {
	name              string
	check             func(in *input, r *embedRequest) *APIError
	verified, assumed string
}

// checkEmbed runs embedRules and returns the first failure, or nil.
func checkEmbed(in *input, r *embedRequest) *Rejection {
	for _, rule := range embedRules {
		if err := rule.check(in, r); err != nil {
			return &Rejection{Rule: rule.name, Err: *err}
		}
	}
	return nil
}

// decodeStrict decodes body into v as proto JSON reads it: snake_case
// names read as camelCase; an unknown name is an error naming it.
func decodeStrict(body []byte, v any) error {
	var tree any
	if err := json.Unmarshal(body, &tree); err != nil {
		return err
	}
	b, _ := json.Marshal(camelKeys(tree))
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[snakeToCamel(k)] = camelKeys(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = camelKeys(x[i])
		}
	}
	return v
}

func snakeToCamel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func checkEmbedJSON(in *input, r *embedRequest) *APIError {
	body := in.body
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) {
		return invalidArgument("Invalid JSON payload received. Unexpected token.")
	}
	fail := func(err error) *APIError {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return invalidArgument(fmt.Sprintf("Invalid JSON payload received. Unknown name %s: Cannot find field.", name))
		}
		return invalidArgument("Invalid JSON payload received. " + msg)
	}
	text := func(c *genai.Content) (string, bool) {
		if c == nil {
			return "", false
		}
		var parts []string
		for _, p := range c.Parts {
			if p != nil && p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
		return strings.Join(parts, " "), len(parts) > 0
	}
	switch {
	case r.rt.method == MethodBatchEmbedContents:
		var w wireBatchEmbed
		if err := decodeStrict(body, &w); err != nil {
			return fail(err)
		}
		for i, q := range w.Requests {
			if q == nil {
				q = &wireEmbedRequest{}
			}
			t, ok := text(q.Content)
			r.inputs = append(r.inputs, embedInput{field: fmt.Sprintf("requests[%d]", i), model: q.Model, text: t, hasText: ok,
				taskType: q.TaskType, dims: q.OutputDimensionality})
		}
	case r.rt.method == MethodPredict:
		var w wirePredict
		if err := decodeStrict(body, &w); err != nil {
			return fail(err)
		}
		var dims *int
		var truncate *bool
		if w.Parameters != nil {
			dims, truncate = w.Parameters.OutputDimensionality, w.Parameters.AutoTruncate
		}
		for i, x := range w.Instances {
			if x == nil {
				x = &wireInstance{}
			}
			r.inputs = append(r.inputs, embedInput{field: fmt.Sprintf("instances[%d]", i), text: x.Content, hasText: x.Content != "",
				taskType: x.TaskType, dims: dims, autoTruncate: truncate})
		}
	default: // embedContent
		var w wireEmbedRequest
		if err := decodeStrict(body, &w); err != nil {
			return fail(err)
		}
		t, ok := text(w.Content)
		e := embedInput{field: "content", model: w.Model, text: t, hasText: ok, taskType: w.TaskType, dims: w.OutputDimensionality}
		if c := w.EmbedContentConfig; c != nil {
			if in.backend != genai.BackendVertexAI {
				return invalidArgument(`Invalid JSON payload received. Unknown name "embedContentConfig": Cannot find field.`)
			}
			e.taskType, e.dims, e.autoTruncate = c.TaskType, c.OutputDimensionality, c.AutoTruncate
		}
		r.inputs = append(r.inputs, e)
	}
	return nil
}

func checkEmbedModel(in *input, r *embedRequest) *APIError {
	m, ok := EmbeddingModels[r.rt.model]
	if ok && in.backend == genai.BackendGeminiAPI && m.Gemini {
		r.model, r.known = m, true
		return nil
	}
	if ok && in.backend == genai.BackendVertexAI && m.Vertex == r.rt.method {
		r.model, r.known = m, true
		return nil
	}
	if in.backend == genai.BackendVertexAI {
		return &APIError{Code: http.StatusNotFound, Status: "NOT_FOUND", Message: fmt.Sprintf(
			"Publisher Model `projects/%s/locations/%s/publishers/google/models/%s` was not found or your project "+
				"does not have access to it, or it does not support %s.", orDash(r.rt.project), orDash(r.rt.location), r.rt.model, r.rt.method)}
	}
	return &APIError{Code: http.StatusNotFound, Status: "NOT_FOUND", Message: fmt.Sprintf("models/%s is not found for API version %s, "+
		"or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods.",
		r.rt.model, in.version)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func checkEmbedBatch(in *input, r *embedRequest) *APIError {
	n := len(r.inputs)
	switch r.rt.method {
	case MethodBatchEmbedContents:
		if n == 0 {
			return invalidArgument("* BatchEmbedContentsRequest.requests: contents is not specified")
		}
		if n > MaxBatchEmbedRequests {
			return invalidArgument(fmt.Sprintf("* BatchEmbedContentsRequest.requests: at most %d requests can be in one batch", MaxBatchEmbedRequests))
		}
		for _, e := range r.inputs {
			if e.model != "" && bareModel(e.model) != r.rt.model {
				return invalidArgument(fmt.Sprintf("* BatchEmbedContentsRequest.%s.model: the model of each request must be "+
					"the batch's, models/%s", e.field, r.rt.model))
			}
		}
	case MethodPredict:
		if n == 0 {
			return invalidArgument("Unable to submit request because it has an empty instances list.")
		}
		if n > r.model.MaxInstances {
			if r.model.MaxInstances == 1 {
				return invalidArgument(fmt.Sprintf("Unable to submit request because it included too many instances. Reduce the number of "+
					"instances and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings: "+
					"Unable to submit request because batchSize must be 1 but the entered value was %d.", n))
			}
			return invalidArgument(fmt.Sprintf("Unable to submit request because it included too many instances (%d); the model takes %d.", n, r.model.MaxInstances))
		}
		total := 0
		for _, e := range r.inputs {
			total += min(embedTokens(e.text), r.model.InputTokens)
		}
		if total > MaxPredictTokens {
			return invalidArgument(fmt.Sprintf("Unable to submit request because the input token count is %d but the model supports up "+
				"to %d tokens in one request.", total, MaxPredictTokens))
		}
	}
	return nil
}

func checkEmbedContent(_ *input, r *embedRequest) *APIError {
	for _, e := range r.inputs {
		if !e.hasText {
			return invalidArgument(fmt.Sprintf("* %s.content: the content has no text to embed", e.field))
		}
	}
	return nil
}

func checkEmbedTaskType(_ *input, r *embedRequest) *APIError {
	for _, e := range r.inputs {
		if e.taskType != "" && !embedTaskTypes[e.taskType] {
			return invalidArgument(fmt.Sprintf("Invalid value at '%s.task_type' (type.googleapis.com/google.ai.generativelanguage.v1beta.TaskType), %q",
				e.field, e.taskType))
		}
	}
	return nil
}

func checkEmbedDimensionality(_ *input, r *embedRequest) *APIError {
	for _, e := range r.inputs {
		if e.dims != nil && (*e.dims < 1 || *e.dims > r.model.Dimensions) {
			return invalidArgument(fmt.Sprintf("* %s.output_dimensionality: must be between 1 and %d, the model's size; got %d",
				e.field, r.model.Dimensions, *e.dims))
		}
	}
	return nil
}

func checkEmbedTruncate(_ *input, r *embedRequest) *APIError {
	for _, e := range r.inputs {
		if n := embedTokens(e.text); e.autoTruncate != nil && !*e.autoTruncate && n > r.model.InputTokens {
			return invalidArgument(fmt.Sprintf("Unable to submit request because the input token count is %d but the model supports "+
				"up to %d. Reduce the input token count and try again.", n, r.model.InputTokens))
		}
	}
	return nil
}

// embedTokens estimates the tokens of text as usage counts them: about 4
// bytes a token.
func embedTokens(text string) int { return (len(text) + 3) / 4 }

// Embedding returns the vector the server answers for text, at dims of
// the full size full (as the model returns with outputDimensionality
// dims): the full vector has length 1, and a shorter one is its first
// dims values, not scaled again, as the Gemini API documents for its
// embedding models. It sums a pseudo-random vector per word and per
// character trigram of each word (lower-cased), so that texts that share
// words, or parts of words, are similar, and identical texts identical.
func Embedding(text string, full, dims int) []float32 {
	v := make([]float64, full)
	add := func(feature string, weight float64) {
		h := fnv.New64a()
		io.WriteString(h, feature)
		seed := h.Sum64()
		for d := range v {
			seed = seed*6364136223846793005 + 1442695040888963407
			v[d] += weight * (float64(int64(seed>>11))/float64(1<<52) - 1)
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		add("w:"+w, 1)
		rs := []rune("^" + w + "$")
		for i := 0; i+3 <= len(rs); i++ {
			add("t:"+string(rs[i:i+3]), 0.5)
		}
	}
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, min(dims, full))
	if sum == 0 {
		out[0] = 1
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i := range out {
		out[i] = float32(v[i] * inv)
	}
	return out
}

// EnqueueEmbed queues replies for the embedding requests to take, in
// order, one each, before the server computes them: an error ([Error],
// [RateLimited], [Overloaded]) or a fault ([Drop], [Malformed]) answers
// the request, a Delay delays it. A request that finds no reply queued is
// answered with its vectors. Replies queued with Enqueue are never taken by
// embedding requests.
func (s *Server) EnqueueEmbed(replies ...*Reply) {
	s.mu.Lock()
	s.embedQueue = append(s.embedQueue, replies...)
	s.mu.Unlock()
}

// serveEmbed answers an embedding request.
func (s *Server) serveEmbed(w http.ResponseWriter, r *http.Request, rt route) {
	creds := credentialsOf(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req := Request{Header: r.Header.Clone(), Query: r.URL.Query(), APIKey: creds.apiKey, Token: creds.token, Body: body,
		Method: rt.method, Backend: rt.backend, APIVersion: rt.version, Model: rt.model, Project: rt.project, Location: rt.location}
	in := &input{backend: rt.backend, version: rt.version, model: rt.model, method: rt.method, project: rt.project, creds: creds, body: body}
	er := &embedRequest{rt: rt}
	var rej *Rejection
	if err != nil {
		rej = &Rejection{Rule: "route", Err: *invalidArgument(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxBody))}
	} else {
		rej = checkEmbed(in, er)
	}
	rec := &record{req: req}
	if er.inputs != nil {
		// The texts are recorded as the request's Contents.
		var contents []*genai.Content
		for _, e := range er.inputs {
			contents = append(contents, genai.NewContentFromText(e.text, genai.RoleUser))
		}
		rec.canonical = mustJSON(&wireRequest{Contents: contents})
	}
	s.take(rec, rej, false, nil)
	if rej != nil {
		s.log("fake: #%d %s %s: rejected by rule %q: %d %s", rec.req.Seq, r.Method, r.URL.Path, rej.Rule, rej.Err.httpCode(), rej.Err.Message)
		writeError(w, in, &rej.Err)
		return
	}
	s.mu.Lock()
	var reply *Reply
	if len(s.embedQueue) > 0 {
		reply = s.embedQueue[0]
		s.embedQueue = s.embedQueue[1:]
	}
	s.mu.Unlock()
	if reply != nil {
		if !s.wait(r.Context(), reply.Delay) {
			panic(http.ErrAbortHandler)
		}
		switch {
		case reply.Err != nil:
			writeError(w, in, reply.Err)
			return
		case reply.Fault == FaultDropConnection:
			dropConnection(w)
			return
		}
	}
	resp := embedResponse(er)
	s.log("fake: #%d %s %s: %d embeddings", rec.req.Seq, rt.method, rt.model, len(er.inputs))
	fault := Fault(0)
	if reply != nil {
		fault = reply.Fault
	}
	writeUnary(w, fault, mustJSON(resp))
}

// embedResponse is the answer to er, in its backend's and method's shape.
func embedResponse(er *embedRequest) any {
	type values struct {
		Values []float32 `json:"values"`
	}
	vector := func(e embedInput) ([]float32, int, bool) {
		dims := er.model.Dimensions
		if e.dims != nil {
			dims = *e.dims
		}
		text, tokens, truncated := e.text, embedTokens(e.text), false
		if tokens > er.model.InputTokens {
			text, tokens, truncated = cutBytes(text, 4*er.model.InputTokens), er.model.InputTokens, true
		}
		return Embedding(text, er.model.Dimensions, dims), tokens, truncated
	}
	switch er.rt.method {
	case MethodBatchEmbedContents:
		out := struct {
			Embeddings []values `json:"embeddings"`
		}{}
		for _, e := range er.inputs {
			v, _, _ := vector(e)
			out.Embeddings = append(out.Embeddings, values{v})
		}
		return out
	case MethodPredict:
		type stats struct {
			Truncated  bool `json:"truncated"`
			TokenCount int  `json:"token_count"`
		}
		type embeddings struct {
			Statistics stats     `json:"statistics"`
			Values     []float32 `json:"values"`
		}
		type prediction struct {
			Embeddings embeddings `json:"embeddings"`
		}
		out := struct {
			Predictions []prediction   `json:"predictions"`
			Metadata    map[string]any `json:"metadata"`
		}{Metadata: map[string]any{}}
		chars := 0
		for _, e := range er.inputs {
			v, tokens, truncated := vector(e)
			out.Predictions = append(out.Predictions, prediction{embeddings{stats{truncated, tokens}, v}})
			chars += len([]rune(strings.Join(strings.Fields(e.text), "")))
		}
		out.Metadata["billableCharacterCount"] = chars
		return out
	}
	e := er.inputs[0]
	v, tokens, truncated := vector(e)
	if er.rt.backend == genai.BackendVertexAI {
		return map[string]any{"embedding": values{v}, "usageMetadata": map[string]any{"promptTokenCount": tokens}, "truncated": truncated}
	}
	return map[string]any{"embedding": values{v}}
}

// cutBytes returns s cut to at most n bytes, at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
