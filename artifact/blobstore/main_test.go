package blobstore

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// genai's dependencies start an OpenCensus worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
