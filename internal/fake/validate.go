package fake

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/genai"
)

// rules are the checks every request passes before it is answered, in the
// order they run. The first rule that fails decides the answer: the request
// is rejected with that rule's error, which is recorded in a [Rejection]
// named after the rule. Earlier rules parse the body for later ones.
//
// Each comment states the rule and where its error text comes from. Texts
// marked "verbatim" are the real API's (from gemini-wire.md §5.3 or the
// public report cited); the others follow the API's style but were not seen
// verbatim.
//
// To add a rule, add an entry here with such a comment, and a passing and a
// failing case to TestRules.
var rules = []rule{
	// The API key must come in the x-goog-api-key header (the SDK sends it
	// nowhere else). 403 PERMISSION_DENIED, verbatim: "Method doesn't allow
	// unregistered callers (callers without established identity). Please
	// use API Key or other form of API consumer identity to call this API."
	{"api-key", checkAPIKey},
	// The body must be one well-formed JSON object (an empty body is {}).
	// 400, in the API's form: "Invalid JSON payload received. Unexpected
	// token." followed by the text around the error and a caret.
	{"json-syntax", checkJSONSyntax},
	// functionResponse.response must be a JSON object (google.protobuf.Struct),
	// checked on the raw JSON. Verbatim forms: for a string, number or bool
	// "Invalid value at 'contents[2].parts[0].function_response.response'
	// (type.googleapis.com/google.protobuf.Struct), "text""; for an array
	// "Invalid JSON payload received. Unknown name "response" at
	// 'contents[2].parts[0].function_response': Proto field is not repeating,
	// cannot start list.". Missing or null: "* GenerateContentRequest.
	// contents[2].parts[0].function_response.response: must be a JSON
	// object" (not verbatim).
	{"function-response-object", checkResponseObject},
	// Every key at every level must name a field of the request (camelCase
	// or snake_case), every value must have its field's JSON type, schema
	// types and function-calling modes must be known values. This is how the
	// API rejects JSON Schema keywords in "parameters". Free-form fields
	// (args, response, parametersJsonSchema, responseJsonSchema, default,
	// example, partMetadata) hold any JSON. Verbatim: "Invalid JSON payload
	// received. Unknown name "additionalProperties" at
	// 'tools[0].function_declarations[0].parameters': Cannot find field."
	// with a google.rpc.BadRequest detail; one line per violation.
	{"json-fields", checkJSONFields},
	// contents must not be empty. Verbatim (langchain-ai/langchain#33940):
	// "* GenerateContentRequest.contents: contents is not specified".
	{"contents-required", checkContentsRequired},
	// Content.role must be "user", "model" or unset. Verbatim
	// (router-for-me/CLIProxyAPI#17): "Please use a valid role: user, model."
	{"role", checkRoles},
	// Every content needs at least one part. Verbatim
	// (langchain-ai/langchain-google#691): "* GenerateContentRequest.
	// contents[41].parts: contents.parts must not be empty."
	{"parts-required", checkPartsRequired},
	// Every part must carry data: text (even ""), inlineData, fileData,
	// functionCall, functionResponse, executableCode, codeExecutionResult,
	// toolCall or toolResponse. A part that carries only a thoughtSignature
	// is accepted: it is the empty text part the API itself sends, after
	// the SDK's omitempty dropped the text. Verbatim:
	// "* GenerateContentRequest.contents[1].parts[0].data: required oneof
	// field 'data' must have one initialized field".
	{"part-data", checkPartData},
	// Every tools entry must declare something (tools:[{}] is what
	// &genai.Tool{} sends). Verbatim: "The GenerateContentRequest proto is
	// invalid:\n  * tools[0].tool_type: required one_of 'tool_type' must have
	// one initialized field".
	{"tool-type", checkToolType},
	// toolConfig.functionCallingConfig needs function declarations. Verbatim:
	// "Function calling config is set without function_declarations."
	{"function-calling-config", checkFunctionCallingConfig},
	// Function names must match ^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$
	// (gemini-wire.md §6.6). Verbatim (google-gemini/gemini-cli#6704):
	// "* GenerateContentRequest.tools[0].function_declarations[37].name:
	// Invalid function name. Must start with a letter or an underscore. Must
	// be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-),
	// with a maximum length of 64."
	{"function-name", checkFunctionNames},
	// Function names must be unique across all tools of the request.
	// Verbatim (tridz-dev/huf#341): "Duplicate function declaration found: load_conversation_data".
	{"duplicate-function", checkDuplicateFunctions},
	// parameters and parametersJsonSchema are mutually exclusive. Not
	// verbatim: "* GenerateContentRequest.tools[0].function_declarations[0]:
	// parameters and parameters_json_schema must not both be set."
	{"parameters-exclusive", checkParametersExclusive},
	// Every schema in parameters needs a type, unless it uses anyOf.
	// Verbatim: "* GenerateContentRequest.tools[0].function_declarations[29].
	// parameters.properties[webhook].type: must be specified when not using
	// one_of, any_of or all_of fields".
	{"schema-type", checkSchemaTypes},
	// Every name in a schema's required list must be one of its properties.
	// Verbatim: "* GenerateContentRequest.tools[0].function_declarations[1].
	// parameters.required[0]: property is not defined".
	{"schema-required", checkSchemaRequired},
	// The next rules see consecutive contents of the same role as one turn,
	// as genai's Chat streaming history needs (see [turn]).
	//
	// A model turn with function calls must come right after a user turn
	// (which may be a function response turn): it cannot open the
	// conversation. Verbatim (discuss.ai.google.dev, topic 46213): "Please
	// ensure that function call turns come immediately after a user turn or
	// after a function response turn."
	{"function-call-placement", checkCallPlacement},
	// A turn with function responses must come right after a model turn with
	// function calls. Verbatim: "Please ensure that function response turn
	// comes immediately after a function call turn."
	{"function-response-placement", checkResponsePlacement},
	// A model turn with N functionCall parts must be followed by a turn with
	// exactly N functionResponse parts, unless it is the last turn.
	// Verbatim: "Please ensure that the number of function response parts
	// is equal to the number of function call parts of the function call
	// turn."
	{"function-response-count", checkResponseCount},
	// Responses must answer the calls of the turn before them, compared as
	// multisets: a call with an id is answered by the response with that id
	// (and the same name); calls without ids are matched by name. Not
	// verbatim: "* GenerateContentRequest.contents[2].parts[0].
	// function_response.id: …" saying which call is unanswered.
	{"function-response-id", checkResponseIDs},
	// functionResponse.parts (media inside a function response) is taken by
	// models whose name starts with "gemini-3" only; for any other model a
	// function response with parts is refused. Verbatim (reported on Gemini
	// 2.5, google-gemini/gemini-cli#19436): "Unable to submit request
	// because `function_response.parts` is not supported for this model.
	// Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling".
	// Verified: the text, and that Gemini 2.5 refuses parts. Assumed: that
	// the Gemini API answers every pre-3 model with that same text (the
	// report came through gemini-cli, whose error links the Vertex docs),
	// and that Gemini 3 accepts any MIME type (gemini-cli#19436 and the
	// Gemini 3 developer guide show images and PDFs).
	{"function-response-parts", checkFunctionResponseParts},
	// Models whose name starts with "gemini-3": walking back to the most
	// recent user content that is not only function responses, the first
	// functionCall part of every model turn after it must carry its
	// thoughtSignature; earlier turns are not checked (gemini-wire.md §6.3).
	// Verbatim except for the position, which is the 1-based index of the
	// content holding the call: "Function call is missing a
	// thought_signature in functionCall parts. This is required for tools to
	// work correctly, and missing thought_signature may lead to degraded
	// model performance. Additional data, function call `default_api:shell`
	// , position 2. Please refer to
	// https://ai.google.dev/gemini-api/docs/thought-signatures for more
	// details."
	{"thought-signature", checkThoughtSignatures},
}

