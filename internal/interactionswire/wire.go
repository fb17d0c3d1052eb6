package interactionswire

import (
	"bytes"
	"encoding/json"
)

// Step types (genai interactions/models/interactions/step.go).
const (
	TypeUserInput      = "user_input"
	TypeModelOutput    = "model_output"
	TypeThought        = "thought"
	TypeFunctionCall   = "function_call"
	TypeFunctionResult = "function_result"

	TypeGoogleSearchCall    = "google_search_call"
	TypeGoogleSearchResult  = "google_search_result"
	TypeCodeExecutionCall   = "code_execution_call"
	TypeCodeExecutionResult = "code_execution_result"
	TypeURLContextCall      = "url_context_call"
	TypeURLContextResult    = "url_context_result"
	TypeFileSearchCall      = "file_search_call"
	TypeFileSearchResult    = "file_search_result"
	TypeGoogleMapsCall      = "google_maps_call"
	TypeGoogleMapsResult    = "google_maps_result"
	TypeMCPServerToolCall   = "mcp_server_tool_call"
	TypeMCPServerToolResult = "mcp_server_tool_result"
	TypeRetrievalCall       = "retrieval_call"
	TypeRetrievalResult     = "retrieval_result"
	TypeProcessingCall      = "processing_call"
	TypeProcessingResult    = "processing_result"
)

// Statuses of an interaction (interaction.go:444-455).
const (
	StatusInProgress           = "in_progress"
	StatusRequiresAction       = "requires_action"
	StatusCompleted            = "completed"
	StatusFailed               = "failed"
	StatusCancelled            = "cancelled"
	StatusIncomplete           = "incomplete"
	StatusBudgetExceeded       = "budget_exceeded"
	StatusQueued               = "queued"
	StatusRequiresContinuation = "requires_continuation"
)

// Step is one step of an interaction: one JSON object whose type says which
// of the fields it has. Steps this package does not model in detail (the
// built-in tools' calls and results, and any type it does not know) keep
// the JSON they came as in Raw, and are sent as it.
type Step struct {
	Type string `json:"type"`

	// Content is the content of user_input and model_output.
	Content []Content `json:"content,omitempty"`
	// Signature is a thought's signature, and a built-in step's; "" in
	// the step.start event of a streamed thought.
	Signature *string `json:"signature,omitempty"`
	// Summary is a thought's summary.
	Summary []Content `json:"summary,omitempty"`

	// ID, Name and Arguments are a call's (function_call: all three).
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`

	// CallID, IsError and Result are a result's.
	CallID  string          `json:"call_id,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`

	// Error is a model_output's error, if any.
	Error json.RawMessage `json:"error,omitempty"`

	// Raw is the step as it came, for the steps kept exactly, in canonical
	// form (see [Canonical]); MarshalJSON sends it unchanged.
	Raw json.RawMessage `json:"-"`
}

type stepFields Step // Step's fields without its methods

// MarshalJSON sends Raw when the step has it, its fields otherwise.
func (s Step) MarshalJSON() ([]byte, error) {
	return appendStep(nil, &s), nil
}

// UnmarshalJSON reads a step, keeping the JSON of the steps sent back
// exactly (every type but user_input, model_output, thought, function_call
// and function_result) in Raw.
func (s *Step) UnmarshalJSON(b []byte) error {
	var head struct {
		Type      string          `json:"type"`
		Signature *string         `json:"signature"`
		ID        string          `json:"id"`
		CallID    string          `json:"call_id"`
		IsError   bool            `json:"is_error"`
		Arguments json.RawMessage `json:"arguments"`
		Result    json.RawMessage `json:"result"`
	}
	var f stepFields
	if err := json.Unmarshal(b, &f); err == nil && Modeled(f.Type) {
		*s = Step(f)
		return nil
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	if !Modeled(head.Type) {
		// Read loosely: a built-in step's other fields are its own.
		raw, err := Canonical(b)
		if err != nil {
			return err
		}
		*s = Step{Type: head.Type, Signature: head.Signature, ID: head.ID, CallID: head.CallID,
			IsError: head.IsError, Arguments: head.Arguments, Result: head.Result, Raw: raw}
		return nil
	}
	return json.Unmarshal(b, &f) // a modeled type whose fields do not decode: say why
}

// Modeled reports whether steps of type t are read into Step's fields and
// rebuilt from them; the others travel as their JSON.
func Modeled(t string) bool {
	switch t {
	case TypeUserInput, TypeModelOutput, TypeThought, TypeFunctionCall, TypeFunctionResult:
		return true
	}
	return false
}

// Content is one item of a step's content: text, or media inline (Data,
// base64) or by URI.
type Content struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Data        string          `json:"data,omitempty"`
	URI         string          `json:"uri,omitempty"`
	MimeType    string          `json:"mime_type,omitempty"`
}

