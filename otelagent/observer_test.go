package otelagent_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

// A run is one invoke_agent span holding a generate_content span per model
// call and an execute_tool span per tool call; the HTTP span of the
// otelhttp-wrapped client nests under its model call, and a span a tool
// starts nests under the tool's span, all in one trace.
func TestSpanTree(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv, tel := newServer(t), newTelemetry(t)
			client := tracedClient(t, srv, "")
			a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(weather),
				Observer: tel.observer(srv, otelagent.WithAgentName("forecaster"))})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(fake.Calls(call("Paris"), call("Tokyo")), fake.Text("Sunny in both."))
			if _, err := run(context.Background(), a, stream, user("Weather in Paris and Tokyo?")); err != nil {
				t.Fatal(err)
			}
			spans := tel.ended(t)
			want := `invoke_agent forecaster
  generate_content gemini-3-flash-preview
    HTTP POST
  execute_tool get_weather
    lookup Paris
  execute_tool get_weather
    lookup Tokyo
  generate_content gemini-3-flash-preview
    HTTP POST
`
			if diff := cmp.Diff(want, tree(spans)); diff != "" {
				t.Errorf("span tree (-want +got):\n%s", diff)
			}
			traceID := spans[0].SpanContext().TraceID()
			for _, s := range spans {
				if s.SpanContext().TraceID() != traceID {
					t.Errorf("span %q is in trace %v, not the run's %v", s.Name(), s.SpanContext().TraceID(), traceID)
				}
			}

			_, port, _ := net.SplitHostPort(srv.URL[len("http://"):])
			runSpan := named(spans, "invoke_agent forecaster")[0]
			if runSpan.SpanKind() != trace.SpanKindInternal || runSpan.Status().Code == codes.Error {
				t.Errorf("run span: kind %v, status %v; want internal, not an error", runSpan.SpanKind(), runSpan.Status())
			}
			checkAttrs(t, runSpan, map[string]any{
				"gen_ai.operation.name":          "invoke_agent",
				"gen_ai.provider.name":           "gcp.gemini",
				"gen_ai.agent.name":              "forecaster",
				"gen_ai.request.model":           model,
				"gen_ai.response.finish_reasons": "[stop]",
				"error.type":                     nil,
				"gen_ai.input.messages":          nil,
			})
			calls := named(spans, "generate_content "+model)
			wantStream := any(nil)
			if stream {
				wantStream = true
			}
			for i, s := range calls {
				if s.SpanKind() != trace.SpanKindClient {
					t.Errorf("model call %d: kind %v, want client", i, s.SpanKind())
				}
				checkAttrs(t, s, map[string]any{
					"gen_ai.operation.name":  "generate_content",
					"gen_ai.provider.name":   "gcp.gemini",
					"gen_ai.request.model":   model,
					"gen_ai.response.model":  model,
					"server.address":         "127.0.0.1",
					"server.port":            port,
					"gen_ai.request.stream":  wantStream,
					"gen_ai.input.messages":  nil,
					"gen_ai.output.messages": nil,
				})
				if strAttr(s, "gen_ai.response.id") == "" {
					t.Errorf("model call %d has no gen_ai.response.id", i)
				}
				a := attrs(s)
				if in, out := a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]; in == nil || out == nil || in.(int64) <= 0 || out.(int64) <= 0 {
					t.Errorf("model call %d: usage %v in, %v out; want both counted", i, in, out)
				}
				_, ttfc := a["gen_ai.response.time_to_first_chunk"]
				if stream && i == 1 && !ttfc {
					t.Errorf("streamed text answer has no gen_ai.response.time_to_first_chunk")
				}
				if !stream && ttfc {
					t.Errorf("unary call has gen_ai.response.time_to_first_chunk")
				}
			}
			checkAttrs(t, calls[0], map[string]any{"gen_ai.response.finish_reasons": "[tool_call]"})
			checkAttrs(t, calls[1], map[string]any{"gen_ai.response.finish_reasons": "[stop]"})

			for _, s := range named(spans, "execute_tool get_weather") {
				if s.SpanKind() != trace.SpanKindInternal || s.Status().Code == codes.Error {
					t.Errorf("tool span: kind %v, status %v; want internal, not an error", s.SpanKind(), s.Status())
				}
				checkAttrs(t, s, map[string]any{
					"gen_ai.operation.name":      "execute_tool",
					"gen_ai.tool.name":           "get_weather",
					"gen_ai.tool.type":           "function",
					"gen_ai.tool.description":    "Current weather for a city",
					"gen_ai.tool.call.arguments": nil,
					"gen_ai.tool.call.result":    nil,
				})
				if strAttr(s, "gen_ai.tool.call.id") == "" {
					t.Errorf("tool span has no gen_ai.tool.call.id")
				}
			}
		})
	}
}

