// Package memorybench measures memory search and ingest on a store filled
// with a synthetic conversation of one user: the benchmarks of
// sqlitememory and pgmemory, and of the in-memory store, share it.
package memorybench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/memory"
)

// vocabulary is a list of made-up words, so that stems and stop words do
// not interfere: frequencies follow Zipf's law, as a language's do.
func vocabulary(n int) []string {
	syll := []string{"ka", "lo", "mi", "ren", "sa", "tu", "vel", "dor", "pa", "qui", "zan", "fe", "gol", "hu", "ish", "jo"}
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		w := b.String()
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// A Corpus makes the synthetic conversation and its queries.
type Corpus struct {
	words []string
	zipf  *rand.Zipf
	r     *rand.Rand
}

// NewCorpus returns a corpus of a 20,000-word vocabulary.
func NewCorpus(seed uint64) *Corpus {
	r := rand.New(rand.NewPCG(seed, 7))
	words := vocabulary(20000)
	return &Corpus{words: words, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(words)-1)), r: r}
}

func (c *Corpus) sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.words[c.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

// Messages returns n messages of threads of 20, by two authors, each of 8
// to 24 words, a minute apart.
func (c *Corpus) Messages(n int, start time.Time) []memory.Message {
	out := make([]memory.Message, n)
	for i := range out {
		out[i] = memory.Message{Thread: fmt.Sprintf("t%d", i/20), Index: i % 20, Author: []string{"Ada", "Bo"}[i%2],
			Text: c.sentence(8 + c.r.IntN(17)), Time: start.Add(time.Duration(i) * time.Minute)}
	}
	return out
}

// Query returns a question of 4 to 8 words, and a name half the time.
func (c *Corpus) Query() string {
	q := c.sentence(4 + c.r.IntN(5))
	if c.r.IntN(2) == 0 {
		q = "What did Ada say about " + q
	}
	return q
}

// Fill ingests n messages of user into svc, in batches of 1000.
func Fill(tb testing.TB, svc *memory.Service, user string, c *Corpus, n int) {
	tb.Helper()
	msgs := c.Messages(n, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := 0; i < n; i += 1000 {
		if _, err := svc.IngestMessages(context.Background(), user, msgs[i:min(i+1000, n)]); err != nil {
			tb.Fatal(err)
		}
	}
}

// Latencies records durations and reports their percentiles.
type Latencies []time.Duration

// Report reports the mean, median and 99th percentile, in milliseconds,
// each metric's name beginning with prefix.
func (l Latencies) Report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	pct := func(p float64) time.Duration { return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)] }
	b.ReportMetric(ms(sum/time.Duration(len(s))), prefix+"mean-ms")
	b.ReportMetric(ms(pct(0.5)), prefix+"p50-ms")
	b.ReportMetric(ms(pct(0.99)), prefix+"p99-ms")
}

// A CPUClock returns the CPU time some thread or process has run so far.
type CPUClock func() time.Duration

// ThreadCPU returns the clock of the calling goroutine's thread, which it
// locks to it: the CPU a call made on this goroutine takes, whatever else
// the machine runs (GC workers and other goroutines excluded). The caller
// unlocks the thread when done.
func ThreadCPU() (CPUClock, error) {
	runtime.LockOSThread()
	path := fmt.Sprintf("/proc/self/task/%d/schedstat", syscall.Gettid())
	clock := ProcCPU(path)
	if _, err := os.Stat(path); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return clock, nil
}

// ProcCPU returns the clock that reads a schedstat file of /proc (the
// first field: nanoseconds on a CPU). A PostgreSQL backend's is
// /proc/<pid>/schedstat.
func ProcCPU(path string) CPUClock {
	return func() time.Duration {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		f, _, _ := strings.Cut(string(b), " ")
		ns, _ := strconv.ParseInt(f, 10, 64)
		return time.Duration(ns)
	}
}

// Options say what Search and Ingest measure beside wall time.
type Options struct {
	// Server is the CPU clock of the process that serves the store (a
	// PostgreSQL backend), added to the calling thread's.
	Server CPUClock
}

