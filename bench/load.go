package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// This file measures agent.Run beyond the loop's own cost: how well tool
// calls fan out (-fanout), and how it behaves with many runs at once
// (-load).

// sleepyTools returns sc's tools as toolset tools that each sleep d,
// honouring their context, before answering.
func sleepyTools(sc scenario, d time.Duration) *toolset.Set {
	var tools []*toolset.Tool
	for _, t := range sc.toolSpecs() {
		tools = append(tools, toolset.MustFunc(t.Name, t.Description,
			func(ctx context.Context, in toolsetWeatherIn) (string, error) {
				select {
				case <-time.After(d):
					return weather(in.City), nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}))
	}
	return toolset.MustNew(tools...)
}

// newAgentClient returns a genai client on url with its own transport, so
// that its idle connections can be closed when a measurement ends.
func newAgentClient(url string) (*genai.Client, *http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1024
	client, err := newClient(url, &http.Client{Transport: tr})
	return client, tr, err
}

// runFanout measures one turn of 8 calls of a tool that sleeps 50 ms, with
// MaxParallel 8 and with MaxParallel 1 (sequential), and prints the tool
// time of the turn (median of rounds) and the speedup.
func runFanout(w io.Writer, rounds int) error {
	const calls, sleep = 8, 50 * time.Millisecond
	sc := scenario{name: "fanout", calls: calls, turns: 1, tools: 1}
	srv := newServer(sc)
	defer srv.Close()
	client, tr, err := newAgentClient(srv.URL())
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	measureTurn := func(parallel int) (time.Duration, error) {
		a, err := agent.New(agent.Config{Models: client.Models, Model: benchModel, Tools: sleepyTools(sc, sleep), MaxParallel: parallel})
		if err != nil {
			return 0, err
		}
		var times []time.Duration
		for range rounds {
			res, err := a.Run(context.Background(), []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)})
			if err != nil {
				return 0, err
			}
			if err := checkAnswer(res.Text); err != nil {
				return 0, err
			}
			times = append(times, res.Turns[0].ToolTime)
		}
		slices.Sort(times)
		return times[len(times)/2], srv.Err()
	}
	par, err := measureTurn(calls)
	if err != nil {
		return err
	}
	seq, err := measureTurn(1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n### Tool fan-out\n\n%d calls of a tool that sleeps %v, in one turn; median of %d runs.\n\n", calls, sleep, rounds)
	fmt.Fprintf(w, "| MaxParallel | tool time of the turn | speedup |\n|--:|--:|--:|\n")
	fmt.Fprintf(w, "| 1 (sequential) | %.1f ms | 1.0× |\n", ms(seq))
	fmt.Fprintf(w, "| %d | %.1f ms | %.1f× |\n", calls, ms(par), float64(seq)/float64(par))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runLoad starts n agent.Run conversations at once (the two-call scenario,
// with a tool that sleeps 20 ms so that the runs overlap), and prints the
// runs per second, the peak heap, the heap per in-flight run, and the
// goroutines before and after, which must be equal.
func runLoad(w io.Writer, n int) error {
	const sleep = 20 * time.Millisecond
	sc := scenarios[0] // two-call
	srv := newServer(sc)
	client, tr, err := newAgentClient(srv.URL())
	if err != nil {
		srv.Close()
		return err
	}
	a, err := agent.New(agent.Config{Models: client.Models, Model: benchModel, Tools: sleepyTools(sc, sleep)})
	if err != nil {
		srv.Close()
		return err
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutinesBefore := runtime.NumGoroutine()

	// Sample the heap while the runs are in flight.
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()

	var wg sync.WaitGroup
	var failed atomic.Int32
	var firstErr atomic.Value
	var inFlight, peakInFlight atomic.Int32
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cur := inFlight.Add(1)
			for {
				p := peakInFlight.Load()
				if cur <= p || peakInFlight.CompareAndSwap(p, cur) {
					break
				}
			}
			defer inFlight.Add(-1)
			res, err := a.Run(context.Background(), []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)})
			if err == nil {
				err = checkAnswer(res.Text)
			}
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	<-sampled

	tr.CloseIdleConnections()
	srv.Close()
	// Let the closed connections' goroutines finish.
	goroutinesAfter := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); goroutinesAfter > goroutinesBefore && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		goroutinesAfter = runtime.NumGoroutine()
	}
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("load: %d of %d runs failed, first: %v", f, n, firstErr.Load())
	}
	if err := srv.Err(); err != nil {
		return err
	}
	heap := float64(peak.Load()) - float64(before.HeapAlloc)
	fmt.Fprintf(w, "\n### Load\n\n%d agent.Run conversations started at once (two-call scenario, the tool sleeps %v), one process.\n\n", n, sleep)
	fmt.Fprintf(w, "| measure | value |\n|---|--:|\n")
	fmt.Fprintf(w, "| wall time | %.0f ms |\n", ms(elapsed))
	fmt.Fprintf(w, "| runs/s | %.0f |\n", float64(n)/elapsed.Seconds())
	fmt.Fprintf(w, "| peak runs in flight | %d |\n", peakInFlight.Load())
	fmt.Fprintf(w, "| peak heap above the baseline | %.1f MiB |\n", heap/(1<<20))
	fmt.Fprintf(w, "| heap per in-flight run | %.1f KiB |\n", heap/float64(peakInFlight.Load())/1024)
	fmt.Fprintf(w, "| goroutines before → after | %d → %d |\n", goroutinesBefore, goroutinesAfter)
	if goroutinesAfter > goroutinesBefore {
		return fmt.Errorf("load: %d goroutines after the runs, %d before", goroutinesAfter, goroutinesBefore)
	}
	return nil
}
