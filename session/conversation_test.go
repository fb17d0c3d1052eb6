package session_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Run and Stream name the stored conversation in the run's context, for
// observers and tracing, unless the caller named one already.
func TestRunsNameTheirConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := newServer(t)
			srv.Enqueue(fake.Text("One."), fake.Text("Two."))
			var seen []string
			a := newAgent(t, srv, func(c *agent.Config) {
				c.Observer = agent.ObserverFunc(func(ctx context.Context, e *agent.Event) {
					if e.Kind == agent.EventRunStart {
						seen = append(seen, agent.Conversation(ctx))
					}
				})
			})
			store := session.NewMemory()
			if _, err := runOrStream(ctx, stream, a, store, "alice", genai.Text("Hi")...); err != nil {
				t.Fatal(err)
			}
			named := agent.WithConversation(ctx, "thread-1")
			if _, err := runOrStream(named, stream, a, store, "alice", genai.Text("Hi again")...); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 2 || seen[0] != "alice" || seen[1] != "thread-1" {
				t.Errorf("conversations seen = %q, want [alice thread-1]", seen)
			}
		})
	}
}
