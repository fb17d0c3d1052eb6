package fake

import (
	"fmt"
	"testing"

	"google.golang.org/genai"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"functionDeclarations": "function_declarations", "text": "text", "parametersJsonSchema": "parameters_json_schema"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestPayloadErrorDetails(t *testing.T) {
	_, rej := validate(genai.BackendGeminiAPI, "gemini-2.5-flash", []byte(body([]string{userText},
		tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","$defs":{}}}]}`))))
	if rej == nil || rej.Rule != "json-fields" {
		t.Fatalf("validate = %+v; want rejected by json-fields", rej)
	}
	want := []map[string]any{{"@type": typeBadRequest, "fieldViolations": []any{map[string]any{
		"field":       "tools[0].function_declarations[0].parameters",
		"description": `Invalid JSON payload received. Unknown name "$defs" at 'tools[0].function_declarations[0].parameters': Cannot find field.`,
	}}}}
	if got := fmt.Sprint(rej.Err.Details); got != fmt.Sprint(want) {
		t.Errorf("details = %s; want %s", got, want)
	}
}

// Enums by number are read with the numbering of the request's backend and
// recorded by name.
func TestEnumNumbersPerBackend(t *testing.T) {
	const tools = `"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":6}}]}]`
	for _, tc := range []struct {
		backend  genai.Backend
		body     string
		category genai.HarmCategory
		mode     genai.FunctionCallingConfigMode
		rejected bool
	}{
		{backend: genai.BackendGeminiAPI, body: `"safetySettings":[{"category":10,"threshold":4}],"toolConfig":{"functionCallingConfig":{"mode":4}}`,
			category: genai.HarmCategoryDangerousContent, mode: genai.FunctionCallingConfigModeValidated},
		{backend: genai.BackendVertexAI, body: `"safetySettings":[{"category":2,"threshold":4}],"toolConfig":{"functionCallingConfig":{"mode":5}}`,
			category: genai.HarmCategoryDangerousContent, mode: genai.FunctionCallingConfigModeValidated},
		{backend: genai.BackendVertexAI, body: `"toolConfig":{"functionCallingConfig":{"mode":4}}`, rejected: true},
		{backend: genai.BackendGeminiAPI, body: `"safetySettings":[{"category":12,"threshold":4}]`, category: "12"},
	} {
		in, rej := validate(tc.backend, "gemini-2.5-flash", []byte(`{"contents":[{"parts":[{"text":"hi"}]}],`+tools+`,`+tc.body+`}`))
		if tc.rejected {
			if rej == nil || rej.Rule != "json-fields" {
				t.Errorf("%v %s: accepted; want rejected by json-fields", tc.backend, tc.body)
			}
			continue
		}
		if rej != nil {
			t.Fatalf("%v %s: rejected by %s: %s", tc.backend, tc.body, rej.Rule, rej.Err.Message)
		}
		req := in.req
		var mode genai.FunctionCallingConfigMode
		if req.ToolConfig != nil {
			mode = req.ToolConfig.FunctionCallingConfig.Mode
		}
		if req.SafetySettings[0].Category != tc.category || req.SafetySettings[0].Threshold != genai.HarmBlockThresholdBlockNone ||
			mode != tc.mode || req.Tools[0].FunctionDeclarations[0].Parameters.Type != genai.TypeObject {
			t.Errorf("%v %s: decoded %+v, %+v; want %s, BLOCK_NONE, %s, OBJECT", tc.backend, tc.body,
				req.SafetySettings[0], mode, tc.category, tc.mode)
		}
	}
}
