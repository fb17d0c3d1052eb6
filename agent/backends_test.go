package agent_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The loop's main scenarios, run on both backends genai speaks to, the
// Gemini API and Vertex AI, and on both of Gemini's APIs, generateContent
// and Interactions (through geminiinteractions), each through the real
// genai client. The fake serves each on its own routes with its own rules
// (Vertex AI wants a bearer token and answers with its own fields; the
// Interactions API takes steps and keeps the conversation), so a scenario
// that passes here sends what each real API accepts.

// backend is one of the APIs, with the Models that talks to a fake server
// as that API.
type backend struct {
	name         string
	id           genai.Backend
	models       func(*fake.Server) agent.Models
	interactions bool // the Interactions API
}

var backends = []backend{
	{"GeminiAPI", genai.BackendGeminiAPI, func(s *fake.Server) agent.Models { return s.Client().Models }, false},
	{"VertexAI", genai.BackendVertexAI, func(s *fake.Server) agent.Models { return s.VertexClient().Models }, false},
	{"Interactions", genai.BackendGeminiAPI, func(s *fake.Server) agent.Models {
		return geminiinteractions.New(s.Client(), geminiinteractions.Config{})
	}, true},
}

// scenario is a test of the loop against srv, whose agents come from mk,
// on backend b.
type scenario func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent)

// onBackends runs s once per backend, on a server that fails the test on
// any protocol violation, and checks that every request reached that
// backend's routes.
func onBackends(t *testing.T, s scenario) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			srv := newServer(t)
			mk := func(tools *toolset.Set, edit ...func(*agent.Config)) *agent.Agent {
				models := b.models(srv)
				return newAgent(t, srv, tools, append([]func(*agent.Config){func(c *agent.Config) { c.Models = models }}, edit...)...)
			}
			s(t, b, srv, mk)
			for _, r := range srv.Requests() {
				if r.Backend != b.id {
					t.Errorf("request #%d went to %v; want %v", r.Seq, r.Backend, b.id)
				}
				if ix := r.Method == fake.MethodCreateInteraction; ix != b.interactions {
					t.Errorf("request #%d called %s on %s", r.Seq, r.Method, b.name)
				}
			}
		})
	}
}

// signed reports whether a model turn of function calls kept its thought
// signature where the API puts it: on the first call for generateContent,
// on a thought before the calls for Interactions.
func signed(b backend, c *genai.Content) bool {
	for _, p := range c.Parts {
		switch {
		case b.interactions && p.Thought && len(p.ThoughtSignature) > 0:
			return true
		case p.FunctionCall != nil:
			return len(p.ThoughtSignature) > 0
		}
	}
	return false
}

func gemini3(c *agent.Config) { c.Model = model3 }

func TestBackendsParallelCalls(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		a := mk(toolset.MustNew(w.tool()), gemini3)
		srv.Enqueue(fake.Calls(cities(2)...), fake.Text("Sunny in both."))
		res, err := a.Run(context.Background(), user("Weather in two cities?"))
		if err != nil || res.Text != "Sunny in both." || w.calls.Load() != 2 {
			t.Fatalf("Run() = %+v, %v after %d tool calls", res, err, w.calls.Load())
		}
		if !signed(b, res.History[1]) {
			t.Error("the turn lost its thought signature")
		}
		calls := agent.FunctionCalls(res.History[1])
		answers := lastResponses(t, srv)
		for i, r := range answers {
			// Gemini 3 sends ids on both backends (Vertex AI since
			// mid-2026), the Interactions API always, and they go back
			// as they came.
			if id := calls[i].ID; r.ID != id || id == "" {
				t.Errorf("answer %d id %q for call id %q on %s", i, r.ID, id, b.name)
			}
			if r.Response["result"] != "sunny in city-"+strconv.Itoa(i) {
				t.Errorf("answer %d = %v", i, r.Response)
			}
		}
	})
}

func TestBackendsSequentialTurnsAndContinuation(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		a := mk(toolset.MustNew(w.tool()), gemini3)
		srv.Enqueue(
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})),
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Rome"})),
			fake.Text("Paris, then Rome: sunny."),
			fake.Text("Yes, both."),
		)
		res, err := a.Run(context.Background(), user("Paris, then Rome?"))
		if err != nil || len(res.Turns) != 3 {
			t.Fatalf("Run() = %+v, %v", res, err)
		}
		// The conversation continues from the history, signatures and all.
		more := append(res.History, genai.NewContentFromText("Both sunny?", genai.RoleUser))
		res, err = a.Run(context.Background(), more)
		if err != nil || res.Text != "Yes, both." {
			t.Fatalf("continuing: Run() = %+v, %v", res, err)
		}
		if n := len(srv.LastRequest().Contents); n != 7 {
			t.Errorf("the last request carried %d contents; want 7", n)
		}
	})
}

