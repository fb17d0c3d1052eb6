package interactionswire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// SetConfig sets the fields of req that say config: the system
// instruction, the tools, the generation config, the response format, the
// safety settings, the labels and the service tier.
// A setting the API has no field for is an error that names it: a request
// is never sent with part of what the caller asked for silently dropped.
// The continuation token, the store flag and the HTTP options are the
// caller's to read.
func SetConfig(req *Request, config *genai.GenerateContentConfig) error {
	if config == nil {
		return nil
	}
	if err := unsupported(config); err != nil {
		return err
	}
	if si := config.SystemInstruction; si != nil {
		var b strings.Builder
		for _, p := range si.Parts {
			if p == nil {
				continue
			}
			if !plainText(p) {
				return fmt.Errorf("the system instruction's %s: the Interactions API takes a text system instruction", describePart(p))
			}
			b.WriteString(p.Text)
		}
		req.SystemInstruction = b.String()
	}
	tools, err := Tools(config.Tools)
	if err != nil {
		return err
	}
	req.Tools = tools
	gc, err := generationConfig(config)
	if err != nil {
		return err
	}
	req.GenerationConfig = gc
	if req.ResponseFormat, err = responseFormat(config); err != nil {
		return err
	}
	for _, s := range config.SafetySettings {
		if s == nil {
			continue
		}
		req.SafetySettings = append(req.SafetySettings, SafetySetting{
			Type:      strings.ToLower(strings.TrimPrefix(string(s.Category), "HARM_CATEGORY_")),
			Threshold: strings.ToLower(string(s.Threshold)),
			Method:    strings.ToLower(strings.TrimPrefix(string(s.Method), "HARM_BLOCK_METHOD_")),
		})
	}
	req.Labels = config.Labels
	if config.ServiceTier != "" && config.ServiceTier != genai.ServiceTierUnspecified {
		req.ServiceTier = strings.ToLower(string(config.ServiceTier))
	}
	return nil
}

