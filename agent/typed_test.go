package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// invoice is the typed answer of these tests.
type invoice struct {
	Customer string     `json:"customer" jsonschema:"who pays"`
	Lines    []lineItem `json:"lines"`
	Total    float64    `json:"total"`
}

type lineItem struct {
	Item   string  `json:"item"`
	Amount float64 `json:"amount"`
}

var wantInvoice = invoice{Customer: "ACME", Lines: []lineItem{{"widgets", 30}, {"bolts", 12.5}}, Total: 42.5}

// invoiceArgs is wantInvoice as a model sends it.
func invoiceArgs() map[string]any {
	return map[string]any{"customer": "ACME", "total": 42.5, "lines": []any{
		map[string]any{"item": "widgets", "amount": 30.0},
		map[string]any{"item": "bolts", "amount": 12.5},
	}}
}

const invoiceJSON = `{"customer":"ACME","lines":[{"item":"widgets","amount":30},{"item":"bolts","amount":12.5}],"total":42.5}`

// finalAnswer is the final-answer call of the tool strategy.
func finalAnswer(args map[string]any) *fake.Reply {
	return fake.Calls(fake.Call(agent.DefaultOutputToolName, args))
}

// declared returns the names of the functions a request declares.
func declared(req *fake.Request) []string {
	var names []string
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	return names
}

// callingConfig returns a request's function calling config, or nil.
func callingConfig(req *fake.Request) *genai.FunctionCallingConfig {
	if req.ToolConfig == nil {
		return nil
	}
	return req.ToolConfig.FunctionCallingConfig
}

// lastText returns the text of a request's last content.
func lastText(req *fake.Request) string {
	c := req.Contents[len(req.Contents)-1]
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// retries returns the Err of the EventRetry events an eventLog saw.
func retries(l *eventLog) []error {
	var out []error
	for _, e := range l.of(agent.EventRetry) {
		out = append(out, e.Err)
	}
	return out
}

func TestRunTypedToolStrategy(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You bill customers.", "")}
	})
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), finalAnswer(invoiceArgs()))

	got, res, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
	if err != nil {
		t.Fatalf("RunTyped() = %v", err)
	}
	if diff := cmp.Diff(wantInvoice, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if out, ok := res.Output.(invoice); !ok || out.Total != 42.5 {
		t.Errorf("Result.Output = %#v; want the invoice", res.Output)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	// gemini-2.5-flash on the Gemini API: a final-answer tool, no response schema.
	first := reqs[0]
	if diff := cmp.Diff([]string{"get_weather", "final_answer"}, declared(first)); diff != "" {
		t.Errorf("declarations (-want +got):\n%s", diff)
	}
	if gc := first.GenerationConfig; gc != nil && (gc.ResponseMIMEType != "" || gc.ResponseSchema != nil || gc.ResponseJsonSchema != nil) {
		t.Errorf("GenerationConfig = %+v; want no response schema with the tool strategy", gc)
	}
	si := first.SystemInstruction
	if si == nil || len(si.Parts) != 2 || si.Parts[0].Text != "You bill customers." || !strings.Contains(si.Parts[1].Text, "calling the final_answer function") {
		t.Errorf("system instruction = %+v; want the agent's, then the final-answer instruction", si)
	}
	if fc := callingConfig(first); fc != nil {
		t.Errorf("first turn forces %+v; want the model free to call tools", fc)
	}
	// The run ends with the accepted call: the history can be continued.
	last := res.History[len(res.History)-1]
	if rs := responses(last); len(rs) != 1 || rs[0].Name != "final_answer" || rs[0].Response["result"] != "final answer accepted" {
		t.Errorf("last content = %+v; want the final answer's response", last)
	}
	if len(res.Turns) != 2 || w.calls.Load() != 1 {
		t.Errorf("%d turns, %d weather calls; want 2 and 1", len(res.Turns), w.calls.Load())
	}
}

func TestRunTypedNativeStrategy(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Model = model3 })
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text(invoiceJSON))

	got, res, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
	if err != nil {
		t.Fatalf("RunTyped() = %v", err)
	}
	if diff := cmp.Diff(wantInvoice, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if res.Text != invoiceJSON {
		t.Errorf("Text = %q; want the JSON answer", res.Text)
	}
	// Gemini 3 accepts a response schema with the tools.
	for i, req := range srv.Requests() {
		gc := req.GenerationConfig
		if gc == nil || gc.ResponseMIMEType != "application/json" || gc.ResponseSchema == nil {
			t.Fatalf("request %d GenerationConfig = %+v; want application/json with a response schema", i, gc)
		}
		if diff := cmp.Diff([]string{"get_weather"}, declared(req)); diff != "" {
			t.Errorf("request %d declarations (-want +got):\n%s", i, diff)
		}
		s := gc.ResponseSchema
		if s.Type != genai.TypeObject || s.Properties["lines"].Items.Properties["amount"].Type != genai.TypeNumber ||
			s.Properties["customer"].Description != "who pays" {
			t.Errorf("response schema = %+v; want invoice's", s)
		}
	}
}

