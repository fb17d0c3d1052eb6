package geminiinteractions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
	"google.golang.org/genai/interactions"
	ixmodels "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"
	"google.golang.org/genai/interactions/retry"
)

// API is what [Models.API] returns: the name of the API a Models speaks,
// for those who describe its calls (otelagent's WithModels).
const API = "interactions"

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultMaxInteractions    = 4096
	DefaultMaxRememberedBytes = 64 << 20
	DefaultStreamResumes      = 3
)

// Config configures a [Models]. Its zero value keeps the conversation on
// the server, remembers up to DefaultMaxInteractions interactions holding
// up to DefaultMaxRememberedBytes, and resumes a cut stream
// DefaultStreamResumes times.
type Config struct {
	// Stateless sends every request with store: false: the API keeps
	// nothing (for data that must not stay at Google), so every request
	// sends the whole history, thoughts and their signatures included. A
	// request whose GenerateContentConfig.Store is false is sent so too.
	Stateless bool

	// MaxInteractions bounds the interactions this Models remembers, to
	// know which histories the server holds; the least recently used is
	// forgotten first, and a history that extends none of those
	// remembered is sent whole. Each keeps the contents it added to the
	// history it continued (its request's new ones and its answer), never
	// the history before them, which it knows by its length and a running
	// fingerprint. Zero means DefaultMaxInteractions.
	MaxInteractions int

	// MaxRememberedBytes bounds what the remembered interactions hold:
	// the JSON size of the steps of the contents each keeps, plus 512
	// bytes per content and per interaction for the Go values around them
	// and the indexes that find them. For text, the memory they take
	// measured 0.7 (short messages) to 1.05 (4 KiB) times that count; for
	// inline media, whose JSON is base64, less. The least recently used
	// interactions are forgotten until they fit; one that alone holds
	// more is not remembered. Zero means DefaultMaxRememberedBytes
	// (64 MiB).
	MaxRememberedBytes int64

	// StreamResumes bounds how many times one streamed call whose
	// connection broke is resumed from its last event (GET
	// …/interactions/{id}?stream=true&last_event_id=…), without
	// generating again what was received. Zero means
	// DefaultStreamResumes; a negative value turns resuming off. A
	// stateless call cannot be resumed.
	StreamResumes int
}

// Models is an agent.Models that runs the loop on the Interactions API. It
// is safe for concurrent use by any number of runs and agents. Create it
// with [New].
type Models struct {
	client *genai.Client
	ix     *interactions.Interactions
	cfg    Config
	chains *chains
	stats  stats
}

// New returns a Models that makes its calls with client's Interactions
// client (client.Interactions): on the Gemini API, or on Vertex AI when the
// client is configured for it.
func New(client *genai.Client, cfg Config) *Models {
	if cfg.MaxInteractions <= 0 {
		cfg.MaxInteractions = DefaultMaxInteractions
	}
	if cfg.MaxRememberedBytes <= 0 {
		cfg.MaxRememberedBytes = DefaultMaxRememberedBytes
	}
	switch {
	case cfg.StreamResumes == 0:
		cfg.StreamResumes = DefaultStreamResumes
	case cfg.StreamResumes < 0:
		cfg.StreamResumes = 0
	}
	return &Models{client: client, ix: client.Interactions, cfg: cfg, chains: newChains(cfg.MaxInteractions, cfg.MaxRememberedBytes)}
}

// API returns [API]: the Models speaks the Interactions API.
func (m *Models) API() string { return API }

// ExplicitCaching returns false: the Interactions API takes no explicit
// context caches (it caches implicitly only), so agent.New refuses an
// agent on m whose Config.Cache is set (agent.ExplicitCacher).
func (m *Models) ExplicitCaching() bool { return false }

// ClientConfig returns the configuration of the genai client the calls go
// through: its backend and base URL say where they go.
func (m *Models) ClientConfig() genai.ClientConfig { return m.client.ClientConfig() }

// Forget forgets every interaction this Models created: the next request
// of each conversation sends its whole history.
func (m *Models) Forget() { m.chains.reset() }

