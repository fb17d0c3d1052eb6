package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"google.golang.org/genai"
)

// TestFiguresClosed measures the figures of BENCHMARKS.md on reading a
// run that is over ("Served runs on Temporal (issue 34)", "A run that is
// over"): FLEET_FIGURES=1 runs it, without -race. One finished run, read
// 200 times each way with the queue's workers up: the log query that a
// worker answers by replaying the workflow (how the Runner read it
// before), and Runner.Latest, which reads the closed execution's result;
// then Latest with no worker at all.
func TestFiguresClosed(t *testing.T) {
	if os.Getenv("FLEET_FIGURES") != "1" {
		t.Skip("FLEET_FIGURES=1 measures the figures of BENCHMARKS.md")
	}
	t.Logf("load average before: %s", loadavg())
	f := newFleet(t)
	ctx := context.Background()
	prefix, err := agentserver.UserPrefix("local")
	if err != nil {
		t.Fatal(err)
	}
	thread := prefix + id("figures-closed-"+f.queue)
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "lou"})), fake.Text("Sent to Lou."))
	info, cur, err := f.a.runner.Start(ctx, &agentserver.Input{Thread: thread, Conversation: "c", User: "local",
		Message: genai.NewContentFromText("Email Lou", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	pause := readUntil(t, cur, agentserver.KindPause)
	cur.Close()
	cur, err = f.b.runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: pause[len(pause)-1].Pending[0].Call.ID, Approved: true}})
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	wid := "agentserver/" + thread
	_ = f.a.c.GetWorkflow(ctx, wid, "").Get(ctx, nil)

	const n = 200
	measure := func(read func() error) (p50, p99 time.Duration, perCall time.Duration) {
		ds := make([]time.Duration, n)
		c0 := cpu(t)
		for i := range n {
			start := time.Now()
			if err := read(); err != nil {
				t.Fatal(err)
			}
			ds[i] = time.Since(start)
		}
		return quantile(ds, 0.5), quantile(ds, 0.99), (cpu(t) - c0) / n
	}
	q50, q99, qcpu := measure(func() error {
		_, err := f.a.c.QueryWorkflow(ctx, wid, "", temporalagent.LogQueryName, int64(0))
		return err
	})
	l50, l99, lcpu := measure(func() error {
		got, err := f.a.runner.Latest(ctx, thread)
		if err == nil && (got.ID != info.ID || got.State != agentserver.StateDone) {
			t.Errorf("Latest: %+v", got)
		}
		return err
	})
	t.Logf("workers up: log query p50 %v p99 %v CPU/call %v; Latest (final view) p50 %v p99 %v CPU/call %v; wall ratio %.1f×, CPU ratio %.1f×",
		q50, q99, qcpu, l50, l99, lcpu, float64(q50)/float64(l50), float64(qcpu)/float64(lcpu))

	f.a.stop(t)
	f.b.stop(t)
	r, c := f.workerless(t)
	n50, n99, _ := measure(func() error { _, err := r.Latest(ctx, thread); return err })
	t.Logf("no worker: Latest p50 %v p99 %v", n50, n99)
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	_, err = c.QueryWorkflow(qctx, wid, "", temporalagent.LogQueryName, int64(0))
	t.Logf("no worker: the log query fails after %v: %v", time.Since(start), err)
	t.Logf("load average after: %s", loadavg())
}
