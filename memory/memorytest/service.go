package memorytest

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/memory"
	"google.golang.org/genai"
)

// ServiceOptions configure [RunService].
type ServiceOptions struct {
	// NewEmbedder returns the embedder of the hybrid tests. Nil means
	// this package's [Embedder] (NewEmbedder(256)); a test of a store may
	// give GeminiEmbedder on package geminitest's server, to run hybrid
	// search through genai.
	NewEmbedder func(t *testing.T) memory.Embedder
}

// RunService runs a [memory.Service] on stores from newStore, end to end:
// a thread ingested and found again with where it came from, another
// user's memories never found, threads ingested twice, facts, limits,
// forgetting one memory and a user, and hybrid search, its fallback when
// embedding fails included. [Run] runs it too, with opts nil.
func RunService(t *testing.T, newStore func(t *testing.T) memory.Store, opts *ServiceOptions) {
	newEmbedder := func(t *testing.T) *switchable { return &switchable{inner: NewEmbedder(256)} }
	if opts != nil && opts.NewEmbedder != nil {
		newEmbedder = func(t *testing.T) *switchable { return &switchable{inner: opts.NewEmbedder(t)} }
	}
	for _, tc := range []struct {
		name string
		test func(t *testing.T, store memory.Store, emb *switchable)
	}{
		{"IngestSearch", testIngestSearch},
		{"OtherUsers", testOtherUsers},
		{"IngestTwice", testIngestTwice},
		{"Limits", testLimits},
		{"Forget", testForget},
		{"Hybrid", testHybrid},
		{"HybridFallback", testHybridFallback},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newStore(t), newEmbedder(t)) })
	}
}

// switchable is an embedder that fails while told to.
type switchable struct {
	inner memory.Embedder
	mu    sync.Mutex
	err   error
	calls int
}

