package main

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/api/enums/v1"
)

// TestLongRunContinuesAsNew runs 40 turns, past the server's
// continue-as-new suggestion (historyCountToSuggest events): the run
// continues as new several times and completes with every turn, the
// usage of every turn, and an answer that saw every turn.
func TestLongRunContinuesAsNew(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	const turns = 40
	run := e.start("weather", "long", fmt.Sprintf("long l1 %d", turns))
	res, err := result(t, run, hangGuard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != fmt.Sprintf("l1: %d turns", turns) || len(res.Turns) != turns+1 {
		t.Fatalf("result %q after %d turns, want %d tool turns and an answer", res.Text, len(res.Turns), turns)
	}
	sum := 0
	for i, turn := range res.Turns {
		if turn.Usage.TotalTokens == 0 {
			t.Errorf("turn %d has no usage", i)
		}
		if i < turns && (len(turn.Calls) != 1 || turn.Calls[0].Args["city"] != fmt.Sprintf("l1-%d", i) || turn.Results[0].Output != fmt.Sprintf("sunny in l1-%d", i)) {
			t.Errorf("turn %d = %+v, want its weather call and result", i, turn)
		}
		sum += turn.Usage.TotalTokens
	}
	if res.Usage.TotalTokens != sum {
		t.Errorf("run usage %d, want the sum of its turns, %d", res.Usage.TotalTokens, sum)
	}
	if got := count(e.records(), "weather_l1-0"); got != 1 {
		t.Errorf("the first turn's call ran %d times, want once", got)
	}

	// Walk the chain of executions back from the last one.
	c := e.ts.GetDefaultClient()
	executions, runID := 0, ""
	for {
		iter := c.GetWorkflowHistory(context.Background(), run.ID(), runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		first, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		events := 1
		for iter.HasNext() {
			if _, err := iter.Next(); err != nil {
				t.Fatal(err)
			}
			events++
		}
		if events > 2*historyCountToSuggest {
			t.Errorf("an execution has %d events, far over the suggestion at %d", events, historyCountToSuggest)
		}
		executions++
		runID = first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			break
		}
	}
	if executions < 3 {
		t.Errorf("%d executions, want the run to have continued as new at least twice", executions)
	}
}
