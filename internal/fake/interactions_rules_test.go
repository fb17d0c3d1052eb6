package fake

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
)

// ixRuleCase is one request to an Interactions rule: it passes the rule
// named passes, or is rejected by the rule named rule with code (400 when
// 0) and a message containing want.
type ixRuleCase struct {
	name   string
	creds  *credentials
	body   string
	limit  int
	passes string
	rule   string
	code   int
	want   string
}

const ixModel = `"model":"gemini-3-flash-preview"`

// ixBody returns a create body for gemini-3 with these extra members.
func ixBody(members ...string) string {
	return "{" + strings.Join(append([]string{ixModel}, members...), ",") + "}"
}

// The stored interaction the cases continue: a turn that asked for two
// calls, signed, with a continuation token.
const (
	prevID    = "v1_prev"
	prevToken = "tok-prev"
	prevSig   = "sig-prev"
)

var (
	inputHi     = `"input":"hi"`
	answerBoth  = `"previous_interaction_id":"v1_prev","input":[{"type":"function_result","call_id":"c1","name":"f","result":"ok"},{"type":"function_result","call_id":"c2","name":"f","result":[{"type":"text","text":"ok"}]}]`
	statelessOK = `"input":[{"type":"user_input","content":[{"type":"text","text":"hi"}]},{"type":"thought","signature":"sig-prev"},` +
		`{"type":"function_call","id":"c1","name":"f","arguments":{}},{"type":"function_result","call_id":"c1","name":"f","result":"ok"}],"store":false`
)

