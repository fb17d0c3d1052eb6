package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"google.golang.org/genai"
)

// events records a service's events.
type events struct {
	mu  sync.Mutex
	all []*memory.Event
}

func (e *events) ObserveMemory(_ context.Context, ev *memory.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) of(kind memory.EventKind) []*memory.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*memory.Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func facts(t *testing.T, svc *memory.Service, user string) []memory.Memory {
	t.Helper()
	p, err := svc.List(context.Background(), user, memory.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []memory.Memory
	for _, m := range p.Memories {
		if m.Kind == memory.KindFact {
			out = append(out, m)
		}
	}
	return out
}

var factID = regexp.MustCompile(`- (mem_[A-Z0-9]+): The user lives in Paris`)

// The extraction model of the tests: it reads the prompt the service sent
// and answers as a model would, as JSON.
func extractor(req *geminitest.Request) *geminitest.Reply {
	prompt := req.Text()
	var out map[string]any
	switch {
	case strings.Contains(prompt, "I live in Paris"):
		out = map[string]any{"facts": []any{map[string]any{"text": "The user lives in Paris.", "message": 0}}}
	case strings.Contains(prompt, "moved to Lisbon"):
		f := map[string]any{"text": "The user lives in Lisbon, since May 2026.", "message": 0}
		if m := factID.FindStringSubmatch(prompt); m != nil {
			f["replaces"] = []string{m[1], "mem_NOT_SHOWN"}
		}
		out = map[string]any{"facts": []any{f}}
	default:
		out = map[string]any{"facts": []any{}}
	}
	b, _ := json.Marshal(out)
	return geminitest.Text(string(b))
}

// A model reads each conversation after it is ingested, in the
// background, and a newer fact replaces the one it contradicts; the cost
// is reported.
func TestExtractionConsolidates(t *testing.T) {
	srv := geminitest.Start(t)
	srv.SetReplyFunc(extractor)
	ctx := context.Background()
	ev := &events{}
	svc, err := memory.New(memory.Config{Logger: discard(), Observer: ev,
		Extraction: &memory.Extraction{Models: srv.Client().Models, Model: "gemini-2.5-flash"}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)

	thread1 := []*genai.Content{genai.NewContentFromText("Hi! I live in Paris.", genai.RoleUser), genai.NewContentFromText("Lovely city!", genai.RoleModel)}
	if _, err := svc.IngestThread(ctx, "alice", "t1", thread1, 0); err != nil {
		t.Fatal(err)
	}
	svc.Wait(ctx)
	got := facts(t, svc, "alice")
	if len(got) != 1 || got[0].Text != "The user lives in Paris." || got[0].Thread != "t1" || got[0].Message != 0 || got[0].Author != "user" {
		t.Fatalf("after the first conversation, facts = %+v", got)
	}
	paris := got[0].ID

	thread2 := []*genai.Content{genai.NewContentFromText("News: I moved to Lisbon last month.", genai.RoleUser)}
	if _, err := svc.IngestThread(ctx, "alice", "t2", thread2, 0); err != nil {
		t.Fatal(err)
	}
	svc.Wait(ctx)
	got = facts(t, svc, "alice")
	if len(got) != 1 || !strings.Contains(got[0].Text, "Lisbon") || got[0].Thread != "t2" {
		t.Fatalf("after the second conversation, facts = %+v; want the Lisbon fact only", got)
	}
	res, _ := svc.Search(ctx, "alice", "Where does the user live?", &memory.SearchOptions{Kinds: []memory.Kind{memory.KindFact}})
	if len(res) != 1 || res[0].ID == paris {
		t.Errorf("search for where the user lives = %+v", res)
	}
	// The second prompt showed the first fact for consolidation.
	var prompts []string
	for _, r := range srv.Requests() {
		if r.Method == "generateContent" {
			prompts = append(prompts, r.Text())
		}
	}
	if len(prompts) != 2 || !strings.Contains(prompts[1], paris) || !strings.Contains(prompts[1], "[0] user") {
		t.Errorf("the second prompt: %q", prompts[len(prompts)-1])
	}
	ex := ev.of(memory.EventExtract)
	if len(ex) != 2 || ex[1].Usage.TotalTokens == 0 || len(ex[1].Removed) != 1 || ex[1].Removed[0] != paris || ex[1].Err != nil {
		t.Errorf("extraction events = %+v; want two, the second replacing %s, with their usage", ex, paris)
	}
	// The messages themselves stay remembered.
	if res, _ := svc.Search(ctx, "alice", "Paris", &memory.SearchOptions{Kinds: []memory.Kind{memory.KindMessage}}); len(res) == 0 {
		t.Error("the conversation's message about Paris was lost")
	}
	srv.AssertComplete(t)
}

// A failing model is retried, then the failure is reported; the
// conversation stays remembered, and the answer of the run was never
// delayed (IngestThread returns before the model is called).
func TestExtractionFailures(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := context.Background()
	ev := &events{}
	svc, err := memory.New(memory.Config{Logger: discard(), Observer: ev, MaxAttempts: 2, RetryDelay: time.Millisecond,
		Extraction: &memory.Extraction{Models: srv.Client().Models, Model: "gemini-2.5-flash"}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	gate := make(chan struct{})
	srv.SetReplyFunc(func(*geminitest.Request) *geminitest.Reply {
		<-gate
		return geminitest.Error(400, "the model is confused") // permanent: the loop does not retry it
	})
	thread := []*genai.Content{genai.NewContentFromText("My dog is called Rex.", genai.RoleUser)}
	if _, err := svc.IngestThread(ctx, "alice", "t1", thread, 0); err != nil {
		t.Fatal(err)
	}
	// Ingest returned with the model call still waiting: searchable now.
	if res, _ := svc.Search(ctx, "alice", "dog name", nil); len(res) != 1 {
		t.Fatalf("the message is not searchable while its extraction waits: %+v", res)
	}
	close(gate)
	svc.Wait(ctx)
	ex := ev.of(memory.EventExtract)
	if len(ex) != 2 || ex[0].Attempt != 1 || ex[0].Final || ex[1].Attempt != 2 || !ex[1].Final || ex[1].Err == nil {
		t.Fatalf("extraction events = %+v; want attempt 1, then attempt 2 final, with the error", ex)
	}
	var apiErr genai.APIError
	if !errors.As(ex[1].Err, &apiErr) || apiErr.Code != 400 {
		t.Errorf("the reported error %v does not wrap the API's", ex[1].Err)
	}
	if res, _ := svc.Search(ctx, "alice", "dog name", nil); len(res) != 1 {
		t.Error("the conversation was lost with its extraction")
	}
}

// Forgetting a user removes every trace: memories, vectors, and
// extraction queued or running, which writes nothing afterwards.
func TestForgetUserDuringExtraction(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := context.Background()
	started := make(chan struct{}, 8)
	srv.SetReplyFunc(func(req *geminitest.Request) *geminitest.Reply {
		reply := geminitest.Text(`{"facts":[{"text":"The user has a secret.","message":0}]}`)
		if strings.Contains(req.Text(), "My secret is") { // alice's: it runs until cancelled
			started <- struct{}{}
			reply = reply.WithDelay(time.Hour)
		}
		return reply
	})
	ev := &events{}
	svc, err := memory.New(memory.Config{Logger: discard(), Observer: ev, Workers: 1, RetryDelay: time.Millisecond,
		Embedder:   &memory.GeminiEmbedder{Models: srv.Client().Models},
		Extraction: &memory.Extraction{Models: srv.Client().Models, Model: "gemini-2.5-flash"}})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	for _, th := range []string{"t1", "t2", "t3"} {
		if _, err := svc.IngestThread(ctx, "alice", th, []*genai.Content{genai.NewContentFromText("My secret is "+th, genai.RoleUser)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	svc.IngestThread(ctx, "bob", "t1", []*genai.Content{genai.NewContentFromText("Bob's secret", genai.RoleUser)}, 0)
	<-started // an extraction of alice's is running; the others wait in the queue
	if err := svc.ForgetUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	svc.Wait(ctx)
	st, _ := svc.Store().Stats(ctx, "alice", []string{"secret"})
	p, _ := svc.List(ctx, "alice", memory.ListOptions{})
	vectors := 0
	svc.Store().Vectors(ctx, "alice", func(string, []float32) error { vectors++; return nil })
	if st.Count != 0 || len(p.Memories) != 0 || vectors != 0 || len(st.DF) != 0 && st.DF["secret"] != 0 {
		t.Errorf("after ForgetUser: %d memories, %d listed, %d vectors, df %v", st.Count, len(p.Memories), vectors, st.DF)
	}
	for _, e := range ev.of(memory.EventExtract) {
		if e.User == "alice" && e.Err == nil {
			t.Errorf("an extraction of alice's wrote facts: %+v", e)
		}
	}
	if p, _ := svc.List(ctx, "bob", memory.ListOptions{}); len(p.Memories) == 0 {
		t.Error("bob's memories went with alice's")
	}
}
