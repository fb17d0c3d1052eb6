package interactionswire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func stepsJSON(t *testing.T, c *genai.Content) string {
	t.Helper()
	steps, err := Steps(c)
	if err != nil {
		t.Fatalf("Steps(%+v): %v", c, err)
	}
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUserSteps(t *testing.T) {
	c := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		{Text: "Look "}, {Text: "at this:"}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2}}},
		{FunctionResponse: &genai.FunctionResponse{ID: "fc-1", Name: "get", Response: map[string]any{"result": 3}}},
		{FunctionResponse: &genai.FunctionResponse{ID: "fc-2", Name: "get", Response: map[string]any{"error": "no"}}},
		{Text: "And?"},
	}}
	want := `[{"type":"user_input","content":[{"type":"text","text":"Look at this:"},{"type":"image","data":"AQI=","mime_type":"image/png"}]},` +
		`{"type":"function_result","name":"get","call_id":"fc-1","result":"{\"result\":3}"},` +
		`{"type":"function_result","name":"get","call_id":"fc-2","is_error":true,"result":"{\"error\":\"no\"}"},` +
		`{"type":"user_input","content":[{"type":"text","text":"And?"}]}]`
	if got := stepsJSON(t, c); got != want {
		t.Errorf("steps:\n got %s\nwant %s", got, want)
	}
}

func TestModelSteps(t *testing.T) {
	c := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: "Plan: ", Thought: true}, {Text: "look.", Thought: true, ThoughtSignature: []byte("sig-1")},
		{Text: "I'll "}, {Text: "check."},
		{FunctionCall: &genai.FunctionCall{ID: "fc-1", Name: "get", Args: map[string]any{"city": "Paris"}}},
		{FunctionCall: &genai.FunctionCall{ID: "fc-2", Name: "get"}},
	}}
	want := `[{"type":"thought","signature":"sig-1","summary":[{"type":"text","text":"Plan: look."}]},` +
		`{"type":"model_output","content":[{"type":"text","text":"I'll check."}]},` +
		`{"type":"function_call","id":"fc-1","name":"get","arguments":{"city":"Paris"}},` +
		`{"type":"function_call","id":"fc-2","name":"get","arguments":{}}]`
	if got := stepsJSON(t, c); got != want {
		t.Errorf("steps:\n got %s\nwant %s", got, want)
	}
}

// The loop's stream merging puts a summary-less thought's signature on the
// text before it, and joins the text of adjacent steps: both forms of one
// answer make the same steps, the ones the server holds.
func TestMergedFormsMakeTheSameSteps(t *testing.T) {
	unary := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: "Hello"}, {Text: " there"}, {Thought: true, ThoughtSignature: []byte("s")},
		{FunctionCall: &genai.FunctionCall{ID: "a", Name: "f"}},
	}}
	merged := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: "Hello there", ThoughtSignature: []byte("s")},
		{FunctionCall: &genai.FunctionCall{ID: "a", Name: "f"}},
	}}
	if a, b := stepsJSON(t, unary), stepsJSON(t, merged); a != b {
		t.Errorf("unary %s\nmerged %s", a, b)
	}
}

// A function call's signature (generateContent's place for it) becomes the
// thought step before the call.
func TestSignedCall(t *testing.T) {
	c := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "a", Name: "f"}, ThoughtSignature: []byte("s")},
	}}
	want := `[{"type":"thought","signature":"s"},{"type":"function_call","id":"a","name":"f","arguments":{}}]`
	if got := stepsJSON(t, c); got != want {
		t.Errorf("got %s", got)
	}
}