func TestBackendsStreamMatchesRun(t *testing.T) {
	script := func(srv *fake.Server) {
		srv.Enqueue(
			fake.Parts(&genai.Part{Text: "Two cities.", Thought: true},
				&genai.Part{Text: "Checking both."},
				&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Paris"})},
				&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Tokyo"})}).WithTextChunk(5),
			fake.Text("Sunny in Paris and in Tokyo.").WithTextChunk(6).WithTrailingSignature(),
		)
	}
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		a := mk(toolset.MustNew(w.tool()), gemini3)
		script(srv)
		runRes, err := a.Run(context.Background(), user("Paris and Tokyo?"))
		if err != nil {
			t.Fatal(err)
		}
		script(srv)
		events, err := collect(t, a.Stream(context.Background(), user("Paris and Tokyo?")))
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, e := range events {
			if e.Kind == agent.EventText {
				text.WriteString(e.Text)
			}
		}
		streamRes := events[len(events)-1].Result
		if text.String() != "Checking both.Sunny in Paris and in Tokyo." || streamRes.Text != runRes.Text {
			t.Errorf("streamed text %q, result %q; want what Run answered, %q", text.String(), streamRes.Text, runRes.Text)
		}
		// Ids differ between the two runs on the Gemini API (new ones per
		// reply), signatures too: compare the rest.
		strip := cmp.FilterPath(func(p cmp.Path) bool {
			s := p.String()
			return strings.HasSuffix(s, "ThoughtSignature") || strings.HasSuffix(s, ".ID")
		}, cmp.Ignore())
		if diff := cmp.Diff(runRes.History, streamRes.History, strip); diff != "" {
			t.Errorf("stream history differs from Run's (-run +stream):\n%s", diff)
		}
	})
}

func TestBackendsToolFailuresGoBackToTheModel(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		w := &weatherTool{}
		fails := tool("fails", func(context.Context, map[string]any) (any, error) { return nil, errors.New("disk full") })
		a := mk(toolset.MustNew(w.tool(), fails))
		srv.Enqueue(fake.Calls(
			fake.Call("get_weather", map[string]any{"city": 42.0}),
			fake.Call("nope", nil),
			fake.Call("fails", nil),
		), fake.Text("sorted"))
		if _, err := a.Run(context.Background(), user("go")); err != nil {
			t.Fatal(err)
		}
		want := []string{`invalid arguments for get_weather`, `unknown tool "nope"`, "disk full"}
		for i, r := range lastResponses(t, srv) {
			if msg, _ := r.Response["error"].(string); !strings.Contains(msg, want[i]) {
				t.Errorf("response %d = %v; want an error containing %q", i, r.Response, want[i])
			}
		}
	})
}

func TestBackendsRetryTransientFailures(t *testing.T) {
	faults := []struct {
		name   string
		stream bool
		fault  func() *fake.Reply
	}{
		{"429 with RetryInfo", false, func() *fake.Reply { return fake.RateLimited(5 * time.Millisecond) }},
		{"503", false, func() *fake.Reply { return fake.Error(503, "The model is overloaded.") }},
		{"dropped connection", false, fake.Drop},
		{"cut body", false, func() *fake.Reply { return fake.Text("cut").WithFault(fake.FaultCutStream, 0) }},
		{"stream cut before its first event", true, func() *fake.Reply {
			return fake.Text("cut").WithTextChunk(2).WithFault(fake.FaultCutStream, 0)
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
				a := mk(nil)
				srv.Enqueue(f.fault(), f.fault(), fake.Text("made it"))
				var res *agent.Result
				var err error
				if f.stream {
					var events []*agent.Event
					events, err = collect(t, a.Stream(context.Background(), user("hi")))
					res = events[len(events)-1].Result
				} else {
					res, err = a.Run(context.Background(), user("hi"))
				}
				if err != nil || res.Text != "made it" || res.Turns[0].Attempts != 3 {
					t.Fatalf("= %+v, %v; want success after 2 retries", res, err)
				}
			})
		})
	}
}

func TestBackendsNoRetryOnPermanentErrors(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
				a := mk(nil)
				srv.Enqueue(fake.Error(code, "no"), fake.Text("unreachable"))
				_, err := a.Run(context.Background(), user("hi"))
				var apiErr genai.APIError
				var me *agent.ModelError
				if !errors.As(err, &apiErr) || apiErr.Code != code || !errors.As(err, &me) || me.Attempts != 1 {
					t.Errorf("Run() = %v; want the APIError after 1 attempt", err)
				}
			})
		})
	}
}

func TestBackendsReaskMalformedCall(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		a := mk(nil)
		srv.Enqueue(fake.Finish(genai.FinishReasonMalformedFunctionCall), fake.Text("fine"))
		res, err := a.Run(context.Background(), user("hi"))
		if err != nil || res.Text != "fine" || res.Turns[0].Attempts != 2 {
			t.Fatalf("Run() = %+v, %v", res, err)
		}
	})
}

func TestBackendsCancelDuringModelCall(t *testing.T) {
	onBackends(t, func(t *testing.T, b backend, srv *fake.Server, mk func(*toolset.Set, ...func(*agent.Config)) *agent.Agent) {
		a := mk(nil)
		ctx, cancel := context.WithCancel(context.Background())
		srv.SetReplyFunc(func(*fake.Request) *fake.Reply {
			cancel()
			return fake.Text("late").WithDelay(time.Hour)
		})
		start := time.Now()
		res, err := a.Run(ctx, user("hi"))
		if !errors.Is(err, context.Canceled) || res == nil || time.Since(start) > 5*time.Second {
			t.Errorf("Run() = %v after %v; want Canceled promptly with a result", err, time.Since(start))
		}
	})
}
