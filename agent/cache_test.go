package agent_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// longRules is a system instruction above the cache minimum of model
// (2048 tokens, about 4 bytes each).
var longRules = genai.NewContentFromText(strings.Repeat("Answer in one short sentence. ", 320), genai.RoleUser)

// testClock is a clock the fake server and an agent's cache bookkeeping
// share, which a test moves forward.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// cacheBackends are the backends that have explicit caching: the
// Interactions API has none.
var cacheBackends = []struct {
	name   string
	client func(*fake.Server) *genai.Client
}{
	{"GeminiAPI", (*fake.Server).Client},
	{"VertexAI", (*fake.Server).VertexClient},
}

// cacheFixture is a fake server on a test clock, with an agent of its
// backend's client that caches.
type cacheFixture struct {
	srv    *fake.Server
	clock  *testClock
	client *genai.Client
	events *eventRecorder
}

// eventRecorder keeps the EventCache events an agent reports.
type eventRecorder struct {
	mu      sync.Mutex
	reports []agent.CacheReport
}

func (r *eventRecorder) Observe(_ context.Context, e *agent.Event) {
	if e.Kind == agent.EventCache {
		r.mu.Lock()
		r.reports = append(r.reports, *e.Cache)
		r.mu.Unlock()
	}
}

func (r *eventRecorder) actions() []agent.CacheAction {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.CacheAction
	for _, rep := range r.reports {
		out = append(out, rep.Action)
	}
	return out
}

// newCacheFixture starts a fake server on a test clock. Its rejections
// are the test's to check (a cache that is gone is refused on purpose).
func newCacheFixture(t *testing.T, client func(*fake.Server) *genai.Client) *cacheFixture {
	t.Helper()
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	clock := newTestClock()
	srv.SetTimeNowFunc(clock.now)
	return &cacheFixture{srv: srv, clock: clock, client: client(srv), events: &eventRecorder{}}
}