// unsupported names the settings of config the Interactions API has no
// field for.
func unsupported(c *genai.GenerateContentConfig) error {
	var names []string
	check := func(name string, set bool) {
		if set {
			names = append(names, name)
		}
	}
	// The API's cached_content is deprecated ("will be removed"): the
	// Interactions API caches implicitly only.
	check("CachedContent (the Interactions API caches implicitly only)", c.CachedContent != "")
	check("TopK", c.TopK != nil)
	check("CandidateCount", c.CandidateCount > 1)
	check("ResponseLogprobs", c.ResponseLogprobs)
	check("Logprobs", c.Logprobs != nil)
	check("PresencePenalty", c.PresencePenalty != nil)
	check("FrequencyPenalty", c.FrequencyPenalty != nil)
	check("RoutingConfig", c.RoutingConfig != nil)
	check("ModelSelectionConfig", c.ModelSelectionConfig != nil)
	check("MediaResolution", c.MediaResolution != "")
	check("SpeechConfig", c.SpeechConfig != nil)
	check("AudioTimestamp", c.AudioTimestamp)
	check("ImageConfig", c.ImageConfig != nil)
	check("EnableEnhancedCivicAnswers", c.EnableEnhancedCivicAnswers != nil)
	check("ModelArmorConfig", c.ModelArmorConfig != nil)
	check("AudioTranscriptionConfig", c.AudioTranscriptionConfig != nil)
	check("GenerationOutputConfig", c.GenerationOutputConfig != nil)
	check("ThinkingConfig.ThinkingBudget (use ThinkingLevel)", c.ThinkingConfig != nil && c.ThinkingConfig.ThinkingBudget != nil)
	for _, m := range c.ResponseModalities {
		check("ResponseModalities "+m, !strings.EqualFold(m, "TEXT"))
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("the Interactions API has no field for GenerateContentConfig.%s", strings.Join(names, ", GenerateContentConfig."))
}

// Tools returns the request's tools for genai's: one function tool per
// declaration, and the built-in tools the Interactions API has.
func Tools(tools []*genai.Tool) ([]Tool, error) {
	var out []Tool
	for i, t := range tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d == nil {
				continue
			}
			ft := Tool{Type: "function", Name: d.Name, Description: d.Description}
			switch {
			case d.ParametersJsonSchema != nil:
				b, err := json.Marshal(d.ParametersJsonSchema)
				if err != nil {
					return nil, fmt.Errorf("function %s: parameters: %w", d.Name, err)
				}
				ft.Parameters = b
			case d.Parameters != nil:
				b, err := json.Marshal(JSONSchema(d.Parameters))
				if err != nil {
					return nil, fmt.Errorf("function %s: parameters: %w", d.Name, err)
				}
				ft.Parameters = b
			}
			out = append(out, ft)
		}
		rest := *t
		rest.FunctionDeclarations = nil
		switch {
		case t.GoogleSearch != nil:
			gs := t.GoogleSearch
			if len(gs.ExcludeDomains) > 0 || gs.TimeRangeFilter != nil || gs.BlockingConfidence != "" {
				return nil, fmt.Errorf("tools[%d].googleSearch: the Interactions API's google_search takes search types only", i)
			}
			bt := Tool{Type: "google_search"}
			if st := gs.SearchTypes; st != nil {
				var types []string
				if st.WebSearch != nil {
					types = append(types, "web_search")
				}
				if st.ImageSearch != nil {
					types = append(types, "image_search")
				}
				bt.Extra = map[string]any{"search_types": types}
			}
			out = append(out, bt)
			rest.GoogleSearch = nil
		case t.CodeExecution != nil:
			out = append(out, Tool{Type: "code_execution"})
			rest.CodeExecution = nil
		case t.URLContext != nil:
			out = append(out, Tool{Type: "url_context"})
			rest.URLContext = nil
		case t.FileSearch != nil:
			fs := t.FileSearch
			extra := map[string]any{"file_search_store_names": fs.FileSearchStoreNames}
			if fs.TopK != nil {
				extra["top_k"] = *fs.TopK
			}
			if fs.MetadataFilter != "" {
				extra["metadata_filter"] = fs.MetadataFilter
			}
			out = append(out, Tool{Type: "file_search", Extra: extra})
			rest.FileSearch = nil
		case t.GoogleMaps != nil:
			gm := t.GoogleMaps
			if gm.AuthConfig != nil || gm.GroundingTypes != nil {
				return nil, fmt.Errorf("tools[%d].googleMaps: the Interactions API's google_maps takes enable_widget only", i)
			}
			bt := Tool{Type: "google_maps"}
			if gm.EnableWidget != nil {
				bt.Extra = map[string]any{"enable_widget": *gm.EnableWidget}
			}
			out = append(out, bt)
			rest.GoogleMaps = nil
		}
		if !reflect.ValueOf(rest).IsZero() {
			return nil, fmt.Errorf("tools[%d]: a tool the Interactions API does not take (%s)", i, toolKinds(rest))
		}
	}
	return out, nil
}

// toolKinds names the fields t sets.
func toolKinds(t genai.Tool) string {
	b, _ := json.Marshal(t)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	return strings.Join(names, ", ")
}

func generationConfig(c *genai.GenerateContentConfig) (*GenerationConfig, error) {
	gc := &GenerationConfig{
		Temperature:     c.Temperature,
		TopP:            c.TopP,
		Seed:            c.Seed,
		StopSequences:   c.StopSequences,
		MaxOutputTokens: c.MaxOutputTokens,
	}
	if tc := c.ThinkingConfig; tc != nil {
		if tc.ThinkingLevel != "" && tc.ThinkingLevel != genai.ThinkingLevelUnspecified {
			gc.ThinkingLevel = strings.ToLower(string(tc.ThinkingLevel))
		}
		if tc.IncludeThoughts {
			gc.ThinkingSummaries = "auto"
		}
	}
	if c.ToolConfig != nil && c.ToolConfig.FunctionCallingConfig != nil {
		fc := c.ToolConfig.FunctionCallingConfig
		mode := strings.ToLower(string(fc.Mode))
		if mode == "mode_unspecified" {
			mode = ""
		}
		var choice any
		switch {
		case len(fc.AllowedFunctionNames) > 0:
			if mode == "" {
				mode = "any"
			}
			choice = map[string]any{"allowed_tools": map[string]any{"mode": mode, "tools": fc.AllowedFunctionNames}}
		case mode != "":
			choice = mode
		}
		if choice != nil {
			b, err := json.Marshal(choice)
			if err != nil {
				return nil, err
			}
			gc.ToolChoice = b
		}
	}
	if reflect.ValueOf(*gc).IsZero() {
		return nil, nil
	}
	return gc, nil
}

