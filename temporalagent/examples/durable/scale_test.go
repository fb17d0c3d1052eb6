package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/temporalagent"
)

// TestRunsSpreadOverWorkers runs 100 runs on two worker processes: every
// run completes with the right answer, and both workers did part of the
// work.
func TestRunsSpreadOverWorkers(t *testing.T) {
	e := newEnv(t)
	a, b := e.startWorker(), e.startWorker()
	const n = 100
	runs := make([]*temporalagent.Run, n)
	for i := range runs {
		runs[i] = e.start("weather", fmt.Sprintf("s%d", i), fmt.Sprintf("weather s%d Paris-%d Tokyo-%d", i, i, i))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	texts := make([]string, n)
	for i, run := range runs {
		wg.Go(func() {
			res, err := result(t, run, hangGuard)
			errs[i] = err
			if res != nil {
				texts[i] = res.Text
			}
		})
	}
	wg.Wait()
	for i := range runs {
		want := fmt.Sprintf("s%d: sunny in Paris-%d; sunny in Tokyo-%d", i, i, i)
		if errs[i] != nil || texts[i] != want {
			t.Errorf("run %d: %q, %v; want %q", i, texts[i], errs[i], want)
		}
	}
	recs := e.records()
	if len(recs) != 2*n {
		t.Errorf("%d tool calls ran, want %d", len(recs), 2*n)
	}
	perWorker := map[string]int{}
	for _, r := range recs {
		perWorker[r[strings.LastIndex(r, "_pid")+1:]]++
	}
	pa, pb := fmt.Sprintf("pid%d", a.cmd.Process.Pid), fmt.Sprintf("pid%d", b.cmd.Process.Pid)
	if perWorker[pa] == 0 || perWorker[pb] == 0 {
		t.Errorf("tool calls per worker = %v, want both workers to have run some", perWorker)
	}
}
