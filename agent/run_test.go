package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func TestRunTwoParallelCalls(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	paris := fake.Call("get_weather", map[string]any{"city": "Paris"})
	paris.ID = "call-a"
	tokyo := fake.Call("get_weather", map[string]any{"city": "Tokyo"})
	tokyo.ID = "call-b"
	srv.Enqueue(fake.Calls(paris, tokyo), fake.Text("Sunny in Paris and Tokyo."))

	in := user("Weather in Paris and Tokyo?")
	res, err := a.Run(context.Background(), in)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if res.Text != "Sunny in Paris and Tokyo." || res.FinishReason != genai.FinishReasonStop {
		t.Errorf("Text, FinishReason = %q, %q", res.Text, res.FinishReason)
	}
	if got := w.calls.Load(); got != 2 {
		t.Errorf("tool ran %d times, want 2", got)
	}
	// History: input, model calls, tool answers, final answer.
	if len(res.History) != 4 || res.History[0] != in[0] {
		t.Fatalf("History has %d contents, want 4 starting with the input", len(res.History))
	}
	roles := []string{res.History[1].Role, res.History[2].Role, res.History[3].Role}
	if !reflect.DeepEqual(roles, []string{"model", "user", "model"}) {
		t.Errorf("roles = %v", roles)
	}
	want := []*genai.FunctionResponse{
		{ID: "call-a", Name: "get_weather", Response: map[string]any{"result": "sunny in Paris"}},
		{ID: "call-b", Name: "get_weather", Response: map[string]any{"result": "sunny in Tokyo"}},
	}
	if diff := cmp.Diff(want, responses(res.History[2])); diff != "" {
		t.Errorf("tool turn (-want +got):\n%s", diff)
	}
	// The second request carried exactly that history, with the answers in ONE user content.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if diff := cmp.Diff(want, responses(reqs[1].Contents[2])); diff != "" {
		t.Errorf("answers sent (-want +got):\n%s", diff)
	}
	if len(res.Turns) != 2 || len(res.Turns[0].Calls) != 2 || len(res.Turns[0].Results) != 2 || res.Turns[0].Results[1].Output != "sunny in Tokyo" {
		t.Errorf("Turns = %+v", res.Turns)
	}
	if res.Usage.TotalTokens == 0 || res.Usage.TotalTokens != res.Turns[0].Usage.TotalTokens+res.Turns[1].Usage.TotalTokens {
		t.Errorf("Usage = %+v, turns %+v %+v", res.Usage, res.Turns[0].Usage, res.Turns[1].Usage)
	}
}

func TestRunCallsRunConcurrently(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{release: make(chan struct{}), started: make(chan string, 8)}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.MaxParallel = 3 })
	srv.Enqueue(fake.Calls(cities(8)...), fake.Text("done"))

	errc := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), user("go"))
		errc <- err
	}()
	for i := 0; i < 3; i++ { // three calls start before any returns...
		<-w.started
	}
	select {
	case c := <-w.started: // ...and a fourth cannot, with MaxParallel 3
		t.Errorf("call for %s started past MaxParallel", c)
	case <-time.After(20 * time.Millisecond):
	}
	close(w.release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := w.peak.Load(); got != 3 {
		t.Errorf("peak in-flight calls = %d, want 3 (MaxParallel)", got)
	}
	got := lastResponses(t, srv)
	for i, r := range got {
		if want := fmt.Sprintf("sunny in city-%d", i); r.Response["result"] != want {
			t.Errorf("response %d = %v, want %q (call order)", i, r.Response, want)
		}
	}
}

func TestRunDefaultParallelism(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{release: make(chan struct{}), started: make(chan string, 16)}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	srv.Enqueue(fake.Calls(cities(12)...), fake.Text("done"))
	errc := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), user("go"))
		errc <- err
	}()
	for i := 0; i < agent.DefaultMaxParallel; i++ {
		<-w.started
	}
	close(w.release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := w.peak.Load(); got != agent.DefaultMaxParallel {
		t.Errorf("peak = %d, want %d", got, agent.DefaultMaxParallel)
	}
}