// The attributes samplers read are there when the span starts.
func TestSamplingAttributesAtStart(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	sampler := &recordingSampler{seen: map[string]map[string]any{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		Observer: tel.observer(srv, otelagent.WithTracerProvider(tp))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	if _, err := a.Run(context.Background(), user("Paris?")); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.URL[len("http://"):])
	want := map[string]map[string]any{
		"invoke_agent": {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "gcp.gemini", "gen_ai.request.model": model},
		"generate_content " + model: {"gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gcp.gemini",
			"gen_ai.request.model": model, "server.address": "127.0.0.1", "server.port": port},
		"execute_tool get_weather": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"},
	}
	for name, attrs := range want {
		got, ok := sampler.get(name)
		if !ok {
			t.Errorf("the sampler saw no span %q", name)
			continue
		}
		for k, v := range attrs {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("span %q at start: %s = %v, want %v", name, k, got[k], v)
			}
		}
	}
}

// recordingSampler samples every span and keeps the attributes each span
// name started with.
type recordingSampler struct {
	mu   sync.Mutex
	seen map[string]map[string]any
}

func (s *recordingSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	m := map[string]any{}
	for _, kv := range p.Attributes {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	s.mu.Lock()
	s.seen[p.Name] = m
	s.mu.Unlock()
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (s *recordingSampler) get(name string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.seen[name]
	return m, ok
}

func (*recordingSampler) Description() string { return "recordingSampler" }

// Retries are one span per attempt: the failed one ends with its error and
// an event saying when the next attempt comes and why.
func TestRetry(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Retry: fastRetry, Observer: tel.observer(srv)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Error(503, "overloaded"), fake.Text("hi"))
	if _, err := a.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	spans := tel.ended(t)
	calls := named(spans, "generate_content "+model)
	if len(calls) != 2 {
		t.Fatalf("%d model call spans, want 2:\n%s", len(calls), tree(spans))
	}
	failed := calls[0]
	if failed.Status().Code != codes.Error {
		t.Errorf("failed attempt: status %v, want error", failed.Status())
	}
	checkAttrs(t, failed, map[string]any{"error.type": "503", "gen_ai.response.id": nil})
	if n := len(failed.Events()); n != 1 || failed.Events()[0].Name != "retry" {
		t.Fatalf("failed attempt events = %v, want one retry event", failed.Events())
	}
	ev := map[string]any{}
	for _, kv := range failed.Events()[0].Attributes {
		ev[string(kv.Key)] = kv.Value.AsInterface()
	}
	if ev["error.type"] != "503" || ev["toolnexus.retry.attempt"] != int64(1) || ev["toolnexus.retry.delay"] == nil {
		t.Errorf("retry event attributes = %v; want error.type 503, attempt 1, a delay", ev)
	}
	checkAttrs(t, calls[1], map[string]any{"error.type": nil, "gen_ai.response.finish_reasons": "[stop]"})
	if calls[1].Status().Code == codes.Error {
		t.Errorf("second attempt: status %v, want no error", calls[1].Status())
	}
}

// A model call that fails for good has no event of its own: its span ends
// with the run's error, and so does the run's.
func TestModelFailure(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv, tel := newServer(t), newTelemetry(t)
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Observer: tel.observer(srv)})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(fake.Error(400, "bad request"))
			if _, err := run(context.Background(), a, stream, user("hi")); err == nil {
				t.Fatal("run succeeded, want the 400")
			}
			spans := tel.ended(t)
			for _, name := range []string{"generate_content " + model, "invoke_agent"} {
				s := named(spans, name)
				if len(s) != 1 {
					t.Fatalf("%d %q spans, want 1", len(s), name)
				}
				if s[0].Status().Code != codes.Error {
					t.Errorf("%s: status %v, want error", name, s[0].Status())
				}
				checkAttrs(t, s[0], map[string]any{"error.type": "400"})
			}
		})
	}
}

