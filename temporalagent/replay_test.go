package temporalagent

import (
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays the workflow histories recorded in
// testdata (by the examples module's TestRecordHistories, on a real
// server): the workflow must make the same decisions from them, or this
// change to it would break the runs in flight when it is deployed. The
// agents' Observer must see nothing while the workflow replays, and
// otelagent's start no span.
func TestReplayRecordedHistories(t *testing.T) {
	files := recordedHistories(t)
	srv := newServer(t)
	var log eventLog
	tel := newTelemetry(t, true)
	observers := agent.Observers(&log, tel.observer(srv))
	var agents []Agent
	for _, name := range []string{"weather", "weather-regular", "weather-local", "approve"} {
		a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.Observer = observers })
		agents = append(agents, Agent{Name: name, Agent: a})
	}
	typed, err := agent.Typed[forecast](newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
		c.Observer, c.Output.Strategy = observers, agent.OutputTool
	}))
	if err != nil {
		t.Fatal(err)
	}
	agents = append(agents, Agent{Name: "typed", Agent: typed})
	h, err := newHost(agents)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(h.run, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(quiet, f); err != nil {
				t.Errorf("replaying %s: %v", f, err)
			}
		})
	}
	if kinds := log.kinds(); len(kinds) > 0 {
		t.Errorf("the observer saw %v during replay, want nothing", kinds)
	}
	if spans := tel.spans.Started(); len(spans) > 0 {
		t.Errorf("otelagent started %d spans during replay, want none", len(spans))
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("replay made %d model calls, want none", n)
	}
}

// recordedHistories returns the workflow histories recorded in testdata.
func recordedHistories(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	return files
}
