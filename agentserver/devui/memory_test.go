package devui

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/memory"
)

// A run's timeline shows the memories it was given (Preload's search,
// with its query and results) and those its end stored.
func TestMemorySpans(t *testing.T) {
	var rec *Recorder
	svc, err := memory.New(memory.Config{Observer: memory.ObserverFunc(func(ctx context.Context, e *memory.Event) { rec.ObserveMemory(ctx, e) })})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	pre := &memory.Preload{Service: svc, User: agentserver.RunUser}
	e := newEnv(t, envOpts{
		agent:  func(c *agent.Config) { c.PrepareHistory = pre.Prepare },
		server: func(c *agentserver.Config) { c.Remember = svc.RememberRun },
	})
	rec = e.rec
	e.model.Enqueue(fake.Text("Noted."), fake.Text("Miso."))
	e.chat("alice", "t1", "My cat is called Miso.")
	chunks := e.chat("alice", "t2", "What is my cat called?")
	id := runID(t, chunks)

	var tl struct {
		Spans []struct {
			Kind, Name string
			Parent     int
			Memory     *memoryJSON
		}
	}
	e.get("/api/runs/"+id, "alice", &tl)
	var search, remember *memoryJSON
	kinds := ""
	for _, s := range tl.Spans {
		kinds += s.Kind + " "
		if s.Kind == "memory" && s.Name == "search" {
			search = s.Memory
		}
		if s.Kind == "memory" && s.Name == "remember" {
			remember = s.Memory
		}
	}
	if !strings.HasPrefix(kinds, "run memory model") {
		t.Errorf("spans: %s; want the memory search before the model call", kinds)
	}
	if search == nil || search.Query != "What is my cat called?" || len(search.Memories) == 0 ||
		search.Memories[0].Text != "My cat is called Miso." || search.Memories[0].Thread != "t1" || search.Memories[0].Lexical != 1 {
		t.Fatalf("the search span: %+v", search)
	}
	if remember == nil || len(remember.Memories) != 2 || remember.Memories[0].Thread != "t2" {
		t.Errorf("the remember span: %+v; want the run's two messages", remember)
	}
	// Another user sees none of it.
	if status, _ := e.do("GET", "/api/runs/"+id, "bob", "", ""); status != 404 {
		t.Errorf("bob reads alice's run: %d", status)
	}
}

// runID returns the run's id from its stream's start chunk.
func runID(t *testing.T, chunks []map[string]any) string {
	t.Helper()
	for _, c := range chunks {
		if c["type"] == "start" {
			if id, ok := c["messageId"].(string); ok {
				return strings.TrimPrefix(id, "msg_")
			}
		}
	}
	t.Fatal("no start chunk")
	return ""
}
