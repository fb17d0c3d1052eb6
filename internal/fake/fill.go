package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"
)

// This file turns a scripted reply into the responses that are sent: it
// copies them, merges or splits them, and auto-fills what the API always
// sends.

// events returns the responses to send for reply: one for a unary request,
// the stream events for a streaming one. They are copies the caller owns.
func (s *Server) events(reply *Reply, in *input, stream bool) ([]*genai.GenerateContentResponse, error) {
	var evs []*genai.GenerateContentResponse
	switch {
	case len(reply.Chunks) > 0:
		for _, c := range reply.Chunks {
			cc, err := cloneResponse(c)
			if err != nil {
				return nil, err
			}
			evs = append(evs, cc)
		}
		if !stream {
			evs = []*genai.GenerateContentResponse{mergeResponses(evs)}
		}
	default:
		resp, err := cloneResponse(reply.Response)
		if err != nil {
			return nil, err
		}
		evs = []*genai.GenerateContentResponse{resp}
	}
	if !reply.Raw {
		// Gemini 3 sends function-call ids on both backends. In the real
		// traffic, the Gemini API's have ids from March 2026 on (none
		// before) and Vertex AI's from July 2026 (pydantic-ai's cassette
		// test_google_vertex_tool_combination_omits_include_server_side_tool_invocations;
		// none in February and March); anomalyco/opencode#50504 saw every
		// Vertex AI endpoint send them in September 2026.
		ids := reply.AddIDs || isGemini3(in.model)
		sigs := reply.AddSignatures || isGemini3(in.model)
		if in.interactions {
			// The Interactions API gives every function call an id (sec:
			// discuss.ai.google.dev/t/121529) and signs thought steps,
			// which interactions_reply.go adds.
			ids, sigs = true, false
		}
		s.decorate(evs, ids, sigs)
	}
	if stream && len(reply.Chunks) == 0 {
		// Gemini 3 on the Gemini API ends a streamed function-call turn
		// with an event whose only part is {"text": ""} and which carries
		// the finishReason (captured, charmbracelet/fantasy providertests
		// gemini-3-pro-preview/tool_streaming.yaml).
		emptyLast := !reply.Raw && !in.vertex() && isGemini3(in.model)
		evs = s.split(evs[0], reply.TextChunk, reply.TrailingSignature, emptyLast)
	}
	if err := s.markContinuation(evs, reply, in, stream); err != nil {
		return nil, err
	}
	if !reply.Raw {
		s.fill(evs, in)
	}
	return evs, nil
}