// Built-in tool steps become generateContent's parts and go back exactly
// as they came, fields this package does not know included, through a
// JSON round trip of the content (a stored session).
func TestBuiltinStepsKeptExactly(t *testing.T) {
	raw := []string{
		`{"type":"google_search_call","id":"gs1","arguments":{"queries":["weather paris"]},"signature":"c2ln","extra_field":{"z":1,"a":[2]}}`,
		`{"type":"google_search_result","call_id":"gs1","result":[{"search_suggestions":"<div/>"}],"signature":"c2lnMg=="}`,
		`{"type":"code_execution_call","id":"ce1","arguments":{"code":"print(1)","language":"python"}}`,
		`{"type":"code_execution_result","call_id":"ce1","result":"1\n"}`,
		`{"type":"brand_new_step","what":"ever"}`,
	}
	var steps []Step
	if err := json.Unmarshal([]byte("["+strings.Join(raw, ",")+"]"), &steps); err != nil {
		t.Fatal(err)
	}
	c, err := ModelContent(steps)
	if err != nil {
		t.Fatal(err)
	}
	if tc := c.Parts[0].ToolCall; tc == nil || tc.ID != "gs1" || tc.ToolType != genai.ToolTypeGoogleSearchWeb || string(c.Parts[0].ThoughtSignature) != "c2ln" {
		t.Errorf("google_search_call part = %+v", c.Parts[0])
	}
	if tr := c.Parts[1].ToolResponse; tr == nil || tr.ID != "gs1" || tr.Response["search_suggestions"] != "<div/>" {
		t.Errorf("google_search_result part = %+v", c.Parts[1])
	}
	if e := c.Parts[2].ExecutableCode; e == nil || e.Code != "print(1)" || e.Language != genai.LanguagePython || e.ID != "ce1" {
		t.Errorf("code_execution_call part = %+v", c.Parts[2])
	}
	if r := c.Parts[3].CodeExecutionResult; r == nil || r.Output != "1\n" || r.Outcome != genai.OutcomeOK {
		t.Errorf("code_execution_result part = %+v", c.Parts[3])
	}
	b, _ := json.Marshal(c)
	var stored genai.Content
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	back, err := Steps(&stored)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range back {
		got, _ := Marshal(s)
		want, _ := Canonical([]byte(raw[i]))
		if string(got) != string(want) {
			t.Errorf("step %d went back as\n %s\nnot\n %s", i, got, want)
		}
	}
	// However the JSON was written: escaped, reordered, spaced.
	again, err := Canonical([]byte(`{ "signature":"c2ln", "arguments":{"queries":["weather paris"]}, "id":"gs1", "type":"google_search_call",` +
		`"extra_field":{"a":[2],"z":1}}`))
	if want, _ := Marshal(back[0]); err != nil || string(again) != string(want) {
		t.Errorf("Canonical() = %s, %v; want %s", again, err, want)
	}
	escaped, _ := Canonical([]byte(`{"s":"\u003cdiv\u003e"}`))
	if string(escaped) != `{"s":"<div>"}` {
		t.Errorf("Canonical() = %s", escaped)
	}
}

// A built-in part made by generateContent (no step kept) becomes its step.
func TestBuiltinFromGenerateContent(t *testing.T) {
	c := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{ToolCall: &genai.ToolCall{ID: "t1", ToolType: genai.ToolTypeURLContext, Args: map[string]any{"urls": []any{"u"}}}, ThoughtSignature: []byte("s")},
		{ToolResponse: &genai.ToolResponse{ID: "t1", ToolType: genai.ToolTypeURLContext, Response: map[string]any{"result": []any{"ok"}}}},
		{ToolResponse: &genai.ToolResponse{ID: "t2", ToolType: genai.ToolTypeGoogleSearchWeb, Response: map[string]any{"search_suggestions": "chips"}}},
	}}
	want := `[{"arguments":{"urls":["u"]},"id":"t1","signature":"s","type":"url_context_call"},{"call_id":"t1","result":["ok"],"type":"url_context_result"},{"call_id":"t2","result":[{"search_suggestions":"chips"}],"type":"google_search_result"}]`
	if got := stepsJSON(t, c); got != want {
		t.Errorf("got %s", got)
	}
}

func TestFunctionResultRoundTrip(t *testing.T) {
	for _, fr := range []*genai.FunctionResponse{
		{ID: "a", Name: "f", Response: map[string]any{"result": map[string]any{"temp": 21.5}}},
		{ID: "b", Name: "f", Response: map[string]any{"error": "boom"}},
		{ID: "c", Name: "f", Response: map[string]any{"result": "pic"},
			Parts: []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte("x")}}}},
	} {
		s, err := functionResult(fr)
		if err != nil {
			t.Fatal(err)
		}
		back, err := functionResponse(s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fr, back); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", fr.ID, diff)
		}
	}
	// A Go value's members in its own order, or a map's: one result.
	type out struct {
		Zeta  int    `json:"zeta"`
		Alpha string `json:"alpha"`
	}
	a, _ := functionResult(&genai.FunctionResponse{ID: "x", Name: "f", Response: map[string]any{"result": out{1, "a"}}})
	b, _ := functionResult(&genai.FunctionResponse{ID: "x", Name: "f", Response: map[string]any{"result": map[string]any{"alpha": "a", "zeta": 1.0}}})
	if string(a.Result) != string(b.Result) {
		t.Errorf("a struct's result %s, the same as a map %s", a.Result, b.Result)
	}
	// What other clients send: an object, or plain text.
	fr, _ := functionResponse(Step{Type: TypeFunctionResult, CallID: "x", Result: json.RawMessage(`{"content":[1]}`)})
	if fr.Response["content"] == nil {
		t.Errorf("object result read as %v", fr.Response)
	}
	fr, _ = functionResponse(Step{Type: TypeFunctionResult, CallID: "x", IsError: true, Result: json.RawMessage(`"it failed"`)})
	if fr.Response["error"] != "it failed" {
		t.Errorf("text error read as %v", fr.Response)
	}
}

