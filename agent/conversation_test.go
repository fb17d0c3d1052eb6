package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The conversation named in a run's context reaches every step's context,
// where observers (and tracing) read it.
func TestConversationReachesEverySteps(t *testing.T) {
	if got := agent.Conversation(context.Background()); got != "" {
		t.Fatalf("Conversation of an empty context = %q, want none", got)
	}
	srv := newServer(t)
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny."))
	var mu sync.Mutex
	seen := map[agent.EventKind]string{}
	obs := agent.ObserverFunc(func(ctx context.Context, e *agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen[e.Kind] = agent.Conversation(ctx)
	})
	a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Observer = obs })
	ctx := agent.WithConversation(context.Background(), "thread-42")
	if _, err := a.Run(ctx, genai.Text("Weather in Paris?")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []agent.EventKind{agent.EventRunStart, agent.EventModelRequest, agent.EventToolCall, agent.EventToolResult, agent.EventDone} {
		if seen[k] != "thread-42" {
			t.Errorf("%v observed with conversation %q, want thread-42", k, seen[k])
		}
	}
}
