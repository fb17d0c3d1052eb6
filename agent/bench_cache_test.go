package agent_test

import (
	"context"
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