// agent returns an agent on f's client with tools and longRules, caching
// under policy (its Caches set to the client's).
func (f *cacheFixture) agent(t *testing.T, tools *toolset.Set, policy agent.CachePolicy, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	policy.Caches = f.client.Caches
	cfg := agent.Config{
		Models: f.client.Models, Model: model, Tools: tools, Retry: fastRetry,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: longRules},
		Cache:          &policy,
		Observer:       f.events,
	}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatalf("agent.New() = %v", err)
	}
	agent.SetCacheClock(a, f.clock.now)
	t.Cleanup(func() {
		if err := a.Close(context.Background()); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return a
}

// generates returns the generateContent requests (streamed or not) f's
// server received from seq on.
func (f *cacheFixture) generates(from int) []*fake.Request {
	var out []*fake.Request
	for _, r := range f.srv.Requests() {
		if r.Seq >= from && (r.Method == fake.MethodGenerateContent || r.Method == fake.MethodStreamGenerateContent) {
			out = append(out, r)
		}
	}
	return out
}

// count returns how many requests of method f's server received from seq on.
func (f *cacheFixture) count(method fake.Method, from int) int {
	n := 0
	for _, r := range f.srv.Requests() {
		if r.Seq >= from && r.Method == method {
			n++
		}
	}
	return n
}

// next is the Seq the next request will have.
func (f *cacheFixture) next() int { return len(f.srv.Requests()) + 1 }

// checkNeverBoth fails t if a generateContent request named a cache and
// also set what a cache holds: the API refuses it.
func (f *cacheFixture) checkNeverBoth(t *testing.T) {
	t.Helper()
	for _, r := range f.generates(1) {
		if r.CachedContent != "" && (r.SystemInstruction != nil || len(r.Tools) > 0 || r.ToolConfig != nil) {
			t.Errorf("request #%d names cache %s and sets systemInstruction, tools or toolConfig", r.Seq, r.CachedContent)
		}
	}
}

// TestCacheLifecycle runs a conversation through a cache on both
// backends: the first run makes it and every call names it, with the
// cached tokens in the usage; a run after more than half its TTL
// refreshes it; a run during which it expires makes it again once and
// succeeds; a tool added (With) replaces it, the old one deleted; Close
// deletes it, and the agent then runs uncached.
func TestCacheLifecycle(t *testing.T) {
	for _, b := range cacheBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			f := newCacheFixture(t, b.client)
			var w weatherTool
			expire := make(chan struct{}, 1)
			forecast := toolset.MustFunc("forecast", "Tomorrow's weather for a city", func(ctx context.Context, in weatherIn) (string, error) {
				select {
				case <-expire: // the cache expires between this run's two model calls
					f.srv.ExpireCaches()
				default:
				}
				return "rain in " + in.City, nil
			})
			a := f.agent(t, toolset.MustNew(w.tool(), forecast), agent.CachePolicy{TTL: 10 * time.Minute, MaxCaches: 1})

			// 1. Made once, named by both calls, with the tokens cached.
			f.srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny."))
			res, err := a.Run(ctx, user("Weather in Paris?"))
			if err != nil {
				t.Fatalf("run 1: %v", err)
			}
			caches := f.srv.Caches()
			if len(caches) != 1 || f.count(fake.MethodCreateCachedContent, 1) != 1 {
				t.Fatalf("run 1: %d caches kept, %d created; want 1, 1", len(caches), f.count(fake.MethodCreateCachedContent, 1))
			}
			first := caches[0].Name
			if caches[0].SystemInstruction == nil || len(caches[0].Tools) != 1 || len(caches[0].Tools[0].FunctionDeclarations) != 2 {
				t.Errorf("the cache holds %+v; want the system instruction and both tools", caches[0])
			}
			for _, r := range f.generates(1) {
				if r.CachedContent != first {
					t.Errorf("request #%d names cache %q; want %q", r.Seq, r.CachedContent, first)
				}
			}
			if u := res.Usage; u.CachedTokens < 2048 || u.CachedTokens > u.PromptTokens || u.UncachedTokens() != u.PromptTokens-u.CachedTokens {
				t.Errorf("run 1 usage = %+v (uncached %d); want the cache's tokens counted as cached", u, u.UncachedTokens())
			}

			// 2. Past half the TTL, the next run refreshes it first.
			f.clock.advance(6 * time.Minute)
			seq := f.next()
			f.srv.Enqueue(fake.Text("Still sunny."))
			if _, err := a.Run(ctx, user("And now?")); err != nil {
				t.Fatalf("run 2: %v", err)
			}
			if n := f.count(fake.MethodUpdateCachedContent, seq); n != 1 {
				t.Errorf("run 2 refreshed the cache %d times; want 1", n)
			}
			if c := f.srv.Caches(); len(c) != 1 || !c[0].ExpireTime.Equal(f.clock.now().Add(10*time.Minute)) {
				t.Errorf("after the refresh: %+v; want the cache to expire 10 minutes from now", c)
			}
			// Once refreshed, nothing more until half the TTL passes again.
			f.clock.advance(4 * time.Minute)
			seq = f.next()
			f.srv.Enqueue(fake.Text("Yes."))
			if _, err := a.Run(ctx, user("Sure?")); err != nil {
				t.Fatalf("run 3: %v", err)
			}
			if n := f.count(fake.MethodUpdateCachedContent, seq) + f.count(fake.MethodCreateCachedContent, seq); n != 0 {
				t.Errorf("run 3 called the cache routes %d times; want none", n)
			}

			// 3. Expired between two model calls of one run: made again
			// once, the call sent again, the run a success.
			seq = f.next()
			expire <- struct{}{}
			f.srv.Enqueue(fake.Calls(fake.Call("forecast", map[string]any{"city": "Rome"})), fake.Text("Rain."))
			res, err = a.Run(ctx, user("Tomorrow in Rome?"))
			if err != nil || res.Text != "Rain." {
				t.Fatalf("run 4 = %q, %v; want Rain.", res.Text, err)
			}
			if n := f.count(fake.MethodCreateCachedContent, seq); n != 1 {
				t.Errorf("run 4 created %d caches; want 1", n)
			}
			rejected := 0
			for _, rj := range f.srv.Rejections() {
				if rj.Seq >= seq {
					rejected++
					if !strings.Contains(strings.ToLower(rj.Err.Message), "cache") {
						t.Errorf("rejection %+v; want the cache's", rj)
					}
				}
			}
			if rejected != 1 {
				t.Errorf("run 4 had %d requests refused; want 1 (the one naming the expired cache)", rejected)
			}
			caches = f.srv.Caches()
			if len(caches) != 1 || caches[0].Name == first {
				t.Fatalf("after the expiry: %+v; want one new cache", caches)
			}
			second := caches[0].Name
			gens := f.generates(seq)
			if last := gens[len(gens)-1]; last.CachedContent != second {
				t.Errorf("the last call of run 4 names %q; want the new cache %q", last.CachedContent, second)
			}

			// 4. A tool added: a new cache, the old one deleted.
			seq = f.next()
			extra := toolset.MustFunc("humidity", "Humidity in a city", func(ctx context.Context, in weatherIn) (int, error) { return 40, nil })
			b := a.With(agent.Overrides{Tools: []*toolset.Tool{extra}})
			f.srv.Enqueue(fake.Text("40%."))
			if _, err := b.Run(ctx, user("Humidity in Oslo?")); err != nil {
				t.Fatalf("run 5: %v", err)
			}
			caches = f.srv.Caches()
			if len(caches) != 1 || caches[0].Name == second || len(caches[0].Tools[0].FunctionDeclarations) != 3 {
				t.Fatalf("after a tool was added: %+v; want one cache, a new one with 3 tools", caches)
			}
			if n := f.count(fake.MethodDeleteCachedContent, seq); n != 1 {
				t.Errorf("the replaced cache was deleted %d times; want 1", n)
			}

			// 5. Close deletes it; the agent then runs uncached.
			if err := a.Close(ctx); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if c := f.srv.Caches(); len(c) != 0 {
				t.Errorf("after Close: %d caches kept; want none", len(c))
			}
			seq = f.next()
			f.srv.Enqueue(fake.Text("Fine."))
			if _, err := b.Run(ctx, user("Hello?")); err != nil {
				t.Fatalf("run after Close: %v", err)
			}
			if g := f.generates(seq); len(g) != 1 || g[0].CachedContent != "" || g[0].SystemInstruction == nil {
				t.Errorf("the run after Close sent %+v; want an uncached request", g)
			}
			f.checkNeverBoth(t)
			want := []agent.CacheAction{agent.CacheCreated, agent.CacheRefreshed, agent.CacheRecreated, agent.CacheCreated, agent.CacheDeleted}
			if got := f.events.actions(); !equalActions(got, want) {
				t.Errorf("EventCache actions = %v; want %v", got, want)
			}
		})
	}
}

