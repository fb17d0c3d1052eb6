package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
)

// interactionRules are the checks every request to an Interactions route
// passes before it is answered, in order, as [rules] are for
// generateContent: the first that fails decides the answer, recorded in a
// [Rejection] named after it, and each says what backs it, verified (a
// public capture, a document, or genai's source,
// google.golang.org/genai@v1.77.0, file:line, where interactions/ is the
// Interactions SDK) or assumed. "(sec)" marks what others measured against
// the real API and wrote down (../shared/notes/gemini-2026.md, section 3).
// The rules after "previous-interaction" read the whole conversation: the
// steps of the previous interactions, then the input.
//
// To add a rule, write its check and add it here, with a passing and a
// failing case in ixRuleCases (interactions_rules_test.go), which
// TestInteractionRules requires.
var interactionRules = []ixRule{
	{name: "auth", check: checkIxAuth,
		verified: "the Interactions SDK sends the API key in x-goog-api-key (interactions/internal/hooks/google_genai_auth.go:24-75), " +
			"as genai does for generateContent; the host is the Gemini API's.",
		assumed: "credentials are checked, and refused, as for generateContent (the same texts, statuses and google.rpc shape: " +
			"Google's front end answers before the service does); an interaction belongs to the key or token that created it, " +
			"and any other is answered 404, as an id that does not exist."},
	{name: "json-syntax", check: checkIxJSONSyntax,
		assumed: "a body that is not JSON is answered 400 invalid_request with generateContent's texts."},
	{name: "json-fields", check: checkIxJSONFields,
		verified: "a field the API does not know is refused: the legacy outputs field (allenhutchison/gemini-cli-deep-research#73), " +
			"a top-level tool_choice (sec: mrgeoffrich/deepseek-harness docs/GEMINI-INTEGRATION.md); the fields, step types and " +
			"their members are the Interactions SDK's (createmodelinteraction.go:228-282, step.go, tool.go:30-39, " +
			"generationconfig.go:280-304); input is a string, a content, a list of contents or a list of steps " +
			"(interactionsinput.go); a function result is a string, a list of contents or an object (functionresultstep.go).",
		assumed: "the text (proto JSON's \"Unknown name\"); a built-in tool step's members are not checked (the server makes those " +
			"steps); a function_call may carry a signature, which google/adk-js sends (core/src/models/interactions_utils.ts)."},
	{name: "agent", check: checkIxAgent,
		assumed: "the fake serves model interactions only: a request naming an agent is refused, saying so."},
	{name: "model-required", check: checkIxModel,
		verified: "model is required (the SDK's CreateModelInteraction.Model has no omitzero, createmodelinteraction.go).",
		assumed:  "the text."},
	{name: "input-required", check: checkIxInput,
		verified: "a continuation hop with store sends previous_interaction_id and the token and no input " +
			"(interactions/continuation.go:227-240).",
		assumed: "any other request without input is refused; the text."},
	{name: "previous-interaction", check: checkIxPrevious,
		verified: "previous_interaction_id names a stored interaction whose history the new one continues " +
			"(https://ai.google.dev/gemini-api/docs/interactions-overview); store:false keeps nothing to name (the same page); " +
			"a stored interaction is kept 55 days on paid tiers, 1 day on the free one (sec).",
		assumed: "an id that is unknown, expired, deleted or another key's is answered 404 not_found (sec: no source found); the text."},
	{name: "step-type", check: checkIxStepTypes,
		verified: "the step types are the SDK's (step.go); a user sends user_input and function_result steps, and the model's " +
			"own steps when it sends the history without store (https://ai.google.dev/gemini-api/docs/interactions-overview).",
		assumed: "a step type the API does not know is refused; the text."},
	{name: "function-result-call-id", check: checkIxCallIDs,
		verified: "a function_result without call_id, text verified (google/adk-python#4381)."},
	{name: "function-results", check: checkIxFunctionResults,
		verified: "the function results of a turn answer the calls of the model's turn before it, one per call_id " +
			"(https://ai.google.dev/gemini-api/docs/interactions/streaming; sec).",
		assumed: "a result whose call_id is no call of the turn before it, two results for one call, a call left without its " +
			"result, and results that follow no call are refused, as generateContent refuses them; the texts."},
	{name: "thought-signature", check: checkIxSignatures,
		verified: "signatures ride on thought steps and built-in tool steps, never on function calls (the API's docs, quoted " +
			"in sec); parallel calls come with one signed thought (sec); a history without store whose thought lost its " +
			"signature is answered 400 \"Request contains an invalid argument.\", and a signature that was not the API's " +
			"\"Corrupted thought signature.\" (sec); the values skip_thought_signature_validator and " +
			"context_engineering_is_the_way_to_go pass (sec).",
		assumed: "the scope of the missing-signature check is the model's steps with function calls since the last user_input, " +
			"as generateContent's; models are recognized by the prefix gemini-3."},
	{name: "builtin-steps", check: checkIxBuiltinSteps,
		assumed: "a built-in tool's result step answers a call step of that id before it in the model's turn, as " +
			"generateContent's server-tool-parts rule assumes of toolCall and toolResponse parts; the text is the fake's."},
	{name: "tools", check: checkIxTools,
		verified: "a function tool has a name (tool.go, function.go).",
		assumed:  "function names follow generateContent's rule, and a name declared twice is refused; the texts."},
	{name: "generation-config", check: checkIxGenerationConfig,
		verified: "thinking_level is minimal, low, medium or high; thinking_summaries auto or none; tool_choice auto, any, none, " +
			"validated or allowed_tools (generationconfig.go, thinkinglevel.go, thinkingsummaries.go, toolchoicetype.go).",
		assumed: "another value is refused; the text."},
	{name: "continuation-token", check: checkIxContinuation,
		verified: "with store a hop sends the interaction that issued the token as previous_interaction_id, without store the " +
			"original input with the token, and the server checks the token belongs to it (interactions/continuation.go:213-240); " +
			"a stream's interaction.status_update events carry checkpoint tokens, from which it resumes (the same file, :574-781).",
		assumed: "a token the server did not issue, or not for that interaction, is refused; the text; a continuation from a " +
			"checkpoint answers the rest of that stream."},
	{name: "input-token-limit", check: checkIxInputTokens,
		assumed: "Server.SetInputTokenLimit applies to the whole conversation, previous interactions included, with " +
			"generateContent's text."},
}

