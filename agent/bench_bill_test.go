package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The conversation of BenchmarkConversationBill (issue 37): 50 user
// messages, one run each as a chat sends them, to an agent with a system
// instruction of about 20,000 tokens and 40 tools; every fifth message
// makes the model call a tool (about 250 tokens of output) before it
// answers. Each answer is about 300 tokens, each message about 60.
const (
	billMessages = 50
	billPause    = 30 * time.Second // between two messages, on the test clock
)

var (
	billRules  = genai.NewContentFromText(strings.Repeat("Answer in one sentence. ", 3300), genai.RoleUser)
	billAnswer = strings.Repeat("The forecast says so, and here is why. ", 30)
	billOutput = strings.Repeat("sunny; ", 140)
)

// billTools are the 40 tools of the conversation.
func billTools() *toolset.Set {
	type in struct {
		City string `json:"city" jsonschema:"the city"`
		Day  string `json:"day,omitempty" jsonschema:"the day, today when empty"`
	}
	var tools []*toolset.Tool
	for i := range 40 {
		tools = append(tools, toolset.MustFunc(fmt.Sprintf("weather_%02d", i),
			fmt.Sprintf("Weather report number %d for a city: temperature, wind, rain and the outlook for the days after.", i),
			func(context.Context, in) (string, error) { return billOutput, nil }))
	}
	return toolset.MustNew(tools...)
}

// billReply is the model of the conversation: a tool call for every fifth
// message, then the answer.
func billReply(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	if last.Role == genai.RoleUser && len(last.Parts) > 0 && last.Parts[0].FunctionResponse == nil &&
		strings.HasSuffix(last.Parts[0].Text, "(tool)") {
		return fake.Calls(fake.Call("weather_07", map[string]any{"city": "Oslo"}))
	}
	return fake.Text(billAnswer)
}

// billMode is one way to run the conversation.
type billMode struct {
	name    string
	trimmer *history.Trimmer   // the history's, when not nil
	cache   *agent.CachePolicy // explicit caching, when not nil
}

// billModes are the ways BenchmarkConversationBill runs the conversation.
// The trimmers keep the prompt under 36,000 tokens: the conversation
// reaches about 44,000.
var billModes = []billMode{
	{name: "Implicit"},
	{name: "ImplicitTrimJustEnough", trimmer: &history.Trimmer{MaxTokens: 36000, TargetTokens: 36000}},
	{name: "ImplicitTrimCutPoints", trimmer: &history.Trimmer{MaxTokens: 36000}},
	{name: "Explicit", cache: &agent.CachePolicy{TTL: 10 * time.Minute}},
	{name: "ExplicitConversation", cache: &agent.CachePolicy{TTL: 10 * time.Minute, ConversationStep: 6000}},
	{name: "ExplicitConversationCutPoints", trimmer: &history.Trimmer{MaxTokens: 36000}, cache: &agent.CachePolicy{TTL: 10 * time.Minute, ConversationStep: 6000}},
}

// bill is what one conversation cost, in tokens.
type bill struct {
	calls, bodyBytes  int
	prompt, cached    int     // the prompt tokens of every call, and those served from a cache
	created           int     // the tokens of the caches made, billed at the full price once
	storageTokenHours float64 // the tokens the caches held, by the hours they lived
}

// billed is the bill in input tokens at the full price: cached tokens at
// a tenth of it, a cache's tokens at the full price when it is made, and
// its storage at Gemini 2.5 Flash's prices of 2026 ($1.00 a million tokens
// an hour against $0.30 a million input tokens; caching.md §8).
func (b bill) billed() float64 {
	return float64(b.prompt-b.cached) + float64(b.cached)/10 + float64(b.created) + b.storageTokenHours*1.00/0.30
}

// cacheLife records, from an agent's EventCache events, when each cache
// was made and deleted, on clock.
type cacheLife struct {
	clock   *testClock
	ttl     time.Duration
	mu      sync.Mutex
	made    map[string]time.Time
	touched map[string]time.Time // made or refreshed: it expires a TTL after
	size    map[string]int
	hours   float64
	total   int
}

func (l *cacheLife) Observe(_ context.Context, e *agent.Event) {
	if e.Kind != agent.EventCache {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.Cache.Action {
	case agent.CacheCreated, agent.CacheRecreated:
		now := l.clock.now()
		l.made[e.Cache.Name], l.touched[e.Cache.Name], l.size[e.Cache.Name] = now, now, e.Cache.Tokens
		l.total += e.Cache.Tokens
	case agent.CacheRefreshed:
		l.touched[e.Cache.Name] = l.clock.now()
	case agent.CacheDeleted:
		l.end(e.Cache.Name)
	}
}

// end counts the storage of the cache name, deleted now unless it expired
// before.
func (l *cacheLife) end(name string) {
	if t, ok := l.made[name]; ok {
		end := l.clock.now()
		if exp := l.touched[name].Add(l.ttl); exp.Before(end) {
			end = exp
		}
		l.hours += float64(l.size[name]) * end.Sub(t).Hours()
		delete(l.made, name)
	}
}

// endAll counts the storage of the caches still kept, deleted now or
// expired before.
func (l *cacheLife) endAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name := range l.made {
		l.end(name)
	}
}