func (s *switchable) Embed(ctx context.Context, texts []string, task memory.EmbedTask) ([][]float32, error) {
	s.mu.Lock()
	err := s.err
	if err == nil {
		s.calls++
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.inner.Embed(ctx, texts, task)
}

func (s *switchable) fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

func (s *switchable) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func newService(t *testing.T, cfg memory.Config) *memory.Service {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	svc, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	return svc
}

var conversation = []*genai.Content{
	genai.NewContentFromText("Hi! I just moved to Lisbon with my cat Miso.", genai.RoleUser),
	genai.NewContentFromText("Welcome to Lisbon! How is Miso settling in?", genai.RoleModel),
	genai.NewContentFromText("She loves the sunny balcony. By the way, I'm allergic to peanuts.", genai.RoleUser),
	genai.NewContentFromText("Noted: no peanuts. Enjoy the balcony!", genai.RoleModel),
}

func testIngestSearch(t *testing.T, store memory.Store, _ *switchable) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	svc := newService(t, memory.Config{Store: store, Now: func() time.Time { return now }})
	added, err := svc.IngestThread(ctx, "alice", "thread-1", conversation, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 4 {
		t.Fatalf("IngestThread added %d memories, want 4", len(added))
	}
	res, err := svc.Search(ctx, "alice", "What is my cat called?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || !strings.Contains(res[0].Text, "Miso") {
		t.Fatalf("Search(cat) = %+v, want the message about Miso first", res)
	}
	r := res[0]
	if r.Thread != "thread-1" || r.Message != 0 || r.Author != "user" || !r.Time.Equal(now) || r.Kind != memory.KindMessage || r.Lexical != 1 {
		t.Errorf("the result's provenance = %+v", r.Memory)
	}
	res, _ = svc.Search(ctx, "alice", "Am I allergic to something?", nil)
	if len(res) == 0 || res[0].Message != 2 {
		t.Fatalf("Search(allergic) = %+v, want message 2 first", res)
	}
	res, _ = svc.Search(ctx, "alice", "allergic peanuts", &memory.SearchOptions{ExcludeThread: "thread-1"})
	if len(res) != 0 {
		t.Errorf("ExcludeThread kept %d results of the thread", len(res))
	}
	res, _ = svc.Search(ctx, "alice", "allergic peanuts", &memory.SearchOptions{Kinds: []memory.Kind{memory.KindFact}})
	if len(res) != 0 {
		t.Errorf("Kinds: facts returned %d messages", len(res))
	}
	if res, _ := svc.Search(ctx, "alice", "the and of", nil); len(res) != 0 {
		t.Errorf("a query of stop words found %d", len(res))
	}
}

func testOtherUsers(t *testing.T, store memory.Store, emb *switchable) {
	ctx := context.Background()
	svc := newService(t, memory.Config{Store: store, Embedder: emb})
	if _, err := svc.IngestThread(ctx, "alice", "t", conversation, 0); err != nil {
		t.Fatal(err)
	}
	svc.Remember(ctx, "alice", memory.Fact{Text: "Alice's bank PIN is 4921"})
	svc.Wait(ctx)
	for _, q := range []string{"cat Miso Lisbon", "peanuts", "bank PIN 4921"} {
		res, err := svc.Search(ctx, "bob", q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 0 {
			t.Errorf("bob's search for %q found alice's memories: %+v", q, res)
		}
	}
	res, _ := svc.Search(ctx, "alice", "bank PIN", nil)
	if len(res) == 0 {
		t.Fatal("alice does not find her own fact")
	}
	if err := svc.Forget(ctx, "bob", res[0].ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("bob forgetting alice's memory: %v, want ErrNotFound", err)
	}
}

func testIngestTwice(t *testing.T, store memory.Store, _ *switchable) {
	ctx := context.Background()
	svc := newService(t, memory.Config{Store: store})
	svc.IngestThread(ctx, "alice", "t", conversation[:2], 0)
	added, err := svc.IngestThread(ctx, "alice", "t", conversation, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 || added[0].Message != 2 {
		t.Fatalf("ingesting the thread again added %+v, want messages 2 and 3", added)
	}
	page, _ := svc.List(ctx, "alice", memory.ListOptions{})
	if len(page.Memories) != 4 {
		t.Errorf("the thread is remembered as %d memories, want 4", len(page.Memories))
	}
}

func testLimits(t *testing.T, store memory.Store, _ *switchable) {
	ctx := context.Background()
	svc := newService(t, memory.Config{Store: store, MaxQueryBytes: 100, MaxMemoryBytes: 200})
	if _, err := svc.Search(ctx, "alice", strings.Repeat("word ", 30), nil); !errors.Is(err, memory.ErrTooLarge) {
		t.Errorf("a query over MaxQueryBytes: %v, want ErrTooLarge", err)
	}
	if _, err := svc.Remember(ctx, "alice", memory.Fact{Text: strings.Repeat("fact ", 50)}); !errors.Is(err, memory.ErrTooLarge) {
		t.Errorf("a fact over MaxMemoryBytes: %v, want ErrTooLarge", err)
	}
	if _, err := svc.Remember(ctx, "alice", memory.Fact{Text: "  "}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("an empty fact: %v, want ErrInvalid", err)
	}
	if _, err := svc.Search(ctx, "", "x", nil); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("a search without user: %v, want ErrInvalid", err)
	}
	long := []*genai.Content{genai.NewContentFromText(strings.Repeat("é", 300), genai.RoleUser)}
	added, err := svc.IngestThread(ctx, "alice", "t", long, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || len(added[0].Text) != 200 {
		t.Errorf("a long message is remembered as %d bytes, want its first 200", len(added[0].Text))
	}
}

func testForget(t *testing.T, store memory.Store, emb *switchable) {
	ctx := context.Background()
	svc := newService(t, memory.Config{Store: store, Embedder: emb})
	svc.IngestThread(ctx, "alice", "t", conversation, 0)
	svc.IngestThread(ctx, "bob", "t", conversation, 0)
	svc.Remember(ctx, "alice", memory.Fact{Text: "Alice plays the oboe"})
	svc.Wait(ctx)
	res, _ := svc.Search(ctx, "alice", "oboe", nil)
	if len(res) == 0 || res[0].Text != "Alice plays the oboe" {
		t.Fatalf("Search(oboe) = %+v", res)
	}
	if err := svc.Forget(ctx, "alice", res[0].ID); err != nil {
		t.Fatal(err)
	}
	if res, _ := svc.Search(ctx, "alice", "oboe", nil); len(res) != 0 && res[0].Text == "Alice plays the oboe" {
		t.Error("a forgotten memory is still found")
	}
	if err := svc.ForgetUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if p, _ := store.List(ctx, "alice", memory.ListOptions{}); len(p.Memories) != 0 {
		t.Errorf("after ForgetUser, alice has %d memories", len(p.Memories))
	}
	if st, _ := store.Stats(ctx, "alice", []string{"lisbon", "cat"}); st.Count != 0 || st.TermsLen != 0 || len(st.DF) != 0 && (st.DF["lisbon"] != 0 || st.DF["cat"] != 0) {
		t.Errorf("after ForgetUser, alice's stats remain: %+v", st)
	}
	n := 0
	store.Vectors(ctx, "alice", func(string, []float32) error { n++; return nil })
	if n != 0 {
		t.Errorf("after ForgetUser, alice has %d vectors", n)
	}
	if res, _ := svc.Search(ctx, "bob", "Lisbon cat", nil); len(res) == 0 {
		t.Error("ForgetUser(alice) removed bob's memories")
	}
}

func testHybrid(t *testing.T, store memory.Store, emb *switchable) {
	ctx := context.Background()
	svc := newService(t, memory.Config{Store: store, Embedder: emb})
	svc.Remember(ctx, "alice", memory.Fact{Text: "My favourite colour is teal."}, memory.Fact{Text: "I work as a nurse."})
	if err := svc.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := emb.count(); n == 0 {
		t.Fatal("the memories were not embedded")
	}
	// No term in common ("favorit colour" and "favourit color" stem apart):
	// only the vectors find it.
	res, err := svc.Search(ctx, "alice", "favorite color", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || !strings.Contains(res[0].Text, "teal") || res[0].Vector != 1 || res[0].Lexical != 0 {
		t.Fatalf("hybrid search = %+v, want the colour fact first, found by its vector only", res)
	}
}

func testHybridFallback(t *testing.T, store memory.Store, emb *switchable) {
	ctx := context.Background()
	var events []*memory.Event
	var mu sync.Mutex
	obs := memory.ObserverFunc(func(_ context.Context, e *memory.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	svc := newService(t, memory.Config{Store: store, Embedder: emb, Observer: obs})
	svc.Remember(ctx, "alice", memory.Fact{Text: "Alice's sister is called Inês."})
	svc.Wait(ctx)
	emb.fail(errors.New("embedding service unavailable"))
	res, err := svc.Search(ctx, "alice", "sister's name", nil)
	if err != nil {
		t.Fatalf("a search during an embedding outage failed: %v", err)
	}
	if len(res) != 1 || res[0].Lexical != 1 {
		t.Fatalf("fallback search = %+v, want the fact, ranked lexically", res)
	}
	mu.Lock()
	defer mu.Unlock()
	last := events[len(events)-1]
	if last.Kind != memory.EventSearch || !last.Fallback || last.Hybrid || last.Err == nil {
		t.Errorf("the search event = %+v, want a fallback with its error", last)
	}
}

// Embedder is a deterministic [memory.Embedder] for tests: a text's vector
// ([HashVector]) sums a pseudo-random unit vector per character trigram of
// each of its words, so that texts sharing words or parts of words
// ("colour", "color") are similar.
type Embedder struct{ dims int }

// NewEmbedder returns an Embedder of vectors of dims dimensions.
func NewEmbedder(dims int) *Embedder { return &Embedder{dims: dims} }

// Embed implements [memory.Embedder].
func (e *Embedder) Embed(ctx context.Context, texts []string, _ memory.EmbedTask) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = HashVector(t, e.dims)
	}
	return out, nil
}

// HashVector is the vector an [Embedder] gives text.
func HashVector(text string, dims int) []float32 {
	v := make([]float64, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127)
	}) {
		w = "^" + w + "$"
		rs := []rune(w)
		for i := 0; i+3 <= len(rs); i++ {
			h := fnv.New64a()
			h.Write([]byte(string(rs[i : i+3])))
			seed := h.Sum64()
			for d := range v {
				seed = seed*6364136223846793005 + 1442695040888963407
				v[d] += float64(int64(seed>>11))/float64(1<<52) - 1
			}
		}
	}
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, dims)
	if sum == 0 {
		out[0] = 1
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}