func TestRunTypedNoToolsIsNative(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil) // gemini-2.5-flash: native is fine without tools
	srv.Enqueue(fake.Text(`["a","b"]`))
	got, _, err := agent.RunTyped[[]string](context.Background(), a, user("Two letters."))
	if err != nil || !cmp.Equal(got, []string{"a", "b"}) {
		t.Fatalf("RunTyped() = %q, %v; want [a b]", got, err)
	}
	req := srv.LastRequest()
	if gc := req.GenerationConfig; gc == nil || gc.ResponseMIMEType != "application/json" || gc.ResponseSchema == nil || gc.ResponseSchema.Type != genai.TypeArray {
		t.Errorf("GenerationConfig = %+v; want an array response schema", req.GenerationConfig)
	}
	if req.Tools != nil || req.ToolConfig != nil {
		t.Errorf("Tools, ToolConfig = %v, %v; want none", req.Tools, req.ToolConfig)
	}
}

func TestRunTypedNotAnObject(t *testing.T) {
	// A T that is not an object is asked for as {"value": T} by the tool.
	srv := newServer(t)
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()))
	srv.Enqueue(finalAnswer(map[string]any{"value": []any{"x", "y"}}))
	got, _, err := agent.RunTyped[[]string](context.Background(), a, user("Two letters."))
	if err != nil || !cmp.Equal(got, []string{"x", "y"}) {
		t.Fatalf("RunTyped() = %q, %v; want [x y]", got, err)
	}
	d := srv.LastRequest().Tools[0].FunctionDeclarations[1]
	if d.Name != "final_answer" || d.Parameters == nil || d.Parameters.Properties["value"].Type != genai.TypeArray {
		t.Errorf("final_answer declaration = %+v; want a value array parameter", d)
	}
}

