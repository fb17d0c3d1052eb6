package fake

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"google.golang.org/genai"
)

// Built-in tools (../shared/notes/gemini-2026.md §2): Google Search, code
// execution, URL context, file search and Maps, which the API runs itself
// during the model call. Gemini 3 takes them beside function declarations;
// on the Gemini API the request must then set
// toolConfig.includeServerSideToolInvocations, and the model content holds
// toolCall and toolResponse parts (ids, tool types, thought signatures)
// that go back unchanged. Code execution answers in executableCode and
// codeExecutionResult parts on both backends.

// builtinKinds are the tool fields of the built-in tools the rules below
// treat as such: those the API runs itself. computerUse is not one: its
// calls are functions the client runs.
func builtinTool(t *genai.Tool) bool {
	return t != nil && (t.GoogleSearch != nil || t.CodeExecution != nil || t.URLContext != nil || t.FileSearch != nil ||
		t.GoogleMaps != nil || t.GoogleSearchRetrieval != nil || t.EnterpriseWebSearch != nil || t.Retrieval != nil)
}

// mixesTools reports whether req declares functions beside a built-in
// tool.
func mixesTools(req *wireRequest) bool {
	builtin := false
	for _, t := range req.Tools {
		builtin = builtin || builtinTool(t)
	}
	return builtin && len(declarations(req)) > 0
}

// The refusals of the mix, as the API words them.
const (
	enableInvocations = "Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling."
	searchToolsOnly   = "Multiple tools are supported only when they are all search tools."
)

func checkServerSideInvocations(in *input) *APIError {
	if in.vertex() || !mixesTools(in.req) {
		return nil
	}
	if tc := in.req.ToolConfig; tc != nil && tc.IncludeServerSideToolInvocations != nil && *tc.IncludeServerSideToolInvocations {
		return nil
	}
	return invalidArgument(enableInvocations)
}

func checkVertexToolMix(in *input) *APIError {
	if !in.vertex() || !mixesTools(in.req) {
		return nil
	}
	if major, _, ok := modelname.Major(in.model); ok && major >= 3 {
		return nil
	}
	return invalidArgument(searchToolsOnly)
}

// checkServerToolParts checks the built-in tool parts of the history: in
// each model turn, a toolResponse with an id answers a toolCall of that id
// earlier in the turn.
func checkServerToolParts(in *input) *APIError {
	cs := in.req.Contents
	if !slices.ContainsFunc(cs, func(c *genai.Content) bool {
		return slices.ContainsFunc(c.Parts, func(p *genai.Part) bool { return p.ToolCall != nil || p.ToolResponse != nil })
	}) {
		return nil
	}
	var v []string
	for _, t := range turnsOf(cs) {
		calls := map[string]bool{}
		for i := t.start; i < t.end; i++ {
			for j, p := range cs[i].Parts {
				switch {
				case p.ToolCall != nil && !t.model, p.ToolResponse != nil && !t.model:
					v = append(v, fmt.Sprintf("contents[%d].parts[%d]: a built-in tool's call or response must be in a model turn, where the model sent it.", i, j))
				case p.ToolCall != nil:
					calls[p.ToolCall.ID] = true
				case p.ToolResponse != nil && p.ToolResponse.ID != "" && !calls[p.ToolResponse.ID]:
					v = append(v, fmt.Sprintf("contents[%d].parts[%d].tool_response.id: %q is not the id of a tool call before it in the model turn.", i, j, p.ToolResponse.ID))
				}
			}
		}
	}
	return requestErrors(v)
}

// builtinRules are the rules above, with what backs them; validate.go's
// rules list them.
var builtinRules = []rule{
	{name: "server-side-tool-invocations", check: checkServerSideInvocations,
		verified: "the Gemini API refuses built-in tools beside function declarations without " +
			"toolConfig.includeServerSideToolInvocations, text verified (genkit-ai/genkit#4970, a genai Go client, " +
			"March 2026; cloudwego/eino-ext#761; langchain-ai/langchainjs#10675 for gemini-2.5-flash, April 2026; " +
			"ag2ai/ag2#3145 for gemini-3.1-pro-preview, gemini-3.6-flash and gemini-3.5-flash-lite, August 2026; " +
			"pydantic/pydantic-ai#6052 for code execution), and takes them with it (the real traffic's pydantic-ai " +
			"cassettes, e.g. pydanticai-768b58fe8ebe and -3e502ef7650c: googleSearch beside functions, " +
			"gemini-3-flash-preview, 2026).",
		assumed: "file search, Maps and Google Search retrieval count as built-in tools as the verified ones do; " +
			"a model before Gemini 3 takes the mix with the field (the notes say the mix is a Gemini 3 preview; " +
			"no refusal with the field was seen)."},
	{name: "vertex-tool-mix", check: checkVertexToolMix,
		verified: "Vertex AI refuses built-in tools beside function declarations, text verified " +
			"(BerriAI/litellm#26882 and #23717, 2026; google/adk-docs#626; googleapis/dotnet-genai#248), and " +
			"takes them for Gemini 3 without includeServerSideToolInvocations, which it lacks (the real traffic's " +
			"pydantic-ai cassette pydanticai-dbace0723305, gemini-3-flash-preview, July 2026).",
		assumed: "the refusal is for the models before Gemini 3."},
	{name: "server-tool-parts", check: checkServerToolParts,
		assumed: "a built-in tool's toolCall and toolResponse parts are the model's and go back as it sent them: " +
			"the API refuses them in a user turn, and a toolResponse whose id no toolCall before it in the turn " +
			"has (the real traffic's histories send them back in their model turns, each response after its " +
			"call, e.g. pydanticai-768b58fe8ebe#1 and -cd9aceb2cd5a#1); the texts are the fake's."},
}

