package agent_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type scopeKey struct{}

func scopeOf(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// scoper names each step's context after the step, under its parent's
// name, and records the scope each event is observed with.
type scoper struct {
	prefix string
	mu     sync.Mutex
	seen   []string
}

func (s *scoper) StartContext(ctx context.Context, e *agent.Event) context.Context {
	var name string
	switch e.Kind {
	case agent.EventRunStart:
		name = s.prefix + "run"
	case agent.EventModelRequest:
		name = fmt.Sprintf("%s/%smodel-%d.%d", scopeOf(ctx), s.prefix, e.Turn, e.Attempt)
	case agent.EventToolCall:
		name = fmt.Sprintf("%s/%stool-%d.%d", scopeOf(ctx), s.prefix, e.Turn, e.Index)
	default:
		panic("StartContext called for " + e.Kind.String())
	}
	return context.WithValue(ctx, scopeKey{}, name)
}

func (s *scoper) Observe(ctx context.Context, e *agent.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, e.Kind.String()+"@"+scopeOf(ctx))
}

// scopedModels records the scope of each model call's context.
type scopedModels struct {
	agent.Models
	mu     sync.Mutex
	scopes []string
}

func (m *scopedModels) record(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scopes = append(m.scopes, scopeOf(ctx))
}

func (m *scopedModels) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	m.record(ctx)
	return m.Models.GenerateContent(ctx, model, contents, config)
}

func (m *scopedModels) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	m.record(ctx)
	return m.Models.GenerateContentStream(ctx, model, contents, config)
}

// A ContextObserver's contexts reach the model calls, the tools and the
// observer's own events, each step under the run: what tracing nests on.
func TestContextObserver(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := newServer(t)
			var mu sync.Mutex
			toolScopes := map[string]string{}
			weather := toolset.MustFunc("get_weather", "weather", func(ctx context.Context, in weatherIn) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				toolScopes[in.City] = scopeOf(ctx)
				return "sunny", nil
			})
			obs := &scoper{}
			models := &scopedModels{Models: srv.Client().Models}
			a, err := agent.New(agent.Config{Models: models, Model: model, Tools: toolset.MustNew(weather), Observer: obs, Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(fake.Error(503, "busy"), fake.Calls(cities(2)...), fake.Text("done"))
			if _, err := runOrStream(a, stream, user("go")); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"run/model-0.1", "run/model-0.2", "run/model-1.1"}, models.scopes); diff != "" {
				t.Errorf("model call contexts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{"city-0": "run/tool-0.0", "city-1": "run/tool-0.1"}, toolScopes); diff != "" {
				t.Errorf("tool contexts (-want +got):\n%s", diff)
			}
			var seen []string
			for _, s := range obs.seen {
				if !strings.HasPrefix(s, "Text@") {
					seen = append(seen, s)
				}
			}
			want := []string{
				"RunStart@run",
				"ModelRequest@run/model-0.1", "Retry@run/model-0.1",
				"ModelRequest@run/model-0.2", "ModelResponse@run/model-0.2",
				"ToolCall@run/tool-0.0", "ToolCall@run/tool-0.1",
			}
			if diff := cmp.Diff(want, seen[:len(want)]); diff != "" {
				t.Errorf("observed scopes (-want +got):\n%s", diff)
			}
			results := 0
			for _, s := range seen {
				if strings.HasPrefix(s, "ToolResult@") {
					results++
					if s != "ToolResult@run/tool-0.0" && s != "ToolResult@run/tool-0.1" {
						t.Errorf("tool result observed as %s", s)
					}
				}
			}
			tail := []string{"TurnEnd@run", "ModelRequest@run/model-1.1", "ModelResponse@run/model-1.1", "TurnEnd@run", "Done@run"}
			if results != 2 || !slicesHasSuffix(seen, tail) {
				t.Errorf("observed %v; want 2 tool results and then %v", seen, tail)
			}
		})
	}
}