func TestRunTypedInvalidThenValid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		model   string
		invalid *fake.Reply
		valid   *fake.Reply
		// check inspects the re-ask request.
		check func(t *testing.T, req *fake.Request)
	}{
		{"tool", model, finalAnswer(map[string]any{"customer": "ACME", "total": "a lot"}), finalAnswer(invoiceArgs()),
			func(t *testing.T, req *fake.Request) {
				rs := responses(req.Contents[len(req.Contents)-1])
				if len(rs) != 1 || !strings.Contains(fmt.Sprint(rs[0].Response["error"]), `invalid arguments for final_answer`) {
					t.Errorf("the refused call was answered %+v; want the validation error", rs)
				}
				if fc := callingConfig(req); fc == nil || fc.Mode != genai.FunctionCallingConfigModeAny || !cmp.Equal(fc.AllowedFunctionNames, []string{"final_answer"}) {
					t.Errorf("re-ask calling config = %+v; want ANY with only final_answer", fc)
				}
			}},
		{"native", model3, fake.Text(`{"customer":"ACME","total":"a lot"}`), fake.Text(invoiceJSON),
			func(t *testing.T, req *fake.Request) {
				if got := lastText(req); !strings.Contains(got, "Your answer was refused: the answer does not match the response schema") {
					t.Errorf("re-ask message = %q; want the validation error", got)
				}
			}},
		{"native, not JSON", model3, fake.Text(`Here it is: total 42.5`), fake.Text("```json\n" + invoiceJSON + "\n```"),
			func(t *testing.T, req *fake.Request) {
				if got := lastText(req); !strings.Contains(got, "the answer is not valid JSON") {
					t.Errorf("re-ask message = %q; want the parse error", got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			log := &eventLog{}
			a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
				c.Model, c.Observer, c.MaxTurns = tc.model, log, 1
			})
			srv.Enqueue(tc.invalid, tc.valid)
			got, res, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
			if err != nil {
				t.Fatalf("RunTyped() = %v; want the second answer (re-asks do not count against MaxTurns 1)", err)
			}
			if diff := cmp.Diff(wantInvoice, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || len(res.Turns) != 2 {
				t.Fatalf("%d requests, %d turns; want 2 and 2", len(reqs), len(res.Turns))
			}
			tc.check(t, reqs[1])
			if errs := retries(log); len(errs) != 1 || !errors.Is(errs[0], agent.ErrInvalidOutput) {
				t.Errorf("EventRetry errors = %v; want one wrapping ErrInvalidOutput", errs)
			}
		})
	}
}

func TestRunTypedProseThenTyped(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()))
	srv.Enqueue(fake.Text("The invoice for ACME comes to 42.50 euros."), finalAnswer(invoiceArgs()))
	got, res, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
	if err != nil {
		t.Fatalf("RunTyped() = %v", err)
	}
	if got.Total != 42.5 {
		t.Errorf("Total = %v; want 42.5", got.Total)
	}
	req := srv.Requests()[1]
	if got := lastText(req); !strings.Contains(got, "Give your final answer by calling the final_answer function") {
		t.Errorf("re-ask message = %q", got)
	}
	if fc := callingConfig(req); fc == nil || fc.Mode != genai.FunctionCallingConfigModeAny || !cmp.Equal(fc.AllowedFunctionNames, []string{"final_answer"}) {
		t.Errorf("re-ask calling config = %+v; want ANY with only final_answer", fc)
	}
	// History: input, prose, re-ask, call, response.
	if n := len(res.History); n != 5 || res.History[2].Role != genai.RoleUser {
		t.Errorf("History has %d contents; want 5 with the re-ask third", n)
	}
}

func TestRunTypedMaxReasks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		model     string
		maxReasks int
		replies   []*fake.Reply
		wantRaw   string
		wantWhy   string
		wantAsked int
	}{
		{"prose, tool strategy", model, 1,
			[]*fake.Reply{fake.Text("It is 42.50."), fake.Text("Still 42.50.")},
			"Still 42.50.", "the answer came as text; it must be given by calling final_answer", 1},
		{"invalid calls, tool strategy", model, 0, // the default: 2 re-asks
			[]*fake.Reply{finalAnswer(map[string]any{"total": 1.0}), finalAnswer(map[string]any{"total": 2.0}), finalAnswer(map[string]any{"total": 3.0})},
			`{"total":3}`, "invalid arguments", 2},
		{"invalid JSON, native", model3, -1, // no re-asks
			[]*fake.Reply{fake.Text(`{"customer":`)},
			`{"customer":`, "the answer is not valid JSON", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
				c.Model, c.Output.MaxReasks = tc.model, tc.maxReasks
			})
			srv.Enqueue(tc.replies...)
			got, res, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
			var oe *agent.OutputError
			if !errors.As(err, &oe) || !errors.Is(err, agent.ErrInvalidOutput) {
				t.Fatalf("RunTyped() error = %v; want an *OutputError", err)
			}
			if oe.Raw != tc.wantRaw || !strings.Contains(oe.Err.Error(), tc.wantWhy) || oe.Reasks != tc.wantAsked {
				t.Errorf("OutputError = raw %q, err %v, %d re-asks; want raw %q, err containing %q, %d re-asks",
					oe.Raw, oe.Err, oe.Reasks, tc.wantRaw, tc.wantWhy, tc.wantAsked)
			}
			if oe.Result != res || len(res.Turns) != len(tc.replies) || res.Output != nil || !cmp.Equal(got, invoice{}) {
				t.Errorf("Result %p (error's %p) with %d turns, Output %v, answer %+v; want the partial result, %d turns, no answer",
					res, oe.Result, len(res.Turns), res.Output, got, len(tc.replies))
			}
			if srv.Pending() != 0 || len(srv.Requests()) != len(tc.replies) {
				t.Errorf("%d requests, %d replies left; want exactly %d", len(srv.Requests()), srv.Pending(), len(tc.replies))
			}
		})
	}
}