// rule is one check of [rules].
type rule struct {
	name  string
	check func(*input) *APIError
}

// input is what the rules look at. Rules fill tree and req for the rules
// after them.
type input struct {
	model  string // without "models/"
	apiKey string
	body   []byte

	tree      *jsonValue   // the parsed body; set by "json-syntax"
	req       *wireRequest // the decoded body; set by "json-fields"
	canonical []byte       // req as canonical JSON; set by "json-fields"
}

// check runs the rules on in and returns the first failure, or nil.
func check(in *input) *Rejection {
	for _, r := range rules {
		if err := r.check(in); err != nil {
			return &Rejection{Rule: r.name, Err: *err}
		}
	}
	return nil
}

// validate decodes and checks a request body sent for model with an API
// key. It is the whole request check except routing, without HTTP, for the
// fuzz target and table tests.
func validate(model string, body []byte) (*input, *Rejection) {
	in := &input{model: model, apiKey: APIKey, body: body}
	return in, check(in)
}

func invalidArgument(message string) *APIError {
	return &APIError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: message}
}

// requestErrors is the API's error for violations found in the decoded
// request: one line "* GenerateContentRequest.<field>: <reason>" each.
func requestErrors(violations []string) *APIError {
	if len(violations) == 0 {
		return nil
	}
	var b strings.Builder
	for _, v := range violations {
		fmt.Fprintf(&b, "* GenerateContentRequest.%s\n", v)
	}
	return invalidArgument(b.String())
}

