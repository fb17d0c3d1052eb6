package sqlitestore_test

import (
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/artifacttest"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
)

// artifactsAt returns the artifact store of a store opened at path,
// closed when t ends.
func artifactsAt(t *testing.T, path string) *sqlitestore.Artifacts {
	t.Helper()
	a, err := open(t, path).Artifacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The artifact store passes the contract, and what it keeps survives
// the store closed and opened again, as after a restart.
func TestArtifactsContract(t *testing.T) {
	paths := map[artifact.Store]string{}
	artifacttest.Run(t, func(t *testing.T) artifact.Store {
		path := filepath.Join(t.TempDir(), "sessions.db")
		a := artifactsAt(t, path)
		paths[a] = path
		return a
	}, artifacttest.Options{Reopen: func(t *testing.T, s artifact.Store) artifact.Store {
		return artifactsAt(t, paths[s])
	}})
}

// go test -run '^$' -bench 'Artifacts' -benchtime 5x ./session/sqlitestore/
func BenchmarkArtifacts(b *testing.B) {
	s, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, err := s.Artifacts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	artifacttest.Bench(b, a)
}