func TestRunTypedLastTurnMustAnswer(t *testing.T) {
	for _, tc := range []struct {
		model  string
		answer *fake.Reply
		want   *genai.FunctionCallingConfig
	}{
		{model, finalAnswer(invoiceArgs()), &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"final_answer"}}},
		{model3, fake.Text(invoiceJSON), &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Model, c.MaxTurns = tc.model, 2 })
			srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})), tc.answer)
			if _, _, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME.")); err != nil {
				t.Fatalf("RunTyped() = %v", err)
			}
			reqs := srv.Requests()
			if fc := callingConfig(reqs[0]); fc != nil {
				t.Errorf("turn 0 calling config = %+v; want none", fc)
			}
			if diff := cmp.Diff(tc.want, callingConfig(reqs[1])); diff != "" {
				t.Errorf("last turn calling config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunTypedDefaultIsAccepted runs the default strategy on models the
// fake knows the rules of, and checks that no request is refused.
func TestRunTypedDefaultIsAccepted(t *testing.T) {
	for _, tc := range []struct {
		model   string
		backend genai.Backend
		want    string // "native" or "tool"
	}{
		{"gemini-2.0-flash", genai.BackendUnspecified, "tool"},
		{"gemini-2.5-flash", genai.BackendGeminiAPI, "tool"},
		{"gemini-2.5-pro", genai.BackendUnspecified, "tool"},
		{"gemini-3-flash-preview", genai.BackendUnspecified, "native"},
		{"gemini-3.5-flash", genai.BackendUnspecified, "native"},
		{"gemini-flash-latest", genai.BackendUnspecified, "tool"},
		{"gemini-3-pro-preview", genai.BackendVertexAI, "native"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			srv := newServer(t)
			srv.SetReplyFunc(func(req *fake.Request) *fake.Reply {
				if len(req.Contents) == 1 {
					return fake.Calls(fake.Call("get_weather", map[string]any{"city": "Rome"}))
				}
				if slicesContains(declared(req), "final_answer") {
					return finalAnswer(invoiceArgs())
				}
				return fake.Text(invoiceJSON)
			})
			a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
				c.Model, c.Backend = tc.model, tc.backend
			})
			got, _, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
			if err != nil || got.Total != 42.5 {
				t.Fatalf("RunTyped() = %+v, %v", got, err)
			}
			gc := srv.LastRequest().GenerationConfig
			native := gc != nil && gc.ResponseMIMEType == "application/json"
			if (tc.want == "native") != native {
				t.Errorf("native = %t; want the %s strategy", native, tc.want)
			}
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRunTypedForcedNativeRefused forces the native strategy where the
// Gemini API refuses it: every model call fails with the API's 400.
func TestRunTypedForcedNativeRefused(t *testing.T) {
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Output.Strategy = agent.OutputNative })
	_, res, err := agent.RunTyped[invoice](context.Background(), a, user("Bill ACME."))
	var me *agent.ModelError
	var ae genai.APIError
	if !errors.As(err, &me) || !errors.As(err, &ae) || ae.Code != http.StatusBadRequest ||
		ae.Message != "Function calling with a response mime type: 'application/json' is unsupported" {
		t.Fatalf("RunTyped() error = %v; want the API's 400", err)
	}
	if rej := srv.Rejections(); len(rej) != 1 || rej[0].Rule != "response-schema-with-tools" {
		t.Errorf("Rejections() = %+v; want one by response-schema-with-tools", rej)
	}
	if res == nil || len(res.History) != 1 {
		t.Errorf("Result = %+v; want the partial result holding the input", res)
	}
}

func TestRunTypedForcedToolWithOverrides(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Model = model3 }) // no tools: native by default
	srv.Enqueue(fake.Calls(fake.Call("submit", invoiceArgs())))
	b := a.With(agent.Overrides{Output: agent.OutputConfig{Strategy: agent.OutputTool, ToolName: "submit"}})
	got, _, err := agent.RunTyped[invoice](context.Background(), b, user("Bill ACME."))
	if err != nil || got.Customer != "ACME" {
		t.Fatalf("RunTyped() = %+v, %v", got, err)
	}
	if names := declared(srv.LastRequest()); !cmp.Equal(names, []string{"submit"}) {
		t.Errorf("declarations = %v; want only submit", names)
	}
}

