package fake

import (
	"reflect"

	"google.golang.org/genai"
)

// The two backends parse the same JSON shapes with different protos: each
// has fields the other lacks, and the API answers a field its proto lacks
// as any unknown name, 400 "Invalid JSON payload received. Unknown name
// "x" at '…': Cannot find field." The decoder (rule "json-fields") asks
// fieldOn whether a field exists on the request's backend and API version.
//
// Function-call ids (functionCall.id, functionResponse.id) exist on both.
// Vertex AI accepts them: the real traffic holds 66 Vertex AI requests
// carrying them, all on v1beta1; 63 were answered 200 and 3 were refused
// for a URL Vertex AI could not fetch, past the parsing of the ids. They run
// from January 2026 (gemini-2.0-flash in us-central1, pydantic-ai's
// test_multimodal_tool_return_google-audio_ cassette) through February and
// March (gemini-3-flash-preview on the global endpoint, pydantic-ai's
// test_multimodal_tool_return_matrix_…google_vertex_ cassettes) to July
// 2026 (pydantic-ai's
// test_google_vertex_tool_combination_omits_include_server_side_tool_invocations).
// anomalyco/opencode#50504 (September 2026) verified ids accepted on v1
// (express mode) and on v1beta1 (global, us and eu) after the discovery
// revision of 2026-09-21 added the field to both: the newest word, and
// what the fake models. The fake refused ids on Vertex AI before, after
// reports of its 400 "Unknown name "id" at '…function_call': Cannot find
// field." from February to August 2026 (agentjido/req_llm#414 on v1 express,
// looplj/axonhub#874, langchain-ai/langchainjs#10266,
// pydantic/pydantic-ai#5081, charmbracelet/fantasy#265, vercel/ai#15664;
// the last on 2026-08-23, when opencode#44454 stripped them): the versions
// and locations of most are not known, and none is as recent as the
// verification. Vertex AI sends ids itself for Gemini 3 since mid-2026
// (fill.go), and a client that sends back what it received sends them.
//
// Unless marked otherwise, an entry is a field genai v1.77.0 refuses to
// send to the other backend, with the client-side error "x parameter is
// only supported in Gemini Developer API mode" (or "in Gemini Enterprise
// Agent Platform mode", Vertex AI); the place is given as models.go:line in
// google.golang.org/genai@v1.77.0. That the API itself refuses such a field
// is assumed from its proto, which lacks it.

// fieldKey names a JSON field of a struct type.
type fieldKey struct {
	in   reflect.Type
	name string // lowerCamelCase
}

func field[T any](name string) fieldKey {
	return fieldKey{reflect.TypeFor[T](), name}
}

// geminiOnly are the fields Vertex AI does not have.
var geminiOnly = map[fieldKey]string{
	field[wireRequest]("store"):                                 "models.go:1580",
	field[generationConfig]("enableEnhancedCivicAnswers"):       "models.go:1551",
	field[generationConfig]("modelSelectionConfig"):             "models.go:1452 (Vertex calls it modelConfig)",
	field[genai.Part]("toolCall"):                               "models.go:3385",
	field[genai.Part]("toolResponse"):                           "models.go:3389",
	field[genai.Part]("partMetadata"):                           "models.go:3393",
	field[genai.FunctionResponse]("willContinue"):               "models.go:1075",
	field[genai.FunctionResponsePart]("mediaProcessing"):        "models.go:1066",
	field[genai.ToolConfig]("includeServerSideToolInvocations"): "models.go:3914",
	field[genai.Tool]("fileSearch"):                             "models.go:4010",
}

// vertexOnly are the fields the Gemini API does not have.
var vertexOnly = map[fieldKey]string{
	field[wireRequest]("modelArmorConfig"):                            "models.go:1317",
	field[wireRequest]("outputConfig"):                                "models.go:1336",
	field[wireCachedContent]("encryptionSpec"):                        "caches.go:95-97 (kmsKeyName)",
	field[generationConfig]("routingConfig"):                          "models.go:1210",
	field[generationConfig]("modelConfig"):                            "models.go:1214",
	field[generationConfig]("audioTimestamp"):                         "models.go:1293",
	field[genai.FunctionCall]("partialArgs"):                          "models.go:1022",
	field[genai.FunctionCall]("willContinue"):                         "models.go:1026",
	field[genai.FunctionCallingConfig]("streamFunctionCallArguments"): "models.go:1046",
	field[genai.SafetySetting]("method"):                              "models.go:3680",
	field[genai.GoogleSearch]("blockingConfidence"):                   "models.go:2723",
	field[genai.GoogleSearch]("excludeDomains"):                       "models.go:2727",
	field[genai.GoogleMaps]("groundingTypes"):                         "models.go:2708",
	field[genai.ImageConfig]("personGeneration"):                      "models.go:2752",
	field[genai.ImageConfig]("prominentPeople"):                       "models.go:2756",
	field[genai.ImageConfig]("outputMimeType"):                        "models.go:2760",
	field[genai.ImageConfig]("outputCompressionQuality"):              "models.go:2764",
	field[genai.ImageConfig]("imageOutputOptions"):                    "models.go:2768",
	field[genai.Tool]("retrieval"):                                    "models.go:3923",
	field[genai.Tool]("enterpriseWebSearch"):                          "models.go:3962",
	field[genai.Tool]("parallelAiSearch"):                             "models.go:3976",
	field[genai.Tool]("exaAiSearch"):                                  "models.go:3990",
}

// geminiV1alphaOnly are the fields the Gemini API has on v1alpha only: v1beta
// and v1 answer them as unknown names.
var geminiV1alphaOnly = map[fieldKey]string{
	// Verified on v1beta: "Invalid JSON payload received. Unknown name
	// "mediaResolution" at 'contents[0].parts[1]': Cannot find field.",
	// for gemini-3-pro-preview (November 2025, the real traffic's
	// pydantic-ai cassettes test_google_model_image_url_detail,
	// …_binary_image_detail, …_video_url_detail and
	// …_binary_video_detail). The Gemini 3 developer guide
	// (ai.google.dev/gemini-api/docs/gemini-3, "Media resolution") says the
	// per-part setting is v1alpha only; genai sends it to either version
	// (models.go:3228). That v1 refuses it too is assumed.
	field[genai.Part]("mediaResolution"): "v1alpha only (the Gemini 3 developer guide)",
}

// fieldOn reports whether the JSON field name of struct type t exists on
// backend, in API version (the path's "v1beta", "v1alpha", "v1beta1"…).
func fieldOn(backend genai.Backend, version string, t reflect.Type, name string) bool {
	k := fieldKey{t, name}
	if backend == genai.BackendVertexAI {
		_, only := geminiOnly[k]
		return !only
	}
	if _, only := geminiV1alphaOnly[k]; only && version != "v1alpha" {
		return false
	}
	_, only := vertexOnly[k]
	return !only
}