// ixRule is one check of [interactionRules].
type ixRule struct {
	name              string
	check             func(*ixInput) *APIError
	verified, assumed string
}

// ixInput is what the Interactions rules look at.
type ixInput struct {
	srv     *Server
	backend genai.Backend
	version string
	project string
	creds   credentials
	owner   string
	body    []byte
	method  Method
	id      string // get, delete, cancel: the interaction named

	inputTokenLimit int

	tree         *jsonValue         // set by json-syntax
	req          *iw.Request        // set by json-fields
	previous     *storedInteraction // set by previous-interaction
	conversation []iw.Step          // the previous interactions' steps and the input; set by previous-interaction
	authFailed   bool               // the answer is a credentials error, in the front end's shape

	// Set by continuation-token for a continuation from a checkpoint: the
	// interaction whose stream it is of, and the steps after it.
	resumeFrom *storedInteraction
	resume     []iw.Step
}

// checkInteraction runs the rules that apply to in's method and returns
// the first failure, or nil. Only a create has a body to check.
func checkInteraction(in *ixInput) *Rejection {
	for _, r := range interactionRules {
		if r.name != "auth" && in.method != MethodCreateInteraction {
			break
		}
		if err := r.check(in); err != nil {
			return &Rejection{Rule: r.name, Err: *err}
		}
	}
	return nil
}

func checkIxAuth(in *ixInput) *APIError {
	g := &input{backend: in.backend, version: in.version, project: in.project, creds: in.creds}
	if err := checkAuth(g); err != nil {
		in.authFailed = true
		return err
	}
	return nil
}

func checkIxJSONSyntax(in *ixInput) *APIError {
	g := &input{body: in.body}
	if err := checkJSONSyntax(g); err != nil {
		return err
	}
	in.tree = g.tree
	return nil
}

