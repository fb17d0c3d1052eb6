package fake

import (
	"strings"

	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"google.golang.org/genai"
)

// The rule "response-schema-with-tools": which backends and models refuse a
// JSON response (generationConfig.responseMimeType "application/json", with
// or without responseSchema or responseJsonSchema) in a request that also
// declares functions.
//
// Verified, text verbatim: "Function calling with a response mime type:
// 'application/json' is unsupported", 400 INVALID_ARGUMENT, from the Gemini
// API for gemini-1.5-flash (google-gemini/deprecated-generative-ai-swift#195),
// gemini-2.5-flash (symfony/ai#1777, analyticalrohit/ai-blog-generator#16),
// gemini-2.5-flash-lite (analyticalrohit/ai-blog-generator#17) and
// gemini-2.5-pro (google/adk-python#5735); googleapis/python-genai#867 says
// it comes from the API, not the SDK. The same request with function
// calling mode NONE is accepted (google/adk-python#5735, gemini-2.5-pro).
// Gemini 2.0 accepts the combination: "I don't get this error for flash
// 2.0" (mastra-ai/mastra#10666, November 2025, the refusal being for
// gemini-2.5-flash), and genkit-ai/genkit#5401 (May 2026) says the Gemini
// API has taken it since Gemini 2.0 (the fake used to refuse it for Gemini
// 2.0 too, on no report of a refusal for that model).
// Gemini 3 models accept the combination: Google's Gemini 3 developer guide,
// "Structured Outputs with tools" (ai.google.dev/gemini-api/docs/gemini-3),
// and pydantic-ai's google profile (google_supports_tool_combination for
// gemini-3 and newer).
//
// Assumed: Vertex AI accepts it from Gemini 2.0 on, as google/adk-go
// (internal/llminternal/googlellm/variant.go, CanUseOutputSchemaWithTools)
// and ADK Python decide; no Vertex AI capture of the refusal was found.
// Models whose version cannot be read from the name (aliases such as
// gemini-flash-latest, tuned models) are not refused: the fake refuses only
// what the API is known to refuse. The real traffic has no Gemini 1.x or 2.x
// request of the combination.

// checkResponseSchemaWithTools refuses a JSON response with function
// declarations, unless function calling is off (mode NONE) or the model
// accepts the combination (see [jsonWithToolsAccepted]).
func checkResponseSchemaWithTools(in *input) *APIError {
	gc := in.req.GenerationConfig
	if gc == nil || !strings.EqualFold(strings.TrimSpace(gc.ResponseMIMEType), "application/json") || len(declarations(in.req)) == 0 {
		return nil
	}
	if tc := in.req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil &&
		strings.EqualFold(string(tc.FunctionCallingConfig.Mode), string(genai.FunctionCallingConfigModeNone)) {
		return nil
	}
	if jsonWithToolsAccepted(in.backend, in.model) {
		return nil
	}
	return invalidArgument("Function calling with a response mime type: 'application/json' is unsupported")
}

// jsonWithToolsAccepted reports whether a model on a backend accepts a JSON
// response together with function declarations: Gemini 3 and later
// everywhere, Gemini 2 on Vertex AI and Gemini 2.0 on the Gemini API, and
// any model whose version the name does not tell.
func jsonWithToolsAccepted(backend genai.Backend, model string) bool {
	major, tail, ok := modelname.Major(strings.ToLower(model))
	switch {
	case !ok, major >= 3:
		return true
	case major < 2:
		return false
	case backend == genai.BackendVertexAI:
		return true
	}
	return !strings.HasPrefix(tail, ".5") // Gemini 2.0 on the Gemini API
}
