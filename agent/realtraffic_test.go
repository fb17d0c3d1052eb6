package agent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/httprr"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The real traffic's exchanges of built-in tools, a few beside functions,
// reproduced through the loop: the fake answers each request with the
// response the real API gave, and the loop's requests must be the
// recording's, as the API took them (it answered each 200): the same
// contents, part by part, the built-in tools' toolCall and toolResponse
// parts with their ids, types and thought signatures, our function calls
// with theirs, one functionResponse per call by id; the same tools, in
// order; includeServerSideToolInvocations where the recording sends it. A
// recording's own tools answer with what it recorded; the loop's answers
// are its own ({"result": …}), which the API takes as well.
func TestRealTrafficBuiltinTools(t *testing.T) {
	dir, why := httprr.Dir()
	if dir == "" {
		t.Skip(why)
	}
	for _, tc := range []struct {
		file   string
		stream bool // the first exchange streams
		// next is the user question of the recording's second exchange,
		// asked in a second run on the first run's history; "" when the
		// second exchange is the loop's own next turn.
		next string
		// compare is how many of the requests to compare; 0: all.
		compare int
	}{
		// History with toolCall/toolResponse parts sent back.
		{file: "pydanticai-768b58fe8ebe"},
		{file: "pydanticai-8b4f737b0631", stream: true, next: "What famous landmark is it known for?"},
		{file: "pydanticai-9c2089ee4410", next: "What famous landmark is it known for?"},
		{file: "pydanticai-cd9aceb2cd5a", stream: true, next: "Which country is that city in?"},
		// Google Search beside functions, with includeServerSideToolInvocations.
		{file: "pydanticai-3e1fb95121b7"},
		{file: "pydanticai-3e502ef7650c"},
		{file: "pydanticai-7d0074bad7ce"},
		{file: "pydanticai-9567a0b341b7"},
		{file: "pydanticai-bf30e1fe6d98"},
		{file: "pydanticai-cb0336ba90ef"},
		// Vertex AI, beside functions without the field, answered 200.
		{file: "pydanticai-dbace0723305"},
		// UNEXPECTED_TOOL_CALL on Vertex AI, gemini-3: the undeclared call
		// answered, the model calling the declared one next. The
		// recording's client gave the calls, which had none, ids of its
		// own; the loop invents none. Its later requests add a file the
		// loop knows nothing of: the first two are compared.
		{file: "pydanticai-8675d0f83b3e", compare: 2},
		{file: "pydanticai-8dafe8d1b03b", compare: 2},
		{file: "pydanticai-92e846c3dd8b", compare: 2},
		{file: "pydanticai-cef11cf4a6d7", compare: 2},
		{file: "pydanticai-fdda11eb2750", compare: 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			exs, err := httprr.ReadFile(dir, tc.file+".httprr")
			if err != nil {
				t.Fatal(err)
			}
			replayBuiltinTraffic(t, exs, tc.stream, tc.next, tc.compare)
		})
	}
}

// recorded is a recorded request, decoded.
type recorded struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction"`
	Tools             []*genai.Tool           `json:"tools"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig"`
}

