package fake

import (
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// Enums in the request JSON. The API parses the body as proto JSON, whose
// parsers "accept both enum names and integer values"
// (https://protobuf.dev/programming-guides/json/): the legacy Go SDK
// (cloud.google.com/go/ai/generativelanguage, generative_client.go:702)
// marshals with UseEnumNumbers, so "category": 10 and "type": 6 reach the
// API and are answered 200. The numbers are those of the backend's protos,
// and they differ between the two: HARM_CATEGORY_DANGEROUS_CONTENT is 10 on
// the Gemini API and 2 on Vertex AI.
//
// The tables below list, per backend, the values of the enums a request
// may hold by number (index = number, "" for an unused number). They come
// from googleapis/googleapis at f8291d2 (2026-08-22):
// google/ai/generativelanguage/v1beta/{content,safety,generative_service}.proto
// and google/cloud/aiplatform/v1beta1/{openapi,content,tool}.proto. Other
// numbers, and the enums not listed, are recorded as the decimal string of
// the number, except for the checked enums below, which refuse them.
var (
	geminiEnums = map[reflect.Type][]string{
		reflect.TypeFor[genai.Type](): {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"},
		reflect.TypeFor[genai.HarmCategory](): {"HARM_CATEGORY_UNSPECIFIED", "HARM_CATEGORY_DEROGATORY", "HARM_CATEGORY_TOXICITY",
			"HARM_CATEGORY_VIOLENCE", "HARM_CATEGORY_SEXUAL", "HARM_CATEGORY_MEDICAL", "HARM_CATEGORY_DANGEROUS",
			"HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
			"HARM_CATEGORY_DANGEROUS_CONTENT", "HARM_CATEGORY_CIVIC_INTEGRITY"},
		reflect.TypeFor[genai.HarmBlockThreshold]():         harmBlockThresholds,
		reflect.TypeFor[genai.FunctionCallingConfigMode]():  {"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"},
		reflect.TypeFor[genai.Modality]():                   {"MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "AUDIO"},
		reflect.TypeFor[genai.MediaResolution]():            mediaResolutions,
		reflect.TypeFor[genai.Behavior]():                   {"UNSPECIFIED", "BLOCKING", "NON_BLOCKING"},
		reflect.TypeFor[genai.FunctionResponseScheduling](): {"SCHEDULING_UNSPECIFIED", "SILENT", "WHEN_IDLE", "INTERRUPT"},
		reflect.TypeFor[genai.DynamicRetrievalConfigMode](): {"MODE_UNSPECIFIED", "MODE_DYNAMIC"},
		reflect.TypeFor[genai.Language]():                   {"LANGUAGE_UNSPECIFIED", "PYTHON"},
		reflect.TypeFor[genai.Outcome]():                    outcomes,
	}
	vertexEnums = map[reflect.Type][]string{
		reflect.TypeFor[genai.Type](): {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"},
		reflect.TypeFor[genai.HarmCategory](): {"HARM_CATEGORY_UNSPECIFIED", "HARM_CATEGORY_HATE_SPEECH",
			"HARM_CATEGORY_DANGEROUS_CONTENT", "HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
			"HARM_CATEGORY_CIVIC_INTEGRITY", "HARM_CATEGORY_JAILBREAK"},
		reflect.TypeFor[genai.HarmBlockThreshold]():         harmBlockThresholds,
		reflect.TypeFor[genai.HarmBlockMethod]():            {"HARM_BLOCK_METHOD_UNSPECIFIED", "SEVERITY", "PROBABILITY"},
		reflect.TypeFor[genai.FunctionCallingConfigMode]():  {"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "", "VALIDATED"},
		reflect.TypeFor[genai.Modality]():                   {"MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "AUDIO"},
		reflect.TypeFor[genai.MediaResolution]():            mediaResolutions,
		reflect.TypeFor[genai.DynamicRetrievalConfigMode](): {"MODE_UNSPECIFIED", "MODE_DYNAMIC"},
		reflect.TypeFor[genai.Language]():                   {"LANGUAGE_UNSPECIFIED", "PYTHON"},
		reflect.TypeFor[genai.Outcome]():                    outcomes,
	}

	harmBlockThresholds = []string{"HARM_BLOCK_THRESHOLD_UNSPECIFIED", "BLOCK_LOW_AND_ABOVE", "BLOCK_MEDIUM_AND_ABOVE",
		"BLOCK_ONLY_HIGH", "BLOCK_NONE", "OFF"}
	mediaResolutions = []string{"MEDIA_RESOLUTION_UNSPECIFIED", "MEDIA_RESOLUTION_LOW", "MEDIA_RESOLUTION_MEDIUM",
		"MEDIA_RESOLUTION_HIGH"}
	outcomes = []string{"OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"}
)

// checkedEnums are the enums whose names are checked: a value that is not
// one of them is refused, as the API refuses "type": "DICT"
// (agno-agi/agno#3298 shows the form of the error). Names are compared
// ignoring case: the API accepts "type": "object" (gemini-wire.md §2.2,
// google-gemini/cookbook Function_calling_REST.ipynb); that it ignores case
// in the mode too is assumed. Other enums take any string.
var checkedEnums = map[reflect.Type][]string{
	reflect.TypeFor[genai.Type]():                      {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"},
	reflect.TypeFor[genai.FunctionCallingConfigMode](): {"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"},
}

// isEnum reports whether t is one of genai's enum types: a named string
// type of the genai package.
func isEnum(t reflect.Type) bool {
	return t.Kind() == reflect.String && t.PkgPath() == "google.golang.org/genai"
}

// enumByNumber returns the name of the value numbered n of enum t on the
// backend. A number the table lacks is refused (ok false) for a checked enum
// and otherwise taken as n in decimal: the API may know values that are
// newer than the protos.
func enumByNumber(backend genai.Backend, t reflect.Type, n int64) (name string, ok bool) {
	tables := geminiEnums
	if backend == genai.BackendVertexAI {
		tables = vertexEnums
	}
	if values := tables[t]; n >= 0 && n < int64(len(values)) && values[n] != "" {
		return values[n], true
	}
	if _, checked := checkedEnums[t]; checked {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

// knownEnumName reports whether s names a value of t, when t is a checked
// enum; unchecked enums take any name.
func knownEnumName(t reflect.Type, s string) bool {
	values, checked := checkedEnums[t]
	if !checked {
		return true
	}
	for _, name := range values {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}
