package history_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The fake's input limit for these tests, in its tokens (4 bytes of JSON
// each), and the Trimmer's limit under it.
const (
	fakeLimit   = 8_000
	trimAt      = 6_500
	outputBytes = 2000 // each tool output
)

type cityIn struct {
	City string `json:"city"`
}

// report returns a large output for every city, as a search or a file
// read does.
var report = toolset.MustFunc("get_report", "A long report on a city", func(_ context.Context, in cityIn) (string, error) {
	return in.City + ": " + strings.Repeat("lorem ipsum ", outputBytes/12), nil
})

// longServer is a fake with the input limit.
func longServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	srv.SetInputTokenLimit(fakeLimit)
	return srv
}

// ask runs one turn of the conversation: the model asks for the report on
// the city, then answers.
func ask(a *agent.Agent, srv *fake.Server, store session.Store, i int) (*agent.Result, error) {
	city := fmt.Sprint("city-", i)
	srv.Enqueue(fake.Calls(fake.Call("get_report", map[string]any{"city": city})), fake.Text("Read it."))
	return session.Run(ctx, a, store, "long", genai.Text("Report on "+city)...)
}

func longAgent(t *testing.T, srv *fake.Server, prepare agent.HistoryFunc) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3, Tools: toolset.MustNew(report),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You read reports.", genai.RoleUser)},
		PrepareHistory: prepare, Retry: agent.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A 200-turn conversation, each turn reading a 2 KB report, kept in a
// session store: with the Trimmer every run succeeds under the fake's
// limit, the first message is in every request and the store keeps the
// whole conversation; without it, the conversation hits the limit early.
func TestLongConversationStaysUnderTheLimit(t *testing.T) {
	const turns = 200
	srv := longServer(t)
	a := longAgent(t, srv, history.Trimmer{MaxTokens: trimAt}.Prepare)
	store := session.NewMemory()
	maxPrompt := 0
	for i := range turns {
		res, err := ask(a, srv, store, i)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		for _, turn := range res.Turns {
			maxPrompt = max(maxPrompt, turn.Usage.PromptTokens)
		}
		if first := srv.LastRequest().Contents[0].Parts[0].Text; first != "Report on city-0" {
			t.Fatalf("turn %d: the first message is gone: %q", i, first)
		}
	}
	if rej := srv.Rejections(); len(rej) > 0 {
		t.Fatalf("the fake refused %d requests: %s", len(rej), rej[0].Err.Message)
	}
	stored, err := store.Load(ctx, "long")
	if err != nil || len(stored) != turns*4 {
		t.Fatalf("stored %d contents, %v; want the whole conversation, %d", len(stored), err, turns*4)
	}
	t.Logf("%d turns, %d requests, largest prompt %d tokens (limit %d, trimmed at %d); the whole conversation is %d tokens",
		turns, len(srv.Requests()), maxPrompt, fakeLimit, trimAt, history.Estimate(stored...))

	// The same conversation without the Trimmer fails, with the API's 400.
	srv2 := longServer(t)
	plain := longAgent(t, srv2, nil)
	store2 := session.NewMemory()
	for i := range turns {
		_, err := ask(plain, srv2, store2, i)
		if err == nil {
			continue
		}
		var ae genai.APIError
		if !errors.As(err, &ae) || ae.Code != 400 || !strings.Contains(ae.Message, "exceeds the maximum number of tokens allowed (8000)") {
			t.Fatalf("without the Trimmer, turn %d failed with %v; want the token limit's 400", i, err)
		}
		t.Logf("without the Trimmer, turn %d of %d failed: %s", i, turns, ae.Message)
		return
	}
	t.Fatalf("without the Trimmer, all %d turns passed: the limit is too high for this test to prove anything", turns)
}

// One run of 25 steps, each reading a 2 KB report: all of it is the
// current exchange, which is never dropped (its calls' signatures are
// checked), so the Trimmer shortens the older outputs, and the run fits.
func TestLongRunStaysUnderTheLimit(t *testing.T) {
	const steps = 25
	for _, trim := range []bool{true, false} {
		srv := fake.NewServer()
		srv.SetInputTokenLimit(fakeLimit)
		srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
			done := 0
			for _, c := range r.Contents {
				if c.Parts[0].FunctionResponse != nil {
					done++
				}
			}
			if done == steps {
				return fake.Text("Read them all.")
			}
			return fake.Calls(fake.Call("get_report", map[string]any{"city": fmt.Sprint("city-", done)}))
		})
		var prepare agent.HistoryFunc
		if trim {
			prepare = history.Trimmer{MaxTokens: trimAt}.Prepare
		}
		a := longAgent(t, srv, prepare)
		res, err := a.With(agent.Overrides{MaxTurns: steps + 1}).Run(ctx, genai.Text("Read the reports on 25 cities, one at a time."))
		srv.Close()
		switch {
		case trim && err != nil:
			t.Fatalf("with the Trimmer: %v", err)
		case trim && len(res.History) != 2+2*steps:
			t.Errorf("with the Trimmer: Result.History has %d contents; want all %d", len(res.History), 2+2*steps)
		case !trim && (err == nil || !strings.Contains(err.Error(), "exceeds the maximum number of tokens allowed")):
			t.Errorf("without the Trimmer: %v; want the token limit's 400", err)
		}
	}
}
