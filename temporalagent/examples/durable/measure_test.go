package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/genai"
	"google.golang.org/protobuf/proto"
)

// TestMeasure measures durable runs on the embedded server against
// agent.Run, for BENCHMARKS.md: the time each turn takes (p50, p95) with
// the model call as a local and as a regular activity, the workflow
// history each turn writes, and completed two-turn runs per second with
// one and with two worker processes. It runs only when DURABLE_MEASURE is
// set:
//
//	DURABLE_MEASURE=1 go -C temporalagent/examples test -run TestMeasure -v ./durable
func TestMeasure(t *testing.T) {
	if os.Getenv("DURABLE_MEASURE") == "" {
		t.Skip("set DURABLE_MEASURE=1 to measure")
	}
	e := newEnv(t)
	const turns, runs = 5, 40

	// Per turn: the same 5-turn conversation (4 turns of one tool call,
	// then the answer), timed turn by turn through the Observer.
	var directRuns []time.Duration
	direct := turnTimes(t, func(obs agent.Observer) {
		a := benchAgent(t, obs)
		for i := range runs {
			start := time.Now()
			if _, err := a.Run(context.Background(), []*genai.Content{genai.NewContentFromText(fmt.Sprintf("long d%d %d", i, turns-1), genai.RoleUser)}); err != nil {
				t.Fatal(err)
			}
			directRuns = append(directRuns, time.Since(start))
		}
	})
	report := func(name string, d []time.Duration) {
		t.Logf("%-56s p50 %8v  p95 %8v  (%d turns)", name, pct(d, 50), pct(d, 95), len(d))
	}
	report("agent.Run, per turn", direct)
	report("agent.Run, per run", directRuns)
	eager, err := startServer(dynamicconfig.StaticClient{dynamicconfig.EnableActivityEagerExecution.Key(): true})
	if err != nil {
		t.Fatal(err)
	}
	defer eager.Stop()
	onePartition, err := startServer(dynamicconfig.StaticClient{
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer onePartition.Stop()
	slowQueue, err := startServer(dynamicconfig.StaticClient{dynamicconfig.TransferProcessorMaxPollRPS.Key(): 20})
	if err != nil {
		t.Fatal(err)
	}
	defer slowQueue.Stop()
	for _, v := range []struct {
		name       string
		ts         *temporaltest.TestServer
		regular    bool
		localTools bool
	}{
		{"durable, local model activity (default)", e.ts, false, false},
		{"durable, regular model activity", e.ts, true, false},
		{"durable, local model and local tool activities", e.ts, false, true},
		{"durable, local model activity, eager activities", eager, false, false},
		{"durable, local model activity, one partition", onePartition, false, false},
		{"durable, regular model activity, one partition", onePartition, true, false},
		{"durable, local model activity, transfer queue at 20/s", slowQueue, false, false},
		{"durable, regular model activity, transfer queue at 20/s", slowQueue, true, false},
	} {
		queue := "measure-" + v.name
		var events, size atomic.Int64
		var durableRuns []time.Duration
		durable := turnTimes(t, func(obs agent.Observer) {
			w := worker.New(v.ts.GetDefaultClient(), queue, worker.Options{})
			def := temporalagent.Agent{Name: "bench", Agent: benchAgent(t, obs), RegularModelCalls: v.regular}
			if v.localTools {
				def.Tools = map[string]temporalagent.ToolOptions{"get_weather": {Idempotent: true, Local: true}}
			}
			if err := temporalagent.Register(w, def); err != nil {
				t.Fatal(err)
			}
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			c := temporalagent.NewClient(v.ts.GetDefaultClient(), queue)
			for i := range runs {
				start := time.Now()
				run, err := c.Start(context.Background(), client.StartWorkflowOptions{}, "bench",
					[]*genai.Content{genai.NewContentFromText(fmt.Sprintf("long m%d %d", i, turns-1), genai.RoleUser)})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := run.Result(context.Background()); err != nil {
					t.Fatal(err)
				}
				durableRuns = append(durableRuns, time.Since(start))
				if i == 0 {
					n, b := historyLength(t, v.ts, run.ID())
					events.Store(int64(n))
					size.Store(int64(b))
				}
			}
		})
		report(v.name+", per turn", durable)
		report(v.name+", per run", durableRuns)
		t.Logf("%-56s p50 %8v  p95 %8v", "  added per run / turns", (pct(durableRuns, 50)-pct(directRuns, 50))/turns, (pct(durableRuns, 95)-pct(directRuns, 95))/turns)
		t.Logf("%-56s p50 %8v  p95 %8v", "  added per turn", pct(durable, 50)-pct(direct, 50), pct(durable, 95)-pct(direct, 95))
		t.Logf("%-56s %d events, %d bytes for %d turns", "  workflow history", events.Load(), size.Load(), turns)
	}

	// The floor: a bare workflow that runs one no-op activity per
	// iteration, the task-queue round trip every turn of a durable run
	// makes at least once.
	{
		w := worker.New(e.ts.GetDefaultClient(), "measure-bare", worker.Options{})
		registerBare(w)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		var per []time.Duration
		for range runs {
			start := time.Now()
			run, err := e.ts.GetDefaultClient().ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: "measure-bare"}, "bare", turns)
			if err == nil {
				err = run.Get(context.Background(), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			per = append(per, time.Since(start)/turns)
		}
		w.Stop()
		report("bare workflow, one no-op activity per iteration, per run / iterations", per)
	}

	// Throughput: 200 two-turn runs, 32 in flight, on 1 and 2 worker
	// processes.
	for _, workers := range []int{1, 2} {
		for _, name := range []string{"weather", "weather-regular", "weather-local", "bare"} {
			e := newEnv(t)
			e.queue = fmt.Sprintf("%s-%d-%s", e.queue, workers, name)
			e.c = temporalagent.NewClient(e.ts.GetDefaultClient(), e.queue)
			var procs []*proc
			for range workers {
				procs = append(procs, e.startWorker())
			}
			const total, inFlight = 200, 32
			start := time.Now()
			var wg sync.WaitGroup
			sem := make(chan struct{}, inFlight)
			var failed atomic.Int32
			for i := range total {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					if name == "bare" {
						run, err := e.ts.GetDefaultClient().ExecuteWorkflow(context.Background(),
							client.StartWorkflowOptions{TaskQueue: e.queue}, "bare", 2)
						if err == nil {
							err = run.Get(context.Background(), nil)
						}
						if err != nil {
							failed.Add(1)
						}
						return
					}
					run := e.start(name, fmt.Sprintf("t%d", i), fmt.Sprintf("weather t%d Paris", i))
					if _, err := result(t, run, 120*time.Second); err != nil {
						failed.Add(1)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			t.Logf("%d worker process(es), %-16s %6.1f runs/s (%d runs in %v, %d failed)", workers, name+":",
				float64(total)/elapsed.Seconds(), total, elapsed.Round(time.Millisecond), failed.Load())
			for _, p := range procs {
				p.kill()
			}
		}
	}
}

// registerBare registers the reference workflow: n no-op activities in
// sequence, the floor of n turns.
func registerBare(w worker.Registry) {
	w.RegisterActivityWithOptions(func(ctx context.Context) error { return nil }, activity.RegisterOptions{Name: "noop"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, n int) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		for range n {
			if err := workflow.ExecuteActivity(ctx, "noop").Get(ctx, nil); err != nil {
				return err
			}
		}
		return nil
	}, workflow.RegisterOptions{Name: "bare"})
}

// benchAgent is the measured agent: the fake model, a tool that returns at
// once.
func benchAgent(t *testing.T, obs agent.Observer) *agent.Agent {
	type cityIn struct {
		City string `json:"city"`
	}
	weather := toolset.MustFunc("get_weather", "Weather", func(ctx context.Context, in cityIn) (string, error) {
		return "sunny in " + in.City, nil
	})
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: model.URL}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Models: gc.Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(weather), Observer: obs, MaxTurns: 100})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// turnTimes runs f with an Observer and returns how long each turn took:
// from the run's start, or the previous turn's end, to the turn's end.
func turnTimes(t *testing.T, f func(agent.Observer)) []time.Duration {
	var mu sync.Mutex
	var times []time.Duration
	var last time.Time
	f(agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		switch e.Kind {
		case agent.EventRunStart:
			last = now
		case agent.EventTurnEnd:
			times = append(times, now.Sub(last))
			last = now
		}
	}))
	return times
}

// historyLength returns the number of events in a run's workflow history,
// and their size.
func historyLength(t *testing.T, ts *temporaltest.TestServer, id string) (events, bytes int) {
	iter := ts.GetDefaultClient().GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		bytes += proto.Size(ev)
	}
	return events, bytes
}

// pct returns the p-th percentile of d.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)].Round(100 * time.Microsecond)
}