// MarshalJSON writes text only for text items, where it is required.
func (c Content) MarshalJSON() ([]byte, error) {
	return appendContentJSON(nil, &c), nil
}

// Tool is one entry of a request's tools: a function ({type: "function",
// name, description, parameters}) or a built-in tool, whose other fields
// travel in Extra.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Extra holds a built-in tool's own fields (file_search_store_names,
	// search_types…), sent beside type.
	Extra map[string]any `json:"-"`
}

type toolFields Tool

// MarshalJSON writes the tool with its Extra fields.
func (t Tool) MarshalJSON() ([]byte, error) {
	if len(t.Extra) == 0 {
		return json.Marshal(toolFields(t))
	}
	m := make(map[string]any, len(t.Extra)+1)
	for k, v := range t.Extra {
		m[k] = v
	}
	m["type"] = t.Type
	return json.Marshal(m)
}

// UnmarshalJSON reads a tool, a built-in tool's fields into Extra.
func (t *Tool) UnmarshalJSON(b []byte) error {
	var f toolFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*t = Tool(f)
	if t.Type == "function" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	delete(m, "type")
	if len(m) > 0 {
		t.Extra = m
	}
	return nil
}

// GenerationConfig is a request's generation_config.
type GenerationConfig struct {
	Temperature       *float32        `json:"temperature,omitempty"`
	TopP              *float32        `json:"top_p,omitempty"`
	Seed              *int32          `json:"seed,omitempty"`
	StopSequences     []string        `json:"stop_sequences,omitempty"`
	MaxOutputTokens   int32           `json:"max_output_tokens,omitempty"`
	ThinkingLevel     string          `json:"thinking_level,omitempty"`
	ThinkingSummaries string          `json:"thinking_summaries,omitempty"`
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
}