func equalActions(a, b []agent.CacheAction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCacheTooSmall: a prompt below the model's minimum is never sent to
// be cached; one the API refuses as too small (MinTokens set below the
// real floor) is remembered as not cacheable. Both runs succeed uncached.
func TestCacheTooSmall(t *testing.T) {
	for _, b := range cacheBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			short := func(c *agent.Config) {
				c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
			}
			f := newCacheFixture(t, b.client)
			var w weatherTool
			a := f.agent(t, toolset.MustNew(w.tool()), agent.CachePolicy{TTL: time.Hour}, short)
			f.srv.Enqueue(fake.Text("Hi."))
			if _, err := a.Run(ctx, user("Hello")); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if n := f.count(fake.MethodCreateCachedContent, 1); n != 0 {
				t.Errorf("%d creates below the minimum; want none", n)
			}

			// MinTokens of 1: the loop asks, the API refuses, the loop
			// remembers.
			seq := f.next()
			a = f.agent(t, toolset.MustNew(w.tool()), agent.CachePolicy{TTL: time.Hour, MinTokens: 1}, short)
			for range 2 {
				f.srv.Enqueue(fake.Text("Hi."))
				if _, err := a.Run(ctx, user("Hello")); err != nil {
					t.Fatalf("Run: %v", err)
				}
			}
			if n := f.count(fake.MethodCreateCachedContent, seq); n != 1 {
				t.Errorf("%d creates; want 1, then the refusal remembered", n)
			}
			for _, g := range f.generates(seq) {
				if g.CachedContent != "" || g.SystemInstruction == nil {
					t.Errorf("request #%d = cache %q; want uncached", g.Seq, g.CachedContent)
				}
			}
			if got := f.events.actions(); !equalActions(got, []agent.CacheAction{agent.CacheNotCacheable}) {
				t.Errorf("EventCache actions = %v; want [not cacheable]", got)
			}
			if rj := f.srv.Rejections(); len(rj) != 1 || !strings.Contains(rj[0].Err.Message, "minimum") && !strings.Contains(rj[0].Err.Message, "too small") {
				t.Errorf("rejections = %+v; want the create refused as too small", rj)
			}
		})
	}
}

// failingCaches is the real Caches client, whose creates fail with err
// while it is set.
type failingCaches struct {
	*genai.Caches
	err error
}