var ixRuleCases = []ixRuleCase{
	{name: "key", passes: "auth", body: ixBody(inputHi)},
	{name: "no credentials", creds: &credentials{}, body: ixBody(inputHi), rule: "auth", code: http.StatusForbidden, want: "Method doesn't allow unregistered callers"},

	{name: "JSON", passes: "json-syntax", body: ixBody(inputHi)},
	{name: "not JSON", body: `{"model":`, rule: "json-syntax", want: "Invalid JSON payload received. Unexpected end of string."},

	{name: "known fields", passes: "json-fields", body: ixBody(inputHi, `"store":true,"stream":false,"generation_config":{"temperature":0.2}`)},
	{name: "input forms", passes: "json-fields", body: ixBody(`"input":[{"type":"text","text":"hi"},{"type":"image","uri":"gs://b/x.png","mime_type":"image/png"}]`)},
	{name: "legacy outputs", body: ixBody(inputHi, `"outputs":[]`), rule: "json-fields", want: `Unknown name "outputs": Cannot find field.`},
	{name: "top-level tool_choice", body: ixBody(inputHi, `"tool_choice":"auto"`), rule: "json-fields", want: `Unknown name "tool_choice"`},
	{name: "unknown step member", body: ixBody(`"input":[{"type":"user_input","content":[],"role":"user"}]`), rule: "json-fields", want: `Unknown name "role" at 'input[0]'`},
	{name: "unknown tool member", body: ixBody(inputHi, `"tools":[{"type":"function","name":"f","parameters_json_schema":{}}]`), rule: "json-fields", want: `Unknown name "parameters_json_schema" at 'tools[0]'`},
	{name: "function result a number", body: ixBody(`"previous_interaction_id":"v1_prev","input":[{"type":"function_result","call_id":"c1","result":3}]`), rule: "json-fields", want: "input[0].result"},
	{name: "function result a list of strings", body: ixBody(`"previous_interaction_id":"v1_prev","input":[{"type":"function_result","call_id":"c1","result":["ok"]}]`),
		rule: "json-fields", want: "input[0].result[0]"},
	{name: "unknown tool type", body: ixBody(inputHi, `"tools":[{"type":"teleport"}]`), rule: "json-fields", want: `"teleport" is not a tool type`},

	{name: "a model", passes: "agent", body: ixBody(inputHi)},
	{name: "an agent", body: `{"agent":"deep-research-pro-preview-12-2025","input":"hi"}`, rule: "agent", want: "agent interactions are not served"},

	{name: "model set", passes: "model-required", body: ixBody(inputHi)},
	{name: "no model", body: `{"input":"hi"}`, rule: "model-required", want: "model is required."},

	{name: "input", passes: "input-required", body: ixBody(inputHi)},
	{name: "a hop without input", passes: "input-required", body: ixBody(`"previous_interaction_id":"v1_prev","continuation_token":"tok-prev"`)},
	{name: "no input", body: ixBody(), rule: "input-required", want: "input is required."},

	{name: "stored previous", passes: "previous-interaction", body: ixBody(answerBoth)},
	{name: "unknown previous", body: ixBody(`"previous_interaction_id":"v1_nope",` + inputHi), rule: "previous-interaction", code: http.StatusNotFound, want: "Interaction v1_nope was not found."},
	{name: "another key's previous", creds: &credentials{apiKey: "someone-else"}, body: ixBody(answerBoth), rule: "previous-interaction", code: http.StatusNotFound, want: "was not found"},

	{name: "known steps", passes: "step-type", body: ixBody(statelessOK)},
	{name: "unknown step", body: ixBody(`"input":[{"type":"hologram"}]`), rule: "step-type", want: `"hologram" is not a step type`},

	{name: "call ids", passes: "function-result-call-id", body: ixBody(answerBoth)},
	{name: "no call id", body: ixBody(`"previous_interaction_id":"v1_prev","input":[{"type":"function_result","name":"f","result":"ok"}]`),
		rule: "function-result-call-id", want: "Missing call_id in content of type function_result"},

	{name: "both pending calls answered", passes: "function-results", body: ixBody(answerBoth)},
	{name: "answered in the history", passes: "function-results", body: ixBody(statelessOK)},
	{name: "wrong call id", body: ixBody(`"previous_interaction_id":"v1_prev","input":[{"type":"function_result","call_id":"c9","result":"ok"}]`),
		rule: "function-results", want: `call_id "c9" answers no function_call`},
	{name: "a call left unanswered", body: ixBody(`"previous_interaction_id":"v1_prev","input":[{"type":"function_result","call_id":"c1","result":"ok"}]`),
		rule: "function-results", want: `function_call "c2" (f) has no function_result.`},
	{name: "text instead of results", body: ixBody(`"previous_interaction_id":"v1_prev",` + inputHi), rule: "function-results", want: "has no function_result"},
	{name: "two results for a call", body: ixBody(`"previous_interaction_id":"v1_prev","input":[{"type":"function_result","call_id":"c1","result":"a"},` +
		`{"type":"function_result","call_id":"c1","result":"b"},{"type":"function_result","call_id":"c2","result":"c"}]`),
		rule: "function-results", want: `More than one function_result for call_id "c1".`},

	{name: "signed thought", passes: "thought-signature", body: ixBody(statelessOK)},
	{name: "bypass value", passes: "thought-signature", body: ixBody(strings.Replace(statelessOK, "sig-prev", "skip_thought_signature_validator", 1))},
	{name: "signature dropped", body: ixBody(strings.Replace(statelessOK, `{"type":"thought","signature":"sig-prev"},`, "", 1)),
		rule: "thought-signature", want: "Request contains an invalid argument."},
	{name: "signature garbled", body: ixBody(strings.Replace(statelessOK, "sig-prev", "garbled", 1)), rule: "thought-signature", want: "Corrupted thought signature."},

	{name: "a search and its result", passes: "builtin-steps", body: ixBody(`"store":false,"input":[{"type":"user_input","content":[{"type":"text","text":"hi"}]},` +
		`{"type":"google_search_call","id":"s1","arguments":{"queries":["q"]}},{"type":"google_search_result","call_id":"s1","result":[]}]`)},
	{name: "a result without its call", body: ixBody(`"store":false,"input":[{"type":"user_input","content":[{"type":"text","text":"hi"}]},` +
		`{"type":"google_search_result","call_id":"s9","result":[]}]`), rule: "builtin-steps", want: `google_search_result with call_id "s9" answers no call`},

	{name: "tools", passes: "tools", body: ixBody(inputHi, `"tools":[{"type":"function","name":"f"},{"type":"google_search"}]`)},
	{name: "a function twice", body: ixBody(inputHi, `"tools":[{"type":"function","name":"f"},{"type":"function","name":"f"}]`), rule: "tools", want: "Duplicate function declaration found: f"},
	{name: "a bad name", body: ixBody(inputHi, `"tools":[{"type":"function","name":"9f"}]`), rule: "tools", want: "Invalid function name."},

	{name: "thinking level", passes: "generation-config", body: ixBody(inputHi, `"generation_config":{"thinking_level":"low","tool_choice":{"allowed_tools":{"mode":"any","tools":["f"]}}}`)},
	{name: "unknown thinking level", body: ixBody(inputHi, `"generation_config":{"thinking_level":"extreme"}`), rule: "generation-config", want: "thinking_level"},
	{name: "unknown tool choice", body: ixBody(inputHi, `"generation_config":{"tool_choice":"sometimes"}`), rule: "generation-config", want: "tool_choice"},

	{name: "the issuer's token", passes: "continuation-token", body: ixBody(`"previous_interaction_id":"v1_prev","continuation_token":"tok-prev"`)},
	{name: "a checkpoint's token", passes: "continuation-token", body: ixBody(`"previous_interaction_id":"v1_prev","continuation_token":"tok-checkpoint"`)},
	{name: "another token", body: ixBody(`"previous_interaction_id":"v1_prev","continuation_token":"tok-other"`), rule: "continuation-token", want: "was not issued by interaction v1_prev"},
	{name: "an unknown token without store", body: ixBody(inputHi, `"store":false,"continuation_token":"tok-other"`), rule: "continuation-token", want: "continuation_token is not valid."},

	{name: "under the limit", passes: "input-token-limit", limit: 1000, body: ixBody(inputHi)},
	{name: "over the limit", limit: 3, body: ixBody(answerBoth), rule: "input-token-limit", want: "exceeds the maximum number of tokens allowed (3)."},
}

