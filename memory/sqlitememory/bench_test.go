package sqlitememory_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/internal/memorybench"
	"github.com/toolnexus/toolnexus-go/memory/sqlitememory"
	"go.uber.org/goleak"
)

// benchFiles holds, per size, a file filled once for every benchmark of
// the run.
var (
	benchMu    sync.Mutex
	benchFiles = map[int]string{}
)

// filled returns the path of a file holding n memories of user "ada",
// made once per run; with TOOLNEXUS_MEMORY_BENCH_DIR set, once in that
// directory, and reused by the runs after (filling 100,000 memories takes
// minutes).
func filled(b *testing.B, n int) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	if p, ok := benchFiles[n]; ok {
		return p
	}
	dir := os.Getenv("TOOLNEXUS_MEMORY_BENCH_DIR")
	keep := dir != ""
	if keep {
		p := filepath.Join(dir, fmt.Sprintf("sqlite-%d.db", n))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "sqlitememory-bench"); err != nil {
			b.Fatal(err)
		}
	}
	p := filepath.Join(dir, fmt.Sprintf("sqlite-%d.db", n))
	s, err := sqlitememory.Open(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	svc, _ := memory.New(memory.Config{Store: s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	memorybench.Fill(b, svc, "ada", memorybench.NewCorpus(1), n)
	svc.Close(context.Background())
	s.Close()
	if !keep {
		benchFiles[n] = p
	}
	return p
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range benchFiles {
		os.RemoveAll(filepath.Dir(p))
	}
	if code == 0 {
		// genai's dependencies start an OpenCensus worker at init.
		if err := goleak.Find(goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func service(b *testing.B, n int) *memory.Service {
	s := open(b, filled(b, n))
	svc, err := memory.New(memory.Config{Store: s})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close(context.Background()) })
	return svc
}

// BenchmarkSearch: one search at a time, among n memories of the user;
// the metrics are its latencies.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			memorybench.Search(b, service(b, n), "ada", memorybench.NewCorpus(2), memorybench.Options{})
		})
	}
}

// BenchmarkIngest: one message ingested at a time, among n memories.
func BenchmarkIngest(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			memorybench.Ingest(b, service(b, n), "ada", memorybench.NewCorpus(3), memorybench.Options{})
		})
	}
}

// BenchmarkHybridSearch: one hybrid search at a time, among n memories of
// the user with 768-dimension vectors, every one of them scored (the
// query's embedding is local: no network call is measured).
func BenchmarkHybridSearch(b *testing.B) {
	for _, n := range []int{10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := open(b, filled(b, n))
			emb := &memorybench.RandomEmbedder{Dims: 768}
			memorybench.FillVectors(b, s, "ada", emb)
			svc, err := memory.New(memory.Config{Store: s, Embedder: emb})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { svc.Close(context.Background()) })
			memorybench.Search(b, svc, "ada", memorybench.NewCorpus(2), memorybench.Options{})
		})
	}
}