// A tool's error result is an error on its span; an unknown tool and a
// denied call say so.
func TestToolErrors(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	broken := toolset.MustDefine(toolset.Tool{Name: "broken", Description: "always fails",
		Run: func(context.Context, map[string]any) (any, error) { return nil, errors.New("disk on fire") }})
	guarded := toolset.MustDefine(toolset.Tool{Name: "guarded", Description: "needs approval",
		Run: func(context.Context, map[string]any) (any, error) { return "ran", nil }})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(broken, guarded),
		Observer: tel.observer(srv),
		Intercept: func(_ context.Context, c *genai.FunctionCall) *toolset.Result {
			if c.Name == "guarded" {
				return agent.Deny("not today")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(fake.Call("broken", nil), fake.Call("missing", nil), fake.Call("guarded", nil)), fake.Text("sorry"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	spans := tel.ended(t)
	for _, tc := range []struct {
		name, errType, status string
	}{
		{"execute_tool broken", "_OTHER", "disk on fire"},
		{"execute_tool missing", "unknown_tool", `agent: unknown tool "missing"`},
		{"execute_tool guarded", "denied", "agent: tool call denied: not today"},
	} {
		s := named(spans, tc.name)
		if len(s) != 1 {
			t.Errorf("%d %q spans, want 1", len(s), tc.name)
			continue
		}
		if got := s[0].Status(); got.Code != codes.Error || got.Description != tc.status {
			t.Errorf("%s: status %v, want error %q", tc.name, got, tc.status)
		}
		checkAttrs(t, s[0], map[string]any{"error.type": tc.errType})
	}
	if run := named(spans, "invoke_agent")[0]; run.Status().Code == codes.Error {
		t.Errorf("run span status %v: failed tools do not fail the run", run.Status())
	}
}

// Every span ends when a run is cancelled, during a model call or a tool
// call, or when a Stream consumer stops, with the reason.
func TestRunsCutShort(t *testing.T) {
	block := toolset.MustFunc("block", "waits for the end of the run", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	for _, tc := range []struct {
		name     string
		stream   bool
		replies  []*fake.Reply
		cancelAt agent.EventKind // the run is cancelled a little after this event
		errType  string
		open     string // the span that was in progress
	}{
		{
			name: "cancelled during the model call", cancelAt: agent.EventModelRequest,
			replies: []*fake.Reply{fake.Text("late").WithDelay(time.Minute)},
			errType: "canceled", open: "generate_content " + model,
		},
		{
			name: "cancelled during a tool call", cancelAt: agent.EventToolCall,
			replies: []*fake.Reply{fake.Calls(fake.Call("block", nil))},
			errType: "canceled", open: "execute_tool block",
		},
		{
			name: "stream consumer stops mid-answer", stream: true,
			replies: []*fake.Reply{withEventDelay(fake.Text("one two three four").WithTextChunk(4), time.Millisecond)},
			errType: "stopped", open: "generate_content " + model,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tel := newServer(t), newTelemetry(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			canceller := agent.ObserverFunc(func(_ context.Context, ev *agent.Event) {
				if ev.Kind == tc.cancelAt {
					time.AfterFunc(20*time.Millisecond, cancel)
				}
			})
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(block),
				Observer: agent.Observers(tel.observer(srv), canceller)})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(tc.replies...)
			if tc.stream {
				for ev := range a.Stream(ctx, user("go")) {
					if ev.Kind == agent.EventText {
						break
					}
				}
			} else if _, err := a.Run(ctx, user("go")); err == nil {
				t.Fatal("Run succeeded, want it cut short")
			}
			spans := tel.ended(t)
			for _, name := range []string{tc.open, "invoke_agent"} {
				s := named(spans, name)
				if len(s) != 1 {
					t.Fatalf("%d %q spans, want 1:\n%s", len(s), name, tree(spans))
				}
				if s[0].Status().Code != codes.Error {
					t.Errorf("%s: status %v, want error", name, s[0].Status())
				}
				checkAttrs(t, s[0], map[string]any{"error.type": tc.errType})
			}
		})
	}
}

// Concurrent runs of one Agent keep their spans apart: each run is a trace
// of its own, holding exactly its own model and tool calls.
func TestConcurrentRuns(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	srv.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		last := req.Contents[len(req.Contents)-1]
		if last.Parts[0].FunctionResponse != nil {
			return fake.Text("done")
		}
		return fake.Calls(call(last.Parts[0].Text))
	})
	a, err := agent.New(agent.Config{Models: tracedClient(t, srv, "").Models, Model: model, Tools: toolset.MustNew(weather),
		Observer: tel.observer(srv, otelagent.WithCaptureContent(true))})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 16
	errs := make(chan error, runs)
	for i := range runs {
		go func() {
			_, err := run(context.Background(), a, i%2 == 1, user("city-"+strconv.Itoa(i)))
			errs <- err
		}()
	}
	for range runs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	spans := tel.ended(t)
	byTrace := map[trace.TraceID][]string{}
	for _, s := range spans {
		byTrace[s.SpanContext().TraceID()] = append(byTrace[s.SpanContext().TraceID()], s.Name())
	}
	if len(byTrace) != runs {
		t.Fatalf("%d traces, want %d", len(byTrace), runs)
	}
	for _, root := range named(spans, "invoke_agent") {
		id := root.SpanContext().TraceID()
		var mine []string
		for _, s := range spans {
			if s.SpanContext().TraceID() == id {
				mine = append(mine, s.Name())
			}
		}
		city := ""
		for _, s := range spans {
			if s.SpanContext().TraceID() == id && s.Name() == "execute_tool get_weather" {
				city = strAttr(s, "gen_ai.tool.call.arguments")
			}
		}
		in := strAttr(root, "gen_ai.input.messages")
		want := `{"city":"` + cityOf(in) + `"}`
		if city != want {
			t.Errorf("run asking %s: its tool call has arguments %s, want %s", in, city, want)
		}
		if len(mine) != 7 { // run, 2 model calls and their HTTP spans, a tool call and its lookup
			t.Errorf("trace of run %s has %d spans, want 7: %v", in, len(mine), mine)
		}
	}
}

