package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
)

// TestRecordHistories records the workflow histories of a few runs into
// temporalagent/testdata, where temporalagent's replay test checks that
// they replay without nondeterminism: a guard for changes to the workflow.
// It runs only when DURABLE_RECORD is set:
//
//	DURABLE_RECORD=1 go -C temporalagent/examples test -run TestRecordHistories ./durable
func TestRecordHistories(t *testing.T) {
	if os.Getenv("DURABLE_RECORD") == "" {
		t.Skip("set DURABLE_RECORD=1 to record the replay test's histories")
	}
	e := newEnv(t)
	e.startWorker()
	dir := filepath.Join("..", "..", "testdata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(name, id, runID string) {
		iter := e.ts.GetDefaultClient().GetWorkflowHistory(context.Background(), id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var h historypb.History
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			h.Events = append(h.Events, ev)
		}
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(&h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(id string) {
		if _, err := result(t, e.c.GetRun(id), hangGuard); err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
	}

	for _, name := range []string{"weather", "weather-regular", "weather-local"} {
		run := e.start(name, name, "weather "+name+" Paris Tokyo Oslo")
		wait(run.ID())
		save(name, run.ID(), "")
	}

	run := e.start("weather", "flaky", "flaky f1")
	wait(run.ID())
	save("model-retry", run.ID(), "")

	run = e.start("typed", "typed", "typed t1 Paris")
	wait(run.ID())
	save("typed", run.ID(), "")

	run = e.start("approve", "approve", "pay a1")
	e.waitFor(hangGuard, "approvals", func() bool {
		p, err := run.Progress(context.Background())
		return err == nil && len(p.Pending) == 2
	})
	if err := run.Approve(context.Background(), "0.0"); err != nil {
		t.Fatal(err)
	}
	if err := run.Deny(context.Background(), "0.1", "too much"); err != nil {
		t.Fatal(err)
	}
	wait(run.ID())
	save("approval", run.ID(), "")

	run = e.start("weather", "long", "long r 20")
	wait(run.ID())
	c := e.ts.GetDefaultClient()
	var chain []string
	for runID := ""; ; {
		iter := c.GetWorkflowHistory(context.Background(), run.ID(), runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		first, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.DescribeWorkflowExecution(context.Background(), run.ID(), runID)
		if err != nil {
			t.Fatal(err)
		}
		chain = append([]string{d.GetWorkflowExecutionInfo().GetExecution().GetRunId()}, chain...)
		if runID = first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); runID == "" {
			break
		}
	}
	if len(chain) < 2 {
		t.Fatalf("the long run did not continue as new")
	}
	for i, runID := range chain[:2] {
		save(fmt.Sprintf("continue-as-new-%d", i+1), run.ID(), runID)
	}
}
