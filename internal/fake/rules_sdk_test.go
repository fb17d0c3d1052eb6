package fake_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The rules are tested one by one on raw bodies in validate_test.go. This
// file sends through the real genai client the shapes it can produce, and
// raw HTTP bodies for those it cannot, to check the answer the client gets.

func decl(name string, params *genai.Schema) *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: name, Parameters: params}
}

func toolsOf(decls ...*genai.FunctionDeclaration) []*genai.Tool {
	return []*genai.Tool{{FunctionDeclarations: decls}}
}

var objectSchema = &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}}

// callTurn is a model turn of calls; responseTurn answers them.
func callTurn(sig []byte, calls ...*genai.FunctionCall) *genai.Content {
	c := &genai.Content{Role: genai.RoleModel}
	for i, fc := range calls {
		p := &genai.Part{FunctionCall: fc}
		if i == 0 {
			p.ThoughtSignature = sig
		}
		c.Parts = append(c.Parts, p)
	}
	return c
}

func responseTurn(calls ...*genai.FunctionCall) *genai.Content {
	c := &genai.Content{Role: genai.RoleUser}
	for _, fc := range calls {
		p := genai.NewPartFromFunctionResponse(fc.Name, map[string]any{"result": "ok"})
		p.FunctionResponse.ID = fc.ID
		c.Parts = append(c.Parts, p)
	}
	return c
}

