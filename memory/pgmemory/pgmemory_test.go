package pgmemory_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/internal/servedtest"
	"github.com/toolnexus/toolnexus-go/memory/memorytest"
	"github.com/toolnexus/toolnexus-go/memory/pgmemory"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
)

func open(t testing.TB, u string) *pgmemory.Store {
	t.Helper()
	s, err := pgmemory.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	u := pgtest.Database(t)
	first := true
	memorytest.Run(t, func(t *testing.T) memory.Store {
		s := open(t, u)
		if !first {
			// A fresh database per subtest is slow: empty the tables instead.
			pgtest.Exec(t, u, "TRUNCATE toolnexus_memories, toolnexus_memory_terms, toolnexus_memory_users")
		}
		first = false
		return s
	})
}

// The service on PostgreSQL with the fake's embeddings through genai:
// hybrid search end to end.
func TestServiceWithGemini(t *testing.T) {
	u := pgtest.Database(t)
	memorytest.RunService(t, func(t *testing.T) memory.Store {
		s := open(t, u)
		pgtest.Exec(t, u, "TRUNCATE toolnexus_memories, toolnexus_memory_terms, toolnexus_memory_users")
		return s
	}, &memorytest.ServiceOptions{NewEmbedder: func(t *testing.T) memory.Embedder {
		return &memory.GeminiEmbedder{Models: geminitest.Start(t).Client().Models}
	}})
}

// A served agent remembers across a user's threads, its threads and its
// memories in one PostgreSQL database.
func TestServedRemembers(t *testing.T) {
	u := pgtest.Database(t)
	sessions, err := pgstore.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer sessions.Close()
	svc, err := memory.New(memory.Config{Store: open(t, u)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	servedtest.RememberAcrossThreads(t, sessions, svc)
}