func TestStreamTyped(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Model = model3 })
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})),
		fake.Text(`{"customer":"ACME"`).WithTextChunk(5), // cut: asked again
		fake.Text(invoiceJSON).WithTextChunk(7))
	var text strings.Builder
	var done *agent.Event
	kinds := map[agent.EventKind]int{}
	for e, err := range agent.StreamTyped[invoice](context.Background(), a, user("Bill ACME.")) {
		kinds[e.Kind]++
		switch e.Kind {
		case agent.EventText:
			if e.Turn == 2 {
				text.WriteString(e.Text)
			}
		case agent.EventDone:
			if err != nil {
				t.Fatalf("EventDone error = %v", err)
			}
			done = e
		}
	}
	if done == nil {
		t.Fatal("no EventDone")
	}
	got, ok := done.Result.Output.(invoice)
	if !ok || !cmp.Equal(got, wantInvoice) {
		t.Errorf("Result.Output = %#v; want the invoice", done.Result.Output)
	}
	if text.String() != invoiceJSON || kinds[agent.EventRetry] != 1 || kinds[agent.EventText] < 10 {
		t.Errorf("streamed %q with %d text events and %d retries; want the JSON in pieces and one re-ask", text.String(), kinds[agent.EventText], kinds[agent.EventRetry])
	}
}

func TestRunTypedErrors(t *testing.T) {
	srv := newServer(t)
	w := (&weatherTool{}).tool()
	if _, _, err := agent.RunTyped[invoice](context.Background(), nil, user("x")); err == nil {
		t.Error("RunTyped(nil agent) = nil error")
	}
	a := newAgent(t, srv, toolset.MustNew(w))
	if _, res, err := agent.RunTyped[chan int](context.Background(), a, user("x")); err == nil || !strings.Contains(err.Error(), "cannot infer its JSON Schema") || len(res.History) != 1 {
		t.Errorf("RunTyped[chan int]() = %v; want an inference error with the input in the result", err)
	}
	dup := a.With(agent.Overrides{Output: agent.OutputConfig{ToolName: "get_weather", Strategy: agent.OutputTool}})
	if _, _, err := agent.RunTyped[invoice](context.Background(), dup, user("x")); !errors.Is(err, toolset.ErrDuplicateTool) {
		t.Errorf("final-answer tool named like a tool: error %v; want ErrDuplicateTool", err)
	}
	if _, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Output: agent.OutputConfig{ToolName: "no spaces"}}); err == nil {
		t.Error("New with an invalid Output.ToolName = nil error")
	}
	if _, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Output: agent.OutputConfig{Strategy: 7}}); err == nil {
		t.Error("New with an unknown Output.Strategy = nil error")
	}
	for e, err := range agent.StreamTyped[func()](context.Background(), a, user("x")) {
		if e.Kind != agent.EventDone || err == nil {
			t.Errorf("StreamTyped[func()] yielded %v, %v; want EventDone with the inference error", e.Kind, err)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("%d requests; want none", len(srv.Requests()))
	}
}
