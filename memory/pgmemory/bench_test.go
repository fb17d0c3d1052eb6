package pgmemory_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/internal/memorybench"
	"github.com/toolnexus/toolnexus-go/memory/pgmemory"
)

var (
	benchMu  sync.Mutex
	benchDBs = map[int]string{}
)

// filled returns the URL of a database holding n memories of user "ada",
// made once per run.
func filled(b *testing.B, n int) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	if u, ok := benchDBs[n]; ok {
		return u
	}
	server := pgtest.URL(b)
	name := fmt.Sprintf("toolnexus_memory_bench_%d", n)
	pgtest.Exec(b, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	pgtest.Exec(b, server, "CREATE DATABASE "+name)
	u := pgtest.WithDatabase(b, server, name)
	s, err := pgmemory.Open(context.Background(), u)
	if err != nil {
		b.Fatal(err)
	}
	svc, _ := memory.New(memory.Config{Store: s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	memorybench.Fill(b, svc, "ada", memorybench.NewCorpus(1), n)
	svc.Close(context.Background())
	s.Close()
	pgtest.Exec(b, u, "VACUUM ANALYZE")
	benchDBs[n] = u
	return u
}

// service returns a service on the database of n memories, through a pool
// of one connection, and the CPU clock of that connection's backend.
func service(b *testing.B, n int) (*memory.Service, memorybench.CPUClock) {
	return serviceWith(b, n, nil)
}

func serviceWith(b *testing.B, n int, emb memory.Embedder) (*memory.Service, memorybench.CPUClock) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(filled(b, n))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns, cfg.MinConns = 1, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	var pid int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		b.Fatal(err)
	}
	s, err := pgmemory.New(ctx, pool)
	if err != nil {
		b.Fatal(err)
	}
	if emb != nil {
		memorybench.FillVectors(b, s, "ada", emb)
	}
	svc, err := memory.New(memory.Config{Store: s, Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close(context.Background()) })
	return svc, memorybench.ProcCPU(fmt.Sprintf("/proc/%d/schedstat", pid))
}

// BenchmarkSearch: one search at a time, among n memories of the user;
// the CPU time is the client thread's and the PostgreSQL backend's.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			svc, server := service(b, n)
			memorybench.Search(b, svc, "ada", memorybench.NewCorpus(2), memorybench.Options{Server: server})
		})
	}
}

// BenchmarkIngest: one message ingested at a time, among n memories.
func BenchmarkIngest(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			svc, server := service(b, n)
			memorybench.Ingest(b, svc, "ada", memorybench.NewCorpus(3), memorybench.Options{Server: server})
		})
	}
}

// BenchmarkHybridSearch: one hybrid search at a time, among n memories of
// the user with 768-dimension vectors, every one of them scored (the
// query's embedding is local: no network call is measured).
func BenchmarkHybridSearch(b *testing.B) {
	for _, n := range []int{10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			svc, server := serviceWith(b, n, &memorybench.RandomEmbedder{Dims: 768})
			memorybench.Search(b, svc, "ada", memorybench.NewCorpus(2), memorybench.Options{Server: server})
		})
	}
}
