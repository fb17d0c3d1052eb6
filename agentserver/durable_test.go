package agentserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Close in the middle of an answer saves the text its reader was shown:
// with a journaling store (session.Memory) and with a store that only
// appends.
func TestCloseSavesShownText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func() session.Store
	}{
		{"journal", func() session.Store { return session.NewMemory() }},
		{"append", func() session.Store { return &countingStore{Store: session.NewMemory(), appends: map[string]int{}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = tc.store() }})
			reply := fake.Text("Hello there, the answer goes on and on.").WithTextChunk(6)
			reply.EventDelay = time.Hour // the rest never comes: Close cuts it
			h.model.Enqueue(reply)
			got := make(chan *response)
			go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "Say hello"}) }()
			h.await("alice", "t1", func(info agentserver.RunInfo) bool { return info.Len >= 3 }) // start, step, the first piece
			ctx, cancel := context.WithCancel(bg)
			cancel()
			if err := h.srv.Close(ctx); err != context.Canceled {
				t.Errorf("Close = %v, want context.Canceled", err)
			}
			resp := <-got
			shown := resp.text()
			if shown == "" {
				t.Fatalf("the stream showed no text: %v", resp.kinds())
			}
			stored := h.stored("alice", "t1")
			if len(stored) != 2 || stored[1].Role != genai.RoleModel || stored[1].Parts[0].Text != shown {
				t.Errorf("stored %s; want the question and the text shown, %q", dump(stored), shown)
			}
		})
	}
}

// dump returns contents as the model request's texts, for messages.
func dump(contents []*genai.Content) []string {
	return requestText(&fake.Request{Contents: contents})
}