func TestRunIDsEchoedNeverInvented(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	withID := fake.Call("get_weather", map[string]any{"city": "A"})
	withID.ID = "x-1"
	srv.Enqueue(fake.Calls(withID, fake.Call("get_weather", map[string]any{"city": "B"})), fake.Text("ok"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	got := lastResponses(t, srv)
	if got[0].ID != "x-1" || got[1].ID != "" {
		t.Errorf("ids = %q, %q; want x-1 and none", got[0].ID, got[1].ID)
	}
}

func TestRunToolFailuresGoBackToTheModel(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	boom := tool("boom", func(context.Context, map[string]any) (any, error) { panic("kaboom") })
	fails := tool("fails", func(context.Context, map[string]any) (any, error) { return nil, errors.New("disk full") })
	slow := tool("slow", func(ctx context.Context, _ map[string]any) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	a := newAgent(t, srv, toolset.MustNew(w.tool(), boom, fails, slow), func(c *agent.Config) { c.ToolTimeout = 30 * time.Millisecond })
	srv.Enqueue(fake.Calls(
		fake.Call("get_weather", map[string]any{"city": "Paris"}),
		fake.Call("get_weather", map[string]any{"city": 42.0}),
		fake.Call("nope", nil),
		fake.Call("boom", nil),
		fake.Call("fails", nil),
		fake.Call("slow", nil),
		fake.Call("", nil),
	), fake.Text("sorted"))
	res, err := a.Run(context.Background(), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"result": "sunny in Paris"},
		{"error": `invalid arguments for get_weather: argument "city": 42 has type "integer", want "string"`},
		{"error": `unknown tool "nope"; available tools: get_weather, boom, fails, slow`},
		{"error": "tool boom failed: it panicked: kaboom"},
		{"error": "disk full"},
		{"error": "tool slow was stopped: tool call timed out after 30ms"},
		{"error": `unknown tool ""; available tools: get_weather, boom, fails, slow`},
	}
	got := lastResponses(t, srv)
	for i := range want {
		if diff := cmp.Diff(want[i], got[i].Response); diff != "" {
			t.Errorf("response %d (-want +got):\n%s", i, diff)
		}
	}
	results := res.Turns[0].Results
	if !errors.Is(results[2].Err, agent.ErrUnknownTool) || !errors.Is(results[5].Err, agent.ErrToolTimeout) {
		t.Errorf("Err of unknown = %v, of timeout = %v", results[2].Err, results[5].Err)
	}
	var pe *toolset.PanicError
	if !errors.As(results[3].Err, &pe) || len(pe.Stack) == 0 {
		t.Errorf("Err of panic = %v, want *toolset.PanicError with a stack", results[3].Err)
	}
}

func TestRunCapsCallsPerTurn(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.MaxCallsPerTurn = 3 })
	srv.Enqueue(fake.Calls(cities(5)...), fake.Text("ok"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	if got := w.calls.Load(); got != 3 {
		t.Errorf("tool ran %d times, want 3 (the cap)", got)
	}
	got := lastResponses(t, srv)
	if len(got) != 5 {
		t.Fatalf("%d responses, want one per call (5)", len(got))
	}
	want := "not run: 5 function calls came in one turn and at most 3 are run per turn; call again with fewer"
	if got[2].Response["result"] != "sunny in city-2" || got[3].Response["error"] != want || got[4].Response["error"] != want {
		t.Errorf("responses = %v %v %v", got[2].Response, got[3].Response, got[4].Response)
	}
}

func TestRunDefaultCallCap(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	srv.Enqueue(fake.Calls(cities(agent.DefaultMaxCallsPerTurn+6)...), fake.Text("ok"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	if got := w.calls.Load(); got != agent.DefaultMaxCallsPerTurn {
		t.Errorf("tool ran %d times, want %d", got, agent.DefaultMaxCallsPerTurn)
	}
	if got := lastResponses(t, srv); len(got) != agent.DefaultMaxCallsPerTurn+6 {
		t.Errorf("%d responses, want %d", len(got), agent.DefaultMaxCallsPerTurn+6)
	}
}

func TestRunMaxTurns(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.MaxTurns = 3 })
	for i := 0; i < 3; i++ {
		srv.Enqueue(fake.Calls(cities(1)...))
	}
	res, err := a.Run(context.Background(), user("loop forever"))
	if !errors.Is(err, agent.ErrMaxTurns) {
		t.Fatalf("Run() = %v, want ErrMaxTurns", err)
	}
	if res == nil || len(res.Turns) != 3 || len(res.History) != 7 {
		t.Fatalf("partial result: %d turns, %d contents; want 3 and 7", len(res.Turns), len(res.History))
	}
	// The last turn's calls were answered, so the history continues.
	if last := res.History[6]; last.Role != "user" || len(responses(last)) != 1 {
		t.Errorf("history ends with %+v, want the answers to the last calls", last)
	}
	srv.Enqueue(fake.Text("finally"))
	more, err := a.Run(context.Background(), res.History)
	if err != nil || more.Text != "finally" {
		t.Errorf("continuing = %q, %v", more.Text, err)
	}
}

func TestRunDefaultMaxTurns(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Calls(cities(1)...) })
	_, err := a.Run(context.Background(), user("loop"))
	if !errors.Is(err, agent.ErrMaxTurns) || len(srv.Requests()) != agent.DefaultMaxTurns {
		t.Errorf("Run() = %v after %d requests; want ErrMaxTurns after %d", err, len(srv.Requests()), agent.DefaultMaxTurns)
	}
}