// The members each object of a request may have. A nil list takes any
// member.
var (
	ixRequestFields = []string{"model", "input", "previous_interaction_id", "system_instruction", "tools",
		"generation_config", "response_format", "response_mime_type", "response_modalities", "safety_settings", "labels",
		"service_tier", "cached_content", "continuation_token", "store", "stream", "background", "environment",
		"webhook_config", "agent", "agent_config"}
	ixStepFields = map[string][]string{
		iw.TypeUserInput:      {"type", "content"},
		iw.TypeModelOutput:    {"type", "content", "error"},
		iw.TypeThought:        {"type", "signature", "summary"},
		iw.TypeFunctionCall:   {"type", "id", "name", "arguments", "signature"},
		iw.TypeFunctionResult: {"type", "call_id", "name", "is_error", "result", "signature"},
	}
	ixContentFields = map[string][]string{
		"text":     {"type", "text", "annotations"},
		"image":    {"type", "data", "uri", "mime_type", "resolution"},
		"audio":    {"type", "data", "uri", "mime_type"},
		"video":    {"type", "data", "uri", "mime_type", "resolution"},
		"document": {"type", "data", "uri", "mime_type"},
	}
	ixToolFields = map[string][]string{
		"function":       {"type", "name", "description", "parameters"},
		"google_search":  {"type", "search_types"},
		"code_execution": {"type"},
		"url_context":    {"type"},
		"file_search":    {"type", "file_search_store_names", "top_k", "metadata_filter"},
		"google_maps":    {"type", "enable_widget", "latitude", "longitude"},
		"mcp_server":     nil,
		"computer_use":   nil,
		"retrieval":      nil,
	}
	ixGenerationFields = []string{"temperature", "top_p", "seed", "stop_sequences", "max_output_tokens", "thinking_level",
		"thinking_summaries", "tool_choice", "speech_config", "image_config", "video_config", "transcription_config"}
	ixStepTypes = []string{iw.TypeUserInput, iw.TypeModelOutput, iw.TypeThought, iw.TypeFunctionCall, iw.TypeFunctionResult,
		iw.TypeGoogleSearchCall, iw.TypeGoogleSearchResult, iw.TypeCodeExecutionCall, iw.TypeCodeExecutionResult,
		iw.TypeURLContextCall, iw.TypeURLContextResult, iw.TypeFileSearchCall, iw.TypeFileSearchResult,
		iw.TypeGoogleMapsCall, iw.TypeGoogleMapsResult, iw.TypeMCPServerToolCall, iw.TypeMCPServerToolResult,
		iw.TypeRetrievalCall, iw.TypeRetrievalResult, iw.TypeProcessingCall, iw.TypeProcessingResult}
)

// ixFields collects the members a request has that the API does not know.
type ixFields struct{ violations []fieldViolation }

func (f *ixFields) object(v *jsonValue, path string, allowed []string) {
	if v == nil || v.kind != jsonObject || allowed == nil {
		return
	}
	for _, k := range v.keys {
		if !slices.Contains(allowed, k) {
			where := ""
			if path != "" {
				where = fmt.Sprintf(" at '%s'", path)
			}
			f.violations = append(f.violations, fieldViolation{path, fmt.Sprintf("Invalid JSON payload received. Unknown name %q%s: Cannot find field.", k, where)})
		}
	}
}

func (f *ixFields) wrongType(path, want string, v *jsonValue) {
	f.violations = append(f.violations, fieldViolation{path, fmt.Sprintf("Invalid value at '%s' (%s), %s", path, want, v)})
}

func (f *ixFields) contents(v *jsonValue, path string) {
	for i, c := range v.elems() {
		p := fmt.Sprintf("%s[%d]", path, i)
		if c.kind != jsonObject {
			f.wrongType(p, "Content", c)
			continue
		}
		f.typed(c, p, "content", ixContentFields)
	}
}

// typed checks an object that says what it is in its type: a known one,
// with the members that type has (table's).
func (f *ixFields) typed(v *jsonValue, path, what string, table map[string][]string) {
	t := v.get("type")
	if t == nil || t.kind != jsonString {
		f.violations = append(f.violations, fieldViolation{path + ".type", fmt.Sprintf("Invalid value at '%s.type': a %s needs its type.", path, what)})
		return
	}
	allowed, ok := table[t.str]
	if !ok {
		f.violations = append(f.violations, fieldViolation{path + ".type", fmt.Sprintf("Invalid value at '%s.type', %q is not a %s type.", path, t.str, what)})
		return
	}
	f.object(v, path, allowed)
}

