package agent

import (
	"time"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Result is what a run produced. A run that fails returns its partial
// Result next to the error, so the caller can show or continue what
// happened.
type Result struct {
	// Text is the text of the last model turn, without thought parts: the
	// answer when the run finished.
	Text string

	// FinishReason is the last model turn's finish reason: STOP normally,
	// MAX_TOKENS when the answer was cut short (the run then fails with
	// ErrMaxTokens).
	FinishReason genai.FinishReason

	// History is the input followed by every model turn and every tool
	// turn, in order: pass it back, with one more user message, to continue
	// the conversation. It is a new slice, the caller's to keep and extend;
	// the input's contents are shared, not copied, and model contents are
	// kept exactly as the API returned them, thought signatures included.
	// It survives a JSON round trip.
	History []*genai.Content

	// Turns has one entry per model turn, in order. A resumed run's first
	// entry is the turn whose calls it answered, a turn made before the
	// run (see the package documentation, "Resuming a run").
	Turns []Turn

	// Usage sums the token counts of every model response of the run,
	// re-asked ones included, and of the runs of agents it called as tools
	// (see [AsTool]).
	Usage Usage

	// Agents breaks Usage down by agent when the run called agents as
	// tools: this run's own model calls under its agent's name
	// (Config.Name, "" when unset), and each agent called, at any depth,
	// under its tool's name, summed over its calls. Nil when no agent was
	// called.
	Agents map[string]Usage

	// Output is the typed answer of a typed run ([RunTyped], [StreamTyped]):
	// a T, validated against T's schema. Nil for other runs and for a
	// typed run that failed.
	Output any

	// Grounding is what grounds the last model turn's answer, when the API
	// says: the sources a built-in tool found (Google Search's web pages,
	// File Search's documents, Maps' places…), which parts of Text each
	// supports, and the queries made (see Config.BuiltinTools). Nil when
	// the answer is not grounded.
	Grounding *genai.GroundingMetadata

	// Citations are the sources the last model turn's answer recites, when
	// the API names them (its citationMetadata). Nil when there are none.
	Citations []*genai.Citation
}

// answer fills in what res says of the run's answer from its last turn:
// Text, FinishReason, Grounding and Citations.
func (res *Result) answer(last *Turn) {
	res.FinishReason = last.FinishReason
	if last.Response == nil || len(last.Response.Candidates) == 0 {
		return
	}
	c := last.Response.Candidates[0]
	if c == nil {
		return
	}
	res.Text = text(c.Content)
	res.Grounding = c.GroundingMetadata
	if c.CitationMetadata != nil {
		res.Citations = c.CitationMetadata.Citations
	}
}

// Turn is one model turn of a run: the model's response and the tool calls
// it asked for.
type Turn struct {
	// Response is the model's response; for a streamed turn, its chunks
	// merged into one. It is nil for the turn a resumed run answered, whose
	// content is the last of the history the run was given.
	Response *genai.GenerateContentResponse

	// Calls are the function calls the model asked for, in order.
	Calls []*genai.FunctionCall

	// Results answer Calls, in the same order.
	Results []ToolResult

	// Usage is this turn's token counts, re-asked responses included.
	Usage Usage

	// FinishReason is the response's finish reason.
	FinishReason genai.FinishReason

	// Attempts counts the model calls made for this turn: 1, plus retries,
	// re-asks and continuation hops; 0 for the turn a resumed run
	// answered.
	Attempts int

	// Continuations counts the continuation requests the turn's answer
	// took: 0 for an answer made in one request, more when the API cut it
	// at its per-request output limit and the loop continued it (see
	// Config.MaxContinuations); Response then holds the hops merged.
	Continuations int

	// Latency is the time spent in model calls for this turn, waits
	// between retries included.
	Latency time.Duration

	// ToolTime is the time spent running this turn's tool calls.
	ToolTime time.Duration

	// hopPrompt is the first hop's prompt token count, for a continued
	// answer (see Run.promptSize).
	hopPrompt int
}

// ToolResult is the outcome of one function call.
type ToolResult struct {
	// Call is the model's function call.
	Call *genai.FunctionCall

	// Result is what was sent back: the tool's result, or an error result
	// for an unknown tool, a call over the per-turn cap, a call denied by
	// Intercept, or a timeout.
	toolset.Result

	// Duration is how long the call took.
	Duration time.Duration
}

// Usage counts tokens, summed from the API's usageMetadata.
type Usage struct {
	PromptTokens        int // tokens of the request, cached ones included
	CandidatesTokens    int // tokens of the response
	ThoughtsTokens      int // tokens of the model's thoughts
	CachedTokens        int // tokens of the request served from a cache
	ToolUsePromptTokens int // tokens of tool-use prompts
	TotalTokens         int // all of the above as the API counts them

	// ServiceTier is the tier that served the calls counted, when the API
	// says: the Gemini API's x-gemini-service-tier header (standard when a
	// priority request was served at the standard tier), Vertex AI's
	// usageMetadata.trafficType. Over calls served by different tiers, the
	// last one's. Request a tier with GenerateConfig.ServiceTier.
	ServiceTier genai.ServiceTier
}

// UncachedTokens returns the input tokens billed at the full input price:
// the prompt's, tool-use prompts included, less those served from a cache
// (CachedTokens, billed at the cached price). The tokens a cache is made
// of are billed once more, at the full price, when it is made; they are
// not in Usage, nor is what keeping a cache costs by the hour.
func (u Usage) UncachedTokens() int {
	return u.PromptTokens + u.ToolUsePromptTokens - u.CachedTokens
}

// Price is what a model's tokens cost, per million tokens, in a currency
// of the program's choosing. The package ships no prices: they change,
// and differ by model, backend, tier and prompt length (Gemini 2.5 Pro
// charges more above 200,000 prompt tokens; pick the Price that applies).
type Price struct {
	// Input is the price of a million input tokens not served from a cache.
	Input float64
	// CachedInput is the price of a million input tokens served from a
	// cache, explicit or implicit: a tenth of Input on Gemini 2.5 and
	// later, as of 2026.
	CachedInput float64
	// Output is the price of a million output tokens, thoughts included.
	Output float64
}

// Cost returns what the tokens u counts cost at p: the uncached input at
// p.Input, the cached input at p.CachedInput, the response and thoughts
// at p.Output. For a run that called agents as tools with other models,
// price each of Result.Agents with its own model's Price and add them up.
func (u Usage) Cost(p Price) float64 {
	return (float64(u.UncachedTokens())*p.Input +
		float64(u.CachedTokens)*p.CachedInput +
		float64(u.CandidatesTokens+u.ThoughtsTokens)*p.Output) / 1e6
}

// serviceTierHeader is the header in which the Gemini API says which tier
// served a request (ai.google.dev/gemini-api/docs/priority-inference; the
// real traffic's responses all carry it, "standard", since mid-2026).
const serviceTierHeader = "X-Gemini-Service-Tier"

// addResponse adds a response's usage to u, with the tier that served it.
func (u *Usage) addResponse(resp *genai.GenerateContentResponse) {
	m := resp.UsageMetadata
	u.add(m)
	switch {
	case m != nil && m.TrafficType != "":
		if tier := trafficTier(m.TrafficType); tier != "" {
			u.ServiceTier = tier
		}
	case resp.SDKHTTPResponse != nil && resp.SDKHTTPResponse.Headers != nil:
		if tier := resp.SDKHTTPResponse.Headers.Get(serviceTierHeader); tier != "" {
			u.ServiceTier = genai.ServiceTier(tier)
		}
	}
}

// trafficTier is the service tier of a Vertex AI traffic type, "" for one
// that names none (provisioned throughput…).
func trafficTier(t genai.TrafficType) genai.ServiceTier {
	switch t {
	case genai.TrafficTypeOnDemand:
		return genai.ServiceTierStandard
	case genai.TrafficTypeOnDemandFlex:
		return genai.ServiceTierFlex
	case genai.TrafficTypeOnDemandPriority:
		return genai.ServiceTierPriority
	}
	return ""
}

// add adds a response's usage metadata to u.
func (u *Usage) add(m *genai.GenerateContentResponseUsageMetadata) {
	if m == nil {
		return
	}
	u.PromptTokens += int(m.PromptTokenCount)
	u.CandidatesTokens += int(m.CandidatesTokenCount)
	u.ThoughtsTokens += int(m.ThoughtsTokenCount)
	u.CachedTokens += int(m.CachedContentTokenCount)
	u.ToolUsePromptTokens += int(m.ToolUsePromptTokenCount)
	u.TotalTokens += int(m.TotalTokenCount)
}

// plus returns the sum of u and v; the tier is v's, if it names one.
func (u Usage) plus(v Usage) Usage {
	tier := u.ServiceTier
	if v.ServiceTier != "" {
		tier = v.ServiceTier
	}
	return Usage{
		PromptTokens:        u.PromptTokens + v.PromptTokens,
		CandidatesTokens:    u.CandidatesTokens + v.CandidatesTokens,
		ThoughtsTokens:      u.ThoughtsTokens + v.ThoughtsTokens,
		CachedTokens:        u.CachedTokens + v.CachedTokens,
		ToolUsePromptTokens: u.ToolUsePromptTokens + v.ToolUsePromptTokens,
		TotalTokens:         u.TotalTokens + v.TotalTokens,
		ServiceTier:         tier,
	}
}
