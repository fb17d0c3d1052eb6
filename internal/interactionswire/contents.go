package interactionswire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// StepKey is the PartMetadata key under which a part made from a built-in
// tool step keeps the step as it came (decoded JSON), to send it back
// unchanged.
const StepKey = "interactions_step"

// Steps returns the steps that say c to the API: user_input and
// function_result steps for a user content (any role but "model"),
// thought, model_output, function_call and built-in tool steps for a model
// content (see the package documentation). A part the API has no step for
// is an error.
func Steps(c *genai.Content) ([]Step, error) {
	if c == nil {
		return nil, nil
	}
	if c.Role == genai.RoleModel {
		return modelSteps(c.Parts)
	}
	return userSteps(c.Parts)
}

// AppendSteps appends the steps of each of contents to steps.
func AppendSteps(steps []Step, contents ...*genai.Content) ([]Step, error) {
	for i, c := range contents {
		s, err := Steps(c)
		if err != nil {
			return nil, fmt.Errorf("content %d: %w", i, err)
		}
		steps = append(steps, s...)
	}
	return steps, nil
}

func userSteps(parts []*genai.Part) ([]Step, error) {
	var (
		steps []Step
		input []Content
	)
	flush := func() {
		if len(input) > 0 {
			steps = append(steps, Step{Type: TypeUserInput, Content: input})
			input = nil
		}
	}
	for i, p := range parts {
		switch {
		case p == nil:
		case p.FunctionResponse != nil:
			flush()
			s, err := functionResult(p.FunctionResponse)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
			steps = append(steps, s)
		default:
			item, ok, err := contentItem(p)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
			if !ok {
				if onlySignature(p) {
					continue // nothing a user says
				}
				return nil, fmt.Errorf("part %d: a user content's %s has no Interactions step", i, describePart(p))
			}
			input = appendContent(input, item)
		}
	}
	flush()
	return steps, nil
}

// modelSteps turns a model content's parts into steps; see the package
// documentation for the rules.
func modelSteps(parts []*genai.Part) ([]Step, error) {
	var (
		steps   []Step
		output  []Content       // the open model_output's content
		thought strings.Builder // the open thought's summary
		open    bool            // a thought is open
	)
	closeOutput := func() {
		if len(output) > 0 {
			steps = append(steps, Step{Type: TypeModelOutput, Content: output})
			output = nil
		}
	}
	closeThought := func(sig []byte) {
		if !open && sig == nil {
			return
		}
		s := Step{Type: TypeThought}
		if sig != nil {
			sig := string(sig)
			s.Signature = &sig
		}
		if thought.Len() > 0 {
			s.Summary = []Content{{Type: "text", Text: thought.String()}}
		}
		steps = append(steps, s)
		thought.Reset()
		open = false
	}
	for i, p := range parts {
		if p == nil {
			continue
		}
		switch {
		case p.Thought && plainText(p):
			closeOutput()
			thought.WriteString(p.Text)
			open = open || p.Text != ""
			if len(p.ThoughtSignature) > 0 {
				closeThought(p.ThoughtSignature)
			}
		case p.FunctionCall != nil:
			closeOutput()
			closeThought(nil)
			if len(p.ThoughtSignature) > 0 {
				closeThought(p.ThoughtSignature)
			}
			s, err := functionCall(p.FunctionCall)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
			steps = append(steps, s)
		case builtin(p):
			closeOutput()
			closeThought(nil)
			s, err := builtinStep(p)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
			steps = append(steps, s)
		case onlySignature(p):
			closeOutput()
			closeThought(nil)
			closeThought(p.ThoughtSignature)
		default:
			item, ok, err := contentItem(p)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
			if !ok {
				return nil, fmt.Errorf("part %d: a model content's %s has no Interactions step", i, describePart(p))
			}
			closeThought(nil)
			output = appendContent(output, item)
			if len(p.ThoughtSignature) > 0 {
				closeOutput()
				closeThought(p.ThoughtSignature)
			}
		}
	}
	closeOutput()
	closeThought(nil)
	return steps, nil
}

// appendContent appends item, joining it to a text item it follows; an
// empty text says nothing and is left out.
func appendContent(items []Content, item Content) []Content {
	if item.Type == "text" && item.Text == "" {
		return items
	}
	if n := len(items); n > 0 && item.Type == "text" && items[n-1].Type == "text" {
		items[n-1].Text += item.Text
		return items
	}
	return append(items, item)
}

// plainText reports whether p is text and nothing else: text, the thought
// flag and a signature at most.
func plainText(p *genai.Part) bool {
	q := *p
	q.Text, q.Thought, q.ThoughtSignature = "", false, nil
	return zeroPart(&q)
}

