package artifact_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/artifacttest"
)

func TestMemoryContract(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Store { return artifact.NewMemory(0) }, artifacttest.Options{})
}

func TestDirContract(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Store {
		d, err := artifact.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}, artifacttest.Options{Reopen: func(t *testing.T, s artifact.Store) artifact.Store {
		d, err := artifact.OpenDir(s.(*artifact.Dir).Root())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}})
}
