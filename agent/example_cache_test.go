package agent_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An agent with a long system instruction caches it, with its tools, once:
// every model call names the cache and bills those tokens at the cached
// price. Close deletes the cache.
func ExampleCachePolicy() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny in Paris."))
	client := srv.Client()
	ctx := context.Background()

	rules := strings.Repeat("Answer in one short sentence and name your source. ", 200) // about 2,500 tokens
	a, err := agent.New(agent.Config{
		Models:         client.Models,
		Model:          "gemini-2.5-flash",
		Tools:          toolset.MustNew(forecast),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(rules, genai.RoleUser)},
		Cache:          &agent.CachePolicy{Caches: client.Caches, TTL: 30 * time.Minute},
	})
	if err != nil {
		panic(err)
	}
	defer a.Close(ctx)

	res, err := a.Run(ctx, genai.Text("Weather in Paris?"))
	if err != nil {
		panic(err)
	}
	u := res.Usage
	fmt.Println(res.Text)
	fmt.Printf("%d prompt tokens: %d cached, %d at the full price\n", u.PromptTokens, u.CachedTokens, u.UncachedTokens())
	// Gemini 2.5 Flash's prices in 2026, dollars per million tokens.
	fmt.Printf("$%.6f\n", u.Cost(agent.Price{Input: 0.30, CachedInput: 0.03, Output: 2.50}))
	a.Close(ctx)
	fmt.Println(len(srv.Caches()), "caches left")
	// Output:
	// Sunny in Paris.
	// 5322 prompt tokens: 5244 cached, 78 at the full price
	// $0.000231
	// 0 caches left
}
