//go:build race

package agentserver_test

// raceEnabled is set when the tests run under the race detector, which
// makes the load test ten times slower: it then serves fewer runs (.ci/run
// runs it again, whole, without the detector).
const raceEnabled = true