// payloadErrors is the API's error for violations found while parsing the
// JSON: the descriptions joined by newlines, and a BadRequest detail.
func payloadErrors(violations []fieldViolation) *APIError {
	if len(violations) == 0 {
		return nil
	}
	lines := make([]string, len(violations))
	fv := make([]any, len(violations))
	for i, v := range violations {
		lines[i] = v.description
		m := map[string]any{"description": v.description}
		if v.field != "" {
			m["field"] = v.field
		}
		fv[i] = m
	}
	err := invalidArgument(strings.Join(lines, "\n"))
	err.Details = []map[string]any{{"@type": typeBadRequest, "fieldViolations": fv}}
	return err
}

func checkAPIKey(in *input) *APIError {
	if in.apiKey != "" {
		return nil
	}
	return &APIError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
}

func checkJSONSyntax(in *input) *APIError {
	body := in.body
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	tree, err := parseJSON(body)
	if err != nil {
		return invalidArgument("Invalid JSON payload received. " + syntaxMessage(body, err.(*jsonSyntaxError)))
	}
	if tree.kind != jsonObject {
		return invalidArgument("Invalid JSON payload received. Root element must be a message.")
	}
	in.tree = tree
	return nil
}

// syntaxMessage describes a syntax error with the line around it and a
// caret under the offending byte, as the API does.
func syntaxMessage(body []byte, e *jsonSyntaxError) string {
	if e.eof {
		return "Unexpected end of string."
	}
	off := int(min(max(e.offset, 0), int64(len(body))))
	start := max(off-40, 0)
	if i := strings.LastIndexByte(string(body[start:off]), '\n'); i >= 0 {
		start += i + 1
	}
	end := min(off+20, len(body))
	if i := strings.IndexByte(string(body[off:end]), '\n'); i >= 0 {
		end = off + i
	}
	return fmt.Sprintf("Unexpected token.\n%s\n%s^", body[start:end], strings.Repeat(" ", off-start))
}

func checkResponseObject(in *input) *APIError {
	var parse []fieldViolation
	var missing []string
	for i, c := range in.tree.get("contents").elems() {
		for j, p := range c.get("parts").elems() {
			fr := p.get("functionResponse")
			if fr == nil || fr.kind != jsonObject {
				continue
			}
			path := fmt.Sprintf("contents[%d].parts[%d].function_response", i, j)
			r := fr.get("response")
			switch {
			case r == nil || r.kind == jsonNull:
				missing = append(missing, path+".response: must be a JSON object")
			case r.kind == jsonArray:
				parse = append(parse, fieldViolation{path, fmt.Sprintf(
					"Invalid JSON payload received. Unknown name \"response\" at '%s': Proto field is not repeating, cannot start list.", path)})
			case r.kind != jsonObject:
				parse = append(parse, fieldViolation{path + ".response", fmt.Sprintf(
					"Invalid value at '%s.response' (type.googleapis.com/google.protobuf.Struct), %s", path, r)})
			}
		}
	}
	if len(parse) > 0 {
		return payloadErrors(parse)
	}
	return requestErrors(missing)
}