func checkIxJSONFields(in *ixInput) *APIError {
	var f ixFields
	t := in.tree
	f.object(t, "", ixRequestFields)
	// input: a string, a content, a list of contents or a list of steps.
	var steps []*jsonValue
	switch v := t.get("input"); {
	case v == nil, v.kind == jsonNull, v.kind == jsonString:
	case v.kind == jsonObject:
		f.contents(&jsonValue{kind: jsonArray, vals: []*jsonValue{v}}, "input")
	case v.kind == jsonArray && len(v.vals) > 0 && isContentList(v):
		f.contents(v, "input")
	case v.kind == jsonArray:
		steps = v.vals
	default:
		f.wrongType("input", "InteractionsInput", v)
	}
	for i, s := range steps {
		p := fmt.Sprintf("input[%d]", i)
		if s.kind != jsonObject {
			f.wrongType(p, "Step", s)
			continue
		}
		typ := s.get("type")
		if typ == nil || typ.kind != jsonString {
			continue // step-type says so
		}
		allowed, modeled := ixStepFields[typ.str]
		if !modeled {
			continue
		}
		f.object(s, p, allowed)
		f.contents(s.get("content"), p+".content")
		f.contents(s.get("summary"), p+".summary")
		if a := s.get("arguments"); a != nil && a.kind != jsonObject {
			f.wrongType(p+".arguments", "Struct", a)
		}
		if r := s.get("result"); typ.str == iw.TypeFunctionResult && r != nil {
			switch r.kind {
			case jsonString, jsonObject:
			case jsonArray:
				f.contents(r, p+".result")
			default:
				f.wrongType(p+".result", "FunctionResultStep_result", r)
			}
		}
	}
	for i, tool := range t.get("tools").elems() {
		f.typed(tool, fmt.Sprintf("tools[%d]", i), "tool", ixToolFields)
	}
	f.object(t.get("generation_config"), "generation_config", ixGenerationFields)
	if len(f.violations) > 0 {
		return payloadErrors(f.violations)
	}
	// Decode, input apart: its forms become steps.
	var b bytes.Buffer
	t.encode(&b)
	var raw struct {
		iw.Request
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		return invalidRequest("Invalid JSON payload received. " + err.Error())
	}
	req := raw.Request
	input, err := inputSteps(t.get("input"), raw.Input)
	if err != nil {
		return invalidRequest("Invalid JSON payload received. " + err.Error())
	}
	req.Input = input
	if _, err := iw.Contents(input); err != nil {
		return invalidRequest("Invalid JSON payload received. input: " + err.Error())
	}
	in.req = &req
	return nil
}

// isContentList reports whether a non-empty array holds contents rather
// than steps: its first element's type is a content type.
func isContentList(v *jsonValue) bool {
	t := v.vals[0].get("type")
	if t == nil || t.kind != jsonString {
		return false
	}
	_, ok := ixContentFields[t.str]
	return ok
}

// inputSteps returns a request's input as steps: a string or contents
// are one user_input step.
func inputSteps(v *jsonValue, raw json.RawMessage) ([]iw.Step, error) {
	switch {
	case v == nil || v.kind == jsonNull:
		return nil, nil
	case v.kind == jsonString:
		return []iw.Step{{Type: iw.TypeUserInput, Content: []iw.Content{{Type: "text", Text: v.str}}}}, nil
	case v.kind == jsonObject:
		var c iw.Content
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		return []iw.Step{{Type: iw.TypeUserInput, Content: []iw.Content{c}}}, nil
	case len(v.vals) > 0 && isContentList(v):
		var cs []iw.Content
		if err := json.Unmarshal(raw, &cs); err != nil {
			return nil, err
		}
		return []iw.Step{{Type: iw.TypeUserInput, Content: cs}}, nil
	}
	var steps []iw.Step
	err := json.Unmarshal(raw, &steps)
	return steps, err
}

func checkIxAgent(in *ixInput) *APIError {
	if in.tree.get("agent") != nil || in.tree.get("agent_config") != nil {
		return invalidRequest("fake: agent interactions are not served; only model interactions are.")
	}
	return nil
}

func checkIxModel(in *ixInput) *APIError {
	if in.req.Model == "" {
		return invalidRequest("model is required.")
	}
	return nil
}

