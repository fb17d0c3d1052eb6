package agentserver_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		serveChild() // the server process of the crash tests (crash_test.go)
		return
	}
	// genai's dependencies start an OpenCensus worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
