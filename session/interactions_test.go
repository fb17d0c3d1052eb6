package session_test

import (
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"google.golang.org/genai"
)

// Conversations kept in a SQLite file and run on the Interactions API: in
// the process that made them, each run continues the interaction the
// server holds, though the contents come back from the file; in another
// process (a new Models on the same file), the first run sends the whole
// history and the next ones continue; a conversation stored from
// generateContent goes on on Interactions.
func TestRunOnInteractions(t *testing.T) {
	srv := newServer(t)
	path := filepath.Join(t.TempDir(), "sessions.db")
	store, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	on := func(m agent.Models) *agent.Agent {
		return newAgent(t, srv, func(c *agent.Config) { c.Models = m })
	}
	last := func() *fake.Request { return srv.LastRequest() }

	a := on(geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."), fake.Text("Sunny tomorrow too."))
	if _, err := session.Run(ctx, a, store, "alice", genai.Text("Paris?")...); err != nil {
		t.Fatal(err)
	}
	if _, err := session.Run(ctx, a, store, "alice", genai.Text("And tomorrow?")...); err != nil {
		t.Fatal(err)
	}
	if r := last(); r.PreviousInteractionID == "" || len(r.Input) != 1 {
		t.Errorf("the second run sent previous %q and %d contents; want the new message only", r.PreviousInteractionID, len(r.Input))
	}

	other, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	b := on(geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Text("Still sunny."), fake.Text("Yes."))
	if _, err := session.Run(ctx, b, other, "alice", genai.Text("Now?")...); err != nil {
		t.Fatal(err)
	}
	if r := last(); r.PreviousInteractionID != "" || len(r.Input) != 7 {
		t.Errorf("another process's first run sent previous %q and %d contents; want the whole history, 7", r.PreviousInteractionID, len(r.Input))
	}
	if _, err := session.Run(ctx, b, other, "alice", genai.Text("Sure?")...); err != nil {
		t.Fatal(err)
	}
	if r := last(); r.PreviousInteractionID == "" || len(r.Input) != 1 {
		t.Errorf("its next run sent previous %q and %d contents", r.PreviousInteractionID, len(r.Input))
	}

	// A conversation from generateContent, signed as Gemini 3 signs there.
	g := on(srv.Client().Models)
	srv.Enqueue(fake.Calls(call("Rome")), fake.Text("Sunny in Rome."), fake.Text("Warm, too."))
	if _, err := session.Run(ctx, g, store, "bob", genai.Text("Rome?")...); err != nil {
		t.Fatal(err)
	}
	res, err := session.Run(ctx, b, store, "bob", genai.Text("Warm?")...)
	if err != nil || res.Text != "Warm, too." {
		t.Fatalf("continuing on Interactions: %+v, %v", res, err)
	}
	if r := last(); r.Method != fake.MethodCreateInteraction || len(r.Input) != 5 {
		t.Errorf("sent %s with %d contents", r.Method, len(r.Input))
	}
}
