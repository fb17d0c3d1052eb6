package fake

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Bodies the rule tests combine.
const (
	userText = `{"role":"user","parts":[{"text":"hi"}]}`
	declF    = `{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["a"]}}]}`
	callF    = `{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":"x"}},"thoughtSignature":"c2ln"}]}`
	respF    = `{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"result":1}}}]}`
	// respMediaF answers callF with an image inside the function response.
	respMediaF = `{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"result":1},"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}}]}}]}`
)

// body builds a request body from contents and extra top-level fields.
func body(contents []string, extra ...string) string {
	fields := append([]string{`"contents":[` + strings.Join(contents, ",") + `]`}, extra...)
	return "{" + strings.Join(fields, ",") + "}"
}

func tools(decls ...string) string {
	return `"tools":[` + strings.Join(decls, ",") + `]`
}

// ruleCase is one request for TestRules: it must be accepted (rule "") or
// rejected by rule with code and a message containing want. Every rule has
// at least one accepted and one rejected case.
type ruleCase struct {
	name  string
	model string // default gemini-2.5-flash
	key   string // default APIKey; "-" for none
	body  string
	rule  string
	code  int // default 400
	want  string
	// passes names the rule an accepted case is the passing example of.
	passes string
}

var ruleCases = []ruleCase{
	{name: "key present", passes: "api-key", body: body([]string{userText})},
	{name: "key missing", key: "-", body: body([]string{userText}), rule: "api-key", code: http.StatusForbidden,
		want: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."},

	{name: "empty body is an empty request", body: "", rule: "contents-required"},
	{name: "well-formed JSON with spaces", passes: "json-syntax", body: " {\n \"contents\": [ " + userText + " ] }\n"},
	{name: "syntax error", body: `{"contents":[}`, rule: "json-syntax", want: "Invalid JSON payload received. Unexpected token.\n{\"contents\":[}\n             ^"},
	{name: "truncated", body: `{"contents":`, rule: "json-syntax", want: "Invalid JSON payload received. Unexpected end of string."},
	{name: "trailing data", body: `{} {}`, rule: "json-syntax", want: "Unexpected token."},
	{name: "root not an object", body: `[]`, rule: "json-syntax", want: "Invalid JSON payload received. Root element must be a message."},

	{name: "response object", passes: "function-response-object", body: body([]string{userText, callF, respF}, tools(declF))},
	{name: "response string", rule: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f","response":"text"}}]}`}, tools(declF)),
		want: `Invalid value at 'contents[2].parts[0].function_response.response' (type.googleapis.com/google.protobuf.Struct), "text"`},
	{name: "response number", rule: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f","response":42}}]}`}, tools(declF)),
		want: `(type.googleapis.com/google.protobuf.Struct), 42`},
	{name: "response array", rule: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"function_response":{"name":"f","response":[1]}}]}`}, tools(declF)),
		want: `Invalid JSON payload received. Unknown name "response" at 'contents[2].parts[0].function_response': Proto field is not repeating, cannot start list.`},
	{name: "response null", rule: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f","response":null}}]}`}, tools(declF)),
		want: "* GenerateContentRequest.contents[2].parts[0].function_response.response: must be a JSON object"},
	{name: "response missing", rule: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f"}}]}`}, tools(declF)),
		want: "function_response.response: must be a JSON object"},

	{name: "snake_case and lowercase types", passes: "json-fields", body: body([]string{userText},
		`"tools":[{"function_declarations":[{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}]}]`,
		`"generation_config":{"max_output_tokens":5,"temperature":0.5}`)},
	{name: "unknown top-level field", rule: "json-fields", body: body([]string{userText}, `"thinking":true`),
		want: `Invalid JSON payload received. Unknown name "thinking": Cannot find field.`},
	{name: "additionalProperties in parameters", rule: "json-fields",
		body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"OBJECT","additionalProperties":false}}}}]}`)),
		want: `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters.properties[0].value': Cannot find field.`},
	{name: "two unknown fields, one line each", rule: "json-fields",
		body: body([]string{`{"role":"user","parts":[{"text":"hi","x":1}],"y":2}`}),
		want: "Unknown name \"x\" at 'contents[0].parts[0]': Cannot find field.\nInvalid JSON payload received. Unknown name \"y\" at 'contents[0]': Cannot find field."},
	{name: "additionalProperties in parametersJsonSchema", passes: "json-fields", body: body([]string{userText},
		tools(`{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object","additionalProperties":false}}]}`))},
	{name: "wrong JSON type", rule: "json-fields", body: `{"contents":{"role":"user"}}`,
		want: `Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content)`},
	{name: "list for a message", rule: "json-fields", body: body([]string{`{"role":"user","parts":[{"text":"hi"}]}`}, `"toolConfig":[]`),
		want: `Invalid JSON payload received. Unknown name "toolConfig": Proto field is not repeating, cannot start list.`},
	{name: "unknown schema type", rule: "json-fields",
		body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"DICT"}}]}`)),
		want: `Invalid value at 'tools[0].function_declarations[0].parameters.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "DICT"`},
	{name: "bad base64 signature", rule: "json-fields",
		body: body([]string{userText, `{"role":"model","parts":[{"text":"a","thoughtSignature":"not base64!!"}]}`, userText}),
		want: `Invalid value at 'contents[1].parts[0].thought_signature' (TYPE_BYTES), Base64 decoding failed for "not base64!!"`},
	{name: "URL-safe unpadded signature", passes: "json-fields", body: body([]string{userText, `{"role":"model","parts":[{"text":"a","thoughtSignature":"_-8"}]}`, userText})},
	{name: "null list element", rule: "json-fields", body: `{"contents":[null]}`, want: "Invalid value at 'contents[0]'"},
	{name: "float in an int field", rule: "json-fields", body: body([]string{userText}, `"generationConfig":{"maxOutputTokens":1.5}`),
		want: "Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), 1.5"},

	{name: "one content", passes: "contents-required", body: body([]string{userText})},
	{name: "no contents", body: `{"contents":[]}`, rule: "contents-required", want: "* GenerateContentRequest.contents: contents is not specified\n"},

	{name: "role unset", passes: "role", body: body([]string{`{"parts":[{"text":"hi"}]}`})},
	{name: "role system", body: body([]string{`{"role":"system","parts":[{"text":"hi"}]}`}), rule: "role", want: "Please use a valid role: user, model."},

	{name: "one part", passes: "parts-required", body: body([]string{`{"role":"user","parts":[{"inlineData":{"mimeType":"text/plain","data":"aGk="}}]}`})},
	{name: "parts empty", body: body([]string{userText, `{"role":"model","parts":[]}`}), rule: "parts-required",
		want: "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n"},
	{name: "parts missing", body: body([]string{`{"role":"user"}`}), rule: "parts-required", want: "contents[0].parts: contents.parts must not be empty."},

	{name: "empty text part", passes: "part-data", body: body([]string{`{"role":"user","parts":[{"text":""}]}`})},
	{name: "signature-only part", passes: "part-data", body: body([]string{userText, `{"role":"model","parts":[{"text":"a"},{"thoughtSignature":"c2ln"}]}`, userText})},
	{name: "empty part", body: body([]string{userText, `{"role":"user","parts":[{"text":"a"},{}]}`}), rule: "part-data",
		want: "* GenerateContentRequest.contents[1].parts[1].data: required oneof field 'data' must have one initialized field\n"},
	{name: "thought flag only", body: body([]string{`{"role":"user","parts":[{"thought":true}]}`}), rule: "part-data", want: "contents[0].parts[0].data"},
	{name: "empty system instruction part", body: body([]string{userText}, `"systemInstruction":{"parts":[{}]}`), rule: "part-data",
		want: "* GenerateContentRequest.system_instruction.parts[0].data: required oneof field"},

	{name: "google search tool", passes: "tool-type", body: body([]string{userText}, tools(`{"googleSearch":{}}`))},
	{name: "empty tool", body: body([]string{userText}, tools(declF, `{}`)), rule: "tool-type",
		want: "The GenerateContentRequest proto is invalid:\n  * tools[1].tool_type: required one_of 'tool_type' must have one initialized field"},
	{name: "tool with no declarations", body: body([]string{userText}, tools(`{"functionDeclarations":[]}`)), rule: "tool-type", want: "tools[0].tool_type"},

	{name: "calling config with declarations", passes: "function-calling-config", body: body([]string{userText}, tools(declF), `"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}`)},
	{name: "calling config without declarations", body: body([]string{userText}, tools(`{"googleSearch":{}}`), `"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}`),
		rule: "function-calling-config", want: "Function calling config is set without function_declarations."},

	{name: "names with dots, colons, dashes", passes: "function-name", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"default_api:read.file-v2"},{"name":"_x"}]}`))},
	{name: "name starting with a digit", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f"},{"name":"1f"}]}`)), rule: "function-name",
		want: "* GenerateContentRequest.tools[0].function_declarations[1].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64.\n"},
	{name: "name with a space", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"read file"}]}`)), rule: "function-name", want: "Invalid function name."},
	{name: "name of 65 characters", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"`+strings.Repeat("a", 65)+`"}]}`)), rule: "function-name", want: "Invalid function name."},
	{name: "name of 64 characters", passes: "function-name", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"`+strings.Repeat("a", 64)+`"}]}`))},
	{name: "missing name", body: body([]string{userText}, tools(`{"functionDeclarations":[{"description":"x"}]}`)), rule: "function-name", want: "Invalid function name."},

	{name: "distinct names across tools", passes: "duplicate-function", body: body([]string{userText}, tools(declF, `{"functionDeclarations":[{"name":"g"}]}`))},
	{name: "duplicate across tools", body: body([]string{userText}, tools(declF, `{"functionDeclarations":[{"name":"g"},{"name":"f"}]}`)), rule: "duplicate-function",
		want: "Duplicate function declaration found: f"},

	{name: "JSON schema only", passes: "parameters-exclusive", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object"}}]}`))},
	{name: "both schemas", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"},"parametersJsonSchema":{"type":"object"}}]}`)),
		rule: "parameters-exclusive", want: "* GenerateContentRequest.tools[0].function_declarations[0]: parameters and parameters_json_schema must not both be set."},

	{name: "anyOf without type", passes: "schema-type", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"v":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}}}}]}`))},
	{name: "property without type", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"webhook":{"description":"x"}}}}]}`)),
		rule: "schema-type", want: "* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties[webhook].type: must be specified when not using one_of, any_of or all_of fields\n"},
	{name: "items without type", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"l":{"type":"ARRAY","items":{"type":"TYPE_UNSPECIFIED"}}}}}]}`)),
		rule: "schema-type", want: "parameters.properties[l].items.type: must be specified"},

	{name: "required names a property", passes: "schema-required", body: body([]string{userText}, tools(declF))},
	{name: "required names no property", body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["a","b"]}}]}`)),
		rule: "schema-required", want: "* GenerateContentRequest.tools[0].function_declarations[0].parameters.required[1]: property is not defined\n"},

	{name: "call after response turn", passes: "function-call-placement", body: body([]string{userText, callF, respF, callF, respF}, tools(declF))},
	{name: "call turn first", body: body([]string{callF, respF}, tools(declF)), rule: "function-call-placement",
		want: "Please ensure that function call turns come immediately after a user turn or after a function response turn."},
	{name: "turn spread over contents, as Chat streaming records it", passes: "function-response-count", model: "gemini-3-flash-preview", body: body([]string{userText, userText,
		`{"role":"model","parts":[{"text":"Let me see."}]}`,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"},"thoughtSignature":"c2ln"}]}`,
		`{"role":"model","parts":[{"functionCall":{"id":"2","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"2","name":"f","response":{}}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"1","name":"f","response":{}}}]}`}, tools(declF))},

	{name: "response turn after call turn", passes: "function-response-placement", body: body([]string{userText, callF, respF}, tools(declF))},
	{name: "response after user text", body: body([]string{userText, respF}, tools(declF)), rule: "function-response-placement",
		want: "Please ensure that function response turn comes immediately after a function call turn."},
	{name: "response after a model text turn", body: body([]string{userText, callF, respF, `{"role":"model","parts":[{"text":"a"}]}`, respF}, tools(declF)),
		rule: "function-response-placement", want: "Please ensure that function response turn"},
	{name: "two response contents for one call", body: body([]string{userText, callF, respF, respF}, tools(declF)), rule: "function-response-count", want: "number of function response parts"},

	{name: "call turn last", passes: "function-response-count", body: body([]string{userText, callF}, tools(declF))},
	{name: "fewer responses than calls", rule: "function-response-count",
		body: body([]string{userText, `{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"f"}}]}`, respF}, tools(declF)),
		want: "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."},
	{name: "text instead of responses", body: body([]string{userText, callF, userText}, tools(declF)), rule: "function-response-count", want: "number of function response parts"},

	{name: "ids echoed in another order", passes: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}},{"functionCall":{"id":"2","name":"g"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"2","name":"g","response":{}}},{"functionResponse":{"id":"1","name":"f","response":{}}}]}`})},
	{name: "no ids, matched by name", passes: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"g"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"g","response":{}}},{"functionResponse":{"name":"f","response":{}}}]}`})},
	{name: "wrong id", rule: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"9","name":"f","response":{}}}]}`}),
		want: `* GenerateContentRequest.contents[2].parts[0].function_response.id: "9" is not the id of a function call of the function call turn.`},
	{name: "id not echoed", rule: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}`}),
		want: `function_response.id: the function call "f" has id "1"; its response must echo it.`},
	{name: "id of another call's name", rule: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"1","name":"g","response":{}}}]}`}),
		want: `function_response.name: the function call with id "1" is named "f", not "g".`},
	{name: "same call answered twice", rule: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"g"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"name":"f","response":{}}}]}`}),
		want: `contents[2].parts[1].function_response.name: no function call named "f" in the function call turn.`},

	{name: "gemini-3 takes media in a function response", passes: "function-response-parts", model: "gemini-3-flash-preview",
		body: body([]string{userText, callF, respMediaF}, tools(declF))},
	{name: "gemini-2.5 takes a function response without parts", passes: "function-response-parts", body: body([]string{userText, callF, respF}, tools(declF))},
	{name: "gemini-2.5 refuses media in a function response", rule: "function-response-parts",
		body: body([]string{userText, callF, respMediaF}, tools(declF)),
		want: "Unable to submit request because `function_response.parts` is not supported for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"},

	{name: "gemini-3 signature present", passes: "thought-signature", model: "gemini-3-pro-preview", body: body([]string{userText, callF, respF}, tools(declF))},
	{name: "gemini-2.5 accepts a missing signature", passes: "thought-signature", body: body([]string{userText, `{"role":"model","parts":[{"functionCall":{"name":"f"}}]}`, respF}, tools(declF))},
	{name: "gemini-3 missing signature", model: "gemini-3-flash-preview", rule: "thought-signature",
		body: body([]string{userText, `{"role":"model","parts":[{"functionCall":{"name":"f"}}]}`, respF}, tools(declF)),
		want: "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:f` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."},
	{name: "gemini-3 signature on the second call only", model: "gemini-3-flash-preview", rule: "thought-signature",
		body: body([]string{userText, `{"role":"model","parts":[{"text":"t"},{"functionCall":{"name":"f"}},{"functionCall":{"name":"f"},"thoughtSignature":"c2ln"}]}`,
			`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"name":"f","response":{}}}]}`}, tools(declF)),
		want: "function call `default_api:f` , position 2."},
	{name: "gemini-3 missing signature in a later step", model: "gemini-3-flash-preview", rule: "thought-signature",
		body: body([]string{userText, callF, respF, `{"role":"model","parts":[{"functionCall":{"name":"f"}}]}`, respF}, tools(declF)),
		want: "position 4."},
	{name: "gemini-3 earlier turns are not checked", passes: "thought-signature", model: "gemini-3-flash-preview",
		body: body([]string{userText, `{"role":"model","parts":[{"functionCall":{"name":"f"}}]}`, respF, `{"role":"model","parts":[{"text":"done"}]}`, userText}, tools(declF))},
}

