package history_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// samePrefix reports whether sent begins with every content of prev,
// byte for byte as JSON: the prompt prefix the API's implicit cache would
// find again.
func samePrefix(prev, sent []*genai.Content) bool {
	if len(sent) < len(prev) {
		return false
	}
	for i, c := range prev {
		a, _ := json.Marshal(c)
		b, _ := json.Marshal(sent[i])
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

// A chat, as session.Run drives one: one run per user message, each
// passing the whole stored conversation to the Trimmer. Once the
// conversation has outgrown MaxTokens, what a run sends begins with all
// that the run before it sent, byte for byte, except on the runs where a
// cut is due: where the conversation has grown past another step
// (MaxTokens - TargetTokens) over MaxTokens. Every trimmed history fits
// MaxTokens and keeps the first message.
func TestCutPointsStayPutBetweenCuts(t *testing.T) {
	const (
		maxTokens = 6_000
		target    = 4_500
		stepSize  = maxTokens - target
		runs      = 120
	)
	tr := history.Trimmer{MaxTokens: maxTokens, TargetTokens: target, ToolOutputBytes: 1 << 20}
	var stored, prev []*genai.Content
	steps, cuts, trimmed := 0, 0, 0
	for i := range runs {
		city := fmt.Sprint("city-", i)
		stored = append(stored, userText("Weather in "+city+"? "+strings.Repeat("please ", i%7*20)))
		sent, err := tr.Prepare(ctx, info(stored))
		if err != nil {
			t.Fatal(err)
		}
		// The run's steps and answer join the stored conversation.
		stored = append(stored, step([]byte("sig"), bigOutput(200+i%5*150), city)...)
		stored = append(stored, modelText("Sunny in "+city+". "+strings.Repeat("Clear skies. ", i%3*30), nil))

		all := history.Estimate(stored[:len(stored)-3]...)
		if all <= maxTokens {
			if len(sent) != len(stored)-3 {
				t.Fatalf("run %d: %d of %d tokens, under the limit, and trimmed", i, all, maxTokens)
			}
			prev = sent
			continue
		}
		trimmed++
		if est := history.Estimate(sent...); est > maxTokens {
			t.Fatalf("run %d: sent %d tokens; want at most %d", i, est, maxTokens)
		}
		if sent[0] != stored[0] {
			t.Fatalf("run %d: the first message is gone", i)
		}
		due := (all - maxTokens + stepSize - 1) / stepSize // steps of growth past the limit
		kept := samePrefix(prev, sent)
		if kept == (due != steps) {
			t.Fatalf("run %d: the prefix was kept: %v; a cut was due: %v (%d tokens, step %d then %d)", i, kept, due != steps, all, steps, due)
		}
		if !kept {
			cuts++
		}
		steps, prev = due, sent
	}
	if trimmed < runs/2 || cuts < 5 {
		t.Fatalf("%d runs trimmed, %d cuts: the conversation is too short to prove anything", trimmed, cuts)
	}
	t.Logf("%d runs, %d over the limit, %d of them cut (each other one sent the previous run's prompt as its prefix)", runs, trimmed, cuts)
}

// chatTokens runs a 50-message chat through the real genai client against
// the fake, one run per user message (as session.Run drives a chat), with a
// 20,000-token system instruction and the Trimmer, and returns the prompt
// tokens and the cached tokens the fake reported in all, and how many of
// the trimmed runs missed the cache beyond the system instruction and the
// first message, which every prompt begins with.
func chatTokens(t *testing.T, tr history.Trimmer) (prompt, cached, misses int) {
	t.Helper()
	const messages = 50
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		return fake.Text("Noted. " + strings.Repeat("Here is what I think. ", 90))
	})
	system := strings.Repeat("You answer questions about cities. ", 80_000/35+1) // 20,000 of the fake's tokens (4 bytes each)
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(system, genai.RoleUser)},
		PrepareHistory: tr.Prepare, Retry: agent.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	store := session.NewMemory()
	systemTokens := 0
	for i := range messages {
		res, err := session.Run(ctx, a, store, "chat", genai.Text(fmt.Sprint("Tell me about city-", i, ". ", strings.Repeat("And more. ", 150)))...)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		prompt += res.Usage.PromptTokens
		cached += res.Usage.CachedTokens
		if i == 0 {
			// Nothing cached yet: the second run shares the system
			// instruction and the first message with it.
			continue
		}
		if i == 1 {
			systemTokens = res.Usage.CachedTokens
		}
		sent := srv.LastRequest().Contents
		if len(sent) < 2*(i+1)-1 && res.Usage.CachedTokens <= systemTokens {
			misses++
		}
	}
	if rej := srv.Rejections(); len(rej) > 0 {
		t.Fatalf("the fake refused %d requests: %s", len(rej), rej[0].Err.Message)
	}
	return prompt, cached, misses
}

// Through the real genai client against the fake, whose implicit cache
// reports a prompt's prefix shared with an earlier one as cached: a long
// chat trimmed at fixed cut points reports the contents it kept as cached
// run after run, and misses beyond the system instruction and the first
// message only on the runs that cut. Cutting afresh each run (TargetTokens equal to
// MaxTokens: each run cuts as little as it can, so one more exchange each
// time) misses on every run past the limit.
func TestLongChatHitsTheImplicitCache(t *testing.T) {
	const maxTokens, target = 20_000, 15_000
	prompt, cached, misses := chatTokens(t, history.Trimmer{MaxTokens: maxTokens, TargetTokens: target})
	everyRun, everyCached, everyMisses := chatTokens(t, history.Trimmer{MaxTokens: maxTokens, TargetTokens: maxTokens})
	t.Logf("cut points: %d prompt tokens, %d cached (%.1f%%), %d runs missed past the system instruction and first message",
		prompt, cached, 100*float64(cached)/float64(prompt), misses)
	t.Logf("a cut every run: %d prompt tokens, %d cached (%.1f%%), %d runs missed past the system instruction and first message",
		everyRun, everyCached, 100*float64(everyCached)/float64(everyRun), everyMisses)
	if misses > 10 || everyMisses < 25 {
		t.Errorf("%d runs missed with cut points (want at most 10), %d cutting every run (want at least 25)", misses, everyMisses)
	}
	if cached <= everyCached {
		t.Errorf("cut points: %d cached tokens; want more than cutting every run, %d", cached, everyCached)
	}
}