func checkJSONFields(in *input) *APIError {
	req, canonical, violations := decodeRequest(in.tree)
	if len(violations) > 0 {
		return payloadErrors(violations)
	}
	in.req, in.canonical = req, canonical
	return nil
}

func checkContentsRequired(in *input) *APIError {
	if len(in.req.Contents) == 0 {
		return requestErrors([]string{"contents: contents is not specified"})
	}
	return nil
}

func checkRoles(in *input) *APIError {
	for _, c := range in.req.Contents {
		if c.Role != "" && c.Role != genai.RoleUser && c.Role != genai.RoleModel {
			return invalidArgument("Please use a valid role: user, model.")
		}
	}
	return nil
}

func checkPartsRequired(in *input) *APIError {
	var v []string
	for i, c := range in.req.Contents {
		if len(c.Parts) == 0 {
			v = append(v, fmt.Sprintf("contents[%d].parts: contents.parts must not be empty.", i))
		}
	}
	return requestErrors(v)
}

// partDataKeys are the members of Part's "data" oneof.
var partDataKeys = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse",
	"executableCode", "codeExecutionResult", "toolCall", "toolResponse"}

func checkPartData(in *input) *APIError {
	var v []string
	check := func(content *jsonValue, path string) {
		for j, p := range content.get("parts").elems() {
			if hasData(p) || isSet(p.get("thoughtSignature")) {
				continue
			}
			v = append(v, fmt.Sprintf("%s.parts[%d].data: required oneof field 'data' must have one initialized field", path, j))
		}
	}
	for i, c := range in.tree.get("contents").elems() {
		check(c, fmt.Sprintf("contents[%d]", i))
	}
	check(in.tree.get("systemInstruction"), "system_instruction")
	return requestErrors(v)
}

// hasData reports whether a JSON part has a member of the data oneof.
func hasData(p *jsonValue) bool {
	for _, k := range partDataKeys {
		if isSet(p.get(k)) {
			return true
		}
	}
	return false
}

// isSet reports whether a JSON field is present and not null.
func isSet(v *jsonValue) bool {
	return v != nil && v.kind != jsonNull
}

func checkToolType(in *input) *APIError {
	var b strings.Builder
	for i, t := range in.req.Tools {
		if !hasNonZeroField(reflect.ValueOf(t).Elem()) {
			fmt.Fprintf(&b, "\n  * tools[%d].tool_type: required one_of 'tool_type' must have one initialized field", i)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return invalidArgument("The GenerateContentRequest proto is invalid:" + b.String())
}

// hasNonZeroField reports whether struct v has a field that is set; an
// empty slice or map is not.
func hasNonZeroField(v reflect.Value) bool {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice, reflect.Map:
			if f.Len() > 0 {
				return true
			}
		default:
			if !f.IsZero() {
				return true
			}
		}
	}
	return false
}

// declaration is a function declaration with its path in the request.
type declaration struct {
	*genai.FunctionDeclaration
	path string // "tools[0].function_declarations[1]"
}

func declarations(req *wireRequest) []declaration {
	var out []declaration
	for i, t := range req.Tools {
		for j, d := range t.FunctionDeclarations {
			out = append(out, declaration{d, fmt.Sprintf("tools[%d].function_declarations[%d]", i, j)})
		}
	}
	return out
}

func checkFunctionCallingConfig(in *input) *APIError {
	tc := in.req.ToolConfig
	if tc != nil && tc.FunctionCallingConfig != nil && len(declarations(in.req)) == 0 {
		return invalidArgument("Function calling config is set without function_declarations.")
	}
	return nil
}

// functionName is the rule for function names: the v1beta proto's, with its
// 64-character limit (the SDK doc says 128).
var functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