func TestRulesThroughSDK(t *testing.T) {
	paris := &genai.FunctionCall{ID: "c1", Name: "get_weather", Args: map[string]any{"city": "Paris"}}
	london := &genai.FunctionCall{ID: "c2", Name: "get_weather", Args: map[string]any{"city": "London"}}
	sig := []byte("signature")
	weather := toolsOf(decl("get_weather", objectSchema))
	wrongID := *london
	wrongID.ID = "c9"
	for _, tc := range []struct {
		name     string
		model    string
		contents []*genai.Content
		cfg      *genai.GenerateContentConfig
		rule     string // "" for accepted
		want     string
	}{
		{name: "parallel calls answered", model: "gemini-3-flash-preview",
			contents: []*genai.Content{user("Weather?"), callTurn(sig, paris, london), responseTurn(london, paris)},
			cfg:      &genai.GenerateContentConfig{Tools: weather, ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}}}},
		{name: "JSON schema with additionalProperties", contents: []*genai.Content{user("hi")},
			cfg: &genai.GenerateContentConfig{Tools: toolsOf(&genai.FunctionDeclaration{Name: "f", ParametersJsonSchema: map[string]any{
				"type": "object", "additionalProperties": false, "properties": map[string]any{"x": map[string]any{"type": "string"}}}})}},
		{name: "unknown field via ExtraBody", contents: []*genai.Content{user("hi")}, rule: "json-fields",
			cfg:  &genai.GenerateContentConfig{HTTPOptions: &genai.HTTPOptions{ExtraBody: map[string]any{"reasoning_effort": "high"}}},
			want: `Invalid JSON payload received. Unknown name "reasoning_effort": Cannot find field.`},
		{name: "no contents", rule: "contents-required", want: "contents is not specified"},
		{name: "role system", contents: []*genai.Content{genai.NewContentFromText("hi", "system")}, rule: "role", want: "Please use a valid role: user, model."},
		{name: "no parts", contents: []*genai.Content{{Role: genai.RoleUser}}, rule: "parts-required", want: "contents.parts must not be empty."},
		{name: "empty text part", contents: []*genai.Content{user("")}, rule: "part-data",
			want: "* GenerateContentRequest.contents[0].parts[0].data: required oneof field 'data' must have one initialized field"},
		{name: "empty tool", contents: []*genai.Content{user("hi")}, cfg: &genai.GenerateContentConfig{Tools: []*genai.Tool{{}}}, rule: "tool-type",
			want: "tools[0].tool_type: required one_of 'tool_type' must have one initialized field"},
		{name: "calling config without declarations", contents: []*genai.Content{user("hi")}, rule: "function-calling-config",
			cfg: &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
				ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}},
			want: "Function calling config is set without function_declarations."},
		{name: "calling config without tools", contents: []*genai.Content{user("hi")},
			cfg: &genai.GenerateContentConfig{ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}}},
		{name: "bad name", contents: []*genai.Content{user("hi")}, cfg: &genai.GenerateContentConfig{Tools: toolsOf(decl("get weather", nil))},
			rule: "function-name", want: "Invalid function name."},
		{name: "duplicate", contents: []*genai.Content{user("hi")}, cfg: &genai.GenerateContentConfig{Tools: append(weather, weather...)},
			rule: "duplicate-function", want: "Duplicate function declaration found: get_weather"},
		{name: "both schemas", contents: []*genai.Content{user("hi")},
			cfg:  &genai.GenerateContentConfig{Tools: toolsOf(&genai.FunctionDeclaration{Name: "f", Parameters: objectSchema, ParametersJsonSchema: map[string]any{"type": "object"}})},
			rule: "parameters-exclusive", want: "parameters and parameters_json_schema"},
		{name: "untyped property", contents: []*genai.Content{user("hi")},
			cfg:  &genai.GenerateContentConfig{Tools: toolsOf(decl("f", &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"x": {Description: "?"}}}))},
			rule: "schema-type", want: "parameters.properties[x].type: must be specified"},
		{name: "required undefined", contents: []*genai.Content{user("hi")},
			cfg:  &genai.GenerateContentConfig{Tools: toolsOf(decl("f", &genai.Schema{Type: genai.TypeObject, Required: []string{"x"}}))},
			rule: "schema-required", want: "parameters.required[0]: property is not defined"},
		{name: "one response for two calls", contents: []*genai.Content{user("Weather?"), callTurn(sig, paris, london), responseTurn(paris)},
			cfg: &genai.GenerateContentConfig{Tools: weather}, rule: "function-response-count", want: "number of function response parts"},
		{name: "response without call", contents: []*genai.Content{user("Weather?"), responseTurn(paris)},
			cfg: &genai.GenerateContentConfig{Tools: weather}, rule: "function-response-placement", want: "comes immediately after a function call turn"},
		{name: "call turn first", contents: []*genai.Content{callTurn(sig, paris), responseTurn(paris)},
			cfg: &genai.GenerateContentConfig{Tools: weather}, rule: "function-call-placement", want: "function call turns come immediately after a user turn"},
		{name: "wrong id", contents: []*genai.Content{user("Weather?"), callTurn(sig, paris, london), responseTurn(paris, &wrongID)},
			cfg: &genai.GenerateContentConfig{Tools: weather}, rule: "function-response-id", want: `"c9" is not the id of a function call`},
		{name: "gemini-3 signature dropped", model: "gemini-3-pro-preview", contents: []*genai.Content{user("Weather?"), callTurn(nil, paris), responseTurn(paris)},
			cfg: &genai.GenerateContentConfig{Tools: weather}, rule: "thought-signature", want: "function call `default_api:get_weather` , position 2."},
		{name: "gemini-2.5 signature dropped", contents: []*genai.Content{user("Weather?"), callTurn(nil, paris), responseTurn(paris)},
			cfg: &genai.GenerateContentConfig{Tools: weather}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Enqueue(fake.Text("ok"))
			m := tc.model
			if m == "" {
				m = model
			}
			_, err := srv.Client().Models.GenerateContent(context.Background(), m, tc.contents, tc.cfg)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("GenerateContent error %v; want accepted", err)
				}
				return
			}
			ae := asAPIError(t, err)
			if ae.Code != http.StatusBadRequest || ae.Status != "INVALID_ARGUMENT" || !strings.Contains(ae.Message, tc.want) {
				t.Errorf("GenerateContent error %+v; want 400 INVALID_ARGUMENT containing %q", ae, tc.want)
			}
			rej := srv.Rejections()
			if len(rej) != 1 || rej[0].Rule != tc.rule || rej[0].Err.Message != ae.Message {
				t.Errorf("Rejections() = %+v; want one by rule %q with the message sent", rej, tc.rule)
			}
			if srv.Pending() != 1 {
				t.Error("a rejected request took the queued reply")
			}
		})
	}
}