func checkIxInput(in *ixInput) *APIError {
	if len(in.req.Input) == 0 && (in.req.PreviousInteractionID == "" || in.req.ContinuationToken == "") {
		return invalidRequest("input is required.")
	}
	return nil
}

func checkIxPrevious(in *ixInput) *APIError {
	if id := in.req.PreviousInteractionID; id != "" {
		prev := in.srv.interaction(id, in.owner)
		if prev == nil {
			return notFound(id)
		}
		in.previous = prev
		in.srv.mu.Lock()
		in.conversation = slices.Clone(prev.history)
		in.srv.mu.Unlock()
	}
	in.conversation = append(in.conversation, in.req.Input...)
	return nil
}

func checkIxStepTypes(in *ixInput) *APIError {
	for i, s := range in.req.Input {
		if !slices.Contains(ixStepTypes, s.Type) {
			return invalidRequest(fmt.Sprintf("Invalid value at 'input[%d].type', %q is not a step type.", i, s.Type))
		}
	}
	return nil
}

func checkIxCallIDs(in *ixInput) *APIError {
	for _, s := range in.req.Input {
		if s.Type == iw.TypeFunctionResult && s.CallID == "" {
			return invalidRequest("Missing call_id in content of type function_result")
		}
	}
	return nil
}

// userSide reports whether a step is said by the user.
func userSide(s iw.Step) bool {
	return s.Type == iw.TypeUserInput || s.Type == iw.TypeFunctionResult
}

// ixTurn is a run of consecutive steps of one side, steps[start:end].
type ixTurn struct {
	model      bool
	start, end int
}

func ixTurns(steps []iw.Step) []ixTurn {
	var out []ixTurn
	for i, s := range steps {
		model := !userSide(s)
		if n := len(out); n > 0 && out[n-1].model == model {
			out[n-1].end = i + 1
			continue
		}
		out = append(out, ixTurn{model: model, start: i, end: i + 1})
	}
	return out
}

func checkIxFunctionResults(in *ixInput) *APIError {
	steps := in.conversation
	turns := ixTurns(steps)
	for k, t := range turns {
		if t.model {
			continue
		}
		var calls []iw.Step
		if k > 0 {
			for _, s := range steps[turns[k-1].start:turns[k-1].end] {
				if s.Type == iw.TypeFunctionCall {
					calls = append(calls, s)
				}
			}
		}
		answered := map[string]bool{}
		for _, s := range steps[t.start:t.end] {
			if s.Type != iw.TypeFunctionResult {
				continue
			}
			if !slices.ContainsFunc(calls, func(c iw.Step) bool { return c.ID == s.CallID }) {
				return invalidRequest(fmt.Sprintf("function_result with call_id %q answers no function_call of the turn before it.", s.CallID))
			}
			if answered[s.CallID] {
				return invalidRequest(fmt.Sprintf("More than one function_result for call_id %q.", s.CallID))
			}
			answered[s.CallID] = true
		}
		for _, c := range calls {
			if !answered[c.ID] {
				return invalidRequest(fmt.Sprintf("function_call %q (%s) has no function_result.", c.ID, c.Name))
			}
		}
	}
	return nil
}