// cityOf returns the city-N in a run's input messages.
func cityOf(inputMessages string) string {
	i := len(`[{"role":"user","parts":[{"type":"text","content":"`)
	if len(inputMessages) < i {
		return ""
	}
	rest := inputMessages[i:]
	for j, r := range rest {
		if r == '"' {
			return rest[:j]
		}
	}
	return ""
}

func withEventDelay(r *fake.Reply, d time.Duration) *fake.Reply {
	r.EventDelay = d
	return r
}

// Two Observers on one agent (here, one added by Agent.With) each record
// the whole run without mixing their state; the second's spans nest under
// the first's, since each step's context is derived from the first's.
func TestTwoObservers(t *testing.T) {
	srv := newServer(t)
	first, second := newTelemetry(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		Observer: first.observer(srv)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	if _, err := a.With(agent.Overrides{Observer: second.observer(srv, otelagent.WithAgentName("second"))}).Run(context.Background(), user("Paris?")); err != nil {
		t.Fatal(err)
	}
	want := `invoke_agent
  invoke_agent second
    generate_content gemini-3-flash-preview
      generate_content gemini-3-flash-preview
    execute_tool get_weather
      execute_tool get_weather
        lookup Paris
    generate_content gemini-3-flash-preview
      generate_content gemini-3-flash-preview
`
	if diff := cmp.Diff(want, tree(append(first.ended(t), second.ended(t)...))); diff != "" {
		t.Errorf("span tree of both providers (-want +got):\n%s", diff)
	}
}

// A call that waits for approval says so on its span; one the Stream
// consumer denies ends as denied, with the reason.
func TestApprovals(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		Observer:      tel.observer(srv),
		NeedsApproval: func(*genai.FunctionCall) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Calls(call("Paris"), call("Tokyo")), fake.Text("Paris only."))
	for ev, err := range a.Stream(context.Background(), user("Paris and Tokyo?")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agent.EventApproval {
			if ev.Call.Args["city"] == "Paris" {
				ev.Approval.Approve()
			} else {
				ev.Approval.Deny("no flights to Tokyo")
			}
		}
	}
	tools := named(tel.ended(t), "execute_tool get_weather")
	if len(tools) != 2 {
		t.Fatalf("%d tool spans, want 2", len(tools))
	}
	for i, s := range tools {
		if len(s.Events()) != 1 || s.Events()[0].Name != "approval_requested" {
			t.Errorf("tool span %d: events %v, want approval_requested", i, s.Events())
		}
	}
	if tools[0].Status().Code == codes.Error {
		t.Errorf("approved call: status %v, want no error", tools[0].Status())
	}
	if got := tools[1].Status(); got.Code != codes.Error || got.Description != "agent: tool call denied: no flights to Tokyo" {
		t.Errorf("denied call: status %v, want the denial and its reason", got)
	}
	checkAttrs(t, tools[1], map[string]any{"error.type": "denied"})
}