func replayBuiltinTraffic(t *testing.T, exs []httprr.Exchange, stream bool, next string, compare int) {
	var reqs []recorded
	srv := newServer(t)
	for i, ex := range exs {
		srv.Enqueue(recordedReply(t, ex))
		if compare > 0 && i >= compare {
			continue
		}
		var r recorded
		if err := json.Unmarshal(snakeToCamel(ex.Body), &r); err != nil {
			t.Fatalf("%v: request: %v", ex, err)
		}
		reqs = append(reqs, r)
	}
	first := reqs[0]
	vertex := strings.Contains(exs[0].Req.URL.Host, "aiplatform")
	modelName := path(exs[0].Req.URL)
	cfg := agent.Config{Model: modelName, Retry: fastRetry, Tools: recordedTools(t, first.Tools, reqs)}
	cfg.Models = srv.Client().Models
	if vertex {
		cfg.Models, cfg.Backend = srv.VertexClient().Models, genai.BackendVertexAI
	}
	gc := &genai.GenerateContentConfig{SystemInstruction: first.SystemInstruction, ToolConfig: first.ToolConfig}
	if g := first.GenerationConfig; g != nil {
		for _, m := range g.ResponseModalities {
			gc.ResponseModalities = append(gc.ResponseModalities, string(m))
		}
		gc.ResponseMIMEType, gc.ResponseJsonSchema = g.ResponseMIMEType, g.ResponseJsonSchema
	}
	for _, tool := range first.Tools {
		if len(tool.FunctionDeclarations) == 0 {
			cfg.BuiltinTools = append(cfg.BuiltinTools, tool)
		}
	}
	if gc.ToolConfig != nil && len(cfg.BuiltinTools) > 0 && cfg.Tools.Len() > 0 {
		// What the loop sets itself beside functions.
		tc := *gc.ToolConfig
		tc.IncludeServerSideToolInvocations = nil
		gc.ToolConfig = &tc
	}
	cfg.GenerateConfig = gc
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	question := first.Contents[0]
	res, err := runStreaming(a, stream, []*genai.Content{question}, nil)
	if err != nil && next == "" && len(srv.Requests()) < len(reqs) {
		t.Fatalf("run: %v", err)
	}
	if next != "" {
		if _, err := a.Run(context.Background(), append(res.History, genai.NewContentFromText(next, genai.RoleUser))); err != nil {
			t.Fatalf("second run: %v", err)
		}
	}
	got := srv.Requests()
	if len(got) < len(reqs) {
		t.Fatalf("the loop made %d requests, the recording %d", len(got), len(reqs))
	}
	for i, want := range reqs {
		sameRequest(t, i, got[i], want, vertex)
	}
	for _, rj := range srv.Rejections() {
		if rj.Seq <= len(reqs) {
			t.Errorf("the fake refused request %d, which the API took: %s", rj.Seq, rj.Err.Message)
		}
	}
}

// recordedReply is the recorded response of ex, sent as the API sent it.
func recordedReply(t *testing.T, ex httprr.Exchange) *fake.Reply {
	body := ex.RespBody
	if ex.Resp.StatusCode != 200 {
		var e struct{ Error fake.APIError }
		_ = json.Unmarshal(body, &e)
		return fake.Error(ex.Resp.StatusCode, e.Error.Message)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("data:")) {
		var resp genai.GenerateContentResponse
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("%v: response: %v", ex, err)
		}
		return &fake.Reply{Response: &resp, Raw: true}
	}
	var chunks []*genai.GenerateContentResponse
	for _, ev := range bytes.Split(body, []byte("\r\n\r\n")) {
		ev = bytes.TrimSpace(ev)
		if len(ev) == 0 {
			continue
		}
		var c genai.GenerateContentResponse
		if err := json.Unmarshal(bytes.TrimPrefix(ev, []byte("data: ")), &c); err != nil {
			t.Fatalf("%v: event: %v", ex, err)
		}
		chunks = append(chunks, &c)
	}
	return &fake.Reply{Chunks: chunks, Raw: true}
}

