package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// seen returns what the model of request r read: the contents of the
// cache it names, which f's server still keeps, followed by its own.
func (f *cacheFixture) seen(t *testing.T, r *fake.Request) []*genai.Content {
	t.Helper()
	if r.CachedContent == "" {
		return r.Contents
	}
	for _, c := range f.srv.Caches() {
		if c.Name == r.CachedContent {
			return append(append([]*genai.Content(nil), c.Contents...), r.Contents...)
		}
	}
	t.Fatalf("request #%d names cache %s, which the server no longer keeps", r.Seq, r.CachedContent)
	return nil
}

// sameContents fails t unless got and want encode alike.
func sameContents(t *testing.T, what string, got, want []*genai.Content) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s: the model read %d contents %.300s…; want %d contents %.300s…", what, len(got), g, len(want), w)
	}
}

// TestCacheConversationPrefix runs a growing chat, one run per user
// message, with CachePolicy.ConversationStep on both backends: the cache
// holds the system instruction, the tools and a prefix of the
// conversation, which grows in steps (a new cache every few runs, the one
// it extends deleted), each request naming it and sending only the rest;
// within a run of two calls the prefix stays put; a history edited before
// the cached prefix gets a cache of its own, never the stale one; what
// the model reads is always the whole conversation.
func TestCacheConversationPrefix(t *testing.T) {
	for _, b := range cacheBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			f := newCacheFixture(t, b.client)
			var w weatherTool
			// Each exchange is about 2×100 tokens: a step of 500 is due
			// every two or three runs.
			a := f.agent(t, toolset.MustNew(w.tool()), agent.CachePolicy{TTL: time.Hour, ConversationStep: 500, MaxCaches: 8})
			say := func(i int) string {
				return fmt.Sprintf("Message %d. %s", i, strings.Repeat("Tell me more about the weather. ", 12))
			}

			var history []*genai.Content
			var names []string // the cache each run's requests named
			prefixes := []int{}
			const runs = 14
			for i := range runs {
				seq := f.next()
				if i == 5 {
					f.srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})), fake.Text(say(100+i)))
				} else {
					f.srv.Enqueue(fake.Text(say(100 + i)))
				}
				input := append(append([]*genai.Content(nil), history...), genai.NewContentFromText(say(i), genai.RoleUser))
				res, err := a.Run(ctx, input)
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				gens := f.generates(seq)
				for j, r := range gens {
					if r.CachedContent == "" || r.SystemInstruction != nil || len(r.Tools) > 0 {
						t.Fatalf("run %d call %d: cache %q, system instruction %v, %d tools; want a cache and neither", i, j, r.CachedContent, r.SystemInstruction != nil, len(r.Tools))
					}
					if r.CachedContent != gens[0].CachedContent {
						t.Errorf("run %d: call %d names %s, call 0 %s; want one cache a run", i, j, r.CachedContent, gens[0].CachedContent)
					}
				}
				// What the model read of the last call is the run's whole history but its answer.
				last := gens[len(gens)-1]
				sameContents(t, fmt.Sprintf("run %d", i), f.seen(t, last), res.History[:len(res.History)-1])
				prefixes = append(prefixes, len(input)-len(gens[0].Contents))
				names = append(names, gens[0].CachedContent)
				history = res.History
			}
			creates := f.count(fake.MethodCreateCachedContent, 1)
			t.Logf("cached prefixes by run: %v; %d caches made", prefixes, creates)
			if creates < 3 || creates > runs/2 {
				t.Errorf("%d caches made in %d runs; want the prefix to grow in steps (3 to %d)", creates, runs, runs/2)
			}
			changes := 0
			for i := 1; i < runs; i++ {
				if prefixes[i] < prefixes[i-1] {
					t.Errorf("the cached prefix shrank from %d to %d contents at run %d", prefixes[i-1], prefixes[i], i)
				}
				if names[i] != names[i-1] {
					changes++
				}
			}
			if changes != creates-1 {
				t.Errorf("the runs changed cache %d times and %d were made; want a change per cache made: %v", changes, creates, names)
			}
			if prefixes[runs-1] < 10 {
				t.Errorf("the last run's cache holds %d contents; want most of the conversation: %v", prefixes[runs-1], prefixes)
			}
			// The caches a longer prefix replaced were deleted: the one in
			// use and the first (system instruction and tools) are kept.
			if n := len(f.srv.Caches()); n != 2 {
				t.Errorf("%d caches kept; want 2 (the first, without contents, and the last prefix's): %v", n, f.srv.Caches())
			}
			if d := f.count(fake.MethodDeleteCachedContent, 1); d != creates-2 {
				t.Errorf("%d caches deleted; want %d, each replaced by a longer prefix", d, creates-2)
			}

			// The history edited before the cached prefix (its first
			// message changed, as a rewrite or a summary would): a cache
			// of its own, never the stale one.
			seq := f.next()
			edited := append([]*genai.Content{genai.NewContentFromText("An edited first message. "+say(0), genai.RoleUser)}, history[1:]...)
			edited = append(edited, genai.NewContentFromText(say(runs), genai.RoleUser))
			f.srv.Enqueue(fake.Text("Fine."))
			res, err := a.Run(ctx, edited)
			if err != nil {
				t.Fatalf("edited run: %v", err)
			}
			gens := f.generates(seq)
			if len(gens) != 1 || gens[0].CachedContent == "" || gens[0].CachedContent == names[runs-1] {
				t.Fatalf("the edited run named %q; want a new cache, not %s", gens[0].CachedContent, names[runs-1])
			}
			if n := f.count(fake.MethodCreateCachedContent, seq); n != 1 {
				t.Errorf("the edited run made %d caches; want 1", n)
			}
			sameContents(t, "edited run", f.seen(t, gens[0]), res.History[:len(res.History)-1])
			// The old conversation's cache is not its prefix: it is kept
			// (another conversation may go on from it) until evicted.
			f.checkNeverBoth(t)
			for _, rj := range f.srv.Rejections() {
				t.Errorf("request #%d refused: %v", rj.Seq, rj.Err)
			}
		})
	}
}