func TestRunWithoutTools(t *testing.T) {
	srv := newServer(t)
	cfg := &genai.GenerateContentConfig{
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
	}
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.GenerateConfig = cfg })
	srv.Enqueue(fake.Text("Hello!"))
	res, err := a.Run(context.Background(), user("hi"))
	if err != nil || res.Text != "Hello!" {
		t.Fatalf("Run() = %v, %v", res, err)
	}
	req := srv.LastRequest()
	if req.Tools != nil || req.ToolConfig != nil || strings.Contains(string(req.Body), `"tools"`) {
		t.Errorf("request sent tools %v / tool config %v: %s", req.Tools, req.ToolConfig, req.Body)
	}
}

func TestRunKeepsCallerValuesIntact(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	sys := &genai.Content{Parts: []*genai.Part{{Text: "Be brief."}}} // no role: the SDK would write one in
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: sys,
		Temperature:       genai.Ptr[float32](0.2),
		HTTPOptions:       &genai.HTTPOptions{},
		Tools:             []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}},
	}
	before, _ := json.Marshal(cfg)
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.GenerateConfig = cfg })
	in := user("weather?")
	in = append(in[:1:1], genai.NewContentFromText("in Paris", genai.RoleUser))
	inCopy := append([]*genai.Content(nil), in...)
	srv.Enqueue(fake.Calls(cities(1)...), fake.Text("ok"))
	if _, err := a.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(cfg)
	if string(before) != string(after) || sys.Role != "" || cfg.HTTPOptions.Headers != nil || len(cfg.Tools) != 1 {
		t.Errorf("config modified:\n%s\n%s", before, after)
	}
	if !reflect.DeepEqual(in, inCopy) || cap(in) != 2 {
		t.Error("input slice modified")
	}
	req := srv.LastRequest()
	if req.SystemInstruction == nil || req.SystemInstruction.Parts[0].Text != "Be brief." || len(req.Tools) != 2 ||
		req.GenerationConfig == nil || req.GenerationConfig.Temperature == nil {
		t.Errorf("request lost the caller's config: %s", req.Body)
	}
}

