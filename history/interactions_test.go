package history_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The long conversation on the Interactions API, where the server keeps
// the history: a trim changes what the model sees, which only a request
// with the whole (trimmed) history can say, so each run whose history was
// trimmed sends it whole once, and its later calls continue that
// interaction. Every run stays under the limit, which on that API counts
// the server's history too.
func TestLongConversationOnInteractions(t *testing.T) {
	const turns = 40
	srv := longServer(t)
	models := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a, err := agent.New(agent.Config{Models: models, Model: model3, Tools: toolset.MustNew(report),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You read reports.", genai.RoleUser)},
		PrepareHistory: history.Trimmer{MaxTokens: trimAt}.Prepare, Retry: agent.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	store := session.NewMemory()
	firstTrim := -1
	var wholeBytes, chainedBytes, whole, chained int
	for i := range turns {
		before := len(srv.Requests())
		if _, err := ask(a, srv, store, i); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		reqs := srv.Requests()[before:]
		if len(reqs) != 2 {
			t.Fatalf("turn %d made %d requests", i, len(reqs))
		}
		stored, _ := store.Load(ctx, "long")
		trimmed := len(reqs[0].Contents) < len(stored)-3 // the stored conversation, then the run's message; the run stored 4
		if trimmed && firstTrim < 0 {
			firstTrim = i
		}
		for k, r := range reqs {
			if r.PreviousInteractionID == "" {
				whole++
				wholeBytes += len(r.Body)
			} else {
				chained++
				chainedBytes += len(r.Body)
			}
			switch {
			case i == 0 && k == 0:
			case k == 0 && trimmed && r.PreviousInteractionID != "":
				t.Fatalf("turn %d: a trimmed history continued %q", i, r.PreviousInteractionID)
			case k == 0 && !trimmed && r.PreviousInteractionID == "":
				t.Fatalf("turn %d: an untrimmed history was sent whole", i)
			case k == 1 && r.PreviousInteractionID == "":
				t.Fatalf("turn %d: the run's second call was sent whole", i)
			}
		}
	}
	if firstTrim < 0 {
		t.Fatal("no run trimmed: the test proves nothing")
	}
	if rej := srv.Rejections(); len(rej) > 0 {
		t.Fatalf("the fake refused %d requests: %s", len(rej), rej[0].Err.Message)
	}
	t.Logf("%d turns: the first trim in turn %d; %d requests sent whole (%d bytes each on average), %d chained (%d bytes each)",
		turns, firstTrim, whole, wholeBytes/max(whole, 1), chained, chainedBytes/max(chained, 1))
}
