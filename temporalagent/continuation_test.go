package temporalagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"google.golang.org/genai"
)

// longScript is an answer in three hops, the last of which calls
// get_weather, then the answer after the call.
func longScript() []*fake.Reply {
	hops := fake.Hops(fake.Text("Part one. "), fake.Text("Part two. "), fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})))
	return append(hops, fake.Text("Sunny in Paris."))
}

// A durable run continues an answer the API cut as agent.Run does: the
// same requests, byte for byte, each hop sending the token of the one
// before; the same history, usage and prompt size for the next turn; and
// each hop a model activity of its own, so that its token is in the
// workflow's history.
func TestDurableLongAnswer(t *testing.T) {
	for _, regular := range []bool{false, true} {
		t.Run(fmt.Sprintf("regular=%v", regular), func(t *testing.T) {
			direct, durable := newServer(t), newServer(t)
			direct.Enqueue(longScript()...)
			durable.Enqueue(longScript()...)
			var prompts []int
			record := func(c *agent.Config) {
				c.PrepareHistory = func(_ context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
					prompts = append(prompts, h.PromptTokens)
					return h.Contents, nil
				}
			}
			want, err := newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()), record).Run(context.Background(), user("Story, then weather."))
			if err != nil {
				t.Fatalf("agent.Run: %v", err)
			}
			runPrompts := prompts
			prompts = nil
			var activities []string
			env := newEnv(t, Agent{Name: "long", Agent: newAgent(t, durable, toolset.MustNew((&weatherTool{}).tool()), record), RegularModelCalls: regular})
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				activities = append(activities, info.ActivityType.Name)
			})
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				activities = append(activities, info.ActivityType.Name)
			})
			got, err := execute(env, "long", user("Story, then weather."))
			if err != nil {
				t.Fatalf("durable run: %v", err)
			}
			sameRequests(t, durable, direct, 4)
			if got.Text != want.Text || got.Usage != want.Usage || len(got.History) != len(want.History) {
				t.Errorf("durable result %q %+v, %d contents; Run's %q %+v, %d", got.Text, got.Usage, len(got.History), want.Text, want.Usage, len(want.History))
			}
			if got.Turns[0].Continuations != 2 || want.Turns[0].Continuations != 2 {
				t.Errorf("continuations: durable %d, Run %d; want 2", got.Turns[0].Continuations, want.Turns[0].Continuations)
			}
			if toJSON(got.History[1]) != toJSON(want.History[1]) {
				t.Errorf("the merged model content differs:\n durable %s\n     Run %s", toJSON(got.History[1]), toJSON(want.History[1]))
			}
			if fmt.Sprint(prompts[len(prompts)-1]) != fmt.Sprint(runPrompts[len(runPrompts)-1]) {
				t.Errorf("the next turn's prompt size: durable %v, Run %v", prompts, runPrompts)
			}
			models := 0
			for _, a := range activities {
				if a == ModelActivityName {
					models++
				}
			}
			if models != 4 {
				t.Errorf("%d model activities (%v), want one per hop and one for the last turn", models, activities)
			}
		})
	}
}

// A hop that fails for good ends the durable run with the model's error;
// the turn keeps the hops made, and the Result their text.
func TestDurableLongAnswerFailingHop(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Hops(fake.Text("Part one. "), fake.Text("Part two. "), fake.Text("never"))[:2]...)
	srv.Enqueue(fake.Error(400, "Request contains an invalid argument."))
	env := newEnv(t, Agent{Name: "long", Agent: newAgent(t, srv, nil)})
	res, err := execute(env, "long", user("Story."))
	var me *agent.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("error %v, want a ModelError", err)
	}
	if res.Text != "Part one. Part two. " || len(res.Turns) != 1 || res.Turns[0].Continuations != 1 || res.Usage.TotalTokens == 0 {
		t.Errorf("Result %q, %d turns, usage %+v; want the two hops kept", res.Text, len(res.Turns), res.Usage)
	}
}

// An answer the API cuts and sends no more token for ends the durable run
// as it ends Run: ErrContinuation.
func TestDurableContinuationStopped(t *testing.T) {
	srv := newServer(t)
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("more ").WithContinuationToken([]byte("same")) })
	env := newEnv(t, Agent{Name: "long", Agent: newAgent(t, srv, nil)})
	res, err := execute(env, "long", user("Story."))
	if !errors.Is(err, agent.ErrContinuation) || len(srv.Requests()) != 2 || res.Text != "more more " {
		t.Errorf("error %v after %d requests, text %q; want ErrContinuation after 2", err, len(srv.Requests()), res.Text)
	}
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// A turn the API ends with UNEXPECTED_TOOL_CALL is answered as agent.Run
// answers it: the unknown tool's answer, and a known tool not run.
func TestDurableUnexpectedCall(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	srv.Enqueue(fake.UnexpectedCall("list_files", nil), fake.UnexpectedCall("get_weather", map[string]any{"city": "Rome"}), fake.Text("Sorry."))
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, toolset.MustNew(w.tool()))})
	res, err := execute(env, "w", user("Weather?"))
	if err != nil {
		t.Fatal(err)
	}
	if w.calls.Load() != 0 || len(res.Turns) != 3 || !res.Turns[0].Results[0].IsError || !res.Turns[1].Results[0].IsError {
		t.Errorf("get_weather ran %d times; turns %d; want none run, both answered with errors", w.calls.Load(), len(res.Turns))
	}
	// (genai drops the finish message on the Gemini API.)
	if msg, _ := res.Turns[1].Results[0].Output.(string); msg != "tool get_weather was not run: the API refused it (finish reason UNEXPECTED_TOOL_CALL)" {
		t.Errorf("answer %q", msg)
	}
}
