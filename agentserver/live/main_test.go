package live_test

import (
	"testing"

	"go.uber.org/goleak"
)

// leakOptions ignore the worker genai's dependencies start at init.
var leakOptions = []goleak.Option{goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions...) }