// An agent run inside a tool (an agent used as a tool) nests under the
// tool's span, even with the same Observer: each run keeps its own state.
func TestNestedRun(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	obs := tel.observer(srv)
	inner, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ask := toolset.MustFunc("ask_expert", "asks the weather expert", func(ctx context.Context, in struct {
		Question string `json:"question"`
	}) (string, error) {
		res, err := inner.Run(ctx, user(in.Question))
		if err != nil {
			return "", err
		}
		return res.Text, nil
	})
	outer, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(ask),
		Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		fake.Calls(fake.Call("ask_expert", map[string]any{"question": "Paris?"})), // outer
		fake.Calls(call("Paris")),           // inner
		fake.Text("Sunny."),                 // inner
		fake.Text("The expert says sunny."), // outer
	)
	if _, err := outer.Run(context.Background(), user("Ask the expert about Paris")); err != nil {
		t.Fatal(err)
	}
	want := `invoke_agent
  generate_content gemini-3-flash-preview
  execute_tool ask_expert
    invoke_agent
      generate_content gemini-3-flash-preview
      execute_tool get_weather
        lookup Paris
      generate_content gemini-3-flash-preview
  generate_content gemini-3-flash-preview
`
	if diff := cmp.Diff(want, tree(tel.ended(t))); diff != "" {
		t.Errorf("span tree (-want +got):\n%s", diff)
	}
}

// The request settings the config sets are on the model call's span from
// its start; a config without any shares one set of start options.
func TestRequestSettings(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	f := func(v float32) *float32 { return &v }
	seed := int32(7)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Observer: tel.observer(srv),
		GenerateConfig: &genai.GenerateContentConfig{
			Temperature: f(0.5), TopP: f(0.9), TopK: f(40), MaxOutputTokens: 256, StopSequences: []string{"END"},
			Seed: &seed, PresencePenalty: f(0.25), FrequencyPenalty: f(0.125), ResponseMIMEType: "application/json",
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Text(`{"ok":true}`))
	if _, err := a.Run(context.Background(), user("json please")); err != nil {
		t.Fatal(err)
	}
	plain, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Observer: tel.observer(srv)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Text("hi"))
	if _, err := plain.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	calls := named(tel.ended(t), "generate_content "+model)
	checkAttrs(t, calls[0], map[string]any{
		"gen_ai.request.temperature":       0.5,
		"gen_ai.request.top_p":             float64(float32(0.9)),
		"gen_ai.request.top_k":             40,
		"gen_ai.request.max_tokens":        256,
		"gen_ai.request.stop_sequences":    "[END]",
		"gen_ai.request.seed":              7,
		"gen_ai.request.presence_penalty":  0.25,
		"gen_ai.request.frequency_penalty": 0.125,
		"gen_ai.output.type":               "json",
		"gen_ai.request.choice.count":      nil,
	})
	checkAttrs(t, calls[1], map[string]any{
		"gen_ai.operation.name":      "generate_content",
		"gen_ai.request.temperature": nil,
		"gen_ai.output.type":         nil,
	})
}

// The run of an agent run as a tool (agent.AsTool), reported to the
// coordinator's Observer, is named after its own agent, Event.Agent, not
// after the coordinator that WithAgentName names; and an agent's
// Config.Name names its runs when WithAgentName does not.
func TestSubAgentRunsNamedAfterTheirAgent(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	researcher, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather)})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := agent.AsTool(researcher, "researcher", "Researches the weather")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts []otelagent.Option
		name string // the coordinator's Config.Name
		want string // the coordinator's run span
	}{
		{[]otelagent.Option{otelagent.WithAgentName("coordinator")}, "", "invoke_agent coordinator"},
		{nil, "coordinator", "invoke_agent coordinator"},
	} {
		tel.spans.Reset()
		coordinator, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(tool),
			Name: tc.name, Observer: tel.observer(srv, tc.opts...)})
		if err != nil {
			t.Fatal(err)
		}
		srv.Enqueue(
			fake.Calls(fake.Call("researcher", map[string]any{"request": "Paris?"})), // coordinator
			fake.Calls(call("Paris")), // researcher
			fake.Text("Sunny."),       // researcher
			fake.Text("Sunny in Paris."),
		)
		if _, err := coordinator.Run(context.Background(), user("Weather in Paris?")); err != nil {
			t.Fatal(err)
		}
		spans := tel.ended(t)
		want := tc.want + `
  generate_content gemini-3-flash-preview
  execute_tool researcher
    invoke_agent researcher
      generate_content gemini-3-flash-preview
      execute_tool get_weather
        lookup Paris
      generate_content gemini-3-flash-preview
  generate_content gemini-3-flash-preview
`
		if diff := cmp.Diff(want, tree(spans)); diff != "" {
			t.Errorf("span tree (-want +got):\n%s", diff)
		}
		for name, agentName := range map[string]string{tc.want: "coordinator", "invoke_agent researcher": "researcher"} {
			if s := named(spans, name); len(s) == 1 {
				checkAttrs(t, s[0], map[string]any{"gen_ai.agent.name": agentName})
			}
		}
	}
}
