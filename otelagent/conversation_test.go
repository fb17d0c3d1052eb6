package otelagent_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A run whose context names its conversation (agent.WithConversation: a
// served thread, a session) records it as gen_ai.conversation.id; a run
// whose context names none records no such attribute.
func TestConversationID(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(weather), Observer: tel.observer(srv)})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Text("Hello."), fake.Text("Hello again."))
	if _, err := a.Run(agent.WithConversation(context.Background(), "thread-7"), user("Hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), user("Hi")); err != nil {
		t.Fatal(err)
	}
	runs := named(tel.ended(t), "invoke_agent")
	if len(runs) != 2 {
		t.Fatalf("%d run spans, want 2", len(runs))
	}
	if got := strAttr(runs[0], "gen_ai.conversation.id"); got != "thread-7" {
		t.Errorf("first run: gen_ai.conversation.id = %q, want thread-7", got)
	}
	if _, ok := attrs(runs[1])["gen_ai.conversation.id"]; ok {
		t.Errorf("second run: gen_ai.conversation.id = %v, want none", attrs(runs[1])["gen_ai.conversation.id"])
	}
}
