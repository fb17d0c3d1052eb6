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
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
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
		t.Logf("%-32s p50 %8v  p95 %8v  (%d turns)", name, pct(d, 50), pct(d, 95), len(d))
	}
	report("agent.Run, per turn", direct)
	report("agent.Run, per run", directRuns)
	for _, regular := range []bool{false, true} {
		name := "durable, local model activity"
		if regular {
			name = "durable, regular model activity"
		}
		queue := fmt.Sprintf("measure-%v", regular)
		var events atomic.Int64
		var durableRuns []time.Duration
		durable := turnTimes(t, func(obs agent.Observer) {
			w := worker.New(e.ts.GetDefaultClient(), queue, worker.Options{})
			if err := temporalagent.Register(w, temporalagent.Agent{Name: "bench", Agent: benchAgent(t, obs), RegularModelCalls: regular}); err != nil {
				t.Fatal(err)
			}
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			c := temporalagent.NewClient(e.ts.GetDefaultClient(), queue)
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
					events.Store(int64(historyLength(t, e, run.ID())))
				}
			}
		})
		report(name+", per turn", durable)
		report(name+", per run", durableRuns)
		t.Logf("%-32s p50 %8v  p95 %8v", "  added per run / turns", (pct(durableRuns, 50)-pct(directRuns, 50))/turns, (pct(durableRuns, 95)-pct(directRuns, 95))/turns)
		t.Logf("%-32s p50 %8v  p95 %8v", "  added per turn", pct(durable, 50)-pct(direct, 50), pct(durable, 95)-pct(direct, 95))
		t.Logf("%-32s %d events for %d turns", "  workflow history", events.Load(), turns)
	}

	// Throughput: 200 two-turn runs, 32 in flight, on 1 and 2 worker
	// processes.
	for _, workers := range []int{1, 2} {
		for _, regular := range []bool{false, true} {
			e := newEnv(t)
			for range workers {
				e.startWorker()
			}
			name := "weather"
			if regular {
				name = "weather-regular"
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
		}
	}
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

// historyLength returns the number of events in a run's workflow history.
func historyLength(t *testing.T, e *env, id string) int {
	iter := e.ts.GetDefaultClient().GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for iter.HasNext() {
		if _, err := iter.Next(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
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
