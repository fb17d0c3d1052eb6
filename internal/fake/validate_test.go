package fake

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"
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
	name   string
	vertex bool   // sent to a Vertex AI project route; default the Gemini API
	model  string // default gemini-2.5-flash
	// creds default to the API key APIKey on the Gemini API and the bearer
	// token AccessToken on Vertex AI.
	creds   *credentials
	express bool   // Vertex AI express mode: no project in the route
	version string // the API version of the route; default v1beta, v1beta1 on Vertex AI
	body    string
	rule    string
	code    int // default 400
	want    string
	// passes names the rule an accepted case is the passing example of.
	passes string
	// limit is the server's input token limit (Server.SetInputTokenLimit).
	limit int
	// tokens are the continuation tokens the server sent, each to the
	// request of this body (without its token), and the bytes of answer
	// before it.
	tokens map[string]continued
	// caches are the caches the server holds, by name: each a request body
	// whose contents, system instruction and tools the cache holds, for
	// the model gemini-2.5-flash.
	caches map[string]string
}

// continued is a continuation token a rule case's server sent.
type continued struct {
	body   string
	output int
}

// input returns the rules' input for tc.
func (tc ruleCase) input() *input {
	backend := genai.BackendGeminiAPI
	if tc.vertex {
		backend = genai.BackendVertexAI
	}
	model := tc.model
	if model == "" {
		model = "gemini-2.5-flash"
	}
	in, _ := validate(backend, model, nil)
	in.body, in.tree, in.req, in.canonical = []byte(tc.body), nil, nil, nil
	if tc.creds != nil {
		in.creds = *tc.creds
	}
	if tc.express {
		in.project = ""
	}
	if tc.version != "" {
		in.version = tc.version
	}
	if tc.tokens != nil {
		in.tokens = func(token []byte) (*issuedToken, bool) {
			c, ok := tc.tokens[string(token)]
			if !ok {
				return nil, false
			}
			tree, err := parseJSON([]byte(c.body))
			if err != nil {
				panic(err)
			}
			req, _, _ := decodeRequest(backend, in.version, tree)
			return &issuedToken{key: continuationKey(req), output: c.output}, true
		}
	}
	if tc.caches != nil {
		in.caches = func(b genai.Backend, name string) *storedCache {
			held, ok := tc.caches[name]
			if !ok || b != backend {
				return nil
			}
			tree, err := parseJSON([]byte(held))
			if err != nil {
				panic(err)
			}
			req, canonical, _ := decodeRequest(backend, in.version, tree)
			var u usageCounter
			u.prompt(req)
			return &storedCache{name: name, backend: backend, model: "gemini-2.5-flash", held: canonical, tokens: tokens(u.promptBytes)}
		}
	}
	return in
}

func bearerToken(token string) *credentials {
	return &credentials{authorization: "Bearer " + token, token: token}
}

