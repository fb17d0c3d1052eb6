package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type userKey struct{}

func userOf(ctx context.Context) string { u, _ := ctx.Value(userKey{}).(string); return u }

func withUser(user string) context.Context {
	return context.WithValue(context.Background(), userKey{}, user)
}

func remembering(t *testing.T) *memory.Service {
	t.Helper()
	svc, err := memory.New(memory.Config{Logger: discard(), Now: func() time.Time { return time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	ctx := context.Background()
	svc.IngestThread(ctx, "alice", "old", []*genai.Content{
		genai.NewContentFromText("My cat is called Miso and she is ginger.", genai.RoleUser),
		genai.NewContentFromText("Miso sounds adorable!", genai.RoleModel),
	}, 0)
	svc.IngestThread(ctx, "alice", "now", []*genai.Content{genai.NewContentFromText("Thinking about my cat today.", genai.RoleUser)}, 0)
	svc.Remember(ctx, "bob", memory.Fact{Text: "Bob's cat is called Felix."})
	return svc
}

// The search tool, called by the model, answers the user's memories, not
// another user's nor those of the run's own conversation.
func TestSearchTool(t *testing.T) {
	svc := remembering(t)
	tool, err := svc.Tool(memory.ToolOptions{User: userOf})
	if err != nil {
		t.Fatal(err)
	}
	if !tool.ReadOnly || tool.Name != memory.DefaultToolName {
		t.Errorf("tool %q read-only %v", tool.Name, tool.ReadOnly)
	}
	srv := geminitest.Start(t)
	srv.Enqueue(geminitest.Calls(geminitest.Call(memory.DefaultToolName, map[string]any{"query": "cat name"})), geminitest.Text("Miso."))
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: toolset.MustNew(tool)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := agent.WithConversation(withUser("alice"), "now")
	if _, err := a.Run(ctx, []*genai.Content{genai.NewContentFromText("What's my cat called?", genai.RoleUser)}); err != nil {
		t.Fatal(err)
	}
	resp := srv.LastRequest().LastFunctionResponses(memory.DefaultToolName)
	if len(resp) != 1 {
		t.Fatalf("no response of the tool")
	}
	out := resp[0].Response["result"]
	got, _ := out.([]any)
	if len(got) == 0 || !strings.Contains(got[0].(map[string]any)["text"].(string), "Miso") {
		t.Fatalf("the tool answered %v; want the message about Miso first", out)
	}
	for _, m := range got {
		text := m.(map[string]any)["text"].(string)
		if strings.Contains(text, "Felix") || strings.Contains(text, "today") {
			t.Errorf("the tool answered %q: another user's memory, or one of the run's own conversation", text)
		}
	}
	if d := got[0].(map[string]any)["date"]; d != "4 May 2026" {
		t.Errorf("date %v", d)
	}
	// No user: an error the model reads.
	res := tool.Execute(context.Background(), map[string]any{"query": "cat"})
	if !res.IsError || !strings.Contains(res.Output.(string), "no known user") {
		t.Errorf("without a user: %+v", res)
	}
	srv.AssertComplete(t)
}

// Preload puts the relevant memories before the new message of the
// request, within its budget, for every model call of the run, and never
// in the stored history.
func TestPreload(t *testing.T) {
	svc := remembering(t)
	srv := geminitest.Start(t)
	tool := toolset.MustDefine(toolset.Tool{Name: "noop", Description: "does nothing",
		Run: func(context.Context, map[string]any) (any, error) { return "ok", nil }})
	srv.Enqueue(geminitest.Calls(geminitest.Call("noop", nil)), geminitest.Text("She's called Miso."))
	pre := &memory.Preload{Service: svc, User: userOf}
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: toolset.MustNew(tool), PrepareHistory: pre.Prepare})
	if err != nil {
		t.Fatal(err)
	}
	ctx := agent.WithConversation(withUser("alice"), "now")
	question := genai.NewContentFromText("What's my cat called again?", genai.RoleUser)
	res, err := a.Run(ctx, []*genai.Content{question})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if len(r.Contents) < 2 {
			t.Fatalf("request %d has %d contents", i, len(r.Contents))
		}
		mem := r.Contents[0].Parts[0].Text
		if !strings.HasPrefix(mem, memory.MemoriesPrefix) || !strings.Contains(mem, "4 May 2026, user: My cat is called Miso") ||
			strings.Contains(mem, "Felix") || strings.Contains(mem, "today") {
			t.Errorf("request %d's first content: %q", i, mem)
		}
		if r.Contents[1].Parts[0].Text != question.Parts[0].Text {
			t.Errorf("request %d: the question does not follow the memories", i)
		}
	}
	for _, c := range res.History {
		if strings.HasPrefix(c.Parts[0].Text, memory.MemoriesPrefix) {
			t.Error("the memories are in the run's history")
		}
	}
	// A small budget: fewer memories.
	if b := memory.Block([]memory.Result{{Memory: memory.Memory{Text: strings.Repeat("long ", 100)}}}, 50); b != "" {
		t.Errorf("a memory over the budget was kept: %q", b)
	}
	srv.AssertComplete(t)
}

// A store that fails: Preload's run goes on without memories, and the
// failure is reported.
type failingStore struct{ memory.Store }

func (failingStore) Stats(context.Context, string, []string) (memory.Stats, error) {
	return memory.Stats{}, errors.New("the database is down")
}

func TestPreloadStoreDown(t *testing.T) {
	ev := &events{}
	svc, err := memory.New(memory.Config{Store: failingStore{memory.NewStore()}, Observer: ev, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	srv := geminitest.Start(t)
	srv.Enqueue(geminitest.Text("Hello."))
	pre := &memory.Preload{Service: svc, User: userOf}
	a, _ := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", PrepareHistory: pre.Prepare})
	res, err := a.Run(withUser("alice"), []*genai.Content{genai.NewContentFromText("Hi there", genai.RoleUser)})
	if err != nil || res.Text != "Hello." {
		t.Fatalf("run: %v, %v", res, err)
	}
	if s := ev.of(memory.EventSearch); len(s) != 1 || s[0].Err == nil {
		t.Errorf("search events %+v; want the failure", s)
	}
	if n := len(srv.LastRequest().Contents); n != 1 {
		t.Errorf("the request has %d contents, want the message alone", n)
	}
}