// measure runs op b.N times and reports the wall time of each (wall-*)
// and the CPU time it took (cpu-*: the calling thread's, and the server's
// when there is one): on a loaded machine the wall time is mostly waiting
// for a CPU, and the CPU time is what the operation costs, the latency on
// an idle machine with the data in memory.
func measure(b *testing.B, opts Options, op func(i int) error) {
	thread, err := ThreadCPU()
	if err != nil {
		b.Logf("no CPU clock (%v): wall time only", err)
		thread = func() time.Duration { return 0 }
	} else {
		defer runtime.UnlockOSThread()
	}
	cpu := func() time.Duration {
		t := thread()
		if opts.Server != nil {
			t += opts.Server()
		}
		return t
	}
	var wall, used Latencies
	var server time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var s0 time.Duration
		if opts.Server != nil {
			s0 = opts.Server()
		}
		c0, t0 := cpu(), time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		wall = append(wall, time.Since(t0))
		used = append(used, cpu()-c0)
		if opts.Server != nil {
			server += opts.Server() - s0
		}
	}
	b.StopTimer()
	wall.Report(b, "wall-")
	used.Report(b, "cpu-")
	if opts.Server != nil && len(used) > 0 {
		b.ReportMetric(float64(server)/float64(len(used))/float64(time.Millisecond), "server-cpu-mean-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// Search measures searches of user's memories: b.N queries, one at a
// time.
func Search(b *testing.B, svc *memory.Service, user string, c *Corpus, opts Options) {
	ctx := context.Background()
	queries := make([]string, 1000)
	for i := range queries {
		queries[i] = c.Query()
	}
	found := 0
	measure(b, opts, func(i int) error {
		res, err := svc.Search(ctx, user, queries[i%len(queries)], nil)
		found += len(res)
		return err
	})
	if found == 0 {
		b.Fatal("no search found anything")
	}
}

// Ingest measures the ingest of one message at a time into a thread of
// user's, as after the run that said it: b.N messages.
func Ingest(b *testing.B, svc *memory.Service, user string, c *Corpus, opts Options) {
	ctx := context.Background()
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = c.sentence(15)
	}
	thread := fmt.Sprintf("bench-ingest-%d", time.Now().UnixNano())
	measure(b, opts, func(i int) error {
		m := memory.Message{Thread: thread, Index: i, Author: "Ada", Text: texts[i%len(texts)], Time: time.Now()}
		_, err := svc.IngestMessages(ctx, user, []memory.Message{m})
		return err
	})
}

// RandomEmbedder embeds any text as a pseudo-random unit vector of Dims
// dimensions: for measuring the cost of hybrid search, not its quality.
type RandomEmbedder struct {
	Dims int
	mu   sync.Mutex
	r    *rand.Rand
}

// Embed implements memory.Embedder.
func (e *RandomEmbedder) Embed(_ context.Context, texts []string, _ memory.EmbedTask) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.r == nil {
		e.r = rand.New(rand.NewPCG(3, 4))
	}
	out := make([][]float32, len(texts))
	for i := range out {
		v := make([]float32, e.Dims)
		var n float64
		for d := range v {
			v[d] = float32(e.r.NormFloat64())
			n += float64(v[d]) * float64(v[d])
		}
		for d := range v {
			v[d] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

// FillVectors gives every memory of user in store without a vector one of
// e's, in batches of 1000.
func FillVectors(tb testing.TB, store memory.Store, user string, e memory.Embedder) {
	tb.Helper()
	ctx := context.Background()
	for {
		recs, err := store.Unembedded(ctx, user, 1000)
		if err != nil {
			tb.Fatal(err)
		}
		if len(recs) == 0 {
			return
		}
		texts := make([]string, len(recs))
		vs, _ := e.Embed(ctx, texts, memory.EmbedDocument)
		set := make(map[string][]float32, len(recs))
		for i, r := range recs {
			set[r.ID] = vs[i]
		}
		if err := store.SetVectors(ctx, user, set); err != nil {
			tb.Fatal(err)
		}
	}
}