// Stats counts what a Models sent.
type Stats struct {
	// Requests counts the interactions created (continuation hops
	// included), retries and fallbacks included.
	Requests int64
	// Chained counts the requests that sent previous_interaction_id and
	// only what the server lacked.
	Chained int64
	// Whole counts the requests that sent the whole history: the first of
	// a conversation, or one whose history extends no interaction this
	// Models remembers (after a restart, on another process, after a
	// HistoryFunc changed the history, for a history stored before), and
	// every stateless request.
	Whole int64
	// Fallbacks counts the requests sent again with the whole history
	// because the server no longer held their previous interaction.
	Fallbacks int64
	// Resumes counts the streams resumed from their last event.
	Resumes int64
	// InputBytes sums the JSON size of the input steps sent.
	InputBytes int64
	// Remembered is the number of interactions remembered now, and
	// RememberedBytes what they hold, as Config.MaxRememberedBytes
	// counts it.
	Remembered      int
	RememberedBytes int64
}

type stats struct {
	requests, chained, whole, fallbacks, resumes, inputBytes atomic.Int64
}

// Stats returns the counts so far.
func (m *Models) Stats() Stats {
	s := &m.stats
	n, bytes := m.chains.held()
	return Stats{Requests: s.requests.Load(), Chained: s.chained.Load(), Whole: s.whole.Load(),
		Fallbacks: s.fallbacks.Load(), Resumes: s.resumes.Load(), InputBytes: s.inputBytes.Load(),
		Remembered: n, RememberedBytes: bytes}
}

// GenerateContent creates one interaction that continues contents and
// returns it as generateContent's response: the model's steps as one
// content, its status as the finish reason, its usage, its id as the
// response id. See the package documentation.
func (m *Models) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	p, err := m.plan(model, contents, config, false)
	if err != nil {
		return nil, err
	}
	res, err := m.create(ctx, p)
	if err != nil && p.fallback(err) {
		res, err = m.create(ctx, p)
	}
	if err != nil {
		if resp, ok := blocked(err, p.model); ok {
			return resp, nil
		}
		return nil, err
	}
	raw, err := io.ReadAll(res.HTTPMeta.Response.Body)
	if err != nil || res.Interaction == nil {
		return nil, fmt.Errorf("geminiinteractions: reading the interaction: %w", errors.Join(err, errors.New("no interaction in the answer")))
	}
	var ix iw.Interaction
	if err := json.Unmarshal(raw, &ix); err != nil {
		return nil, fmt.Errorf("geminiinteractions: reading the interaction: %w", err)
	}
	resp, err := p.response(&ix, res.HTTPMeta.Response)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// A request is one model call being made: the interaction to create, and
// what is known of the contents it continues.
type request struct {
	m        *Models
	model    string
	contents []*genai.Content
	body     iw.Request // all but the input
	store    bool
	opts     []operations.Option

	steps  [][]byte      // each content's steps, as a JSON array; nil until computed
	fps    []fingerprint // each content's fingerprint; zero until known
	fold   hash.Hash     // the fold of contents[:folded] (see fold)
	folded int           // the contents folded
	err    error         // the first error computing steps

	prev      *node // the interaction the request continues, nil when it sends the whole history
	held      int   // contents[:held] are prev's history
	token     string
	tokenFrom *node // the interaction that issued token, when it is remembered
	fellBack  bool
}

