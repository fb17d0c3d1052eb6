package agentserver_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A tool a run calls reads the run's id, its user and its thread from its
// context: two users' threads of the same name are told apart.
func TestRunContextNamesUser(t *testing.T) {
	type seen struct{ run, user, thread string }
	got := make(chan seen, 2)
	whoami := toolset.MustFunc("whoami", "Who is asking", func(ctx context.Context, _ struct{}) (string, error) {
		got <- seen{agentserver.RunID(ctx), agentserver.RunUser(ctx), agent.Conversation(ctx)}
		return "ok", nil
	})
	h := newHarness(t, harnessOpts{agent: func(c *agent.Config) { c.Tools = toolset.MustNew(whoami) }})
	for _, user := range []string{"alice", "bob"} {
		h.model.Enqueue(fake.Calls(fake.Call("whoami", nil)), fake.Text("done"))
		resp := h.post(bg, user, testRequest{Thread: "same", Text: "who am I?"})
		if resp.status != 200 || resp.last().Done == nil || resp.last().Done.State != agentserver.StateDone {
			t.Fatalf("%s: status %d, %s", user, resp.status, resp.body)
		}
		s := <-got
		if s.run != resp.run() || s.user != user || s.thread != "same" {
			t.Errorf("%s: the tool saw %+v (run %s)", user, s, resp.run())
		}
	}
	if u := agentserver.RunUser(context.Background()); u != "" {
		t.Errorf("RunUser of a plain context: %q", u)
	}
}