// The model's content goes into the history exactly as received: thought
// parts, signatures, text beside calls, all in order.
func TestRunKeepsModelContentExactly(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	call := fake.Call("get_weather", map[string]any{"city": "Oslo"})
	parts := []*genai.Part{
		{Text: "thinking about Oslo", Thought: true, ThoughtSignature: []byte("sig-thought")},
		{Text: "Let me look."},
		{FunctionCall: call, ThoughtSignature: []byte("sig-call")},
		{ThoughtSignature: []byte("sig-trailing")},
	}
	srv.Enqueue(fake.Parts(parts...), fake.Text("Cold."))
	res, err := a.Run(context.Background(), user("Oslo?"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(parts, res.History[1].Parts); diff != "" {
		t.Errorf("model turn in history (-want +got):\n%s", diff)
	}
	sent := srv.Requests()[1].Contents[1].Parts
	if diff := cmp.Diff(parts, sent); diff != "" {
		t.Errorf("model turn sent back (-want +got):\n%s", diff)
	}
}

// On a gemini-3 model the fake demands signatures: a whole conversation,
// marshalled to JSON and back, continues with one more user message.
func TestRunHistoryJSONRoundTripGemini3(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Model = model3 })
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Rome"})),
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})),
		fake.Text("Paris and Rome are sunny, Oslo too."),
	)
	res, err := a.Run(context.Background(), user("Paris, Rome, then Oslo?"))
	if err != nil {
		t.Fatal(err)
	}
	first := res.History[1].Parts[0]
	if first.FunctionCall.ID == "" || len(first.ThoughtSignature) == 0 {
		t.Fatalf("gemini-3 call lacks id or signature: %+v", first)
	}
	data, err := json.Marshal(res.History)
	if err != nil {
		t.Fatal(err)
	}
	var history []*genai.Content
	if err := json.Unmarshal(data, &history); err != nil {
		t.Fatal(err)
	}
	history = append(history, genai.NewContentFromText("And Berlin?", genai.RoleUser))
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Berlin"})), fake.Text("Berlin too."))
	more, err := a.Run(context.Background(), history)
	if err != nil || more.Text != "Berlin too." {
		t.Fatalf("continued Run() = %v, %v", more, err)
	}
	if got := string(srv.Requests()[3].Contents[1].Parts[0].ThoughtSignature); got != string(first.ThoughtSignature) {
		t.Errorf("signature after the round trip = %q, want %q", got, first.ThoughtSignature)
	}
	// Newer requests carry the whole conversation, old signatures included.
	if n := len(srv.LastRequest().Contents); n != len(history)+2 {
		t.Errorf("last request has %d contents, want %d", n, len(history)+2)
	}
}

func TestRunPackageFunc(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("hi"))
	res, err := agent.Run(context.Background(), agent.Config{Models: srv.Client().Models, Model: model}, user("hello"))
	if err != nil || res.Text != "hi" {
		t.Errorf("agent.Run() = %v, %v", res, err)
	}
	res, err = agent.Run(context.Background(), agent.Config{Model: model}, user("hello"))
	if err == nil || res == nil || len(res.History) != 1 {
		t.Errorf("agent.Run(no Models) = %v, %v; want an error and the input as history", res, err)
	}
}

func TestNewErrors(t *testing.T) {
	srv := newServer(t)
	models := srv.Client().Models
	type mapIn struct {
		M map[string]int `json:"m"`
	}
	for _, tc := range []struct {
		name string
		cfg  agent.Config
		want string
	}{
		{"no models", agent.Config{Model: model}, "Config.Models is nil"},
		{"no model", agent.Config{Models: models}, "Config.Model is empty"},
		{"negative", agent.Config{Models: models, Model: model, MaxTurns: -1}, "negative limit"},
		{"negative timeout", agent.Config{Models: models, Model: model, ToolTimeout: -time.Second}, "negative limit"},
	} {
		if _, err := agent.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s) = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A tool the adapter cannot declare fails in New, not per turn: here a
	// map field with ForceJSONSchema off is fine (it falls back)...
	m := toolset.MustFunc("m", "map", func(context.Context, mapIn) (string, error) { return "", nil })
	if _, err := agent.New(agent.Config{Models: models, Model: model, Tools: toolset.MustNew(m)}); err != nil {
		t.Errorf("New(map tool) = %v", err)
	}
}