// onlySignature reports whether p carries a signature and nothing else.
func onlySignature(p *genai.Part) bool {
	return !p.Thought && p.Text == "" && len(p.ThoughtSignature) > 0 && plainText(p)
}

func zeroPart(p *genai.Part) bool {
	return p.MediaResolution == nil && p.CodeExecutionResult == nil && p.ExecutableCode == nil &&
		p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil &&
		p.Text == "" && !p.Thought && p.ThoughtSignature == nil && p.VideoMetadata == nil &&
		p.ToolCall == nil && p.ToolResponse == nil && p.PartMetadata == nil && p.AudioTranscription == nil &&
		p.MediaProcessing == ""
}

// contentItem returns the content item of a text or media part, and false
// for other parts.
func contentItem(p *genai.Part) (Content, bool, error) {
	switch {
	case p.InlineData != nil:
		return Content{Type: mediaType(p.InlineData.MIMEType), MimeType: p.InlineData.MIMEType,
			Data: base64.StdEncoding.EncodeToString(p.InlineData.Data)}, true, nil
	case p.FileData != nil:
		return Content{Type: mediaType(p.FileData.MIMEType), MimeType: p.FileData.MIMEType, URI: p.FileData.FileURI}, true, nil
	case p.FunctionCall != nil || p.FunctionResponse != nil || builtin(p):
		return Content{}, false, nil
	case p.Text != "" || plainText(p) && !onlySignature(p):
		return Content{Type: "text", Text: p.Text}, true, nil
	}
	return Content{}, false, nil
}

// mediaType returns the content type of a MIME type: image, audio, video
// or document.
func mediaType(mime string) string {
	for _, t := range []string{"image", "audio", "video"} {
		if strings.HasPrefix(mime, t+"/") {
			return t
		}
	}
	return "document"
}

func describePart(p *genai.Part) string {
	b, _ := json.Marshal(p)
	if len(b) > 80 {
		b = append(b[:77], "..."...)
	}
	return "part " + string(b)
}

func functionCall(fc *genai.FunctionCall) (Step, error) {
	args := []byte("{}")
	if len(fc.Args) > 0 {
		var err error
		if args, err = json.Marshal(fc.Args); err != nil {
			return Step{}, fmt.Errorf("function call %s: arguments: %w", fc.Name, err)
		}
	}
	return Step{Type: TypeFunctionCall, ID: fc.ID, Name: fc.Name, Arguments: args}, nil
}

// functionResult answers a call: its response's JSON, canonical, as a string (the form
// every client can send: genai's Go SDK reads a result object as an empty
// struct), or, when the response carries media, an array of that text and
// the media. is_error is set when the response is {"error": …}.
func functionResult(fr *genai.FunctionResponse) (Step, error) {
	resp := fr.Response
	if resp == nil {
		resp = map[string]any{}
	}
	b, err := json.Marshal(resp)
	if err == nil {
		// A tool's output may be a Go value whose members JSON writes in
		// its own order; a stored conversation holds it as a map, written
		// in another. Canonical, the two are one result, and one history.
		b, err = Canonical(b)
	}
	if err != nil {
		return Step{}, fmt.Errorf("function response %s: %w", fr.Name, err)
	}
	_, failed := resp["error"]
	_, ok := resp["result"]
	_, out := resp["output"]
	s := Step{Type: TypeFunctionResult, CallID: fr.ID, Name: fr.Name, IsError: failed && !ok && !out}
	if len(fr.Parts) == 0 {
		s.Result, _ = json.Marshal(string(b))
		return s, nil
	}
	items := []Content{{Type: "text", Text: string(b)}}
	for _, p := range fr.Parts {
		switch {
		case p == nil:
		case p.InlineData != nil:
			items = append(items, Content{Type: mediaType(p.InlineData.MIMEType), MimeType: p.InlineData.MIMEType,
				Data: base64.StdEncoding.EncodeToString(p.InlineData.Data)})
		case p.FileData != nil:
			items = append(items, Content{Type: mediaType(p.FileData.MIMEType), MimeType: p.FileData.MIMEType, URI: p.FileData.FileURI})
		}
	}
	s.Result, err = json.Marshal(items)
	return s, err
}

// Contents returns the contents steps say, in order: consecutive steps of
// one side (user_input and function_result for the user, the rest for the
// model) make one content. Steps that carry nothing (a thought with no
// summary and no signature) are left out.
func Contents(steps []Step) ([]*genai.Content, error) {
	var out []*genai.Content
	for i, s := range steps {
		role := genai.RoleModel
		if s.Type == TypeUserInput || s.Type == TypeFunctionResult {
			role = genai.RoleUser
		}
		parts, err := Parts(s)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i, s.Type, err)
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			continue
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	return out, nil
}