// TestEveryConfigFieldIsAccepted guards against false rejections: the SDK's
// request for a config with most fields set must pass the field check.
func TestEveryConfigFieldIsAccepted(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"))
	f32 := func(v float32) *float32 { return &v }
	i32 := func(v int32) *int32 { return &v }
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("sys", genai.RoleUser),
		Temperature:       f32(0.5), TopP: f32(0.9), TopK: f32(40), CandidateCount: 1, MaxOutputTokens: 100,
		StopSequences: []string{"END"}, ResponseLogprobs: true, Logprobs: i32(2), PresencePenalty: f32(0.1), FrequencyPenalty: f32(0.1),
		Seed: i32(7), ResponseMIMEType: "application/json", ResponseJsonSchema: map[string]any{"type": "object"},
		SafetySettings: []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment, Threshold: genai.HarmBlockThresholdBlockNone}},
		Tools: []*genai.Tool{
			{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "f", Description: "d", Parameters: &genai.Schema{
				Type: genai.TypeObject, Properties: map[string]*genai.Schema{
					"n": {Type: genai.TypeInteger, Minimum: genai.Ptr(1.0), Maximum: genai.Ptr(9.0), Nullable: genai.Ptr(true)},
					"e": {Type: genai.TypeString, Enum: []string{"a", "b"}, Format: "enum", Default: "a", Example: "b"},
					"l": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, MinItems: genai.Ptr[int64](1), MaxItems: genai.Ptr[int64](3)},
					"u": {AnyOf: []*genai.Schema{{Type: genai.TypeString}, {Type: genai.TypeNumber}}},
				}, Required: []string{"n"}, PropertyOrdering: []string{"n", "e"}}}}},
			{GoogleSearch: &genai.GoogleSearch{}},
			{CodeExecution: &genai.ToolCodeExecution{}},
			{URLContext: &genai.URLContext{}},
		},
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"f"}},
			IncludeServerSideToolInvocations: genai.Ptr(true)}, // built-in tools beside functions
		ServiceTier:        genai.ServiceTierFlex,
		Labels:             map[string]string{"team": "x"},
		ThinkingConfig:     &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: i32(1024)},
		MediaResolution:    genai.MediaResolutionLow,
		ImageConfig:        &genai.ImageConfig{AspectRatio: "16:9"},
		ResponseModalities: []string{"TEXT"},
	}
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{
		{Text: "hi"}, genai.NewPartFromBytes([]byte("data"), "text/plain"), genai.NewPartFromURI("gs://b/o", "text/plain"),
	}}}
	// A Gemini 3 model: older ones refuse a JSON response with function
	// declarations (rule response-schema-with-tools).
	if _, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-3-flash-preview", contents, cfg); err != nil {
		t.Fatalf("GenerateContent error %v; want the request accepted", err)
	}
	if got := srv.LastRequest().GenerationConfig; got == nil || *got.Seed != 7 || got.ThinkingConfig == nil {
		t.Errorf("GenerationConfig = %+v; want it decoded", got)
	}
}

func TestRawBodiesTheSDKCannotSend(t *testing.T) {
	srv := newServer(t)
	const path = "/v1beta/models/gemini-2.5-flash:generateContent"
	call := `{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f"}}]}`
	for _, tc := range []struct {
		name, body, rule, want string
	}{
		{"unknown field in a part", `{"contents":[{"role":"user","parts":[{"text":"hi","cache":true}]}]}`, "json-fields",
			`Invalid JSON payload received. Unknown name "cache" at 'contents[0].parts[0]': Cannot find field.`},
		{"additionalProperties in parameters", `{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","additionalProperties":false}}]}]}`,
			"json-fields", `Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`},
		{"string response", `{"contents":[` + call + `,{"role":"user","parts":[{"functionResponse":{"name":"f","response":"sunny"}}]}]}`,
			"function-response-object", `Invalid value at 'contents[2].parts[0].function_response.response' (type.googleapis.com/google.protobuf.Struct), "sunny"`},
		{"array response", `{"contents":[` + call + `,{"role":"user","parts":[{"functionResponse":{"name":"f","response":[]}}]}]}`,
			"function-response-object", `Proto field is not repeating, cannot start list.`},
		{"not JSON", `{"contents":[{"parts":[{"text":"hi"}]}]`, "json-syntax", "Invalid JSON payload received."},
	} {
		code, body := post(t, srv, http.MethodPost, path, "key", tc.body)
		ae := apiErrorBody(t, body)
		if code != http.StatusBadRequest || ae.Code != http.StatusBadRequest || ae.Status != "INVALID_ARGUMENT" || !strings.Contains(ae.Message, tc.want) {
			t.Errorf("%s: %d %+v; want 400 INVALID_ARGUMENT containing %q", tc.name, code, ae, tc.want)
		}
		if rej := srv.Rejections(); rej[len(rej)-1].Rule != tc.rule {
			t.Errorf("%s: rejected by %q; want %q", tc.name, rej[len(rej)-1].Rule, tc.rule)
		}
	}
}