func responseFormat(c *genai.GenerateContentConfig) (*ResponseFormat, error) {
	switch c.ResponseMIMEType {
	case "", "text/plain":
		if c.ResponseSchema != nil || c.ResponseJsonSchema != nil {
			return nil, errors.New("a response schema needs ResponseMIMEType application/json")
		}
		return nil, nil
	case "application/json":
	default:
		return nil, fmt.Errorf("the Interactions API has no response format for ResponseMIMEType %q", c.ResponseMIMEType)
	}
	rf := &ResponseFormat{Type: "text", MimeType: "application/json"}
	var schema any
	switch {
	case c.ResponseJsonSchema != nil:
		schema = c.ResponseJsonSchema
	case c.ResponseSchema != nil:
		schema = JSONSchema(c.ResponseSchema)
	}
	if schema != nil {
		b, err := json.Marshal(schema)
		if err != nil {
			return nil, fmt.Errorf("response schema: %w", err)
		}
		rf.Schema = b
	}
	return rf, nil
}

// JSONSchema returns s, a genai (OpenAPI) schema, as JSON Schema: types in
// lower case, a nullable type as [type, "null"], and the same keywords.
func JSONSchema(s *genai.Schema) map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{}
	if s.Type != "" && s.Type != genai.TypeUnspecified {
		t := strings.ToLower(string(s.Type))
		if s.Nullable != nil && *s.Nullable {
			m["type"] = []string{t, "null"}
		} else {
			m["type"] = t
		}
	}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("title", s.Title, s.Title != "")
	set("description", s.Description, s.Description != "")
	set("format", s.Format, s.Format != "")
	set("pattern", s.Pattern, s.Pattern != "")
	set("enum", s.Enum, len(s.Enum) > 0)
	set("default", s.Default, s.Default != nil)
	set("example", s.Example, s.Example != nil)
	set("required", s.Required, len(s.Required) > 0)
	if s.Minimum != nil {
		m["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		m["maximum"] = *s.Maximum
	}
	for k, v := range map[string]*int64{"minItems": s.MinItems, "maxItems": s.MaxItems, "minLength": s.MinLength,
		"maxLength": s.MaxLength, "minProperties": s.MinProperties, "maxProperties": s.MaxProperties} {
		if v != nil {
			m[k] = *v
		}
	}
	if len(s.Properties) > 0 {
		props := make(map[string]any, len(s.Properties))
		for k, v := range s.Properties {
			props[k] = JSONSchema(v)
		}
		m["properties"] = props
	}
	if s.Items != nil {
		m["items"] = JSONSchema(s.Items)
	}
	if len(s.AnyOf) > 0 {
		anyOf := make([]any, len(s.AnyOf))
		for i, a := range s.AnyOf {
			anyOf[i] = JSONSchema(a)
		}
		m["anyOf"] = anyOf
	}
	return m
}

