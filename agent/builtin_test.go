package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type calcIn struct {
	Expression string `json:"expression"`
}

// calculator and weather are our two tools beside Google Search.
func searchTools(w *weatherTool) *toolset.Set {
	calc := toolset.MustFunc("calculator", "Evaluates an arithmetic expression", func(_ context.Context, in calcIn) (string, error) {
		if in.Expression != "2+2" {
			return "", errors.New("only 2+2 is known")
		}
		return "4", nil
	})
	return toolset.MustNew(calc, w.tool())
}

var googleSearch = &genai.Tool{GoogleSearch: &genai.GoogleSearch{}}

// A run mixing Google Search with two of our tools, as the real traffic
// shows it (pydanticai-768b58fe8ebe: googleSearch beside a function, the
// model calling the function and searching in one turn): the request
// declares Google Search before our functions and asks for the server-side
// invocations; the model's turn, toolCall and toolResponse parts between
// our calls, goes back exactly as received, with one functionResponse per
// call of ours; the built-in tool is reported as events and never run; the
// answer's grounding and citations are in the Result. Before, a built-in
// tool given beside our tools had no includeServerSideToolInvocations,
// which the API refuses.
func TestGoogleSearchBesideTwoTools(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		given  bool // Google Search in GenerateConfig.Tools rather than BuiltinTools
	}{
		{"Run", false, false}, {"Stream", true, false}, {"given in GenerateConfig", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			w := &weatherTool{}
			log := &eventLog{}
			a := newAgent(t, srv, searchTools(w), func(c *agent.Config) {
				c.Model, c.Observer = model3, log
				if tc.given {
					c.GenerateConfig = &genai.GenerateContentConfig{Tools: []*genai.Tool{googleSearch}}
				} else {
					c.BuiltinTools = []*genai.Tool{googleSearch}
				}
			})
			turn0 := append([]*genai.Part{{FunctionCall: fake.Call("calculator", map[string]any{"expression": "2+2"})}},
				fake.GoogleSearch("current weather in Tokyo")...)
			turn0 = append(turn0, &genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Tokyo"})})
			answer := "2 + 2 is 4, and Tokyo is sunny."
			citation := &genai.Citation{URI: "https://weather.example/tokyo", StartIndex: 12, EndIndex: 30}
			srv.Enqueue(fake.Parts(turn0...),
				fake.Text(answer).WithGrounding(fake.WebGrounding(answer, "https://weather.example/tokyo")).WithCitations(citation))
			res, err := runStreaming(a, tc.stream, user("What is 2+2? Also search for the current weather in Tokyo."), nil)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			first := reqs[0]
			if len(first.Tools) != 2 || first.Tools[0].GoogleSearch == nil || len(first.Tools[1].FunctionDeclarations) != 2 {
				t.Errorf("tools %s; want Google Search, then our two functions", toJSON(first.Tools))
			}
			if tcfg := first.ToolConfig; tcfg == nil || tcfg.IncludeServerSideToolInvocations == nil || !*tcfg.IncludeServerSideToolInvocations {
				t.Errorf("toolConfig %s; want includeServerSideToolInvocations", toJSON(first.ToolConfig))
			}
			// The model's turn goes back as the API sent it.
			sent := reqs[1].Contents[1]
			if got, want := toJSON(sent), toJSON(res.Turns[0].Response.Candidates[0].Content); got != want {
				t.Errorf("the model turn sent back\n%s\nwant it as received\n%s", got, want)
			}
			ps := sent.Parts
			if ps[1].ToolCall == nil || ps[2].ToolResponse == nil || ps[1].ToolCall.ID == "" || ps[2].ToolResponse.ID != ps[1].ToolCall.ID ||
				len(ps[1].ThoughtSignature) == 0 || len(ps[2].ThoughtSignature) == 0 {
				t.Errorf("built-in tool parts %s; want the call and its response, ids and signatures kept", toJSON(ps[1:3]))
			}
			answers := responses(reqs[1].Contents[2])
			if len(answers) != 2 || answers[0].Name != "calculator" || answers[0].ID != ps[0].FunctionCall.ID ||
				answers[1].Name != "get_weather" || answers[1].ID != ps[3].FunctionCall.ID || answers[0].Response["result"] != "4" {
				t.Errorf("function responses %s; want calculator's 4 and get_weather's, by id", toJSON(answers))
			}
			if w.calls.Load() != 1 {
				t.Errorf("get_weather ran %d times", w.calls.Load())
			}
			// Events: the search, never run.
			calls, results := log.of(agent.EventServerToolCall), log.of(agent.EventServerToolResult)
			if len(calls) != 1 || len(results) != 1 || calls[0].Part != res.History[1].Parts[1] && !tc.stream ||
				agent.ServerToolName(calls[0].Part) != "google_search" || agent.ServerToolID(results[0].Part) != ps[1].ToolCall.ID {
				t.Errorf("server tool events %v %v", calls, results)
			}
			if n := len(log.of(agent.EventToolCall)); n != 2 {
				t.Errorf("%d EventToolCall, want our 2", n)
			}
			order := log.kinds()
			resp := slices.Index(order, "ModelResponse")
			call := slices.Index(order, "ServerToolCall")
			if tc.stream != (call < resp) {
				t.Errorf("events %v: the search is reported %s", order, map[bool]string{true: "as it streams", false: "after the response"}[tc.stream])
			}
			// The answer's grounding and citations.
			if g := res.Grounding; g == nil || len(g.GroundingChunks) != 1 || g.GroundingChunks[0].Web.URI != "https://weather.example/tokyo" {
				t.Errorf("Result.Grounding = %s", toJSON(res.Grounding))
			}
			if len(res.Citations) != 1 || res.Citations[0].URI != citation.URI {
				t.Errorf("Result.Citations = %s", toJSON(res.Citations))
			}
			if res.Text != answer {
				t.Errorf("Text %q", res.Text)
			}
		})
	}
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// Vertex AI takes built-in tools beside functions without
// includeServerSideToolInvocations, which it does not have: the loop does
// not send it there (the real traffic's pydanticai-dbace0723305), and New
// refuses it when the caller asks for it.
func TestBuiltinToolsOnVertex(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a, err := agent.New(agent.Config{Models: srv.VertexClient().Models, Model: model3, Backend: genai.BackendVertexAI,
		Tools: searchTools(w), BuiltinTools: []*genai.Tool{googleSearch}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny."))
	if _, err := a.Run(context.Background(), user("Weather in Paris?")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if tc := srv.Requests()[0].ToolConfig; tc != nil && tc.IncludeServerSideToolInvocations != nil {
		t.Errorf("toolConfig %s sent to Vertex AI", toJSON(tc))
	}
	_, err = agent.New(agent.Config{Models: srv.VertexClient().Models, Model: model3, Backend: genai.BackendVertexAI,
		Tools: searchTools(w), BuiltinTools: []*genai.Tool{googleSearch},
		GenerateConfig: &genai.GenerateContentConfig{ToolConfig: &genai.ToolConfig{IncludeServerSideToolInvocations: genai.Ptr(true)}}})
	if err == nil || !strings.Contains(err.Error(), "not supported on Vertex AI") {
		t.Errorf("New() with the field on Vertex AI = %v", err)
	}
}

// What is not a built-in tool is refused; With adds built-in tools.
func TestBuiltinToolsConfig(t *testing.T) {
	srv := newServer(t)
	for _, bad := range []*genai.Tool{nil, {}, {FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "f"}}}, {ComputerUse: &genai.ComputerUse{}}} {
		if _, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3, BuiltinTools: []*genai.Tool{bad}}); err == nil {
			t.Errorf("New() took %s as a built-in tool", toJSON(bad))
		}
	}
	w := &weatherTool{}
	a := newAgent(t, srv, searchTools(w), func(c *agent.Config) { c.Model = model3 })
	b := a.With(agent.Overrides{BuiltinTools: []*genai.Tool{{CodeExecution: &genai.ToolCodeExecution{}}}})
	srv.Enqueue(fake.Parts(append(fake.CodeExecution("print(2+2)", "4\n"), &genai.Part{Text: "4"})...))
	res, err := b.Run(context.Background(), user("2+2 in Python?"))
	if err != nil || res.Text != "4" {
		t.Fatalf("Run() = %q, %v", res.Text, err)
	}
	req := srv.LastRequest()
	if len(req.Tools) != 2 || req.Tools[0].CodeExecution == nil || req.ToolConfig == nil || !*req.ToolConfig.IncludeServerSideToolInvocations {
		t.Errorf("tools %s, toolConfig %s", toJSON(req.Tools), toJSON(req.ToolConfig))
	}
	srv.Enqueue(fake.Text("no tools"))
	if _, err := a.Run(context.Background(), user("hi")); err != nil || len(srv.LastRequest().Tools) != 1 {
		t.Errorf("the agent With derived from changed: %v, tools %s", err, toJSON(srv.LastRequest().Tools))
	}
}