// ixServer returns a server holding the interaction the cases continue.
func ixServer() *Server {
	s := &Server{closing: make(chan struct{})}
	sig := prevSig
	s.interactions = map[string]*storedInteraction{prevID: {
		id: prevID, model: "gemini-3-flash-preview", owner: ownerOf(credentials{apiKey: APIKey}), status: iw.StatusRequiresContinuation, token: prevToken,
		history: []iw.Step{
			{Type: iw.TypeUserInput, Content: []iw.Content{{Type: "text", Text: "hi"}}},
			{Type: iw.TypeThought, Signature: &sig},
			{Type: iw.TypeFunctionCall, ID: "c1", Name: "f", Arguments: []byte("{}")},
			{Type: iw.TypeFunctionCall, ID: "c2", Name: "f", Arguments: []byte("{}")},
		},
	}}
	s.signatures = map[string]bool{prevSig: true}
	s.ixTokens = map[string]string{prevToken: prevID, "tok-checkpoint": prevID}
	prev := s.interactions[prevID]
	prev.checkpoints = map[string][]iw.Step{"tok-checkpoint": {{Type: iw.TypeModelOutput, Content: []iw.Content{{Type: "text", Text: "rest"}}}}}
	s.ixCheckpoints = map[string]*storedInteraction{"tok-checkpoint": prev}
	return s
}

func ixCheck(s *Server, tc ixRuleCase) *Rejection {
	creds := credentials{apiKey: APIKey}
	if tc.creds != nil {
		creds = *tc.creds
	}
	in := &ixInput{srv: s, backend: genai.BackendGeminiAPI, version: "v1beta", creds: creds, owner: ownerOf(creds),
		body: []byte(tc.body), method: MethodCreateInteraction, inputTokenLimit: tc.limit}
	return checkInteraction(in)
}

func TestInteractionRules(t *testing.T) {
	s := ixServer()
	rejected, accepted := map[string]bool{}, map[string]bool{}
	for _, tc := range ixRuleCases {
		t.Run(tc.name, func(t *testing.T) {
			rej := ixCheck(s, tc)
			if tc.passes != "" {
				accepted[tc.passes] = true
				if rej != nil {
					t.Fatalf("rejected by %q: %s; want accepted", rej.Rule, rej.Err.Message)
				}
				return
			}
			rejected[tc.rule] = true
			code := tc.code
			if code == 0 {
				code = http.StatusBadRequest
			}
			if rej == nil || rej.Rule != tc.rule || rej.Err.Code != code || !strings.Contains(rej.Err.Message, tc.want) {
				t.Errorf("check(%s) = %+v; want rule %q, code %d, a message containing %q", tc.body, rej, tc.rule, code, tc.want)
			}
		})
	}
	for _, r := range interactionRules {
		if !rejected[r.name] || !accepted[r.name] {
			t.Errorf("rule %q: rejected case %t, accepted case %t; want both in ixRuleCases", r.name, rejected[r.name], accepted[r.name])
		}
	}
}

// Every rule says what backs it, and names are unique.
func TestInteractionRulesSayWhatBacksThem(t *testing.T) {
	var names []string
	for _, r := range interactionRules {
		if r.verified == "" && r.assumed == "" {
			t.Errorf("rule %q is neither verified nor assumed", r.name)
		}
		if slices.Contains(names, r.name) {
			t.Errorf("rule %q listed twice", r.name)
		}
		names = append(names, r.name)
	}
}

// The error codes the fake sends are strings, INVALID_ARGUMENT's the
// API's invalid_request.
func TestInteractionErrorCodes(t *testing.T) {
	for code, want := range map[int]string{400: "invalid_request", 404: "not_found", 429: "resource_exhausted", 500: "internal", 503: "unavailable"} {
		if got := ixCode(&APIError{Code: code}); got != want {
			t.Errorf("ixCode(%d) = %q; want %q", code, got, want)
		}
	}
	b := string(mustWire(ixWire(RateLimited(0).Err)))
	if !strings.Contains(b, `"code":"resource_exhausted"`) {
		t.Errorf("429 = %s", b)
	}
	if got := fmt.Sprint(ixWire(RateLimited(3e9).Err).Error.Details[len(RateLimited(0).Err.Details)]); !strings.Contains(got, "3s") {
		t.Errorf("RetryInfo = %s", got)
	}
}