// Observers chains the ContextObservers it combines, in order, and skips
// the plain ones.
func TestObserversChainContexts(t *testing.T) {
	srv := newServer(t)
	outer, inner := &scoper{prefix: "outer-"}, &scoper{prefix: "inner-"}
	models := &scopedModels{Models: srv.Client().Models}
	a, err := agent.New(agent.Config{Models: models, Model: model, Observer: agent.Observers(outer, &eventLog{}, inner)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := agent.Observers(&eventLog{}, &eventLog{}).(agent.ContextObserver); ok {
		t.Error("Observers of plain observers is a ContextObserver")
	}
	srv.Enqueue(fake.Text("hi"))
	if _, err := a.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	// inner derives from outer's context: it overwrites the value, and
	// builds its name on outer's.
	if diff := cmp.Diff([]string{"inner-run/outer-model-0.1/inner-model-0.1"}, models.scopes); diff != "" {
		t.Errorf("model call context (-want +got):\n%s", diff)
	}
}

func slicesHasSuffix(s, suffix []string) bool {
	return len(s) >= len(suffix) && cmp.Equal(s[len(s)-len(suffix):], suffix)
}

// A HistoryFunc shortens what is sent; the run's history stays whole.
func TestPrepareHistory(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := newServer(t)
			w := &weatherTool{}
			var infos []agent.HistoryInfo
			prepare := func(_ context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
				infos = append(infos, *h)
				if h.Turn == 0 {
					return h.Contents[len(h.Contents)-1:], nil // only the new question
				}
				return h.Contents, nil
			}
			a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.PrepareHistory = prepare })
			old := []*genai.Content{
				genai.NewContentFromText("old question", genai.RoleUser),
				genai.NewContentFromText("old answer", genai.RoleModel),
			}
			input := append(old, user("weather in Paris?")...)
			srv.Enqueue(fake.Calls(cities(1)...), fake.Text("sunny"))
			res, err := runOrStream(a, stream, input)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs[0].Contents) != 1 || len(reqs[1].Contents) != 3 {
				t.Errorf("sent %d then %d contents; want 1 (shortened), then 3 (it, the call, the answer)", len(reqs[0].Contents), len(reqs[1].Contents))
			}
			if len(res.History) != 6 {
				t.Errorf("Result.History has %d contents, want all 6", len(res.History))
			}
			if len(infos) != 2 || infos[0].PromptTokens != 0 || infos[1].PromptTokens == 0 ||
				infos[1].PromptTokens != res.Turns[0].Usage.PromptTokens || infos[1].Model != model {
				t.Errorf("hook saw %+v; want turn 0 with no tokens, turn 1 with the first call's prompt tokens", infos)
			}
		})
	}
}

func TestPrepareHistoryError(t *testing.T) {
	srv := newServer(t)
	boom := errors.New("boom")
	a := newAgent(t, srv, nil, func(c *agent.Config) {
		c.PrepareHistory = func(context.Context, *agent.HistoryInfo) ([]*genai.Content, error) { return nil, boom }
	})
	res, err := a.Run(context.Background(), user("hi"))
	if !errors.Is(err, boom) || len(res.History) != 1 || len(srv.Requests()) != 0 {
		t.Errorf("Run() = %v, %d contents, %d requests; want the hook's error, the input, no request", err, len(res.History), len(srv.Requests()))
	}
}

// The context a plain run hands its tools and its model calls is the
// caller's: its values, its deadline, and its cancellation with the cause.
func TestStepsRunUnderTheCallersContext(t *testing.T) {
	srv := newServer(t)
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.WithValue(context.Background(), scopeKey{}, "caller"), deadline)
	defer cancel()
	ctx, cancelCause := context.WithCancelCause(ctx)
	why := errors.New("the caller hung up")
	var seen []string
	probe := tool("probe", func(ctx context.Context, _ map[string]any) (any, error) {
		d, ok := ctx.Deadline()
		seen = append(seen, fmt.Sprintf("tool: %s %v", scopeOf(ctx), ok && d.Equal(deadline)))
		cancelCause(why)
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), why) {
			t.Errorf("the tool's context ended with cause %v, want %v", context.Cause(ctx), why)
		}
		return nil, ctx.Err()
	})
	models := &scopedModels{Models: srv.Client().Models}
	a := newAgent(t, srv, toolset.MustNew(probe), func(c *agent.Config) { c.Models = models })
	srv.Enqueue(fake.Calls(fake.Call("probe", nil)))
	_, err := a.Run(ctx, user("go"))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, why) {
		t.Errorf("Run() = %v, want Canceled with the caller's cause", err)
	}
	if want := []string{"tool: caller true"}; !slices.Equal(seen, want) {
		t.Errorf("the tool saw %q, want %q", seen, want)
	}
	if want := []string{"caller"}; !slices.Equal(models.scopes, want) {
		t.Errorf("the model calls saw scopes %q, want %q", models.scopes, want)
	}
}