// ModelContent returns the model content of an interaction's output steps, nil
// when they say nothing.
func ModelContent(steps []Step) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleModel}
	for i, s := range steps {
		parts, err := Parts(s)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i, s.Type, err)
		}
		c.Parts = append(c.Parts, parts...)
	}
	if len(c.Parts) == 0 {
		return nil, nil
	}
	return c, nil
}

// Parts returns the genai parts of one step.
func Parts(s Step) ([]*genai.Part, error) {
	switch s.Type {
	case TypeUserInput, TypeModelOutput:
		var parts []*genai.Part
		for _, c := range s.Content {
			p, err := part(c)
			if err != nil {
				return nil, err
			}
			if p != nil {
				parts = append(parts, p)
			}
		}
		return parts, nil
	case TypeThought:
		p := &genai.Part{Thought: true}
		for _, c := range s.Summary {
			p.Text += c.Text
		}
		if s.Signature != nil && *s.Signature != "" {
			p.ThoughtSignature = []byte(*s.Signature)
		}
		if p.Text == "" && p.ThoughtSignature == nil {
			return nil, nil
		}
		return []*genai.Part{p}, nil
	case TypeFunctionCall:
		fc := &genai.FunctionCall{ID: s.ID, Name: s.Name}
		if len(s.Arguments) > 0 && !bytes.Equal(s.Arguments, []byte("null")) {
			if err := json.Unmarshal(s.Arguments, &fc.Args); err != nil {
				return nil, fmt.Errorf("function call %s: arguments are not a JSON object: %w", s.Name, err)
			}
		}
		return []*genai.Part{{FunctionCall: fc}}, nil
	case TypeFunctionResult:
		fr, err := functionResponse(s)
		if err != nil {
			return nil, err
		}
		return []*genai.Part{{FunctionResponse: fr}}, nil
	}
	p, err := builtinPart(s)
	if err != nil {
		return nil, err
	}
	return []*genai.Part{p}, nil
}

// part returns the part of one content item; nil for an item with nothing.
func part(c Content) (*genai.Part, error) {
	switch {
	case c.Type == "text":
		if c.Text == "" {
			return nil, nil
		}
		return &genai.Part{Text: c.Text}, nil
	case c.Data != "":
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			return nil, fmt.Errorf("%s content: data is not base64: %w", c.Type, err)
		}
		return &genai.Part{InlineData: &genai.Blob{MIMEType: c.MimeType, Data: data}}, nil
	case c.URI != "":
		return &genai.Part{FileData: &genai.FileData{MIMEType: c.MimeType, FileURI: c.URI}}, nil
	}
	return nil, nil
}

// functionResponse reads a function result back into the response the
// loop made: the JSON object its text holds, or {"output": text}
// ({"error": text} when is_error); media items become the response's
// parts.
func functionResponse(s Step) (*genai.FunctionResponse, error) {
	fr := &genai.FunctionResponse{ID: s.CallID, Name: s.Name}
	var text string
	switch r := bytes.TrimSpace(s.Result); {
	case len(r) == 0 || bytes.Equal(r, []byte("null")):
	case r[0] == '"':
		if err := json.Unmarshal(r, &text); err != nil {
			return nil, err
		}
	case r[0] == '[':
		var items []Content
		if err := json.Unmarshal(r, &items); err != nil {
			return nil, fmt.Errorf("function result %s: %w", s.Name, err)
		}
		for _, c := range items {
			switch {
			case c.Type == "text":
				text += c.Text
			case c.Data != "":
				data, err := base64.StdEncoding.DecodeString(c.Data)
				if err != nil {
					return nil, fmt.Errorf("function result %s: %s data is not base64: %w", s.Name, c.Type, err)
				}
				fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: c.MimeType, Data: data}})
			case c.URI != "":
				fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{MIMEType: c.MimeType, FileURI: c.URI}})
			}
		}
	case r[0] == '{':
		if err := json.Unmarshal(r, &fr.Response); err != nil {
			return nil, fmt.Errorf("function result %s: %w", s.Name, err)
		}
		return fr, nil
	default:
		text = string(r)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err == nil && obj != nil {
		fr.Response = obj
		return fr, nil
	}
	key := "output"
	if s.IsError {
		key = "error"
	}
	fr.Response = map[string]any{key: text}
	return fr, nil
}
