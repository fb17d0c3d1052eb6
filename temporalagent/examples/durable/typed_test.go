package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

type forecast struct {
	City  string `json:"city"`
	Sunny bool   `json:"sunny"`
}

// TestTypedResult runs a typed agent on the server, with a worker in this
// process: TypedResult decodes the answer, after a refused one; a run that
// never answers validly fails with an *agent.OutputError; TypedResult on a
// plain agent's run says that it gave no typed answer.
func TestTypedResult(t *testing.T) {
	ts := shared(t)
	srv := fake.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		first := r.Contents[0].Parts[0].Text
		switch last := r.Contents[len(r.Contents)-1]; {
		case strings.HasPrefix(first, "never"):
			return fake.Text("no JSON")
		case strings.HasPrefix(first, "plain"):
			return fake.Text("plain text")
		case len(r.Contents) == 1:
			return fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}))
		case last.Role == genai.RoleUser && last.Parts[0].FunctionResponse != nil && len(r.Contents) == 3:
			return fake.Text(`{"city":"Paris"}`) // refused: "sunny" is required
		}
		return fake.Text(`{"city":"Paris","sunny":true}`)
	})
	weather := toolset.MustFunc("get_weather", "Weather in a city", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(weather),
		Output: agent.OutputConfig{Strategy: agent.OutputNative}})
	if err != nil {
		t.Fatal(err)
	}
	typed, err := agent.Typed[forecast](a)
	if err != nil {
		t.Fatal(err)
	}
	const queue = "typed"
	w := worker.New(ts.GetDefaultClient(), queue, worker.Options{})
	if err := temporalagent.Register(w, temporalagent.Agent{Name: "forecast", Agent: typed}, temporalagent.Agent{Name: "plain", Agent: a}); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c := temporalagent.NewClient(ts.GetDefaultClient(), queue)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	start := func(name, text string) *temporalagent.Run {
		run, err := startRun(ctx, c, client.StartWorkflowOptions{}, name, genai.Text(text))
		if err != nil {
			t.Fatal(err)
		}
		return run
	}

	got, res, err := temporalagent.TypedResult[forecast](ctx, start("forecast", "Is it sunny in Paris?"))
	if err != nil || got != (forecast{City: "Paris", Sunny: true}) || res.Output != got || len(res.Turns) != 3 {
		t.Errorf("TypedResult = %+v, %v (Output %#v, %d turns); want Paris sunny after 3 turns", got, err, res.Output, len(res.Turns))
	}

	_, res, err = temporalagent.TypedResult[forecast](ctx, start("forecast", "never answers"))
	var oe *agent.OutputError
	if !errors.As(err, &oe) || oe.Raw != "no JSON" || oe.Result != res || len(res.Turns) != agent.DefaultMaxOutputReasks+1 {
		t.Errorf("a run with no valid answer: %v; want an *agent.OutputError with the raw answer and the partial result", err)
	}

	if _, _, err := temporalagent.TypedResult[forecast](ctx, start("plain", "plain run")); err == nil || !strings.Contains(err.Error(), "gave no typed answer") {
		t.Errorf("TypedResult of a plain run = %v; want an error saying it gave no typed answer", err)
	}
}
