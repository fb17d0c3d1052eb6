// Package citest tells the tests that only CI needs from those README's
// test command (go test ./...) runs on a developer's machine. The default
// run stays short and passes on a busy machine; CI sets TOOLNEXUS_CI=1
// (.ci/run runs README's command with GOFLAGS=-race TOOLNEXUS_CI=1) and
// runs everything: the long soaks at full length, the tests that start
// and kill processes, build separate modules or run the docs' commands,
// and the load test at its full size.
//
// A test that only CI needs calls [Heavy] first; one that runs a shorter
// version by default asks [Enabled]. Either way it still skips under
// go test -short.
package citest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns on CI's tests: TOOLNEXUS_CI=1.
const Env = "TOOLNEXUS_CI"

// Enabled reports whether CI's tests run: TOOLNEXUS_CI is 1 and the run
// is not -short.
func Enabled() bool {
	return os.Getenv(Env) == "1" && !testing.Short()
}

// Heavy skips t unless CI's tests run, saying what the test does that
// the default run leaves to CI (why is a phrase, such as "starts server
// processes and kills them").
func Heavy(t testing.TB, why string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("left to CI: %s; %s=1 runs it", why, Env)
	}
}