func (c *failingCaches) Create(ctx context.Context, model string, config *genai.CreateCachedContentConfig) (*genai.CachedContent, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.Caches.Create(ctx, model, config)
}

// TestCacheFallback: a cache that cannot be made (the API fails) never
// fails the run: the request goes uncached, and the logger and the
// observer say so.
func TestCacheFallback(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).Client)
	var logs bytes.Buffer
	caches := &failingCaches{Caches: f.client.Caches, err: genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The service is currently unavailable."}}
	a, err := agent.New(agent.Config{
		Models: f.client.Models, Model: model, Retry: fastRetry,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: longRules},
		Cache:          &agent.CachePolicy{Caches: caches, TTL: time.Hour},
		Observer:       f.events,
		Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	f.srv.Enqueue(fake.Text("Hi."))
	if _, err := a.Run(ctx, user("Hello")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if g := f.generates(1); len(g) != 1 || g[0].CachedContent != "" || g[0].SystemInstruction == nil {
		t.Errorf("sent %+v; want one uncached request", g)
	}
	if got := f.events.actions(); !equalActions(got, []agent.CacheAction{agent.CacheFallback}) {
		t.Errorf("EventCache actions = %v; want [fallback]", got)
	}
	var apiErr genai.APIError
	if rep := f.events.reports; len(rep) != 1 || !errors.As(rep[0].Err, &apiErr) || apiErr.Code != 503 {
		t.Errorf("the fallback's Err = %+v; want the API's 503", rep)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cache fallback") {
		t.Errorf("logs = %q; want the fallback at Warn", logs.String())
	}
}

// TestCacheTypedStreamAndAsTool: typed runs, streams and agents run as
// tools go through the cache as plain runs do.
func TestCacheTypedStreamAndAsTool(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).Client)
	var w weatherTool
	a := f.agent(t, toolset.MustNew(w.tool()), agent.CachePolicy{TTL: time.Hour})

	type answer struct {
		City string `json:"city"`
	}
	f.srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), finalAnswer(map[string]any{"city": "Paris"}))
	out, _, err := agent.RunTyped[answer](ctx, a, user("Which city?"))
	if err != nil || out.City != "Paris" {
		t.Fatalf("RunTyped = %+v, %v", out, err)
	}
	f.srv.Enqueue(fake.Text("Streamed."))
	for _, err := range a.Stream(ctx, user("Stream it")) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
	}
	// a as the tool of a parent agent without caching.
	sub, err := agent.AsTool(a, "weather_agent", "Answers weather questions")
	if err != nil {
		t.Fatal(err)
	}
	parent := newAgent(t, f.srv, toolset.MustNew(sub), func(c *agent.Config) { c.Models = f.client.Models })
	f.srv.Enqueue(fake.Calls(fake.Call("weather_agent", map[string]any{"request": "Paris?"})), fake.Text("Sunny."), fake.Text("It is sunny."))
	res, err := parent.Run(ctx, user("Ask the weather agent"))
	if err != nil {
		t.Fatalf("parent run: %v", err)
	}
	// The billed split per agent: the caching one read its cache, the
	// parent did not.
	if u := res.Agents["weather_agent"]; u.CachedTokens == 0 || u.UncachedTokens() != u.PromptTokens-u.CachedTokens {
		t.Errorf("Result.Agents[weather_agent] = %+v; want cached tokens", u)
	}
	if u := res.Agents[""]; u.PromptTokens == 0 || u.UncachedTokens() != u.PromptTokens {
		t.Errorf("Result.Agents[\"\"] = %+v; want the parent's prompt all uncached", u)
	}
	named := 0
	for _, g := range f.generates(1) {
		if g.CachedContent != "" {
			named++
		}
	}
	// The typed run's two calls (through a cache of its own: its tools
	// and system instruction add the final-answer tool), the stream's,
	// the sub-agent's: 4 of 6.
	if named != 4 {
		t.Errorf("%d requests named a cache; want 4 (every one of the caching agent)", named)
	}
	f.checkNeverBoth(t)
	if rj := f.srv.Rejections(); len(rj) != 0 {
		t.Errorf("rejections: %+v", rj)
	}
}