var ruleCases = []ruleCase{
	{name: "key present", passes: "auth", body: body([]string{userText})},
	{name: "bearer token instead of a key", passes: "auth", creds: bearerToken("t"), body: body([]string{userText})},
	{name: "key missing", creds: &credentials{}, body: body([]string{userText}), rule: "auth", code: http.StatusForbidden,
		want: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."},
	{name: "malformed Authorization header", creds: &credentials{apiKey: APIKey, authorization: "Basic abc"}, body: body([]string{userText}),
		rule: "auth", code: http.StatusUnauthorized, want: "Request had invalid authentication credentials."},
	{name: "Vertex AI bearer token", vertex: true, passes: "auth", body: body([]string{userText})},
	{name: "Vertex AI express mode key", vertex: true, express: true, creds: &credentials{apiKey: "k"}, passes: "auth", body: body([]string{userText})},
	{name: "Vertex AI without credentials", vertex: true, creds: &credentials{}, body: body([]string{userText}), rule: "auth", code: http.StatusUnauthorized,
		want: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."},
	{name: "Vertex AI project route with a key", vertex: true, creds: &credentials{apiKey: "k"}, body: body([]string{userText}), rule: "auth",
		code: http.StatusUnauthorized, want: "API keys are not supported by this API."},

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
	{name: "response null", passes: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f","response":null}}]}`}, tools(declF))},
	{name: "response missing (issue 13: answered 200)", passes: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f"}}]}`}, tools(declF))},
	{name: "response missing on Vertex AI", vertex: true, passes: "function-response-object",
		body: body([]string{userText, callF, `{"role":"user","parts":[{"functionResponse":{"name":"f"}}]}`}, tools(declF))},

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
	{name: "wrong JSON type", rule: "json-fields", body: `{"contents":"hi"}`,
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
	{name: "integers as strings, in exponent form, as 1.0; floats as strings (proto JSON)", passes: "json-fields", body: body([]string{userText},
		`"generationConfig":{"maxOutputTokens":"100","candidateCount":1.0,"seed":"7","logprobs":1e0,"temperature":"0.5","topK":"40"}`)},
	{name: "integer out of range", rule: "json-fields", body: body([]string{userText}, `"generationConfig":{"maxOutputTokens":"99999999999"}`),
		want: "Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32)"},
	{name: "a string that is not a number", rule: "json-fields", body: body([]string{userText}, `"generationConfig":{"temperature":"warm"}`),
		want: "Invalid value at 'generation_config.temperature' (TYPE_FLOAT)"},
	{name: "enums by number (issue 13: \"category\": 10, \"type\": 6)", passes: "json-fields", body: body([]string{userText},
		`"safetySettings":[{"category":10,"threshold":4}]`,
		tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":6,"properties":{"a":{"type":1}}}}]}`),
		`"toolConfig":{"functionCallingConfig":{"mode":2}}`)},
	{name: "an enum number with no value", rule: "json-fields",
		body: body([]string{userText}, tools(`{"functionDeclarations":[{"name":"f","parameters":{"type":42}}]}`)),
		want: "Invalid value at 'tools[0].function_declarations[0].parameters.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), 42"},
	{name: "the request's model field (issue 13)", passes: "json-fields", body: body([]string{userText}, `"model":"models/gemini-2.5-flash"`)},
	{name: "a lowercase mode", passes: "json-fields", body: body([]string{userText}, tools(declF), `"toolConfig":{"functionCallingConfig":{"mode":"any"}}`)},
	{name: "an unknown mode", rule: "json-fields", body: body([]string{userText}, tools(declF), `"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}`),
		want: `Invalid value at 'tool_config.function_calling_config.mode'`},
	{name: "a Vertex AI field on the Gemini API", rule: "json-fields", body: body([]string{userText}, `"modelArmorConfig":{"promptTemplateName":"t"}`),
		want: `Invalid JSON payload received. Unknown name "modelArmorConfig": Cannot find field.`},
	{name: "Vertex AI fields on Vertex AI", vertex: true, passes: "json-fields", body: body([]string{userText},
		`"modelArmorConfig":{"promptTemplateName":"t"}`, `"generationConfig":{"audioTimestamp":true,"modelConfig":{}}`, `"safetySettings":[{"category":2,"threshold":"BLOCK_NONE","method":"SEVERITY"}]`)},
	{name: "a Gemini API field on Vertex AI", vertex: true, rule: "json-fields", body: body([]string{userText}, `"store":true`),
		want: `Invalid JSON payload received. Unknown name "store": Cannot find field.`},
	{name: "function-call ids on Vertex AI (real traffic, 2026)", vertex: true, passes: "json-fields", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"1","name":"f","response":{}}}]}`}, tools(declF))},
	{name: "tools as one object (real traffic)", passes: "json-fields", body: body([]string{userText}, `"tools":`+declF)},
	{name: "contents and parts as one object", passes: "json-fields", body: `{"contents":{"role":"user","parts":{"text":"hi"}}}`},
	{name: "an unknown field in tools as one object", rule: "json-fields",
		body: body([]string{userText}, `"tools":{"functionDeclarations":[{"name":"f","parameters":{"type":"object","additionalProperties":false}}]}`),
		want: `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools.function_declarations[0].parameters': Cannot find field.`},
	{name: "a scalar for a list", rule: "json-fields", body: body([]string{userText}, `"generationConfig":{"stopSequences":"x"}`),
		want: "Invalid value at 'generation_config.stop_sequences' (TYPE_STRING)"},
	{name: "a part's media resolution on v1beta (real traffic)", rule: "json-fields",
		body: body([]string{`{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"iVBORw=="},"mediaResolution":{"level":"MEDIA_RESOLUTION_HIGH"}}]}`}),
		want: `Invalid JSON payload received. Unknown name "mediaResolution" at 'contents[0].parts[1]': Cannot find field.`},
	{name: "a part's media resolution on v1alpha", version: "v1alpha", passes: "json-fields",
		body: body([]string{`{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"iVBORw=="},"mediaResolution":{"level":"MEDIA_RESOLUTION_HIGH"}}]}`})},
	{name: "a part's media resolution on Vertex AI", vertex: true, passes: "json-fields",
		body: body([]string{`{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"iVBORw=="},"mediaResolution":{"level":"MEDIA_RESOLUTION_HIGH"}}]}`})},

	{name: "one content", passes: "contents-required", body: body([]string{userText})},
	{name: "no contents", body: `{"contents":[]}`, rule: "contents-required", want: "* GenerateContentRequest.contents: contents is not specified\n"},

	{name: "role unset", passes: "role", body: body([]string{`{"parts":[{"text":"hi"}]}`})},
	{name: "role system", body: body([]string{`{"role":"system","parts":[{"text":"hi"}]}`}), rule: "role", want: "Please use a valid role: user, model."},
	{name: "role assistant", body: body([]string{userText, `{"role":"assistant","parts":[{"text":"hi"}]}`}), rule: "role", want: "Please use a valid role: user, model."},
	{name: "role function, as the legacy JS SDK sends function responses", passes: "role", body: body([]string{userText, callF,
		`{"role":"function","parts":[{"functionResponse":{"name":"f","response":{"result":1}}}]}`}, tools(declF))},
	{name: "role tool", passes: "role", body: body([]string{userText, callF,
		`{"role":"tool","parts":[{"functionResponse":{"name":"f","response":{"result":1}}}]}`}, tools(declF))},

	{name: "one part", passes: "parts-required", body: body([]string{`{"role":"user","parts":[{"inlineData":{"mimeType":"text/plain","data":"aGk="}}]}`})},
	{name: "parts empty", body: body([]string{userText, `{"role":"model","parts":[]}`}), rule: "parts-required",
		want: "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n"},
	{name: "parts missing", body: body([]string{`{"role":"user"}`}), rule: "parts-required", want: "contents[0].parts: contents.parts must not be empty."},
	{name: "parts missing on Vertex AI", vertex: true, body: body([]string{`{"role":"user"}`}), rule: "parts-required",
		want: "Unable to submit request because it must include at least one parts field, which describes the prompt input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"},

	{name: "empty text part", passes: "part-data", body: body([]string{`{"role":"user","parts":[{"text":""}]}`})},
	{name: "empty text part on Vertex AI", vertex: true, body: body([]string{userText, `{"role":"model","parts":[{"text":"a"},{"text":""}]}`, userText}), rule: "part-data",
		want: "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"},
	{name: "signature-only text part on Vertex AI", vertex: true, passes: "part-data",
		body: body([]string{userText, `{"role":"model","parts":[{"text":"a"},{"text":"","thoughtSignature":"c2ln"}]}`, userText})},
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
	{name: "calling config without tools (real traffic: gemini-2.0-flash, mode ANY)", passes: "function-calling-config", model: "gemini-2.0-flash",
		body: body([]string{userText}, `"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":[]}}`)},
	{name: "calling config with an empty tools list", passes: "function-calling-config", body: body([]string{userText}, `"tools":[]`, `"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}`)},

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

	{name: "JSON response with tools on gemini-3", passes: "response-schema-with-tools", model: "gemini-3-flash-preview",
		body: body([]string{userText}, tools(declF), `"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object"}}`)},
	{name: "JSON response with mode NONE", passes: "response-schema-with-tools",
		body: body([]string{userText}, tools(declF), `"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`, `"generationConfig":{"responseMimeType":"application/json"}`)},
	{name: "JSON response without tools", passes: "response-schema-with-tools",
		body: body([]string{userText}, `"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}}`)},
	{name: "model alias of unknown version", passes: "response-schema-with-tools", model: "gemini-flash-latest",
		body: body([]string{userText}, tools(declF), `"generationConfig":{"responseMimeType":"application/json"}`)},
	{name: "JSON response with tools on gemini-2.0 (mastra-ai/mastra#10666)", passes: "response-schema-with-tools", model: "gemini-2.0-flash",
		body: body([]string{userText}, tools(declF), `"generationConfig":{"responseMimeType":"application/json"}`)},
	{name: "JSON response with tools on gemini-2.5", rule: "response-schema-with-tools",
		body: body([]string{userText}, tools(declF), `"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}}`),
		want: "Function calling with a response mime type: 'application/json' is unsupported"},
	{name: "JSON response with mode ANY on gemini-1.5", rule: "response-schema-with-tools", model: "models/gemini-1.5-flash",
		body: body([]string{userText}, tools(declF), `"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}`, `"generationConfig":{"responseMimeType":"application/json"}`),
		want: "Function calling with a response mime type: 'application/json' is unsupported"},

	{name: "Vertex AI temperature in range", vertex: true, passes: "temperature", body: body([]string{userText}, `"generationConfig":{"temperature":2}`)},
	{name: "Gemini API temperature not checked", passes: "temperature", body: body([]string{userText}, `"generationConfig":{"temperature":1000}`)},
	{name: "Vertex AI temperature 1000 (real traffic)", vertex: true, rule: "temperature", body: body([]string{userText}, `"generationConfig":{"temperature":1000.0}`),
		want: "Unable to submit request because it has a temperature value of 1000 but the supported range is from 0 (inclusive) to 2.0001 (exclusive). Update the value and try again."},
	{name: "Vertex AI negative temperature", vertex: true, rule: "temperature", body: body([]string{userText}, `"generationConfig":{"temperature":-0.5}`),
		want: "it has a temperature value of -0.5 but the supported range"},
	{name: "Vertex AI temperature at the bound", vertex: true, rule: "temperature", body: body([]string{userText}, `"generationConfig":{"temperature":2.0001}`),
		want: "temperature value of 2.0001 but"},

	{name: "penalties on gemini-2.0-flash", passes: "penalty", model: "gemini-2.0-flash", body: body([]string{userText}, `"generationConfig":{"presencePenalty":0.5,"frequencyPenalty":0.5}`)},
	{name: "zero penalties on gemini-2.5-flash", passes: "penalty", body: body([]string{userText}, `"generationConfig":{"presencePenalty":0,"frequencyPenalty":0}`)},
	{name: "penalties on gemini-2.5-pro on Vertex AI", vertex: true, passes: "penalty", model: "gemini-2.5-pro", body: body([]string{userText}, `"generationConfig":{"presencePenalty":-1.5,"frequencyPenalty":1}`)},
	{name: "presence penalty on gemini-2.5-flash", rule: "penalty", body: body([]string{userText}, `"generationConfig":{"presencePenalty":0.3}`),
		want: "Penalty is not enabled for models/gemini-2.5-flash"},
	{name: "frequency penalty on gemini-2.5-pro", rule: "penalty", model: "gemini-2.5-pro", body: body([]string{userText}, `"generationConfig":{"frequency_penalty":0.4}`),
		want: "Penalty is not enabled for models/gemini-2.5-pro"},

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
		want: `* GenerateContentRequest.contents[2].parts[0].function_response.id: functionResponse.id does not match functionCall.id: "9" is not the id of a function call of the function call turn.`},
	{name: "id not echoed, matched by name", passes: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}`})},
	{name: "an id answering calls without ids (gemini-cli#6974)", passes: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"id":"f-123","name":"f","response":{}}}]}`})},
	{name: "one answered by id, its twin by name, in either order", passes: "function-response-id", body: body([]string{userText,
		`{"role":"model","parts":[{"functionCall":{"id":"1","name":"f"}},{"functionCall":{"id":"2","name":"f"}}]}`,
		`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"id":"1","name":"f","response":{}}}]}`})},
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

	{name: "a gs:// file and a Files API file", passes: "file-data", body: body([]string{
		`{"role":"user","parts":[{"fileData":{"fileUri":"gs://bucket/a.pdf","mimeType":"application/pdf"}},` +
			`{"fileData":{"fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc123","mimeType":"image/png"}},{"text":"hi"}]}`})},
	{name: "an artifact reference sent unresolved", rule: "file-data", body: body([]string{
		`{"role":"user","parts":[{"fileData":{"fileUri":"artifact:chart.png?version=1","mimeType":"image/png"}}]}`}),
		want: "Unsupported file uri: artifact:chart.png?version=1"},

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

	{name: "gemini-3 built-in tools beside functions, invocations included", passes: "server-side-tool-invocations", model: "gemini-3-flash-preview",
		body: body([]string{userText}, tools(`{"googleSearch":{}}`, declF), `"toolConfig":{"includeServerSideToolInvocations":true}`)},
	{name: "built-in tools alone need no invocations", passes: "server-side-tool-invocations", body: body([]string{userText}, tools(`{"googleSearch":{}}`, `{"urlContext":{}}`))},
	{name: "built-in tools beside functions without invocations", rule: "server-side-tool-invocations", model: "gemini-3-flash-preview",
		body: body([]string{userText}, tools(`{"googleSearch":{}}`, declF)),
		want: "Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling."},
	{name: "code execution beside functions, invocations false", rule: "server-side-tool-invocations", model: "gemini-3.5-flash",
		body: body([]string{userText}, tools(`{"codeExecution":{}}`, declF), `"toolConfig":{"includeServerSideToolInvocations":false}`),
		want: "Please enable tool_config.include_server_side_tool_invocations"},
	{name: "Vertex AI gemini-3 mixes without the field", passes: "vertex-tool-mix", vertex: true, model: "gemini-3-flash-preview",
		body: body([]string{userText}, tools(`{"googleSearch":{}}`, declF))},
	{name: "Vertex AI gemini-2.5 refuses the mix", rule: "vertex-tool-mix", vertex: true,
		body: body([]string{userText}, tools(`{"googleSearch":{}}`, declF)), want: "Multiple tools are supported only when they are all search tools."},
	{name: "Vertex AI refuses the invocations field", rule: "json-fields", vertex: true, model: "gemini-3-flash-preview",
		body: body([]string{userText}, tools(`{"googleSearch":{}}`, declF), `"toolConfig":{"includeServerSideToolInvocations":true}`),
		want: `Unknown name "includeServerSideToolInvocations" at 'tool_config': Cannot find field.`},
	{name: "Vertex AI refuses a toolCall part", rule: "json-fields", vertex: true, model: "gemini-3-flash-preview",
		body: body([]string{userText, `{"role":"model","parts":[{"toolCall":{"id":"a","toolType":"GOOGLE_SEARCH_WEB"}},{"text":"t"}]}`, userText}),
		want: `Unknown name "toolCall" at 'contents[1].parts[0]': Cannot find field.`},
	{name: "built-in tool parts sent back as received", passes: "server-tool-parts", model: "gemini-3-flash-preview",
		body: body([]string{userText, `{"role":"model","parts":[{"toolCall":{"id":"a","toolType":"GOOGLE_SEARCH_WEB","args":{"queries":["q"]}},"thoughtSignature":"c2ln"},` +
			`{"toolResponse":{"id":"a","toolType":"GOOGLE_SEARCH_WEB","response":{}},"thoughtSignature":"c2ln"},{"functionCall":{"id":"b","name":"f","args":{"a":"x"}},"thoughtSignature":"c2ln"}]}`,
			`{"role":"user","parts":[{"functionResponse":{"id":"b","name":"f","response":{"result":1}}}]}`},
			tools(`{"googleSearch":{}}`, declF), `"toolConfig":{"includeServerSideToolInvocations":true}`)},
	{name: "a tool response without its call", rule: "server-tool-parts", model: "gemini-3-flash-preview",
		body: body([]string{userText, `{"role":"model","parts":[{"toolResponse":{"id":"a","toolType":"GOOGLE_SEARCH_WEB","response":{}}},{"text":"t"}]}`, userText}),
		want: `contents[1].parts[0].tool_response.id: "a" is not the id of a tool call before it in the model turn.`},
	{name: "a tool call in a user turn", rule: "server-tool-parts",
		body: body([]string{`{"role":"user","parts":[{"toolCall":{"id":"a","toolType":"URL_CONTEXT"}}]}`}),
		want: "contents[0].parts[0]: a built-in tool's call or response must be in a model turn"},

	{name: "a continuation of the request that received the token", passes: "continuation-token",
		tokens: map[string]continued{"tok": {body: body([]string{userText}), output: 12}},
		body:   body([]string{userText}, `"continuationToken":"dG9r"`)},
	{name: "a token the server did not send", rule: "continuation-token",
		tokens: map[string]continued{"tok": {body: body([]string{userText})}},
		body:   body([]string{userText}, `"continuationToken":"b3RoZXI="`), want: "the continuation token was not sent by this server"},
	{name: "a token sent with another request", rule: "continuation-token",
		tokens: map[string]continued{"tok": {body: body([]string{userText})}},
		body:   body([]string{userText, `{"role":"model","parts":[{"text":"more"}]}`, userText}, `"continuationToken":"dG9r"`),
		want:   "must be the request that received it, plus the token"},
	{name: "a token with another config", rule: "continuation-token",
		tokens: map[string]continued{"tok": {body: body([]string{userText})}},
		body:   body([]string{userText}, `"continuationToken":"dG9r"`, `"generationConfig":{"temperature":0.1}`),
		want:   "this one differs"},

	{name: "a cache named alone", passes: "cached-content-exclusive", caches: map[string]string{"cachedContents/c": body([]string{userText})},
		body: body([]string{userText}, `"cachedContent":"cachedContents/c"`)},
	{name: "a cache beside a system instruction", rule: "cached-content-exclusive", caches: map[string]string{"cachedContents/c": body([]string{userText})},
		body: body([]string{userText}, `"cachedContent":"cachedContents/c"`, `"systemInstruction":{"parts":[{"text":"Be brief."}]}`),
		want: "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request."},
	{name: "a cache beside tools on Vertex AI", rule: "cached-content-exclusive", vertex: true,
		body: body([]string{userText}, `"cachedContent":"projects/fake-project/locations/us-central1/cachedContents/1"`, tools(declF)),
		want: "Tool config, tools and system instruction should not be set in the request when using cached content."},
	{name: "a cache beside a tool config", rule: "cached-content-exclusive",
		body: body([]string{userText}, `"cachedContent":"cachedContents/c"`, `"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}`),
		want: "CachedContent can not be used"},
	{name: "a cache the server holds", passes: "cached-content-found", caches: map[string]string{"cachedContents/c": body([]string{userText})},
		body: body([]string{userText}, `"cachedContent":"cachedContents/c"`)},
	{name: "a cache the server does not hold", rule: "cached-content-found", code: http.StatusForbidden, caches: map[string]string{},
		body: body([]string{userText}, `"cachedContent":"cachedContents/gone"`), want: "CachedContent not found (or permission denied)"},
	{name: "a cache Vertex AI does not hold", rule: "cached-content-found", vertex: true, caches: map[string]string{"cachedContents/c": body([]string{userText})},
		body: body([]string{userText}, `"cachedContent":"projects/fake-project/locations/us-central1/cachedContents/42"`),
		want: "Invalid resource state for cache content 42."},
	{name: "a cache of the request's model", passes: "cached-content-model", caches: map[string]string{"cachedContents/c": body([]string{userText})},
		body: body([]string{userText}, `"cachedContent":"cachedContents/c"`)},
	{name: "a cache of another model", rule: "cached-content-model", model: "gemini-3-flash-preview",
		caches: map[string]string{"cachedContents/c": body([]string{userText})}, body: body([]string{userText}, `"cachedContent":"cachedContents/c"`),
		want: "Model used by GenerateContent request (models/gemini-3-flash-preview) and CachedContent (models/gemini-2.5-flash) has to be the same."},
	{name: "the cache's contents come first: a response to its call", passes: "function-response-placement",
		caches: map[string]string{"cachedContents/c": body([]string{userText, callF}, tools(declF))},
		body:   body([]string{respF}, `"cachedContent":"cachedContents/c"`)},

	// The contents [userText] count 11 tokens.
	{name: "prompt at the token limit", passes: "input-token-limit", limit: 11, body: body([]string{userText})},
	{name: "prompt over the token limit", rule: "input-token-limit", limit: 10, body: body([]string{userText}),
		want: "The input token count (11) exceeds the maximum number of tokens allowed (10)."},
	{name: "the system instruction and tools count", rule: "input-token-limit", limit: 20,
		body: body([]string{userText}, `"systemInstruction":{"parts":[{"text":"Be brief."}]}`, tools(declF)),
		want: "exceeds the maximum number of tokens allowed (20)."},
}

