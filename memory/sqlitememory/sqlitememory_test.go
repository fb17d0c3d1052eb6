package sqlitememory_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/internal/servedtest"
	"github.com/toolnexus/toolnexus-go/memory/memorytest"
	"github.com/toolnexus/toolnexus-go/memory/sqlitememory"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
)

func open(t testing.TB, path string) *sqlitememory.Store {
	t.Helper()
	s, err := sqlitememory.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store {
		return open(t, filepath.Join(t.TempDir(), "memory.db"))
	})
}

// The service on SQLite with the fake's embeddings through genai: hybrid
// search end to end.
func TestServiceWithGemini(t *testing.T) {
	memorytest.RunService(t, func(t *testing.T) memory.Store {
		return open(t, filepath.Join(t.TempDir(), "memory.db"))
	}, &memorytest.ServiceOptions{NewEmbedder: func(t *testing.T) memory.Embedder {
		return &memory.GeminiEmbedder{Models: geminitest.Start(t).Client().Models}
	}})
}

// A served agent remembers across a user's threads, its threads and its
// memories in one SQLite file.
func TestServedRemembers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	sessions, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer sessions.Close()
	svc, err := memory.New(memory.Config{Store: open(t, path)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	servedtest.RememberAcrossThreads(t, sessions, svc)
}
