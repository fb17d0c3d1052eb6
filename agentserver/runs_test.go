package agentserver_test

import (
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// Runs lists a user's runs that the server keeps, in progress or over,
// the latest started first, and never another user's; a Runner that is
// not a RunLister lists none.
func TestRuns(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		last := req.Contents[len(req.Contents)-1]
		if last.Parts[0].Text == "gate" {
			return fake.Calls(fake.Call("get_weather", map[string]any{"city": "Gate"}))
		}
		return fake.Text("done")
	})
	submit := func(user, thread, text string) agentserver.RunInfo {
		t.Helper()
		att, err := h.srv.Submit(bg, user, agentserver.Request{Thread: thread, Message: genai.NewContentFromText(text, genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		att.Cursor.Close()
		return att.Run
	}
	over := submit("alice", "t1", "hi")
	h.awaitRun("alice", over.ID, func(i agentserver.RunInfo) bool { return i.State.Over() })
	running := submit("alice", "t2", "gate")
	<-h.started
	bobs := submit("bob", "t1", "hi")

	runs, err := h.srv.Runs(bg, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != running.ID || runs[1].ID != over.ID || runs[0].State.Over() || !runs[1].State.Over() {
		t.Errorf("alice's runs %+v; want %s (running) then %s (over)", runs, running.ID, over.ID)
	}
	if runs, err := h.srv.Runs(bg, "bob"); err != nil || len(runs) != 1 || runs[0].ID != bobs.ID {
		t.Errorf("bob's runs %+v, %v; want %s", runs, err, bobs.ID)
	}
	close(h.gate)

	other, err := agentserver.New(agentserver.Config{Agent: h.srv.Agent(), Runner: plainRunner{h.srv.Runner()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Runs(bg, "alice"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Runs of a Runner that does not list runs: %v; want errors.ErrUnsupported", err)
	}
}

// plainRunner is a Runner that is not a RunLister.
type plainRunner struct{ agentserver.Runner }