func TestRules(t *testing.T) {
	rejected, accepted := map[string]bool{}, map[string]bool{}
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			in := &input{model: "gemini-2.5-flash", apiKey: APIKey, body: []byte(tc.body)}
			if tc.model != "" {
				in.model = tc.model
			}
			if tc.key == "-" {
				in.apiKey = ""
			}
			rej := check(in)
			if tc.rule == "" {
				accepted[tc.passes] = true
				if rej != nil {
					t.Fatalf("check(%s) rejected by %q: %s; want accepted", tc.body, rej.Rule, rej.Err.Message)
				}
				return
			}
			rejected[tc.rule] = true
			if rej == nil {
				t.Fatalf("check(%s) accepted; want rejected by %q", tc.body, tc.rule)
			}
			code := tc.code
			if code == 0 {
				code = http.StatusBadRequest
			}
			if rej.Rule != tc.rule || rej.Err.Code != code || !strings.Contains(rej.Err.Message, tc.want) {
				t.Errorf("check(%s) = rule %q, code %d, message %q; want rule %q, code %d, message containing %q",
					tc.body, rej.Rule, rej.Err.Code, rej.Err.Message, tc.rule, code, tc.want)
			}
		})
	}
	for _, r := range rules {
		if !rejected[r.name] || !accepted[r.name] {
			t.Errorf("rule %q: rejected case %t, accepted case %t; want both in ruleCases", r.name, rejected[r.name], accepted[r.name])
		}
	}
}

func TestRuleNamesUnique(t *testing.T) {
	var names []string
	for _, r := range rules {
		if slices.Contains(names, r.name) {
			t.Errorf("rule %q listed twice", r.name)
		}
		names = append(names, r.name)
	}
}
