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

// A journal that is not agentserver's does not keep the server from
// starting: it is logged and left, and its thread stays busy.
func TestRecoverSkipsForeignJournal(t *testing.T) {
	store := session.NewMemory()
	if err := store.BeginRun(bg, "agentserver/alice/t1", "run_x", [][]byte{[]byte("not json")}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = store }})
	if _, err := h.srv.Current(bg, "alice", "t1"); !isErr(err, agentserver.ErrNotFound) {
		t.Errorf("Current = %v; want ErrNotFound", err)
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "hi"}); resp.status != 409 || resp.errorCode() != "busy" {
		t.Errorf("a run on the thread: %d %s; want 409 busy", resp.status, resp.body)
	}
	if j, err := store.LoadRun(bg, "agentserver/alice/t1"); err != nil || j.Run != "run_x" {
		t.Errorf("the journal: %+v, %v; want it left as it was", j, err)
	}
}