// ResponseFormat is a request's response_format for a JSON answer.
type ResponseFormat struct {
	Type     string          `json:"type"`
	MimeType string          `json:"mime_type,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

// SafetySetting is one of a request's safety_settings.
type SafetySetting struct {
	Type      string `json:"type"`
	Threshold string `json:"threshold"`
	Method    string `json:"method,omitempty"`
}

// Request is the body of POST /{version}/interactions for a model, the
// fields this project sends (createmodelinteraction.go:228-282).
type Request struct {
	Model                 string            `json:"model"`
	Input                 []Step            `json:"input,omitempty"`
	PreviousInteractionID string            `json:"previous_interaction_id,omitempty"`
	SystemInstruction     string            `json:"system_instruction,omitempty"`
	Tools                 []Tool            `json:"tools,omitempty"`
	GenerationConfig      *GenerationConfig `json:"generation_config,omitempty"`
	ResponseFormat        *ResponseFormat   `json:"response_format,omitempty"`
	SafetySettings        []SafetySetting   `json:"safety_settings,omitempty"`
	Labels                map[string]string `json:"labels,omitempty"`
	ServiceTier           string            `json:"service_tier,omitempty"`
	ContinuationToken     string            `json:"continuation_token,omitempty"`
	Store                 *bool             `json:"store,omitempty"`
	Stream                bool              `json:"stream,omitempty"`
	Background            bool              `json:"background,omitempty"`
}

// Interaction is an interaction as the API sends it (interaction.go:473-560).
type Interaction struct {
	ID                    string   `json:"id"`
	Status                string   `json:"status"`
	Model                 string   `json:"model,omitempty"`
	Steps                 []Step   `json:"steps,omitempty"`
	Usage                 *Usage   `json:"usage,omitempty"`
	ContinuationToken     string   `json:"continuation_token,omitempty"`
	PreviousInteractionID string   `json:"previous_interaction_id,omitempty"`
	Created               string   `json:"created,omitempty"`
	Updated               string   `json:"updated,omitempty"`
	ServiceTier           string   `json:"service_tier,omitempty"`
	Errors                []Error  `json:"errors,omitempty"`
	Object                string   `json:"object,omitempty"`
	ContinuationIDs       []string `json:"continuation_ids,omitempty"`
}

// Usage is an interaction's token counts (usage.go:26-49).
type Usage struct {
	TotalInputTokens        int32            `json:"total_input_tokens,omitempty"`
	TotalOutputTokens       int32            `json:"total_output_tokens,omitempty"`
	TotalThoughtTokens      int32            `json:"total_thought_tokens,omitempty"`
	TotalCachedTokens       int32            `json:"total_cached_tokens,omitempty"`
	TotalToolUseTokens      int32            `json:"total_tool_use_tokens,omitempty"`
	TotalTokens             int32            `json:"total_tokens,omitempty"`
	InputTokensByModality   []ModalityTokens `json:"input_tokens_by_modality,omitempty"`
	OutputTokensByModality  []ModalityTokens `json:"output_tokens_by_modality,omitempty"`
	CachedTokensByModality  []ModalityTokens `json:"cached_tokens_by_modality,omitempty"`
	ToolUseTokensByModality []ModalityTokens `json:"tool_use_tokens_by_modality,omitempty"`
}

// ModalityTokens counts the tokens of one modality.
type ModalityTokens struct {
	Modality string `json:"modality,omitempty"`
	Tokens   int32  `json:"tokens,omitempty"`
}

// Error is the API's error: {"code": "invalid_request", "message": …}, its
// code a string (models/interactions/error.go). Details, which that schema
// lacks, carries google.rpc details such as RetryInfo where a server sends
// them.
type Error struct {
	Code    string           `json:"code,omitempty"`
	Message string           `json:"message,omitempty"`
	Details []map[string]any `json:"details,omitempty"`
}

// ErrorBody is the body of an error response: {"error": {…}}.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Event types of a stream (interactionsseevent.go).
const (
	EventInteractionCreated   = "interaction.created"
	EventInteractionCompleted = "interaction.completed"
	EventStatusUpdate         = "interaction.status_update"
	EventStepStart            = "step.start"
	EventStepDelta            = "step.delta"
	EventStepStop             = "step.stop"
	EventError                = "error"
)

// Event is one event of a stream: its data, which names its type in
// event_type.
type Event struct {
	EventType string `json:"event_type"`
	EventID   string `json:"event_id,omitempty"`

	// interaction.created, interaction.completed
	Interaction *Interaction `json:"interaction,omitempty"`

	// step.start, step.delta, step.stop
	Index *int            `json:"index,omitempty"`
	Step  *Step           `json:"step,omitempty"`
	Delta json.RawMessage `json:"delta,omitempty"`
	Usage *Usage          `json:"usage,omitempty"`

	// interaction.status_update
	InteractionID     string `json:"interaction_id,omitempty"`
	Status            string `json:"status,omitempty"`
	ContinuationToken string `json:"continuation_token,omitempty"`

	// error
	Error *Error `json:"error,omitempty"`
}

// Delta is the delta of a step.delta event, by type: text{text},
// thought_summary{content}, thought_signature{signature},
// arguments_delta{arguments}, a media item, or a built-in step's fields
// (stepdeltadata.go:30-56).
type Delta struct {
	Type      string   `json:"type"`
	Text      string   `json:"text,omitempty"`
	Content   *Content `json:"content,omitempty"`
	Signature string   `json:"signature,omitempty"`
	Arguments string   `json:"arguments,omitempty"`
	Data      string   `json:"data,omitempty"`
	URI       string   `json:"uri,omitempty"`
	MimeType  string   `json:"mime_type,omitempty"`
}

// Delta types.
const (
	DeltaText             = "text"
	DeltaThoughtSummary   = "thought_summary"
	DeltaThoughtSignature = "thought_signature"
	DeltaArguments        = "arguments_delta"
)

// Sentinel is the data of the event that ends a stream, "event: done".
const Sentinel = "[DONE]"

// Marshal returns the JSON of v as this package sends it: without the HTML
// escaping encoding/json adds, so that a step kept exactly goes back byte
// for byte.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Canonical returns the JSON value b in one form: object members sorted by
// name, no insignificant space, no HTML escaping, numbers as written. Two
// encodings of one value (the API's, and the one genai's stream reader
// makes of it) have the same canonical form, which is how a step kept
// exactly is compared and sent back.
func Canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return Marshal(v)
}