// plan prepares the model call that continues contents.
func (m *Models) plan(model string, contents []*genai.Content, config *genai.GenerateContentConfig, stream bool) (*request, error) {
	model = strings.TrimPrefix(model, "models/")
	p := &request{m: m, model: model, contents: contents, store: !m.cfg.Stateless,
		steps: make([][]byte, len(contents)), fps: make([]fingerprint, len(contents))}
	p.body.Model = model
	p.body.Stream = stream
	if config != nil {
		if config.Store != nil && !*config.Store {
			p.store = false
		}
		if err := iw.SetConfig(&p.body, config); err != nil {
			return nil, fmt.Errorf("geminiinteractions: %w", err)
		}
		if h := config.HTTPOptions; h != nil {
			if len(h.Headers) > 0 {
				set := make(map[string]string, len(h.Headers))
				for k, v := range h.Headers {
					set[k] = strings.Join(v, " ")
				}
				p.opts = append(p.opts, operations.WithSetHeaders(set))
			}
			if h.Timeout != nil {
				p.opts = append(p.opts, operations.WithOperationTimeout(*h.Timeout))
			}
		}
		if len(config.ContinuationToken) > 0 {
			p.token, p.tokenFrom = m.continuation(config.ContinuationToken)
		}
	}
	if !p.store {
		f := false
		p.body.Store = &f
	}
	if len(contents) == 0 {
		return nil, errors.New("geminiinteractions: no contents to send")
	}
	if p.store && p.tokenFrom == nil {
		p.prev, p.held = m.chains.match(model, p)
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// fingerprint returns the fingerprint of contents[i]: the one known for
// its address, if any (known may be nil), or else its steps'.
func (p *request) fingerprint(i int, known map[*genai.Content]known) fingerprint {
	if p.fps[i] == (fingerprint{}) {
		if k, ok := known[p.contents[i]]; ok {
			p.fps[i] = k.fp
		} else {
			p.stepsOf(i)
		}
	}
	return p.fps[i]
}

// foldTo returns the fold of contents[:n] (see fold), taking the
// contents' fingerprints as fingerprint does. It goes on from the fold
// before, when that fold is of fewer contents.
func (p *request) foldTo(n int, known map[*genai.Content]known) hash.Hash {
	if p.fold == nil || p.folded > n {
		p.fold, p.folded = fold(nil), 0
	}
	for ; p.folded < n; p.folded++ {
		p.fingerprint(p.folded, known)
		p.fold.Write(p.fps[p.folded][:])
	}
	return p.fold
}

func (p *request) stepsOf(i int) []byte {
	if p.steps[i] != nil {
		return p.steps[i]
	}
	steps, err := iw.Steps(p.contents[i])
	b := iw.AppendJSON(nil, steps)
	if err != nil {
		if p.err == nil {
			p.err = fmt.Errorf("geminiinteractions: content %d: %w", i, err)
		}
		b = []byte("[]")
	}
	p.steps[i], p.fps[i] = b, sha256.Sum256(b)
	return b
}

// input returns the steps of contents[from:], as one JSON array.
func (p *request) input(from int) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := from; i < len(p.contents); i++ {
		b := p.stepsOf(i)
		if len(b) <= 2 {
			continue
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(b[1 : len(b)-1])
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// fallback reports whether err says the server no longer holds the
// interaction the request continued; it then makes the request send the
// whole history instead, once.
func (p *request) fallback(err error) bool {
	if p.fellBack || (p.prev == nil && p.tokenFrom == nil) || !unknownInteraction(err) {
		return false
	}
	if p.prev != nil {
		p.m.chains.forget(p.prev.id)
	}
	if p.tokenFrom != nil {
		p.m.chains.forget(p.tokenFrom.id)
	}
	p.prev, p.held, p.tokenFrom, p.fellBack = nil, 0, nil, true
	p.m.stats.fallbacks.Add(1)
	return true
}

// unknownInteraction reports whether err is the API's answer to a
// previous_interaction_id it does not hold: 404, or a 400 that says so.
func unknownInteraction(err error) bool {
	var e genai.APIError
	if !errors.As(err, &e) {
		return false
	}
	if e.Code == http.StatusNotFound {
		return true
	}
	msg := strings.ToLower(e.Message)
	return e.Code == http.StatusBadRequest && (strings.Contains(msg, "previous_interaction") || strings.Contains(msg, "not found"))
}

// create sends the request: the SDK's own retries and continuation off,
// the loop owns both.
func (m *Models) create(ctx context.Context, p *request) (*operations.CreateInteractionResponse, error) {
	body := p.body
	var in []byte
	switch {
	case p.tokenFrom != nil && p.store:
		// A continuation hop: the interaction that issued the token holds
		// everything.
		body.PreviousInteractionID = p.tokenFrom.id
	case p.prev != nil:
		body.PreviousInteractionID = p.prev.id
		in = p.input(p.held)
	default:
		in = p.input(0)
	}
	if p.err != nil {
		return nil, p.err
	}
	body.ContinuationToken = p.token
	m.stats.requests.Add(1)
	if body.PreviousInteractionID != "" {
		m.stats.chained.Add(1)
	} else {
		m.stats.whole.Add(1)
	}
	m.stats.inputBytes.Add(int64(len(in)))
	sdk, err := sdkBody(&body, in)
	if err != nil {
		return nil, err
	}
	opts := append([]operations.Option{operations.WithRetries(retry.Config{Strategy: "none"}),
		operations.WithAutomaticContinuation(false)}, p.opts...)
	res, err := m.ix.Create(ctx, operations.CreateInteractionRequest{Body: operations.NewCreateInteractionRequestBody(sdk)}, opts...)
	if err != nil {
		return nil, apiError(err)
	}
	return res, nil
}

// sdkBody returns body as the SDK's request: its input, tools, tool
// choice and response format as this package's JSON (the SDK sends them
// unchanged), its other fields in the SDK's types.
func sdkBody(body *iw.Request, input []byte) (ixmodels.CreateModelInteraction, error) {
	c := ixmodels.CreateModelInteraction{Model: ixmodels.Model(body.Model), Store: body.Store}
	if input != nil {
		in := ixmodels.NewInteractionsInputUnknown(input)
		c.Input = &in
	}
	if body.Stream {
		c.Stream = interactions.Bool(true)
	}
	set := func(dst **string, v string) {
		if v != "" {
			*dst = &v
		}
	}
	set(&c.PreviousInteractionID, body.PreviousInteractionID)
	set(&c.SystemInstruction, body.SystemInstruction)
	set(&c.ContinuationToken, body.ContinuationToken)
	for _, t := range body.Tools {
		b, err := iw.Marshal(t)
		if err != nil {
			return c, err
		}
		c.Tools = append(c.Tools, ixmodels.NewToolUnknown(b))
	}
	if g := body.GenerationConfig; g != nil {
		gc := &ixmodels.GenerationConfig{StopSequences: g.StopSequences}
		// Deprecated in the SDK's schema (v1.77.0), still taken by the API:
		// a caller who sets them gets them.
		gc.Temperature = g.Temperature //lint:ignore SA1019 see above
		gc.TopP = g.TopP               //lint:ignore SA1019 see above
		if g.Seed != nil {
			gc.Seed = interactions.Int(int(*g.Seed))
		}
		if g.MaxOutputTokens > 0 {
			gc.MaxOutputTokens = interactions.Int(int(g.MaxOutputTokens))
		}
		if g.ThinkingLevel != "" {
			gc.ThinkingLevel = ixmodels.ThinkingLevel(g.ThinkingLevel).ToPointer()
		}
		if g.ThinkingSummaries != "" {
			gc.ThinkingSummaries = ixmodels.ThinkingSummaries(g.ThinkingSummaries).ToPointer()
		}
		if len(g.ToolChoice) > 0 {
			tc := ixmodels.NewToolChoiceUnknown(g.ToolChoice)
			gc.ToolChoice = &tc
		}
		c.GenerationConfig = gc
	}
	if rf := body.ResponseFormat; rf != nil {
		b, err := iw.Marshal(rf)
		if err != nil {
			return c, err
		}
		f := ixmodels.NewCreateModelInteractionResponseFormat(ixmodels.NewResponseFormatUnknown(b))
		c.ResponseFormat = &f
	}
	for _, s := range body.SafetySettings {
		ss := ixmodels.SafetySetting{Type: ixmodels.HarmCategory(s.Type), Threshold: ixmodels.Threshold(s.Threshold)}
		if s.Method != "" {
			ss.Method = ixmodels.Method(s.Method).ToPointer()
		}
		c.SafetySettings = append(c.SafetySettings, ss)
	}
	c.Labels = body.Labels
	if body.ServiceTier != "" {
		c.ServiceTier = ixmodels.ServiceTier(body.ServiceTier).ToPointer()
	}
	return c, nil
}

// response returns the response of the interaction ix, which answered p,
// and remembers ix when the server keeps it.
func (p *request) response(ix *iw.Interaction, httpRes *http.Response) (*genai.GenerateContentResponse, error) {
	content, err := iw.ModelContent(ix.Steps)
	if err != nil {
		return nil, fmt.Errorf("geminiinteractions: interaction %s: %w", ix.ID, err)
	}
	return p.finish(ix, ix.Steps, content, httpRes)
}

// finish turns the end of an interaction into the response the loop reads
// (see status.go), and remembers the interaction.
func (p *request) finish(ix *iw.Interaction, steps []iw.Step, content *genai.Content, httpRes *http.Response) (*genai.GenerateContentResponse, error) {
	cand, err := candidate(ix, steps, content)
	if err != nil {
		return nil, err
	}
	resp := &genai.GenerateContentResponse{
		ResponseID:    ix.ID,
		ModelVersion:  p.model,
		Candidates:    []*genai.Candidate{cand},
		UsageMetadata: iw.UsageMetadata(ix.Usage),
	}
	if ix.Model != "" {
		resp.ModelVersion = ix.Model
	}
	if t, err := time.Parse(time.RFC3339Nano, ix.Created); err == nil {
		resp.CreateTime = t
	}
	if httpRes != nil {
		resp.SDKHTTPResponse = &genai.HTTPResponse{Headers: httpRes.Header}
	}
	if len(ix.ContinuationToken) > 0 && cand.FinishReason == genai.FinishReasonContinuation {
		cand.ContinuationToken = encodeToken(ix.ID, ix.ContinuationToken, p.store)
	}
	p.remember(ix.ID, content)
	return resp, nil
}

// remember records the interaction id, which answered p with content, as
// the continuation of the history p sent.
func (p *request) remember(id string, content *genai.Content) {
	if !p.store || id == "" || content == nil {
		return
	}
	out, ok := entryOf(content)
	if !ok {
		return
	}
	n := &node{id: id, model: p.model, output: content}
	switch {
	case p.tokenFrom != nil && p.tokenFrom.foreign:
		return // the history it continues is not known here
	case p.tokenFrom != nil:
		// A continuation hop: this interaction holds its issuer's history
		// and answer, continued; the loop joins the two answers into one
		// content.
		from := p.tokenFrom
		joined := &genai.Content{Role: genai.RoleModel, Parts: append(append([]*genai.Part(nil), from.output.Parts...), content.Parts...)}
		e, ok := entryOf(joined)
		if !ok {
			return
		}
		e.ptr = nil // the loop's joined content is another
		n.n, n.base, n.output = from.n, from.base, joined
		n.kept = append(from.kept[:len(from.kept)-1:len(from.kept)-1], e)
	default:
		// The request's contents after the history it continued (all of
		// them when it continued none), and the answer.
		n.n = len(p.contents) + 1
		n.base = foldState(p.foldTo(len(p.contents), nil))
		n.kept = make([]entry, 0, len(p.contents)-p.held+1)
		for i := p.held; i < len(p.contents); i++ {
			n.kept = append(n.kept, entry{ptr: p.contents[i], fp: p.fingerprint(i, nil), size: int64(len(p.stepsOf(i)))})
		}
		n.kept = append(n.kept, out)
	}
	h := fold(n.base)
	h.Write(n.kept[len(n.kept)-1].fp[:])
	n.sum = foldSum(h)
	n.size = nodeOverhead + int64(len(n.id)+len(n.model)+len(n.base))
	for _, e := range n.kept {
		n.size += contentOverhead + e.size
	}
	p.m.chains.add(n)
}

// entryOf returns the entry of content c: its fingerprint and the size of
// its steps' JSON; false when c makes no steps.
func entryOf(c *genai.Content) (entry, bool) {
	steps, err := iw.Steps(c)
	if err != nil {
		return entry{}, false
	}
	b := iw.AppendJSON(nil, steps)
	return entry{ptr: c, fp: sha256.Sum256(b), size: int64(len(b))}, true
}

// A continuation token in genai's types holds the interaction that issued
// it, so that a hop sent from another process still names it.
type tokenJSON struct {
	Interaction string `json:"interaction,omitempty"`
	Token       string `json:"token"`
}

func encodeToken(id, token string, store bool) []byte {
	t := tokenJSON{Token: token}
	if store {
		t.Interaction = id
	}
	b, _ := json.Marshal(t)
	return b
}

// continuation returns the API's token in a token this package made, and
// the interaction that issued it (remembered, or named by the token).
func (m *Models) continuation(b []byte) (string, *node) {
	var t tokenJSON
	if json.Unmarshal(b, &t) != nil || t.Token == "" {
		return string(b), nil
	}
	if t.Interaction == "" {
		return t.Token, nil
	}
	if n := m.chains.get(t.Interaction); n != nil {
		return t.Token, n
	}
	// Issued elsewhere: the server still knows it; only its history is
	// unknown here.
	return t.Token, &node{id: t.Interaction, foreign: true}
}

// streamSeq is GenerateContentStream's iterator type.
type streamSeq = iter.Seq2[*genai.GenerateContentResponse, error]
