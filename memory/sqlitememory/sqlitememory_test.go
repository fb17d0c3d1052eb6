package sqlitememory_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/memorytest"
	"github.com/toolnexus/toolnexus-go/memory/sqlitememory"
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