func TestSetConfig(t *testing.T) {
	temp := float32(0.5)
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		Temperature:       &temp,
		MaxOutputTokens:   100,
		ThinkingConfig:    &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow, IncludeThoughts: true},
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get", Description: "Gets.",
			Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
				"city": {Type: genai.TypeString, Nullable: genai.Ptr(true)}}, Required: []string{"city"}}}}},
			{GoogleSearch: &genai.GoogleSearch{}}},
		ToolConfig:       &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"get"}}},
		ResponseMIMEType: "application/json",
		ResponseSchema:   &genai.Schema{Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger}},
		ServiceTier:      genai.ServiceTierFlex,
		SafetySettings:   []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment, Threshold: genai.HarmBlockThresholdBlockOnlyHigh}},
	}
	var req Request
	if err := SetConfig(&req, cfg); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(req)
	want := `{"model":"","system_instruction":"Be brief.",` +
		`"tools":[{"type":"function","name":"get","description":"Gets.","parameters":{"properties":{"city":{"type":["string","null"]}},"required":["city"],"type":"object"}},{"type":"google_search"}],` +
		`"generation_config":{"temperature":0.5,"max_output_tokens":100,"thinking_level":"low","thinking_summaries":"auto","tool_choice":{"allowed_tools":{"mode":"any","tools":["get"]}}},` +
		`"response_format":{"type":"text","mime_type":"application/json","schema":{"items":{"type":"integer"},"type":"array"}},` +
		`"safety_settings":[{"type":"harassment","threshold":"block_only_high"}],"service_tier":"flex"}`
	if string(b) != want {
		t.Errorf("request:\n got %s\nwant %s", b, want)
	}
	// What the server reads back.
	si, tools, tc, gc, err := GenAIConfig(&req)
	if err != nil {
		t.Fatal(err)
	}
	if si.Parts[0].Text != "Be brief." || len(tools) != 2 || tools[0].FunctionDeclarations[0].Name != "get" || tools[1].GoogleSearch == nil ||
		tc.FunctionCallingConfig.Mode != genai.FunctionCallingConfigModeAny || gc.ThinkingConfig.ThinkingLevel != genai.ThinkingLevelLow ||
		gc.ResponseMIMEType != "application/json" || *gc.Temperature != 0.5 {
		t.Errorf("GenAIConfig = %+v %+v %+v %+v", si, tools, tc, gc)
	}
}

func TestSetConfigRefusesWhatItCannotSay(t *testing.T) {
	k := float32(3)
	for name, cfg := range map[string]*genai.GenerateContentConfig{
		"TopK":           {TopK: &k},
		"ThinkingBudget": {ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](0)}},
		"Retrieval":      {Tools: []*genai.Tool{{Retrieval: &genai.Retrieval{}}}},
		"MIME":           {ResponseMIMEType: "text/x.enum"},
	} {
		var req Request
		if err := SetConfig(&req, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestUsageMetadata(t *testing.T) {
	u := UsageMetadata(&Usage{TotalInputTokens: 10, TotalOutputTokens: 5, TotalThoughtTokens: 3, TotalCachedTokens: 4, TotalToolUseTokens: 2,
		InputTokensByModality: []ModalityTokens{{Modality: "text", Tokens: 10}}})
	if u.PromptTokenCount != 10 || u.CandidatesTokenCount != 5 || u.ThoughtsTokenCount != 3 || u.CachedContentTokenCount != 4 ||
		u.ToolUsePromptTokenCount != 2 || u.TotalTokenCount != 20 || u.PromptTokensDetails[0].Modality != genai.MediaModalityText {
		t.Errorf("UsageMetadata = %+v", u)
	}
}

// An answer's grounding and citations become its text's annotations, and
// come back from them.
func TestSources(t *testing.T) {
	text := "Sunny in Tokyo, says the forecast."
	steps := []Step{{Type: TypeThought}, {Type: TypeModelOutput, Content: []Content{{Type: "text", Text: text}}}}
	g := &genai.GroundingMetadata{
		GroundingChunks:   []*genai.GroundingChunk{{Web: &genai.GroundingChunkWeb{URI: "https://w.example", Title: "w.example"}}},
		GroundingSupports: []*genai.GroundingSupport{{GroundingChunkIndices: []int32{0}, Segment: &genai.Segment{StartIndex: 0, EndIndex: 14}}},
	}
	Annotate(steps, g, []*genai.Citation{{URI: "https://f.example", StartIndex: 16, EndIndex: 33}})
	gotG, gotC := Sources(steps)
	if len(gotC) != 2 || gotC[0].URI != "https://f.example" || gotC[1].URI != "https://w.example" || gotC[1].EndIndex != 14 {
		t.Errorf("citations = %+v", gotC)
	}
	if len(gotG.GroundingChunks) != 2 || gotG.GroundingSupports[1].Segment.Text != "Sunny in Tokyo" {
		t.Errorf("grounding = %+v", gotG)
	}
	if g, c := Sources(steps[:1]); g != nil || c != nil {
		t.Errorf("no text: %v %v", g, c)
	}
}