// The history holds the model's arguments as it sent them, although the
// tool's schema fills in nested defaults; an observer that keeps a call
// and reads it later races with nothing (-race checks).
func TestRunHistoryKeepsTheModelsArgs(t *testing.T) {
	srv := newServer(t)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"city": {Type: "string"},
		"opts": {Type: "object", Properties: map[string]*jsonschema.Schema{"unit": {Type: "string", Default: json.RawMessage(`"celsius"`)}}},
	}}
	var unit atomic.Value
	weather := toolset.MustDefine(toolset.Tool{Name: "get_weather", InputSchema: schema,
		Run: func(_ context.Context, args map[string]any) (any, error) {
			unit.Store(args["opts"].(map[string]any)["unit"])
			time.Sleep(5 * time.Millisecond) // the observer reads meanwhile
			return "sunny", nil
		}})
	var wg sync.WaitGroup
	defer wg.Wait()
	keep := agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
		if e.Kind == agent.EventToolCall {
			wg.Go(func() {
				for range 50 {
					_, _ = json.Marshal(e.Call)
				}
			})
		}
	})
	a := newAgent(t, srv, toolset.MustNew(weather), func(c *agent.Config) { c.Observer = keep })
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris", "opts": map[string]any{}})), fake.Text("ok"))
	res, err := a.Run(context.Background(), user("weather?"))
	if err != nil {
		t.Fatal(err)
	}
	if unit.Load() != "celsius" {
		t.Errorf("the tool saw unit %v, want the default", unit.Load())
	}
	got, _ := json.Marshal(res.History[1].Parts[0].FunctionCall.Args)
	if want := `{"city":"Paris","opts":{}}`; string(got) != want {
		t.Errorf("History[1] args = %s, want what the model sent: %s", got, want)
	}
	sent := srv.LastRequest().Contents[1].Parts[0].FunctionCall.Args
	if b, _ := json.Marshal(sent); string(b) != `{"city":"Paris","opts":{}}` {
		t.Errorf("the next request sent the call back as %s", b)
	}
}

