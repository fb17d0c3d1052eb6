package fake

import (
	"reflect"

	"google.golang.org/genai"
)

// The two backends parse the same JSON shapes with different protos: each
// has fields the other lacks, and the API answers a field its proto lacks
// as any unknown name, 400 "Invalid JSON payload received. Unknown name
// "x" at '…': Cannot find field." The decoder (rule "json-fields") asks
// fieldOn whether a field exists on the request's backend.
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
	// Verified: Vertex AI answers "Invalid JSON payload received. Unknown
	// name "id" at 'contents[1].parts[0].function_call': Cannot find
	// field." and the same for function_response, on v1 and v1beta1, with
	// Gemini 2.5 and 3 models, although v1beta1's proto lists the field
	// (vercel/ai#15664, charmbracelet/fantasy#265 with genai Go,
	// pydantic/pydantic-ai#5081, langchain-ai/langchainjs#10266). genai
	// sends what it is given (models.go:3344-3356); Vertex never sends ids.
	field[genai.FunctionCall]("id"):     "reports of Vertex AI's 400",
	field[genai.FunctionResponse]("id"): "reports of Vertex AI's 400",
}

// vertexOnly are the fields the Gemini API does not have.
var vertexOnly = map[fieldKey]string{
	field[wireRequest]("modelArmorConfig"):                            "models.go:1317",
	field[wireRequest]("outputConfig"):                                "models.go:1336",
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

// fieldOn reports whether the JSON field name of struct type t exists on
// backend.
func fieldOn(backend genai.Backend, t reflect.Type, name string) bool {
	k := fieldKey{t, name}
	if backend == genai.BackendVertexAI {
		_, only := geminiOnly[k]
		return !only
	}
	_, only := vertexOnly[k]
	return !only
}