// ServerToolCall returns a model part in which the API runs one of its
// built-in tools, as the Gemini API sends it with
// includeServerSideToolInvocations: toolCall{toolType, args}. The server
// gives it an id when it has none, and for models whose name starts with
// "gemini-3" a thought signature.
func ServerToolCall(toolType genai.ToolType, args map[string]any) *genai.Part {
	return &genai.Part{ToolCall: &genai.ToolCall{ToolType: toolType, Args: args}}
}

// ServerToolResponse returns the model part holding what a built-in tool
// returned: toolResponse{toolType, response}. Without an id it takes the
// id of the last toolCall of its type before it.
func ServerToolResponse(toolType genai.ToolType, response map[string]any) *genai.Part {
	return &genai.Part{ToolResponse: &genai.ToolResponse{ToolType: toolType, Response: response}}
}

// GoogleSearch returns the two parts of a Google Search the API ran for
// the model, as the real API sends them: the call with its queries, and the
// response with the search suggestions it renders.
func GoogleSearch(queries ...string) []*genai.Part {
	q := make([]any, len(queries))
	for i, s := range queries {
		q[i] = s
	}
	return []*genai.Part{
		ServerToolCall(genai.ToolTypeGoogleSearchWeb, map[string]any{"queries": q}),
		ServerToolResponse(genai.ToolTypeGoogleSearchWeb, map[string]any{"search_suggestions": searchSuggestions(queries)}),
	}
}

// searchSuggestions is the rendered search entry point of queries.
func searchSuggestions(queries []string) string {
	out := `<div class="container">`
	for _, q := range queries {
		out += fmt.Sprintf(`<a class="chip" href="https://www.google.com/search?q=%s">%s</a>`, url.QueryEscape(q), q)
	}
	return out + "</div>"
}

// CodeExecution returns the two parts of code the API ran for the model:
// executableCode{language PYTHON, code} and codeExecutionResult{outcome
// OK, output}.
func CodeExecution(code, output string) []*genai.Part {
	return []*genai.Part{
		{ExecutableCode: &genai.ExecutableCode{Language: genai.LanguagePython, Code: code}},
		{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: output}},
	}
}

// WebGrounding returns the grounding metadata of an answer whose text
// (all of it, the answer's first text part) the web pages at uris
// support, as Google Search grounds an answer: one web chunk per page,
// titled with its host, and one support of the whole text by every chunk.
func WebGrounding(text string, uris ...string) *genai.GroundingMetadata {
	g := &genai.GroundingMetadata{}
	indices := make([]int32, len(uris))
	for i, u := range uris {
		title := u
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			title = p.Host
		}
		g.GroundingChunks = append(g.GroundingChunks, &genai.GroundingChunk{Web: &genai.GroundingChunkWeb{URI: u, Title: title}})
		indices[i] = int32(i)
	}
	if text != "" && len(uris) > 0 {
		g.GroundingSupports = []*genai.GroundingSupport{{GroundingChunkIndices: indices,
			Segment: &genai.Segment{EndIndex: int32(len(text)), Text: text}}}
	}
	return g
}

// WithGrounding sets the grounding metadata of the reply's first
// candidate, making one if it has none.
func (r *Reply) WithGrounding(g *genai.GroundingMetadata) *Reply {
	r.firstCandidate().GroundingMetadata = g
	return r
}

// WithCitations sets the citation metadata of the reply's first candidate:
// the sources its answer recites.
func (r *Reply) WithCitations(citations ...*genai.Citation) *Reply {
	r.firstCandidate().CitationMetadata = &genai.CitationMetadata{Citations: citations}
	return r
}

func (r *Reply) firstCandidate() *genai.Candidate {
	if r.Response == nil {
		r.Response = &genai.GenerateContentResponse{}
	}
	if len(r.Response.Candidates) == 0 {
		r.Response.Candidates = []*genai.Candidate{{}}
	}
	return r.Response.Candidates[0]
}

// UnexpectedCall returns a reply in which the model calls a function it
// was not given, and the API stops it, as Vertex AI does for Gemini 3:
// the functionCall part, finish reason UNEXPECTED_TOOL_CALL and the
// finish message "Unexpected tool call: Model tried to call an undeclared
// function: NAME" (the real traffic's pydantic-ai cassettes, e.g.
// pydanticai-8675d0f83b3e, 2026).
func UnexpectedCall(name string, args map[string]any) *Reply {
	return Calls(Call(name, args)).WithFinishReason(genai.FinishReasonUnexpectedToolCall,
		"Unexpected tool call: Model tried to call an undeclared function: "+name)
}

// OverloadedMessage is the message of the 503 the API answers when it
// cannot serve a request now, as it words it (the real traffic's
// pydantic-ai cassette pydanticai-b82250d57e5a).
const OverloadedMessage = "The model is overloaded. Please try again later."

// Overloaded returns a reply that answers 503 UNAVAILABLE with the API's
// message for a model that cannot serve the request now: what a request
// the API sheds gets (assumed for the flex tier, whose shed requests the
// API documents no error for).
func Overloaded() *Reply {
	return &Reply{Err: &APIError{Code: http.StatusServiceUnavailable, Status: "UNAVAILABLE", Message: OverloadedMessage}}
}