func TestRules(t *testing.T) {
	rejected, accepted := map[string]bool{}, map[string]bool{}
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input()
			in.inputTokenLimit = tc.limit
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

// Every rule says what backs it.
func TestRulesSayWhatBacksThem(t *testing.T) {
	for _, r := range slices.Concat(rules, cacheRules, fileRules) {
		if r.verified == "" && r.assumed == "" {
			t.Errorf("rule %q is neither verified nor assumed", r.name)
		}
	}
}

// The backend tables name fields that exist.
func TestBackendFieldsExist(t *testing.T) {
	for _, table := range []map[fieldKey]string{geminiOnly, vertexOnly} {
		for k := range table {
			if f, ok := fieldsOf(k.in)[k.name]; !ok || f.name != k.name {
				t.Errorf("%v has no JSON field %q", k.in, k.name)
			}
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

func TestJSONWithToolsAccepted(t *testing.T) {
	for _, tc := range []struct {
		backend genai.Backend
		model   string
		want    bool
	}{
		{genai.BackendGeminiAPI, "gemini-2.5-flash", false},
		{genai.BackendGeminiAPI, "models/gemini-2.0-flash-001", true},
		{genai.BackendGeminiAPI, "gemini-2.5-flash-lite", false},
		{genai.BackendGeminiAPI, "gemini-1.5-pro", false},
		{genai.BackendGeminiAPI, "gemini-3-flash-preview", true},
		{genai.BackendGeminiAPI, "gemini-3.5-flash", true},
		{genai.BackendGeminiAPI, "gemini-flash-latest", true},
		{genai.BackendGeminiAPI, "tunedModels/my-model", true},
		{genai.BackendVertexAI, "gemini-2.5-flash", true},
		{genai.BackendVertexAI, "projects/p/locations/l/publishers/google/models/gemini-2.0-flash", true},
		{genai.BackendVertexAI, "gemini-1.5-pro", false},
		{genai.BackendVertexAI, "gemini-3-pro-preview", true},
	} {
		if got := jsonWithToolsAccepted(tc.backend, tc.model); got != tc.want {
			t.Errorf("jsonWithToolsAccepted(%v, %q) = %t; want %t", tc.backend, tc.model, got, tc.want)
		}
	}
}
