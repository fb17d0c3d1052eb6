package temporalagent

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
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

// A durable run continues a long answer on the Interactions API as
// agent.Run does, byte for byte: each hop an activity of its own that
// continues the interaction which issued its token (the token, in the
// workflow's history, names it, so another worker could send the hop),
// and the turn after it continues the last hop.
func TestInteractionsDurableLongAnswer(t *testing.T) {
	direct, durable := newServer(t), newServer(t)
	direct.Enqueue(longScript()...)
	durable.Enqueue(longScript()...)
	onInteractions := func(srv *fake.Server) func(*agent.Config) {
		return func(c *agent.Config) { c.Models = geminiinteractions.New(srv.Client(), geminiinteractions.Config{}) }
	}
	want, err := newAgent(t, direct, toolset.MustNew((&weatherTool{}).tool()), onInteractions(direct)).Run(context.Background(), user("Story, then weather."))
	if err != nil {
		t.Fatalf("agent.Run: %v", err)
	}
	env := newEnv(t, Agent{Name: "long", Agent: newAgent(t, durable, toolset.MustNew((&weatherTool{}).tool()), onInteractions(durable))})
	got, err := execute(env, "long", user("Story, then weather."))
	if err != nil {
		t.Fatalf("durable run: %v", err)
	}
	sameRequests(t, durable, direct, 4)
	reqs := durable.Requests()
	for i, r := range reqs[1:] {
		if r.PreviousInteractionID != reqs[i].InteractionID {
			t.Errorf("request %d continued %q; want %q, the one before it", i+1, r.PreviousInteractionID, reqs[i].InteractionID)
		}
	}
	if got.Text != want.Text || got.Turns[0].Continuations != 2 || toJSON(got.History[1]) != toJSON(want.History[1]) {
		t.Errorf("durable %q, %d continuations; Run's %q", got.Text, got.Turns[0].Continuations, want.Text)
	}
}
