package pgstore_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/artifacttest"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
)

// artifactsAt returns the artifact store of a store opened on the
// database at u, closed when t ends.
func artifactsAt(t *testing.T, u string) *pgstore.Artifacts {
	t.Helper()
	a, err := open(t, u).Artifacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The artifact store passes the contract, and what it keeps survives
// the store closed and opened again, as after a restart.
func TestArtifactsContract(t *testing.T) {
	urls := map[artifact.Store]string{}
	artifacttest.Run(t, func(t *testing.T) artifact.Store {
		u := pgtest.Database(t)
		a := artifactsAt(t, u)
		urls[a] = u
		return a
	}, artifacttest.Options{Reopen: func(t *testing.T, s artifact.Store) artifact.Store {
		return artifactsAt(t, urls[s])
	}})
}

// go test -run '^$' -bench 'Artifacts' -benchtime 5x ./session/pgstore/ (with TOOLNEXUS_PG_URL)
func BenchmarkArtifacts(b *testing.B) {
	s, err := pgstore.Open(ctx, pgtest.Database(b))
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