// cloneResponse deep-copies r through JSON (nil gives an empty response)
// and drops the SDK-only sdkHttpResponse.
func cloneResponse(r *genai.GenerateContentResponse) (*genai.GenerateContentResponse, error) {
	out := &genai.GenerateContentResponse{}
	if r == nil {
		return out, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("fake: scripted response is not JSON: %w", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("fake: scripted response does not decode: %w", err)
	}
	out.SDKHTTPResponse = nil
	return out, nil
}

// mergeResponses merges stream chunks into the one response a unary call
// would get: the parts of each candidate concatenated, consecutive text
// parts joined (a text part that already carries a signature ends a run,
// and its signature is kept), other candidate fields and usage from the
// last chunk that sets them, promptFeedback, model version and response id
// from the first.
func mergeResponses(chunks []*genai.GenerateContentResponse) *genai.GenerateContentResponse {
	out := &genai.GenerateContentResponse{}
	for _, c := range chunks {
		if out.PromptFeedback == nil {
			out.PromptFeedback = c.PromptFeedback
		}
		if out.ModelVersion == "" {
			out.ModelVersion = c.ModelVersion
		}
		if out.ResponseID == "" {
			out.ResponseID = c.ResponseID
		}
		if c.UsageMetadata != nil {
			out.UsageMetadata = c.UsageMetadata
		}
		for k, cand := range c.Candidates {
			if k == len(out.Candidates) {
				out.Candidates = append(out.Candidates, &genai.Candidate{})
			}
			mergeCandidate(out.Candidates[k], cand)
		}
	}
	return out
}

func mergeCandidate(dst, src *genai.Candidate) {
	parts := dst.Content
	*dst, dst.Content = *src, parts
	if src.Content == nil {
		return
	}
	if dst.Content == nil {
		dst.Content = &genai.Content{Role: src.Content.Role}
	}
	for _, p := range src.Content.Parts {
		ps := dst.Content.Parts
		if n := len(ps); n > 0 && isPlainText(ps[n-1]) && isPlainText(p) &&
			ps[n-1].Thought == p.Thought && len(ps[n-1].ThoughtSignature) == 0 {
			ps[n-1].Text += p.Text
			ps[n-1].ThoughtSignature = p.ThoughtSignature
			continue
		}
		dst.Content.Parts = append(dst.Content.Parts, p)
	}
}

// isPlainText reports whether p is a text part (possibly empty) with no
// other data.
func isPlainText(p *genai.Part) bool {
	q := *p
	q.Text, q.Thought, q.ThoughtSignature = "", false, nil
	return isZeroPart(&q)
}

func isZeroPart(p *genai.Part) bool {
	b, _ := json.Marshal(p) // a decoded part always marshals
	return string(b) == "{}"
}

// decorate gives the model turn of each candidate, spread over evs, what
// Gemini 3 models send: an id on every function call (ids), and a thought
// signature on the first functionCall part, or on the last part of a turn
// without function calls (sigs). Scripted ids and signatures are kept.
func (s *Server) decorate(evs []*genai.GenerateContentResponse, ids, sigs bool) {
	for k := 0; ; k++ {
		var parts []*genai.Part
		found := false
		for _, e := range evs {
			if k < len(e.Candidates) {
				found = true
				if c := e.Candidates[k].Content; c != nil {
					parts = append(parts, c.Parts...)
				}
			}
		}
		if !found {
			return
		}
		s.decorateTurn(parts, ids, sigs)
	}
}

func (s *Server) decorateTurn(parts []*genai.Part, ids, sigs bool) {
	var firstCall *genai.Part
	var calls map[genai.ToolType]string // the id of each built-in tool's last call
	for _, p := range parts {
		// A built-in tool's call always has an id, and its response the
		// call's; Gemini 3 signs both (the real traffic's pydantic-ai
		// cassettes, e.g. pydanticai-768b58fe8ebe).
		switch {
		case p.ToolCall != nil:
			if p.ToolCall.ID == "" {
				p.ToolCall.ID = fmt.Sprintf("tc-%d", s.nextID())
			}
			if calls == nil {
				calls = map[genai.ToolType]string{}
			}
			calls[p.ToolCall.ToolType] = p.ToolCall.ID
		case p.ToolResponse != nil && p.ToolResponse.ID == "":
			p.ToolResponse.ID = calls[p.ToolResponse.ToolType]
		}
		if sigs && (p.ToolCall != nil || p.ToolResponse != nil) && len(p.ThoughtSignature) == 0 {
			p.ThoughtSignature = s.signature()
		}
		if p.FunctionCall == nil {
			continue
		}
		if firstCall == nil {
			firstCall = p
		}
		if ids && p.FunctionCall.ID == "" {
			p.FunctionCall.ID = fmt.Sprintf("fc-%d", s.nextID())
		}
	}
	if !sigs || len(parts) == 0 {
		return
	}
	switch {
	case firstCall != nil:
		if len(firstCall.ThoughtSignature) == 0 {
			firstCall.ThoughtSignature = s.signature()
		}
	default:
		for _, p := range parts {
			if len(p.ThoughtSignature) > 0 {
				return
			}
		}
		parts[len(parts)-1].ThoughtSignature = s.signature()
	}
}

// signature returns a new thought signature. On the wire it is padded
// standard base64, as the SDK requires.
func (s *Server) signature() []byte {
	sig := fmt.Appendf(nil, "fake-thought-signature-%d", s.nextID())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signatures == nil {
		s.signatures = map[string]bool{}
	}
	// The Interactions API takes the signatures the API made, on either
	// API (assumed: one model makes them): interactions_rules.go checks.
	s.signatures[string(sig)] = true
	return sig
}

// fill completes evs, the events of one reply, with what the API always
// sends, as the captures in charmbracelet/fantasy's providertests show it
// (genai Go against both backends, 2026-03):
//
//   - role "model", the candidate index, and finishReason STOP on the last
//     event when a candidate with content has none;
//   - on the Gemini API, finishMessage "Model generated function call(s)."
//     on an event that finishes with STOP and holds a function call;
//   - the model version and one response id on every event; on Vertex AI,
//     one createTime too;
//   - usage, unless the script set usage on one of them: on the Gemini API
//     the running totals on every event; on Vertex AI the totals with
//     candidatesTokensDetails on the last event only, the events before it
//     carrying only the trafficType, which every event has (ON_DEMAND, or
//     ON_DEMAND_PRIORITY and ON_DEMAND_FLEX for those service tiers:
//     vercel/ai#15488, BerriAI/litellm#25379).
func (s *Server) fill(evs []*genai.GenerateContentResponse, in *input) {
	responseID := fmt.Sprintf("fake-response-%d", s.nextID())
	vertex := in.vertex()
	var created time.Time
	if vertex {
		created = s.timeNow().UTC().Truncate(time.Microsecond)
	}
	scriptedUsage := false
	for _, e := range evs {
		scriptedUsage = scriptedUsage || e.UsageMetadata != nil
	}
	var u usageCounter
	u.prompt(in.req)
	u.promptBytes += in.priorOutput // a continuation re-reads the answer so far
	u.cached = in.cachedTokens
	for i, e := range evs {
		last := i == len(evs)-1
		for k, c := range e.Candidates {
			if c.Index == 0 {
				c.Index = int32(k)
			}
			if c.Content != nil && c.Content.Role == "" {
				c.Content.Role = genai.RoleModel
			}
			if last && c.FinishReason == "" && c.Content != nil && len(c.Content.Parts) > 0 && !finished(evs, k) {
				c.FinishReason = genai.FinishReasonStop
			}
			if !vertex && c.FinishReason == genai.FinishReasonStop && c.FinishMessage == "" && hasCall(c.Content) {
				c.FinishMessage = "Model generated function call(s)."
			}
			u.add(c.Content)
		}
		if e.ModelVersion == "" {
			e.ModelVersion = in.model
		}
		if e.ResponseID == "" {
			e.ResponseID = responseID
		}
		if vertex && e.CreateTime.IsZero() {
			e.CreateTime = created
		}
		if scriptedUsage {
			continue
		}
		switch {
		case !vertex:
			e.UsageMetadata = u.metadata()
		case last:
			e.UsageMetadata = u.metadata()
			e.UsageMetadata.CandidatesTokensDetails = []*genai.ModalityTokenCount{
				{Modality: genai.MediaModalityText, TokenCount: e.UsageMetadata.CandidatesTokenCount}}
			e.UsageMetadata.TrafficType = trafficType(in.req)
		default:
			e.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{TrafficType: trafficType(in.req)}
		}
	}
}

// trafficType is the usageMetadata.trafficType Vertex AI answers req with.
func trafficType(req *wireRequest) genai.TrafficType {
	switch {
	case req == nil:
	case strings.EqualFold(string(req.ServiceTier), string(genai.ServiceTierPriority)):
		return genai.TrafficTypeOnDemandPriority
	case strings.EqualFold(string(req.ServiceTier), string(genai.ServiceTierFlex)):
		return genai.TrafficTypeOnDemandFlex
	}
	return genai.TrafficTypeOnDemand
}

// hasCall reports whether c holds a function call.
func hasCall(c *genai.Content) bool {
	if c == nil {
		return false
	}
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			return true
		}
	}
	return false
}