// TestCachePolicyRefused: New refuses a policy that cannot work.
func TestCachePolicyRefused(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	for name, p := range map[string]*agent.CachePolicy{
		"no Caches":          {TTL: time.Hour},
		"zero TTL":           {Caches: c.Caches},
		"negative TTL":       {Caches: c.Caches, TTL: -time.Minute},
		"sub-second TTL":     {Caches: c.Caches, TTL: time.Millisecond},
		"negative MinTokens": {Caches: c.Caches, TTL: time.Hour, MinTokens: -1},
	} {
		if _, err := agent.New(agent.Config{Models: c.Models, Model: model, Cache: p}); err == nil || !strings.Contains(err.Error(), "Config.Cache") {
			t.Errorf("%s: New() = %v; want an error naming Config.Cache", name, err)
		}
	}
}

// cachingModels is genai's Models saying whether it takes explicit caches.
type cachingModels struct {
	*genai.Models
	explicit bool
}

func (m cachingModels) ExplicitCaching() bool { return m.explicit }

// TestExplicitCacher: New refuses a cache policy on a Models that says it
// takes no explicit caches, with ErrNoExplicitCaching, and takes it on one
// that says it does.
func TestExplicitCacher(t *testing.T) {
	c := newServer(t).Client()
	p := &agent.CachePolicy{Caches: c.Caches, TTL: time.Hour}
	if _, err := agent.New(agent.Config{Models: cachingModels{c.Models, false}, Model: model, Cache: p}); !errors.Is(err, agent.ErrNoExplicitCaching) {
		t.Errorf("New(Cache, a Models without explicit caching) = %v; want ErrNoExplicitCaching", err)
	}
	if _, err := agent.New(agent.Config{Models: cachingModels{c.Models, false}, Model: model}); err != nil {
		t.Errorf("New(no Cache, a Models without explicit caching) = %v; want an agent", err)
	}
	if _, err := agent.New(agent.Config{Models: cachingModels{c.Models, true}, Model: model, Cache: p}); err != nil {
		t.Errorf("New(Cache, a Models with explicit caching) = %v; want an agent", err)
	}
}

// bogusCaches is the real Caches client, whose creates answer with the
// name of a cache the server does not have: every request naming one is
// refused as naming a cache that is gone.
type bogusCaches struct {
	*genai.Caches
	n int
}

func (c *bogusCaches) Create(ctx context.Context, model string, config *genai.CreateCachedContentConfig) (*genai.CachedContent, error) {
	c.n++
	return &genai.CachedContent{Name: "cachedContents/bogus" + string(rune('0'+c.n))}, nil
}