// UNEXPECTED_TOOL_CALL with the call the model tried (Vertex AI sends it,
// the real traffic's pydanticai-8675d0f83b3e and four others): the call is
// answered, not asked again, with the unknown tool's answer that lists the
// tools the model may call, and the model, told, calls the right one. A
// call of a known tool in such a turn is not run either. Before, the loop
// asked the same request again, twice, then failed with ErrMalformedCall.
func TestUnexpectedToolCallAnswered(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		w := &weatherTool{}
		a, err := agent.New(agent.Config{Models: srv.VertexClient().Models, Model: model3, Backend: genai.BackendVertexAI,
			Tools: toolset.MustNew(w.tool()), Retry: fastRetry})
		if err != nil {
			t.Fatal(err)
		}
		srv.Enqueue(fake.UnexpectedCall("list_files", nil),
			fake.UnexpectedCall("get_weather", map[string]any{"city": "Rome"}),
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny."))
		res, err := runStreaming(a, stream, user("Weather?"), nil)
		if err != nil {
			t.Fatalf("stream %t: %v", stream, err)
		}
		reqs := srv.Requests()
		if len(reqs) != 4 {
			t.Fatalf("stream %t: %d requests, want 4: each unexpected call answered, none asked again", stream, len(reqs))
		}
		first := responses(reqs[1].Contents[2])
		second := responses(reqs[2].Contents[4])
		if len(first) != 1 || !strings.Contains(first[0].Response["error"].(string), `unknown tool "list_files"; available tools: get_weather`) {
			t.Errorf("stream %t: answer to list_files %s", stream, toJSON(first))
		}
		if len(second) != 1 || !strings.Contains(second[0].Response["error"].(string), "tool get_weather was not run: the API refused it") {
			t.Errorf("stream %t: answer to the refused get_weather %s", stream, toJSON(second))
		}
		if w.calls.Load() != 1 || res.Text != "Sunny." || !errors.Is(res.Turns[1].Results[0].Err, agent.ErrUnexpectedCall) {
			t.Errorf("stream %t: get_weather ran %d times; text %q; want once, for Paris", stream, w.calls.Load(), res.Text)
		}
	}
	// Without the call, the reply is asked again, as a malformed one is.
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	srv.Enqueue(fake.Finish(genai.FinishReasonUnexpectedToolCall), fake.Text("ok"))
	if res, err := a.Run(context.Background(), user("hi")); err != nil || res.Text != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("an empty UNEXPECTED_TOOL_CALL: %v after %d requests", err, len(srv.Requests()))
	}
}