// finished reports whether candidate k has a finishReason in any event.
func finished(evs []*genai.GenerateContentResponse, k int) bool {
	for _, e := range evs {
		if k < len(e.Candidates) && e.Candidates[k].FinishReason != "" {
			return true
		}
	}
	return false
}

// encodeResponse returns the JSON the API sends for r, an answer to in. A
// part with no data is sent as an empty text part ({"text":""}, with its
// thoughtSignature if it has one), as the API does; genai's omitempty would
// drop the text. The Gemini API sends the candidate index even when it is 0
// and Vertex AI does not; the Gemini API echoes a requested service tier as
// usageMetadata.serviceTier (vercel/ai#15488), which genai has no field for.
func (s *Server) encodeResponse(r *genai.GenerateContentResponse, in *input) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("fake: scripted response is not JSON: %w", err)
	}
	tree, err := parseJSON(b)
	if err != nil {
		return nil, err
	}
	for _, c := range tree.get("candidates").elems() {
		if c.get("index") == nil && !in.vertex() { // omitempty drops the index 0 the API sends
			c.set("index", &jsonValue{kind: jsonNumber, str: "0"})
		}
		if i := slices.Index(c.keys, "citationMetadata"); i >= 0 && !in.vertex() {
			// The Gemini API names the list citationSources (genai's
			// citationMetadataFromMldev, models.go:130); Vertex AI
			// citations, as genai's type does. (The JSON is genai's:
			// its keys are camelCase.)
			if cm := c.vals[i]; cm.kind == jsonObject {
				if j := slices.Index(cm.keys, "citations"); j >= 0 {
					cm.keys[j] = "citationSources"
				}
			}
		}
		for _, p := range c.get("content").get("parts").elems() {
			if p.get("text") == nil && !hasData(p) {
				p.keys = append([]string{"text"}, p.keys...)
				p.vals = append([]*jsonValue{{kind: jsonString}}, p.vals...)
			}
		}
	}
	if u := tree.get("usageMetadata"); u != nil && !in.vertex() && in.req != nil && in.req.ServiceTier != "" &&
		u.get("serviceTier") == nil {
		u.set("serviceTier", &jsonValue{kind: jsonString, str: string(in.req.ServiceTier)})
	}
	var buf bytes.Buffer
	tree.encode(&buf)
	return buf.Bytes(), nil
}

// mustJSON marshals v, which is built by this package and always marshals.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("fake: " + err.Error())
	}
	return b
}