// TestCacheRefusedTwice: a request refused for its cache is sent again
// once through a new cache; refused again, it goes uncached and the
// agent gives that cache up, and the run succeeds.
func TestCacheRefusedTwice(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).Client)
	caches := &bogusCaches{Caches: f.client.Caches}
	a, err := agent.New(agent.Config{
		Models: f.client.Models, Model: model, Retry: fastRetry,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: longRules},
		Cache:          &agent.CachePolicy{Caches: caches, TTL: time.Hour},
		Observer:       f.events,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue(fake.Text("Hi."), fake.Text("Hi again."))
	if _, err := a.Run(ctx, user("Hello")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	g := f.generates(1)
	if len(g) != 3 || g[0].CachedContent != "cachedContents/bogus1" || g[1].CachedContent != "cachedContents/bogus2" || g[2].CachedContent != "" || g[2].SystemInstruction == nil {
		t.Fatalf("sent %d requests; want one per cache made, then one uncached", len(g))
	}
	want := []agent.CacheAction{agent.CacheCreated, agent.CacheRecreated, agent.CacheNotCacheable}
	if got := f.events.actions(); !equalActions(got, want) {
		t.Errorf("EventCache actions = %v; want %v", got, want)
	}
	// Given up: the next run goes uncached at once.
	if _, err := a.Run(ctx, user("Hello again")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if g := f.generates(4); len(g) != 1 || g[0].CachedContent != "" || caches.n != 2 {
		t.Errorf("the next run sent %d requests after %d creates; want one uncached, no create", len(g), caches.n)
	}
	a.Close(ctx)
}

// TestCacheConcurrentRuns: runs that start together make one cache, not
// one each, and all use it.
func TestCacheConcurrentRuns(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).Client)
	var w weatherTool
	a := f.agent(t, toolset.MustNew(w.tool()), agent.CachePolicy{TTL: time.Hour})
	const runs = 8
	for range runs {
		f.srv.Enqueue(fake.Text("Hi."))
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for range runs {
		wg.Go(func() {
			_, err := a.Run(ctx, user("Hello"))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	if n := f.count(fake.MethodCreateCachedContent, 1); n != 1 {
		t.Errorf("%d concurrent runs made %d caches; want 1", runs, n)
	}
	for _, g := range f.generates(1) {
		if g.CachedContent == "" {
			t.Errorf("request #%d went uncached", g.Seq)
		}
	}
}

// TestUsageCost: the billed split and its price.
func TestUsageCost(t *testing.T) {
	u := agent.Usage{PromptTokens: 10_000, ToolUsePromptTokens: 500, CachedTokens: 8_000, CandidatesTokens: 100, ThoughtsTokens: 50}
	if got := u.UncachedTokens(); got != 2_500 {
		t.Errorf("UncachedTokens() = %d; want 2500", got)
	}
	// Gemini 2.5 Flash's 2026 prices, in dollars per million tokens.
	p := agent.Price{Input: 0.30, CachedInput: 0.03, Output: 2.50}
	want := (2_500*0.30 + 8_000*0.03 + 150*2.50) / 1e6
	if got := u.Cost(p); got < want*0.999999 || got > want*1.000001 {
		t.Errorf("Cost() = %v; want %v", got, want)
	}
	if got := (agent.Usage{}).Cost(p); got != 0 {
		t.Errorf("zero Usage costs %v", got)
	}
}

// TestCacheExpiredMidStream: a cache that expires between two model calls
// of a streamed run is made again once, and the stream goes on.
func TestCacheExpiredMidStream(t *testing.T) {
	for _, b := range cacheBackends {
		t.Run(b.name, func(t *testing.T) {
			f := newCacheFixture(t, b.client)
			expire := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in weatherIn) (string, error) {
				f.srv.ExpireCaches()
				return "sunny", nil
			})
			a := f.agent(t, toolset.MustNew(expire), agent.CachePolicy{TTL: time.Hour})
			f.srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny."))
			var text string
			retries := 0
			for e, err := range a.Stream(context.Background(), user("Weather in Paris?")) {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				switch e.Kind {
				case agent.EventText:
					text += e.Text
				case agent.EventRetry:
					retries++
				}
			}
			if text != "Sunny." || retries != 1 {
				t.Errorf("streamed %q with %d retries; want Sunny. after 1 (the call refused for its cache)", text, retries)
			}
			if n := f.count(fake.MethodCreateCachedContent, 1); n != 2 {
				t.Errorf("%d caches made; want 2 (the first, and the one after the expiry)", n)
			}
			f.checkNeverBoth(t)
		})
	}
}

// refusingUpdates is the real Caches client, whose refreshes the API
// refuses (as Vertex AI may refuse a PATCH without updateMask, which
// genai does not send).
type refusingUpdates struct {
	*genai.Caches
	updates int
}

func (c *refusingUpdates) Update(ctx context.Context, name string, config *genai.UpdateCachedContentConfig) (*genai.CachedContent, error) {
	c.updates++
	return nil, genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "update_mask is required."}
}

// TestCacheRefreshRefused: a refresh the API refuses leaves the cache in
// use until it expires, is not tried again on every call, and the cache is
// made anew once expired.
func TestCacheRefreshRefused(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).VertexClient)
	caches := &refusingUpdates{Caches: f.client.Caches}
	a, err := agent.New(agent.Config{
		Models: f.client.Models, Model: model, Retry: fastRetry,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: longRules},
		Cache:          &agent.CachePolicy{Caches: caches, TTL: 10 * time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	agent.SetCacheClock(a, f.clock.now)
	defer a.Close(ctx)
	run := func() {
		t.Helper()
		f.srv.Enqueue(fake.Text("Hi."))
		if _, err := a.Run(ctx, user("Hello")); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	run()
	f.clock.advance(6 * time.Minute)
	run()
	run()
	if caches.updates != 1 {
		t.Errorf("%d refreshes tried; want 1, then a wait", caches.updates)
	}
	for _, g := range f.generates(1) {
		if g.CachedContent == "" {
			t.Errorf("request #%d went uncached; want the cache used until it expires", g.Seq)
		}
	}
	f.clock.advance(5 * time.Minute) // expired
	run()
	if n := f.count(fake.MethodCreateCachedContent, 1); n != 2 {
		t.Errorf("%d caches made; want 2 (one after the expiry)", n)
	}
	if rj := f.srv.Rejections(); len(rj) != 0 {
		t.Errorf("rejections: %+v", rj)
	}
}