// TOO_MANY_TOOL_CALLS ends the run, never asked again: what the model
// made is in the history and the Result. Before, an answer with content
// that finished so was taken for a whole one.
func TestTooManyToolCalls(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		a := newAgent(t, srv, nil, func(c *agent.Config) { c.Model, c.BuiltinTools = model3, []*genai.Tool{googleSearch} })
		parts := append(fake.GoogleSearch("a"), fake.GoogleSearch("b")...)
		parts = append(parts, &genai.Part{Text: "So far"})
		srv.Enqueue(fake.Parts(parts...).WithFinishReason(genai.FinishReasonTooManyToolCalls, "Model called too many tools consecutively"))
		res, err := runStreaming(a, stream, user("search a lot"), nil)
		var stop *agent.StopError
		if !errors.Is(err, agent.ErrTooManyToolCalls) || !errors.As(err, &stop) || len(srv.Requests()) != 1 {
			t.Fatalf("stream %t: %v after %d requests; want ErrTooManyToolCalls at once", stream, err, len(srv.Requests()))
		}
		if res.Text != "So far" || len(res.History) != 2 || len(res.History[1].Parts) != 5 {
			t.Errorf("stream %t: text %q, %d contents; want what the model made kept", stream, res.Text, len(res.History))
		}
	}
}

// A flex request the API sheds is retried longer than a standard one; the
// tier that served it is in the usage.
func TestFlexTier(t *testing.T) {
	for _, tc := range []struct {
		tier  genai.ServiceTier
		sheds int
		ok    bool
	}{
		{genai.ServiceTierFlex, 6, true},
		{"", 6, false}, // standard: 4 attempts
	} {
		srv := newServer(t)
		a := newAgent(t, srv, nil, func(c *agent.Config) {
			c.GenerateConfig = &genai.GenerateContentConfig{ServiceTier: tc.tier}
		})
		for range tc.sheds {
			srv.Enqueue(fake.Overloaded())
		}
		srv.Enqueue(fake.Text("served"))
		res, err := a.Run(context.Background(), user("hi"))
		if (err == nil) != tc.ok {
			t.Errorf("tier %q: %v after %d requests", tc.tier, err, len(srv.Requests()))
		}
		if tc.ok && res.Usage.ServiceTier != genai.ServiceTierFlex {
			t.Errorf("tier %q: Usage.ServiceTier %q", tc.tier, res.Usage.ServiceTier)
		}
	}
	// Vertex AI says it in the traffic type.
	srv := newServer(t)
	a, err := agent.New(agent.Config{Models: srv.VertexClient().Models, Model: model, Backend: genai.BackendVertexAI,
		GenerateConfig: &genai.GenerateContentConfig{ServiceTier: genai.ServiceTierPriority}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Text("served"))
	if res, err := a.Run(context.Background(), user("hi")); err != nil || res.Usage.ServiceTier != genai.ServiceTierPriority {
		t.Errorf("Vertex AI priority: %v, tier %q", err, res.Usage.ServiceTier)
	}
}