// GenAIConfig returns what req says in genai's terms, for a server that
// reads it as generateContent's request: the system instruction, the tools
// (functions with their JSON Schema in ParametersJsonSchema), the tool
// config and the generation config.
func GenAIConfig(req *Request) (si *genai.Content, tools []*genai.Tool, tc *genai.ToolConfig, gc *genai.GenerationConfig, err error) {
	if req.SystemInstruction != "" {
		si = genai.NewContentFromText(req.SystemInstruction, genai.RoleUser)
	}
	var decls []*genai.FunctionDeclaration
	for _, t := range req.Tools {
		switch t.Type {
		case "function":
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 {
				var schema any
				if err := json.Unmarshal(t.Parameters, &schema); err != nil {
					return nil, nil, nil, nil, fmt.Errorf("function %s: parameters: %w", t.Name, err)
				}
				d.ParametersJsonSchema = schema
			}
			decls = append(decls, d)
		case "google_search":
			tools = append(tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
		case "code_execution":
			tools = append(tools, &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}})
		case "url_context":
			tools = append(tools, &genai.Tool{URLContext: &genai.URLContext{}})
		case "file_search":
			fs := &genai.FileSearch{}
			if names, ok := t.Extra["file_search_store_names"].([]any); ok {
				for _, n := range names {
					if s, ok := n.(string); ok {
						fs.FileSearchStoreNames = append(fs.FileSearchStoreNames, s)
					}
				}
			}
			tools = append(tools, &genai.Tool{FileSearch: fs})
		case "google_maps":
			tools = append(tools, &genai.Tool{GoogleMaps: &genai.GoogleMaps{}})
		}
	}
	if len(decls) > 0 {
		tools = append([]*genai.Tool{{FunctionDeclarations: decls}}, tools...)
	}
	g := req.GenerationConfig
	if g == nil && req.ResponseFormat == nil {
		return si, tools, nil, nil, nil
	}
	gc = &genai.GenerationConfig{}
	if g != nil {
		gc.Temperature, gc.TopP, gc.Seed, gc.StopSequences, gc.MaxOutputTokens = g.Temperature, g.TopP, g.Seed, g.StopSequences, g.MaxOutputTokens
		if g.ThinkingLevel != "" || g.ThinkingSummaries != "" {
			gc.ThinkingConfig = &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevel(strings.ToUpper(g.ThinkingLevel)),
				IncludeThoughts: g.ThinkingSummaries == "auto"}
		}
		if len(g.ToolChoice) > 0 {
			fc := &genai.FunctionCallingConfig{}
			var mode string
			var allowed struct {
				AllowedTools struct {
					Mode  string   `json:"mode"`
					Tools []string `json:"tools"`
				} `json:"allowed_tools"`
			}
			if json.Unmarshal(g.ToolChoice, &mode) != nil {
				if err := json.Unmarshal(g.ToolChoice, &allowed); err != nil {
					return nil, nil, nil, nil, fmt.Errorf("generation_config.tool_choice: %w", err)
				}
				mode, fc.AllowedFunctionNames = allowed.AllowedTools.Mode, allowed.AllowedTools.Tools
			}
			fc.Mode = genai.FunctionCallingConfigMode(strings.ToUpper(mode))
			tc = &genai.ToolConfig{FunctionCallingConfig: fc}
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		gc.ResponseMIMEType = rf.MimeType
		if len(rf.Schema) > 0 {
			var schema any
			if err := json.Unmarshal(rf.Schema, &schema); err != nil {
				return nil, nil, nil, nil, fmt.Errorf("response_format.schema: %w", err)
			}
			gc.ResponseJsonSchema = schema
		}
	}
	return si, tools, tc, gc, nil
}

// UsageMetadata returns u as generateContent's usage metadata: input
// tokens are the prompt, output tokens the candidates, with the thought,
// cached and tool-use counts and the counts by modality.
func UsageMetadata(u *Usage) *genai.GenerateContentResponseUsageMetadata {
	if u == nil {
		return nil
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.TotalInputTokens + u.TotalOutputTokens + u.TotalThoughtTokens + u.TotalToolUseTokens
	}
	return &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:           u.TotalInputTokens,
		CandidatesTokenCount:       u.TotalOutputTokens,
		ThoughtsTokenCount:         u.TotalThoughtTokens,
		CachedContentTokenCount:    u.TotalCachedTokens,
		ToolUsePromptTokenCount:    u.TotalToolUseTokens,
		TotalTokenCount:            total,
		PromptTokensDetails:        modalities(u.InputTokensByModality),
		CandidatesTokensDetails:    modalities(u.OutputTokensByModality),
		CacheTokensDetails:         modalities(u.CachedTokensByModality),
		ToolUsePromptTokensDetails: modalities(u.ToolUseTokensByModality),
	}
}

func modalities(ms []ModalityTokens) []*genai.ModalityTokenCount {
	if len(ms) == 0 {
		return nil
	}
	out := make([]*genai.ModalityTokenCount, len(ms))
	for i, m := range ms {
		out[i] = &genai.ModalityTokenCount{Modality: genai.MediaModality(strings.ToUpper(m.Modality)), TokenCount: m.Tokens}
	}
	return out
}