// bypassSignatures are the values the API takes in place of a signature
// (sec).
var bypassSignatures = []string{"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}

func checkIxSignatures(in *ixInput) *APIError {
	in.srv.mu.Lock()
	issued := in.srv.signatures
	corrupted := ""
	for _, s := range in.req.Input {
		if s.Signature != nil && *s.Signature != "" && !issued[*s.Signature] && !slices.Contains(bypassSignatures, *s.Signature) {
			corrupted = *s.Signature
			break
		}
	}
	in.srv.mu.Unlock()
	if corrupted != "" {
		return invalidRequest("Corrupted thought signature.")
	}
	if !isGemini3(in.req.Model) {
		return nil
	}
	// The model's turns with function calls since the last user_input,
	// among the steps the request itself sends.
	steps := in.req.Input
	last := -1
	for i, s := range steps {
		if s.Type == iw.TypeUserInput {
			last = i
		}
	}
	for _, t := range ixTurns(steps) {
		if !t.model || t.start < last {
			continue
		}
		calls, signed := false, false
		for _, s := range steps[t.start:t.end] {
			calls = calls || s.Type == iw.TypeFunctionCall
			signed = signed || s.Type == iw.TypeThought && s.Signature != nil && *s.Signature != ""
		}
		if calls && !signed {
			return invalidRequest("Request contains an invalid argument.")
		}
	}
	return nil
}

func checkIxBuiltinSteps(in *ixInput) *APIError {
	steps := in.req.Input
	for _, t := range ixTurns(steps) {
		calls := map[string]bool{}
		for i := t.start; i < t.end; i++ {
			s := steps[i]
			if iw.Modeled(s.Type) {
				continue
			}
			switch {
			case strings.HasSuffix(s.Type, "_call"):
				calls[s.ID] = true
			case strings.HasSuffix(s.Type, "_result") && s.CallID != "" && !calls[s.CallID]:
				return invalidRequest(fmt.Sprintf("input[%d]: %s with call_id %q answers no call before it in the model's turn.", i, s.Type, s.CallID))
			}
		}
	}
	return nil
}

func checkIxTools(in *ixInput) *APIError {
	seen := map[string]bool{}
	for i, t := range in.req.Tools {
		if t.Type != "function" {
			continue
		}
		switch {
		case t.Name == "":
			return invalidRequest(fmt.Sprintf("tools[%d].name: a function tool needs a name.", i))
		case !functionName.MatchString(t.Name):
			return invalidRequest(fmt.Sprintf("tools[%d].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64.", i))
		case seen[t.Name]:
			return invalidRequest("Duplicate function declaration found: " + t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

func checkIxGenerationConfig(in *ixInput) *APIError {
	gc := in.req.GenerationConfig
	if gc == nil {
		return nil
	}
	if gc.ThinkingLevel != "" && !slices.Contains([]string{"minimal", "low", "medium", "high"}, gc.ThinkingLevel) {
		return invalidRequest(fmt.Sprintf("Invalid value at 'generation_config.thinking_level', %q.", gc.ThinkingLevel))
	}
	if gc.ThinkingSummaries != "" && !slices.Contains([]string{"auto", "none"}, gc.ThinkingSummaries) {
		return invalidRequest(fmt.Sprintf("Invalid value at 'generation_config.thinking_summaries', %q.", gc.ThinkingSummaries))
	}
	if len(gc.ToolChoice) > 0 {
		var mode string
		if json.Unmarshal(gc.ToolChoice, &mode) == nil {
			if !slices.Contains([]string{"auto", "any", "none", "validated"}, mode) {
				return invalidRequest(fmt.Sprintf("Invalid value at 'generation_config.tool_choice', %q.", mode))
			}
		} else {
			var cfg struct {
				AllowedTools *struct {
					Mode  string   `json:"mode"`
					Tools []string `json:"tools"`
				} `json:"allowed_tools"`
			}
			if json.Unmarshal(gc.ToolChoice, &cfg) != nil || cfg.AllowedTools == nil {
				return invalidRequest("Invalid value at 'generation_config.tool_choice'.")
			}
		}
	}
	return nil
}

func checkIxContinuation(in *ixInput) *APIError {
	token := in.req.ContinuationToken
	if token == "" {
		return nil
	}
	in.srv.mu.Lock()
	owner, issued := in.srv.ixTokens[token]
	from := in.srv.ixCheckpoints[token]
	in.srv.mu.Unlock()
	switch {
	case in.previous != nil && owner != in.previous.id:
		return invalidRequest(fmt.Sprintf("continuation_token was not issued by interaction %s.", in.previous.id))
	case !issued:
		return invalidRequest("continuation_token is not valid.")
	}
	if from != nil {
		// A checkpoint's: the rest of that stream answers.
		in.resumeFrom, in.resume = from, from.checkpoints[token]
	}
	return nil
}

func checkIxInputTokens(in *ixInput) *APIError {
	if in.inputTokenLimit <= 0 {
		return nil
	}
	contents, err := iw.Contents(in.conversation)
	if err != nil {
		return nil
	}
	var u usageCounter
	u.prompt(&wireRequest{Contents: contents})
	if n := int(tokens(u.promptBytes)); n > in.inputTokenLimit {
		return invalidRequest(fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, in.inputTokenLimit))
	}
	return nil
}
