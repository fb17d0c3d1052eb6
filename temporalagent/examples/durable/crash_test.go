package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/temporalagent"
)

// TestWorkerKilledMidTurn kills a worker process (SIGKILL) in the middle of
// a turn, once two of each run's four tool calls completed and the other
// two are running; a second worker process finishes every run. Each
// completed call ran exactly once; the running call of a tool that is not
// idempotent is answered to the model as interrupted and never runs again;
// the running call of an idempotent tool runs again, on the second worker,
// and completes. The Observers of both workers see each event once: the
// second worker's replay of what the first did reports nothing.
func TestWorkerKilledMidTurn(t *testing.T) {
	// A killed worker's calls count as lost once their heartbeat timeout
	// has passed without a heartbeat; a live worker's must not. A worker
	// slow enough (a -race binary on a loaded machine) can miss its
	// heartbeats while it is alive: its call of the idempotent tool is
	// then run again before the kill, and the scenario is tried again
	// with a longer timeout.
	for heartbeat := 5 * time.Second; !workerKilledMidTurn(t, heartbeat); heartbeat *= 2 {
		if heartbeat >= time.Minute {
			t.Fatalf("with a heartbeat timeout of %v, the live worker's calls were taken for lost", heartbeat)
		}
		t.Logf("with a heartbeat timeout of %v, the live worker's calls were taken for lost; trying a longer one", heartbeat)
	}
}

// workerKilledMidTurn runs the scenario of TestWorkerKilledMidTurn with
// the given heartbeat timeout. It reports false, having checked nothing,
// when a call of the first worker was taken for lost before the kill.
func workerKilledMidTurn(t *testing.T, heartbeat time.Duration) bool {
	e := newEnv(t)
	e.heartbeat = heartbeat
	first := e.startWorker()
	var ids []string
	for i := range 4 {
		ids = append(ids, fmt.Sprintf("r%d", i))
	}
	runs := make(map[string]*temporalagent.Run)
	for _, id := range ids {
		runs[id] = e.start("crash", id, "crash "+id)
	}
	ready := func() bool {
		recs := e.records()
		for _, id := range ids {
			if count(recs, "done_"+id+"/a") == 0 || count(recs, "done_"+id+"/b") == 0 ||
				count(recs, "start_"+id+"/c") == 0 || count(recs, "start_"+id+"/d") == 0 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(hangGuard); !ready(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			var states []string
			for _, id := range ids {
				p, err := runs[id].Progress(context.Background())
				states = append(states, fmt.Sprintf("%s: %+v %v", id, p, err))
			}
			t.Fatalf("after %v, not every run's fast calls completed and slow ones started:\nruns: %s\nrecords: %v",
				hangGuard, strings.Join(states, "; "), e.records())
		}
	}
	// A call taken for lost is run again no sooner than a second later
	// (the retry policy's first interval): one still running once here
	// does not run again before the kill.
	recs := e.records()
	for _, id := range ids {
		for _, key := range []string{"c", "d"} {
			if count(recs, "start_"+id+"/"+key) != 1 || count(recs, "done_"+id+"/"+key) != 0 {
				first.kill()
				return false
			}
		}
	}
	first.kill()
	firstPID := fmt.Sprintf("_pid%d", first.cmd.Process.Pid)
	second := e.startWorker()
	secondPID := fmt.Sprintf("_pid%d", second.cmd.Process.Pid)

	results := make(map[string]*agent.Result)
	for _, id := range ids {
		res, err := result(t, runs[id], hangGuard)
		if err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		results[id] = res
	}
	// The second worker, as slow, can miss the heartbeats of the call it
	// runs again: it is interrupted there too.
	for _, res := range results {
		if msg, _ := res.Turns[0].Results[3].Output.(string); strings.Contains(msg, "Heartbeat timeout") {
			return false
		}
	}
	for _, id := range ids {
		res := results[id]
		if res.Text != "crash "+id+" done" {
			t.Errorf("run %s answered %q", id, res.Text)
		}
		calls := res.Turns[0].Results
		for _, k := range []int{0, 1, 3} {
			if calls[k].IsError {
				t.Errorf("run %s, call %d: %v, want its result", id, k, calls[k].Output)
			}
		}
		if msg, _ := calls[2].Output.(string); !calls[2].IsError || !strings.Contains(msg, "interrupted") {
			t.Errorf("run %s, call c: %v, want an interrupted error", id, calls[2].Output)
		}
	}
	recs = e.records()
	// The second worker replays each run's history: the Observer never
	// sees an event twice. Per run: 2 model calls; 4 tool calls on the
	// first worker and the idempotent one again on the second; results for
	// the 2 that completed there, the idempotent one, and the interrupted
	// one; 2 turns.
	for kind, want := range map[string]int{"RunStart": 4, "ModelRequest": 8, "ModelResponse": 8, "ToolCall": 20,
		"ToolResult": 16, "TurnEnd": 8, "Done": 4} {
		if got := count(recs, "event_"+kind); got != want {
			t.Errorf("the Observers saw %d %s events, want %d", got, kind, want)
		}
	}
	for _, id := range ids {
		for _, key := range []string{"a", "b"} {
			if n, m := count(recs, "start_"+id+"/"+key), count(recs, "done_"+id+"/"+key); n != 1 || m != 1 {
				t.Errorf("call %s/%s started %d times and completed %d times, want exactly once", id, key, n, m)
			}
		}
		if n, m := count(recs, "start_"+id+"/c"), count(recs, "done_"+id+"/c"); n != 1 || m != 0 {
			t.Errorf("non-idempotent call %s/c started %d times and completed %d times, want 1 and 0", id, n, m)
		}
		if m := count(recs, "done_"+id+"/d"); m != 1 || count(recs, "start_"+id+"/d") != 2 {
			t.Errorf("idempotent call %s/d started %d times and completed %d, want 2 and 1", id, count(recs, "start_"+id+"/d"), m)
		}
		if !has(recs, "start_"+id+"/d"+firstPID) || !has(recs, "done_"+id+"/d"+secondPID) {
			t.Errorf("idempotent call %s/d: records %v, want it started on the first worker and completed on the second", id, recs)
		}
	}
	return true
}

func has(records []string, line string) bool {
	for _, r := range records {
		if r == line {
			return true
		}
	}
	return false
}
