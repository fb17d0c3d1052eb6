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
