package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// benchRules is a system instruction of about 3,000 tokens, above the
// cache minimum of model.
var benchRules = genai.NewContentFromText(strings.Repeat("Answer in one short sentence, and name your sources. ", 230), genai.RoleUser)

// benchLongAgent returns an agent with forecast and benchRules on a fresh
// server playing twoCallScript, caching under policy when it is not nil.
func benchLongAgent(b *testing.B, policy *agent.CachePolicy) *agent.Agent {
	srv := fake.NewServer()
	b.Cleanup(srv.Close)
	srv.SetReplyFunc(twoCallScript)
	client := srv.Client()
	if policy != nil {
		policy.Caches = client.Caches
	}
	a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(forecast),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: benchRules}, Cache: policy})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close(context.Background()) })
	b.ReportAllocs()
	b.ResetTimer()
	return a
}

// BenchmarkRunLongPrompt is agent.Run on the two-call conversation with a
// long system instruction, uncached: the baseline of BenchmarkRunCached.
func BenchmarkRunLongPrompt(b *testing.B) {
	a := benchLongAgent(b, nil)
	for b.Loop() {
		if _, err := a.Run(context.Background(), benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunCached is the same through the agent's cache, made before
// the loop: what the cache bookkeeping costs each run (finding the cache
// of the request's config, the request copy without the cached parts),
// and what the requests save by not carrying the system instruction and
// the tools.
func BenchmarkRunCached(b *testing.B) {
	a := benchLongAgent(b, &agent.CachePolicy{TTL: time.Hour})
	if _, err := a.Run(context.Background(), benchQuestion); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Run(context.Background(), benchQuestion); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChat is a stored chat of 40 messages (about 7,000 tokens) and the
// question that continues it.
var benchChat = func() []*genai.Content {
	var out []*genai.Content
	for i := range 20 {
		out = append(out, genai.NewContentFromText(fmt.Sprintf("Question %d: %s", i, strings.Repeat("How is the weather? ", 10)), genai.RoleUser),
			genai.NewContentFromText(strings.Repeat("The weather is fine, thank you for asking. ", 30), genai.RoleModel))
	}
	return append(out, benchQuestion...)
}()

// BenchmarkRunChat is agent.Run continuing benchChat with the long system
// instruction, caching its system instruction and tools: the baseline of
// BenchmarkRunChatCached.
func BenchmarkRunChat(b *testing.B) {
	a := benchLongAgent(b, &agent.CachePolicy{TTL: time.Hour})
	if _, err := a.Run(context.Background(), benchChat); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Run(context.Background(), benchChat); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunChatCached is the same with the chat's prefix in the cache
// (ConversationStep): what finding the prefix's cache costs (the chat's
// JSON hashed on every model call), against the prefix left out of the
// requests.
func BenchmarkRunChatCached(b *testing.B) {
	a := benchLongAgent(b, &agent.CachePolicy{TTL: time.Hour, ConversationStep: 2000})
	if _, err := a.Run(context.Background(), benchChat); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Run(context.Background(), benchChat); err != nil {
			b.Fatal(err)
		}
	}
}
