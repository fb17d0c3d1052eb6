package temporalagent

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// A durable run on the Interactions API sends what agent.Run sends, byte
// for byte: each model call an activity whose contents cross a JSON
// boundary, each call after the first continuing the interaction before
// it with only what the server lacks, as the worker's Models recognizes
// the history it created. A worker that knows nothing of the run (another
// process) sends its history whole, once, and continues from there.
func TestInteractionsSameWireAsRun(t *testing.T) {
	direct, durable := newServer(t), newServer(t)
	direct.Enqueue(loopScript()...)
	durable.Enqueue(loopScript()...)
	onInteractions := func(srv *fake.Server) func(*agent.Config) {
		return func(c *agent.Config) {
			loopConfig(c)
			c.Models = geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
		}
	}
	want, err := newAgent(t, direct, loopTools(&weatherTool{}), onInteractions(direct)).Run(context.Background(), user("Weather?"))
	if err != nil {
		t.Fatalf("agent.Run: %v", err)
	}
	env := newEnv(t, Agent{Name: "loop", Agent: newAgent(t, durable, loopTools(&weatherTool{}), onInteractions(durable))})
	got, err := execute(env, "loop", user("Weather?"))
	if err != nil {
		t.Fatalf("durable run: %v", err)
	}
	sameRequests(t, durable, direct, len(loopScript()))
	for i, r := range durable.Requests() {
		if r.Method != fake.MethodCreateInteraction || (i > 0) != (r.PreviousInteractionID != "") {
			t.Errorf("request %d: %s, previous %q", i, r.Method, r.PreviousInteractionID)
		}
	}
	if got.Text != want.Text || got.Usage != want.Usage || len(got.History) != len(want.History) {
		t.Errorf("durable result = %q %+v (%d contents), Run's = %q %+v (%d)", got.Text, got.Usage, len(got.History), want.Text, want.Usage, len(want.History))
	}

	// Another worker, with a Models of its own, continues the stored
	// result: the whole history once, then chained.
	durable.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Bern"})), fake.Text("Sunny in Bern."))
	other := newEnv(t, Agent{Name: "loop", Agent: newAgent(t, durable, loopTools(&weatherTool{}), onInteractions(durable))})
	more, err := execute(other, "loop", append(got.History, user("And Bern?")...))
	if err != nil || more.Text != "Sunny in Bern." {
		t.Fatalf("durable run on another worker: %+v, %v", more, err)
	}
	reqs := durable.Requests()
	if first, second := reqs[len(reqs)-2], reqs[len(reqs)-1]; first.PreviousInteractionID != "" || second.PreviousInteractionID != first.InteractionID {
		t.Errorf("another worker sent previous %q then %q; want the whole history, then a chain from it", first.PreviousInteractionID, second.PreviousInteractionID)
	}
}
