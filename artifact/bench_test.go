package artifact_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/artifacttest"
)

// go test -run '^$' -bench 'Store' -benchtime 5x ./artifact/
func BenchmarkStoreMemory(b *testing.B) {
	artifacttest.Bench(b, artifact.NewMemory(1<<30))
}

func BenchmarkStoreDir(b *testing.B) {
	d, err := artifact.OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	artifacttest.Bench(b, d)
}