// runBill runs the conversation once under m and returns its bill.
func runBill(tb testing.TB, m billMode) bill {
	ctx := context.Background()
	srv := fake.NewServer()
	defer srv.Close()
	clock := newTestClock()
	srv.SetTimeNowFunc(clock.now)
	srv.SetReplyFunc(billReply)
	client := srv.Client()
	life := &cacheLife{clock: clock, made: map[string]time.Time{}, touched: map[string]time.Time{}, size: map[string]int{}}
	if m.cache != nil {
		life.ttl = m.cache.TTL
	}
	cfg := agent.Config{Models: client.Models, Model: model, Tools: billTools(), Observer: life,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: billRules}}
	if m.trimmer != nil {
		cfg.PrepareHistory = m.trimmer.Prepare
	}
	if m.cache != nil {
		p := *m.cache
		p.Caches = client.Caches
		cfg.Cache = &p
	}
	a, err := agent.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if m.cache != nil {
		agent.SetCacheClock(a, clock.now)
	}
	var b bill
	var hist []*genai.Content
	for i := range billMessages {
		text := fmt.Sprintf("Message %d: what is the weather like where I am going next? %s", i, strings.Repeat("Be precise. ", 15))
		if i%5 == 4 {
			text += " (tool)"
		}
		res, err := a.Run(ctx, append(hist, genai.NewContentFromText(text, genai.RoleUser)))
		if err != nil {
			tb.Fatalf("message %d: %v", i, err)
		}
		hist = res.History
		b.prompt += res.Usage.PromptTokens
		b.cached += res.Usage.CachedTokens
		clock.advance(billPause)
	}
	life.endAll() // Close deletes those still kept, now
	if err := a.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.Method == fake.MethodGenerateContent {
			b.calls++
			b.bodyBytes += len(r.Body)
		}
		if r.Rejection != nil && r.Method == fake.MethodGenerateContent {
			tb.Fatalf("request #%d refused: %v", r.Seq, r.Rejection.Err)
		}
	}
	b.created, b.storageTokenHours = life.total, life.hours
	return b
}

// BenchmarkConversationBill runs the conversation of issue 37 under each
// way of caching and reports what its input was billed, in tokens at the
// full input price (billed-tokens), and against the same conversation
// with no caching at all, every prompt token at the full price
// (billed/uncached). The fake's implicit caching hits every shared prefix
// past the minimum; the API's is best effort (caching.md §10), so its
// figures are what implicit caching gives at best.
func BenchmarkConversationBill(b *testing.B) {
	for _, m := range billModes {
		b.Run(m.name, func(b *testing.B) {
			var last bill
			for b.Loop() {
				last = runBill(b, m)
			}
			b.ReportMetric(float64(last.prompt), "prompt-tokens")
			b.ReportMetric(float64(last.prompt-last.cached)/float64(last.calls), "full-price-tokens/call")
			b.ReportMetric(float64(last.cached)/float64(last.calls), "cached-tokens/call")
			b.ReportMetric(float64(last.created), "cache-made-tokens")
			b.ReportMetric(last.storageTokenHours, "cache-token-hours")
			b.ReportMetric(last.billed(), "billed-tokens")
			b.ReportMetric(last.billed()/float64(last.prompt), "billed/uncached")
			b.ReportMetric(float64(last.bodyBytes)/float64(last.calls), "body-bytes/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestConversationBill checks, on the fake, what BenchmarkConversationBill
// measures: with the conversation's prefix in the explicit cache, the
// conversation's billed input (the caches' making and storage included)
// is below that of the explicit cache of the system instruction and tools
// alone, and both below a half of no caching; the prefix is made in a few
// steps, not every run; each request sends a few KB, not the prompt.
func TestConversationBill(t *testing.T) {
	if testing.Short() {
		t.Skip("two 50-message conversations")
	}
	explicit, conv := runBill(t, billModes[3]), runBill(t, billModes[4])
	t.Logf("billed/uncached: explicit %.3f, with the conversation %.3f", explicit.billed()/float64(explicit.prompt), conv.billed()/float64(conv.prompt))
	if conv.billed() >= explicit.billed() || explicit.billed() > float64(explicit.prompt)/2 {
		t.Errorf("billed %.0f with the conversation cached, %.0f without, of %d prompt tokens; want less with, and both below a half",
			conv.billed(), explicit.billed(), explicit.prompt)
	}
	if steps := conv.created / 20000; steps > 8 {
		t.Errorf("caches of %d tokens made; want a few steps of the prefix", conv.created)
	}
	if perCall := conv.bodyBytes / conv.calls; perCall > 16<<10 {
		t.Errorf("%d bytes a request; want the cached prefix left out", perCall)
	}
}