// recordedTools makes one tool of ours per function the recording
// declares, taking the properties it declares, answering what the
// recording's tool answered.
func recordedTools(t *testing.T, tools []*genai.Tool, reqs []recorded) *toolset.Set {
	var out []*toolset.Tool
	for _, tool := range tools {
		for _, d := range tool.FunctionDeclarations {
			schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
			if m, ok := d.ParametersJsonSchema.(map[string]any); ok {
				props, _ := m["properties"].(map[string]any)
				for name := range props {
					schema.Properties[name] = &jsonschema.Schema{Type: "string"}
				}
			}
			answer := recordedAnswer(reqs, d.Name)
			out = append(out, toolset.MustDefine(toolset.Tool{Name: d.Name, Description: d.Description, InputSchema: schema,
				Run: func(context.Context, map[string]any) (any, error) { return answer, nil }}))
		}
	}
	set, err := toolset.New(out...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// recordedAnswer is what the recording's tool of that name answered.
func recordedAnswer(reqs []recorded, name string) any {
	for _, r := range reqs {
		for _, c := range r.Contents {
			for _, p := range c.Parts {
				if fr := p.FunctionResponse; fr != nil && fr.Name == name {
					if v, ok := fr.Response["returnValue"]; ok {
						return v
					}
					return fr.Response
				}
			}
		}
	}
	return "done"
}

// sameRequest compares the loop's request i with the recording's.
func sameRequest(t *testing.T, i int, got *fake.Request, want recorded, vertex bool) {
	t.Helper()
	if g, w := toolKinds(got.Tools), toolKinds(want.Tools); g != w {
		t.Errorf("request %d: tools %s, recorded %s", i, g, w)
	}
	flag := func(tc *genai.ToolConfig) bool {
		return tc != nil && tc.IncludeServerSideToolInvocations != nil && *tc.IncludeServerSideToolInvocations
	}
	if flag(got.ToolConfig) != flag(want.ToolConfig) {
		t.Errorf("request %d: includeServerSideToolInvocations %t, recorded %t", i, flag(got.ToolConfig), flag(want.ToolConfig))
	}
	if len(got.Contents) != len(want.Contents) {
		t.Fatalf("request %d: %d contents, recorded %d:\n%s\n%s", i, len(got.Contents), len(want.Contents), toJSON(got.Contents), toJSON(want.Contents))
	}
	for k, w := range want.Contents {
		g := got.Contents[k]
		if g.Role != w.Role || partsOf(g) != partsOf(w) {
			t.Errorf("request %d, content %d: %s %s, recorded %s %s", i, k, g.Role, partsOf(g), w.Role, partsOf(w))
		}
	}
}

// toolKinds names the kinds of tools, in order, and the functions
// declared, sorted.
func toolKinds(tools []*genai.Tool) string {
	var b strings.Builder
	for _, t := range tools {
		switch {
		case len(t.FunctionDeclarations) > 0:
			var names []string
			for _, d := range t.FunctionDeclarations {
				names = append(names, d.Name)
			}
			fmt.Fprintf(&b, "functions%v ", names)
		case t.GoogleSearch != nil:
			b.WriteString("googleSearch ")
		case t.FileSearch != nil:
			b.WriteString("fileSearch ")
		default:
			b.WriteString(toJSON(t) + " ")
		}
	}
	return b.String()
}

// partsOf describes a content's parts: each part's kind, its ids, tool
// types and signature, and the text of a text part (a streamed answer's
// pieces joined, as the recording's client joined them).
func partsOf(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		switch {
		case p.ToolCall != nil:
			fmt.Fprintf(&b, "toolCall(%s,%s)", p.ToolCall.ID, p.ToolCall.ToolType)
		case p.ToolResponse != nil:
			fmt.Fprintf(&b, "toolResponse(%s,%s)", p.ToolResponse.ID, p.ToolResponse.ToolType)
		case p.FunctionCall != nil:
			fmt.Fprintf(&b, "functionCall(%s,%s)", ownID(p.FunctionCall.ID), p.FunctionCall.Name)
		case p.FunctionResponse != nil:
			fmt.Fprintf(&b, "functionResponse(%s,%s)", ownID(p.FunctionResponse.ID), p.FunctionResponse.Name)
		case p.Text != "":
			// The recordings' clients stored some answers with typographic
			// quotes and dashes made plain.
			fmt.Fprintf(&b, "text(%q)", strings.NewReplacer("\u2019", "'", "\u2013", "-", "\u2014", "-").Replace(p.Text))
		default:
			b.WriteString("other")
		}
		if len(p.ThoughtSignature) > 0 {
			fmt.Fprintf(&b, "+sig(%x)", p.ThoughtSignature[:min(8, len(p.ThoughtSignature))])
		}
		b.WriteString(" ")
	}
	return b.String()
}

// ownID returns id, or "" for an id the recording's client made up for a
// call that had none (pydantic-ai's "pyd_ai_…").
func ownID(id string) string {
	if strings.HasPrefix(id, "pyd_ai_") {
		return ""
	}
	return id
}

// path returns the model name of a request's URL.
func path(u *url.URL) string {
	last := u.Path[strings.LastIndex(u.Path, "/")+1:]
	name, _, _ := strings.Cut(last, ":")
	return name
}

// snakeToCamel rewrites the snake_case names some recorded clients send
// (tool_type, function_call, thought_signature…) in camelCase, as genai's
// types read them, and their URL-safe signatures in standard base64.
func snakeToCamel(body []byte) []byte {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return body
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				parts := strings.Split(k, "_")
				for i := 1; i < len(parts); i++ {
					if parts[i] != "" {
						parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
					}
				}
				name := strings.Join(parts, "")
				if sig, ok := e.(string); ok && name == "thoughtSignature" {
					// Sent in URL-safe base64, which the API reads too.
					if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(sig, "=")); err == nil {
						e = base64.StdEncoding.EncodeToString(b)
					}
				}
				out[name] = walk(e)
			}
			return out
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	b, _ := json.Marshal(walk(v))
	return b
}