// With more calls than MaxParallel, each result is reported as its call
// completes: the run's goroutine never waits for queued calls to start.
func TestRunReportsResultsBeforeQueuedCallsStart(t *testing.T) {
	srv := newServer(t)
	release := make(map[string]chan struct{})
	for i := range 16 {
		release[fmt.Sprintf("city-%d", i)] = make(chan struct{})
	}
	slow := toolset.MustFunc("get_weather", "weather", func(ctx context.Context, in weatherIn) (string, error) {
		select {
		case <-release[in.City]:
			return "sunny in " + in.City, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	first := make(chan int, 16)
	obs := agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
		if e.Kind == agent.EventToolResult {
			first <- e.Index
		}
	})
	a := newAgent(t, srv, toolset.MustNew(slow), func(c *agent.Config) { c.MaxParallel = 2; c.Observer = obs })
	srv.Enqueue(fake.Calls(cities(16)...), fake.Text("done"))
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), user("go"))
		done <- err
	}()
	close(release["city-0"])
	select {
	case i := <-first:
		if i != 0 {
			t.Errorf("first result for call %d, want 0", i)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no result reported while 15 calls wait: results wait for every call to start")
	}
	for i := 1; i < 16; i++ {
		close(release[fmt.Sprintf("city-%d", i)])
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With more calls than MaxParallel, queued calls start in call order, each
// as a slot frees up, whichever call freed it: the slot freed by call 1
// goes to call 2, the one freed by call 0 to call 3, and so on.
func TestRunQueuedCallsStartInOrder(t *testing.T) {
	for _, observed := range []bool{false, true} {
		t.Run(fmt.Sprintf("observed=%v", observed), func(t *testing.T) {
			const n = 8
			srv := newServer(t)
			release := make([]chan struct{}, n)
			for i := range release {
				release[i] = make(chan struct{})
			}
			started := make(chan int, n)
			gated := toolset.MustFunc("get_weather", "weather", func(ctx context.Context, in weatherIn) (string, error) {
				var i int
				fmt.Sscanf(in.City, "city-%d", &i)
				started <- i
				select {
				case <-release[i]:
					return "sunny in " + in.City, nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			})
			a := newAgent(t, srv, toolset.MustNew(gated), func(c *agent.Config) {
				c.MaxParallel = 2
				if observed {
					c.Observer = &eventLog{}
				}
			})
			srv.Enqueue(fake.Calls(cities(n)...), fake.Text("done"))
			errc := make(chan error, 1)
			go func() {
				_, err := a.Run(context.Background(), user("go"))
				errc <- err
			}()
			wait := func() int {
				t.Helper()
				select {
				case i := <-started:
					return i
				case <-time.After(10 * time.Second):
					t.Fatal("no call started") // hang guard
					return -1
				}
			}
			if a, b := wait(), wait(); a+b != 1 {
				t.Fatalf("the first calls to start were %d and %d, want 0 and 1", a, b)
			}
			// Free the slots in an order of their own: each must go to the
			// next call in call order.
			for next, free := 2, []int{1, 0, 3, 2, 5, 4}; next < n; next++ {
				close(release[free[next-2]])
				if got := wait(); got != next {
					t.Fatalf("call %d started when call %d returned; want call %d, the next in call order", got, free[next-2], next)
				}
			}
			close(release[6])
			close(release[7])
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A run cancelled while calls wait for a slot returns at once: the queued
// calls do not run their tool, even when the calls that hold the slots
// ignore their context.
func TestRunCancelledWithQueuedCalls(t *testing.T) {
	for _, observed := range []bool{false, true} {
		t.Run(fmt.Sprintf("observed=%v", observed), func(t *testing.T) {
			srv := newServer(t)
			var ran atomic.Int32
			started, release := make(chan struct{}, 8), make(chan struct{})
			var returned sync.WaitGroup
			stubborn := toolset.MustFunc("get_weather", "weather", func(ctx context.Context, in weatherIn) (string, error) {
				returned.Add(1)
				defer returned.Done()
				ran.Add(1)
				started <- struct{}{}
				<-release // ignores its context
				return "late", nil
			})
			log := &eventLog{}
			a := newAgent(t, srv, toolset.MustNew(stubborn), func(c *agent.Config) {
				c.MaxParallel = 1
				if observed {
					c.Observer = log
				}
			})
			srv.Enqueue(fake.Calls(cities(5)...))
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-started
				cancel()
			}()
			type outcome struct {
				res *agent.Result
				err error
			}
			out := make(chan outcome, 1)
			go func() {
				res, err := a.Run(ctx, user("go"))
				out <- outcome{res, err}
			}()
			var o outcome
			select {
			case o = <-out:
			case <-time.After(10 * time.Second):
				close(release)
				t.Fatal("the cancelled run did not return: it waits for its queued calls") // hang guard
			}
			if !errors.Is(o.err, context.Canceled) {
				t.Errorf("Run() = %v, want Canceled", o.err)
			}
			if got := ran.Load(); got != 1 {
				t.Errorf("%d calls ran their tool; want 1: the queued ones must not start once the run is cancelled", got)
			}
			if len(o.res.Turns) != 1 || len(o.res.Turns[0].Results) != 5 {
				t.Fatalf("Turns = %+v, want one turn answering the 5 calls", o.res.Turns)
			}
			for i, r := range o.res.Turns[0].Results {
				if !r.IsError || !errors.Is(r.Err, context.Canceled) {
					t.Errorf("result %d = %+v, want a cancelled call", i, r.Result)
				}
			}
			if observed {
				if got := len(log.of(agent.EventToolResult)); got != 5 {
					t.Errorf("%d EventToolResult events, want 5", got)
				}
			}
			close(release)
			returned.Wait()
		})
	}
}
