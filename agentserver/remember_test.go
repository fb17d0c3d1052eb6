package agentserver_test

import (
	"context"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// remembered records what Config.Remember is told.
type remembered struct {
	mu    sync.Mutex
	calls []rememberCall
}

type rememberCall struct {
	user, thread, runID, ctxUser, conversation string
	contents                                   []*genai.Content
	from                                       int
}

func (r *remembered) remember(ctx context.Context, user, thread string, contents []*genai.Content, from int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, rememberCall{user, thread, agentserver.RunID(ctx), agentserver.RunUser(ctx), agent.Conversation(ctx), contents, from})
}

func (r *remembered) all() []rememberCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rememberCall(nil), r.calls...)
}

// Config.Remember is told of each saved run: its user, thread, the thread
// as saved and where the run's contents begin, on the run's context,
// before the run's end is told to its readers.
func TestRemember(t *testing.T) {
	rec := &remembered{}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Remember = rec.remember }})
	h.model.Enqueue(fake.Text("Hello, Alice."), fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	h.post(bg, "alice", testRequest{Thread: "t1", Text: "Hi, I'm Alice."})
	if n := len(rec.all()); n != 1 { // before the end was read
		t.Fatalf("Remember was called %d times after the first run; want once, before its end", n)
	}
	h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	calls := rec.all()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	second := calls[1]
	if second.user != "alice" || second.thread != "t1" || second.ctxUser != "alice" || second.conversation != "t1" || second.runID == "" {
		t.Errorf("the call: %+v", second)
	}
	if got := dump(second.contents); second.from != 2 || len(got) != 6 || got[2] != "user: Weather in Paris?" || got[5] != "model: Sunny in Paris." {
		t.Errorf("from %d, contents %q; want the thread as saved, the run's from 2", second.from, got)
	}
}

// A run whose save failed is not remembered; the next Server, which saves
// its answer from the journal, remembers it then. A Remember that panics
// breaks no run.
func TestRememberRecoveredRun(t *testing.T) {
	mem := session.NewMemory()
	rec := &remembered{}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = failingEnd{mem}; c.Remember = rec.remember }})
	h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	if n := len(rec.all()); n != 0 {
		t.Fatalf("a run whose save failed was remembered (%d calls)", n)
	}
	newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = mem; c.Remember = rec.remember }})
	calls := rec.all()
	if len(calls) != 1 || calls[0].user != "alice" || calls[0].thread != "t1" || calls[0].from != 0 || len(calls[0].contents) != 4 ||
		calls[0].runID == "" || calls[0].conversation != "t1" {
		t.Fatalf("the recovered run's calls: %+v", calls)
	}

	h3 := newHarness(t, harnessOpts{config: func(c *agentserver.Config) {
		c.Remember = func(context.Context, string, string, []*genai.Content, int) { panic("boom") }
	}})
	h3.model.Enqueue(fake.Text("Hi."))
	if last := h3.post(bg, "alice", testRequest{Thread: "t2", Text: "Hello"}).last(); last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateDone {
		t.Errorf("a run whose Remember panicked ended %+v", last)
	}
}