func checkFunctionNames(in *input) *APIError {
	var v []string
	for _, d := range declarations(in.req) {
		if !functionName.MatchString(d.Name) {
			v = append(v, d.path+".name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64.")
		}
	}
	return requestErrors(v)
}

func checkDuplicateFunctions(in *input) *APIError {
	seen := map[string]bool{}
	for _, d := range declarations(in.req) {
		if seen[d.Name] {
			return invalidArgument("Duplicate function declaration found: " + d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

func checkParametersExclusive(in *input) *APIError {
	var v []string
	for _, d := range declarations(in.req) {
		if d.Parameters != nil && d.ParametersJsonSchema != nil {
			v = append(v, d.path+": parameters and parameters_json_schema must not both be set.")
		}
	}
	return requestErrors(v)
}

// walkSchemas calls f for every schema in the parameters of every
// declaration, with its path.
func walkSchemas(req *wireRequest, f func(s *genai.Schema, path string)) {
	var walk func(s *genai.Schema, path string)
	walk = func(s *genai.Schema, path string) {
		if s == nil {
			return
		}
		f(s, path)
		for _, name := range sortedKeys(s.Properties) {
			walk(s.Properties[name], fmt.Sprintf("%s.properties[%s]", path, name))
		}
		walk(s.Items, path+".items")
		for i, a := range s.AnyOf {
			walk(a, fmt.Sprintf("%s.any_of[%d]", path, i))
		}
	}
	for _, d := range declarations(req) {
		walk(d.Parameters, d.path+".parameters")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func checkSchemaTypes(in *input) *APIError {
	var v []string
	walkSchemas(in.req, func(s *genai.Schema, path string) {
		if len(s.AnyOf) == 0 && (s.Type == "" || strings.EqualFold(string(s.Type), string(genai.TypeUnspecified))) {
			v = append(v, path+".type: must be specified when not using one_of, any_of or all_of fields")
		}
	})
	return requestErrors(v)
}

func checkSchemaRequired(in *input) *APIError {
	var v []string
	walkSchemas(in.req, func(s *genai.Schema, path string) {
		for i, name := range s.Required {
			if _, ok := s.Properties[name]; !ok {
				v = append(v, fmt.Sprintf("%s.required[%d]: property is not defined", path, i))
			}
		}
	})
	return requestErrors(v)
}

// turn is a run of consecutive contents of the same role, contents[start:end].
// The rules about function calls read a run as one turn: genai's Chat
// records a streamed answer as one model content per chunk, so a turn's
// calls can be spread over several contents.
type turn struct {
	model      bool
	start, end int
}

// located is a part with its indexes in contents.
type located struct {
	content, part int
	*genai.Part
}

func turnsOf(cs []*genai.Content) []turn {
	var out []turn
	for i, c := range cs {
		model := c.Role == genai.RoleModel
		if n := len(out); n > 0 && out[n-1].model == model {
			out[n-1].end = i + 1
			continue
		}
		out = append(out, turn{model: model, start: i, end: i + 1})
	}
	return out
}

// calls and responses return the functionCall and functionResponse parts
// of t, in order.
func (t turn) calls(cs []*genai.Content) []located {
	return t.parts(cs, func(p *genai.Part) bool { return p.FunctionCall != nil })
}

func (t turn) responses(cs []*genai.Content) []located {
	return t.parts(cs, func(p *genai.Part) bool { return p.FunctionResponse != nil })
}

func (t turn) parts(cs []*genai.Content, keep func(*genai.Part) bool) []located {
	var out []located
	for i := t.start; i < t.end; i++ {
		for j, p := range cs[i].Parts {
			if keep(p) {
				out = append(out, located{i, j, p})
			}
		}
	}
	return out
}

// isCallTurn reports whether t is a model turn with function calls.
func (t turn) isCallTurn(cs []*genai.Content) bool {
	return t.model && len(t.calls(cs)) > 0
}

func checkCallPlacement(in *input) *APIError {
	cs := in.req.Contents
	if ts := turnsOf(cs); ts[0].isCallTurn(cs) { // later model turns follow a user turn
		return invalidArgument("Please ensure that function call turns come immediately after a user turn or after a function response turn.")
	}
	return nil
}

func checkResponsePlacement(in *input) *APIError {
	cs := in.req.Contents
	ts := turnsOf(cs)
	for k, t := range ts {
		if len(t.responses(cs)) > 0 && (k == 0 || !ts[k-1].isCallTurn(cs)) {
			return invalidArgument("Please ensure that function response turn comes immediately after a function call turn.")
		}
	}
	return nil
}

func checkResponseCount(in *input) *APIError {
	cs := in.req.Contents
	ts := turnsOf(cs)
	for k, t := range ts {
		if t.isCallTurn(cs) && k+1 < len(ts) && len(ts[k+1].responses(cs)) != len(t.calls(cs)) {
			return invalidArgument("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
		}
	}
	return nil
}

func checkResponseIDs(in *input) *APIError {
	var v []string
	cs := in.req.Contents
	ts := turnsOf(cs)
	for k := 1; k < len(ts); k++ {
		if ts[k-1].isCallTurn(cs) {
			v = append(v, matchResponses(ts[k-1].calls(cs), ts[k].responses(cs))...)
		}
	}
	return requestErrors(v)
}

// matchResponses matches responses to calls as multisets: by id when the
// response has one, else by name among the calls without id. It returns a
// violation for each response that matches no call.
func matchResponses(calls, responses []located) []string {
	var v []string
	used := make([]bool, len(calls))
	find := func(match func(*genai.FunctionCall) bool) int {
		for k, c := range calls {
			if !used[k] && match(c.FunctionCall) {
				used[k] = true
				return k
			}
		}
		return -1
	}
	for _, rp := range responses {
		r := rp.FunctionResponse
		path := fmt.Sprintf("contents[%d].parts[%d].function_response", rp.content, rp.part)
		switch {
		case r.ID != "":
			k := find(func(c *genai.FunctionCall) bool { return c.ID == r.ID })
			if k < 0 {
				v = append(v, fmt.Sprintf("%s.id: %q is not the id of a function call of the function call turn.", path, r.ID))
			} else if name := calls[k].FunctionCall.Name; name != r.Name {
				v = append(v, fmt.Sprintf("%s.name: the function call with id %q is named %q, not %q.", path, r.ID, name, r.Name))
			}
		case find(func(c *genai.FunctionCall) bool { return c.ID == "" && c.Name == r.Name }) >= 0:
		default:
			if k := find(func(c *genai.FunctionCall) bool { return c.Name == r.Name }); k >= 0 {
				v = append(v, fmt.Sprintf("%s.id: the function call %q has id %q; its response must echo it.", path, r.Name, calls[k].FunctionCall.ID))
			} else {
				v = append(v, fmt.Sprintf("%s.name: no function call named %q in the function call turn.", path, r.Name))
			}
		}
	}
	return v
}

func checkFunctionResponseParts(in *input) *APIError {
	if isGemini3(in.model) {
		return nil
	}
	for _, c := range in.req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0 {
				return invalidArgument("Unable to submit request because `function_response.parts` is not supported for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling")
			}
		}
	}
	return nil
}

// isGemini3 reports whether model is one of the Gemini 3 models, which
// require thought signatures and always send function-call ids.
func isGemini3(model string) bool {
	return strings.HasPrefix(model, "gemini-3")
}

func checkThoughtSignatures(in *input) *APIError {
	if !isGemini3(in.model) {
		return nil
	}
	cs := in.req.Contents
	current := 0 // the index of the most recent user content that is not only function responses
	for i, c := range cs {
		if c.Role != genai.RoleModel && len(turn{start: i, end: i + 1}.responses(cs)) < len(c.Parts) {
			current = i
		}
	}
	for _, t := range turnsOf(cs) {
		if !t.model || t.start < current {
			continue
		}
		if calls := t.calls(cs); len(calls) > 0 && len(calls[0].ThoughtSignature) == 0 {
			return invalidArgument(fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", calls[0].FunctionCall.Name, calls[0].content+1))
		}
	}
	return nil
}