// TestCacheConversationPrefixRecovery: a prefix's cache that expires
// between two runs is made again once, with the same prefix, and the
// request is sent again through it; a step of zero caches no contents.
func TestCacheConversationPrefixRecovery(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).Client)
	var w weatherTool
	a := f.agent(t, toolset.MustNew(w.tool()), agent.CachePolicy{TTL: time.Hour, ConversationStep: 100})
	long := strings.Repeat("A long message about the weather. ", 30)
	history := []*genai.Content{
		genai.NewContentFromText(long, genai.RoleUser), genai.NewContentFromText(long, genai.RoleModel),
		genai.NewContentFromText("And tomorrow?", genai.RoleUser),
	}
	f.srv.Enqueue(fake.Text("Rain."))
	if _, err := a.Run(ctx, history); err != nil {
		t.Fatal(err)
	}
	first := f.generates(1)[0]
	if len(first.Contents) != 1 {
		t.Fatalf("the first run sent %d contents; want 1, the rest cached", len(first.Contents))
	}
	f.srv.ExpireCaches()
	seq := f.next()
	f.srv.Enqueue(fake.Text("Rain again."))
	res, err := a.Run(ctx, history)
	if err != nil || res.Text != "Rain again." {
		t.Fatalf("run after expiry = %q, %v", res.Text, err)
	}
	gens := f.generates(seq)
	if len(gens) != 2 || gens[1].CachedContent == first.CachedContent || len(gens[1].Contents) != 1 {
		t.Fatalf("after expiry: %d calls, last naming %q with %d contents; want the call sent again through a new cache of the same prefix", len(gens), gens[len(gens)-1].CachedContent, len(gens[len(gens)-1].Contents))
	}
	sameContents(t, "recovered", f.seen(t, gens[1]), history)
	if got, want := f.events.actions(), []agent.CacheAction{agent.CacheCreated, agent.CacheRecreated}; !equalActions(got, want) {
		t.Errorf("EventCache actions = %v; want %v", got, want)
	}
}

// A negative ConversationStep is refused by New.
func TestCacheConversationStepNegative(t *testing.T) {
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	c := srv.Client()
	_, err := agent.New(agent.Config{Models: c.Models, Model: model, Cache: &agent.CachePolicy{Caches: c.Caches, TTL: time.Hour, ConversationStep: -1}})
	if err == nil || !strings.Contains(err.Error(), "ConversationStep -1") {
		t.Fatalf("New() = %v; want the negative step refused", err)
	}
}

// TestCacheAdoptPrefix: Steps.CacheRequest on an agent that holds no
// cache (another process's) adopts the CacheRef an earlier step returned,
// a conversation prefix's included: it refreshes it instead of making
// one, and sends only the contents the cache does not hold.
func TestCacheAdoptPrefix(t *testing.T) {
	ctx := context.Background()
	f := newCacheFixture(t, (*fake.Server).Client)
	var w weatherTool
	policy := agent.CachePolicy{TTL: time.Hour, ConversationStep: 100}
	long := strings.Repeat("A long message about the weather. ", 30)
	contents := []*genai.Content{
		genai.NewContentFromText(long, genai.RoleUser), genai.NewContentFromText(long, genai.RoleModel),
		genai.NewContentFromText("And tomorrow?", genai.RoleUser),
	}
	first := f.agent(t, toolset.MustNew(w.tool()), policy).Steps()
	config := first.RequestConfig(0)
	_, send, ref := first.CacheRequest(ctx, 0, config, contents, agent.CacheRef{}, "")
	if ref.Name == "" || len(send) != 1 {
		t.Fatalf("first: cache %+v, %d contents sent; want a cache of the prefix and 1 sent", ref, len(send))
	}
	second := f.agent(t, toolset.MustNew(w.tool()), policy).Steps()
	seq := f.next()
	sent, send, ref2 := second.CacheRequest(ctx, 0, second.RequestConfig(0), contents, ref, "")
	if ref2 != ref || sent.CachedContent != ref.Name || len(send) != 1 {
		t.Fatalf("second: cache %+v naming %q, %d contents sent; want %+v adopted and 1 sent", ref2, sent.CachedContent, len(send), ref)
	}
	if c, u := f.count(fake.MethodCreateCachedContent, seq), f.count(fake.MethodUpdateCachedContent, seq); c != 0 || u != 1 {
		t.Errorf("adopting made %d caches and refreshed %d; want 0 and 1", c, u)
	}
	// Adopted, then gone: made anew.
	f.srv.ExpireCaches()
	_, send, ref3 := second.CacheRequest(ctx, 1, second.RequestConfig(0), contents, ref, ref.Name)
	if ref3.Name == "" || ref3.Name == ref.Name || len(send) != 1 {
		t.Errorf("after expiry: %+v, %d sent; want a new cache of the prefix", ref3, len(send))
	}
}
