package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
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

// runLoad measures n conversations at once (the two-call scenario), with
// the fake server in a child process (see child.go), so that the heap it
// reads is the client's alone. It prints two tables:
//
//   - Throughput: n agent.Run conversations started at once, with a tool
//     that sleeps 20 ms so that the runs overlap: wall time, runs per
//     second, peak runs in flight, the peak heap (HeapAlloc, sampled every
//     2 ms: uncollected garbage included) above the baseline and per
//     in-flight run, and the goroutines before and after, which must be
//     equal.
//   - Held heap: for agent.Run, Agent.Stream and the raw genai loops, what
//     each run holds: n runs are held at two points, all at once, and the
//     live heap is read after a GC, per run. First while each waits for
//     its first model answer (the fake holds the n requests), then while
//     each waits in its tool calls (each call waits until all have
//     arrived). Unlike the peak, it is repeatable to a few bytes.
func runLoad(w io.Writer, n int) error {
	sc := scenarios[0] // two-call
	srv, err := startChild(sc.name)
	if err != nil {
		return fmt.Errorf("starting the fake server: %w", err)
	}
	goroutinesBefore := runtime.NumGoroutine()
	held, err := loadHeld(srv, sc, n)
	var tps []throughput
	for _, loop := range []func(*genai.Client) (func(context.Context) error, error){
		func(client *genai.Client) (func(context.Context) error, error) {
			return rawLoop(client, sc, sleepyRawTools(sc, loadSleep)), nil
		},
		func(client *genai.Client) (func(context.Context) error, error) {
			a, err := agent.New(agent.Config{Models: client.Models, Model: benchModel, Tools: sleepyTools(sc, loadSleep)})
			return runAgent(a), err
		},
	} {
		if err != nil {
			break
		}
		var tp throughput
		tp, err = loadThroughput(srv.URL(), n, loop)
		tps = append(tps, tp)
	}
	if err := errors.Join(err, srv.Close()); err != nil {
		return err
	}
	goroutinesAfter := settledGoroutines(goroutinesBefore)

	fmt.Fprintf(w, "\n### Load\n\n%d conversations at once (two-call scenario), in one process; the fake server runs in another.\n\n", n)
	fmt.Fprintf(w, "Throughput: %d conversations started at once, the tool sleeping %v so that they overlap.\n\n", n, loadSleep)
	fmt.Fprintf(w, "| measure | raw genai loop | agent.Run |\n|---|--:|--:|\n")
	row := func(name string, f func(tp throughput) string) {
		fmt.Fprintf(w, "| %s | %s | %s |\n", name, f(tps[0]), f(tps[1]))
	}
	row("wall time", func(tp throughput) string { return fmt.Sprintf("%.0f ms", ms(tp.elapsed)) })
	row("runs/s", func(tp throughput) string { return fmt.Sprintf("%.0f", float64(n)/tp.elapsed.Seconds()) })
	row("peak runs in flight", func(tp throughput) string { return fmt.Sprint(tp.peakInFlight) })
	row("peak heap above the baseline (uncollected garbage included)", func(tp throughput) string {
		return fmt.Sprintf("%.1f MiB", tp.peakHeap/(1<<20))
	})
	row("heap per in-flight run (that peak ÷ peak runs in flight)", func(tp throughput) string {
		return fmt.Sprintf("%.1f KiB", tp.peakHeap/float64(tp.peakInFlight)/1024)
	})
	fmt.Fprintf(w, "\nGoroutines before → after every measurement: %d → %d.\n", goroutinesBefore, goroutinesAfter)
	fmt.Fprintf(w, "\nHeld heap: the live heap after a GC, per run, with all %d runs held at once.\n\n", n)
	fmt.Fprintf(w, "| held per run | %s |\n|---|%s\n", strings.Join(held.names, " | "), strings.Repeat("--:|", len(held.names)))
	fmt.Fprintf(w, "| waiting for its first model answer, on its own connection | %s |\n", kibs(held.model))
	fmt.Fprintf(w, "| waiting in its %d tool calls, no connection open | %s |\n", sc.calls, kibs(held.tools))
	if goroutinesAfter > goroutinesBefore {
		return fmt.Errorf("load: %d goroutines after the runs, %d before", goroutinesAfter, goroutinesBefore)
	}
	return nil
}

// runAgent returns a conversation of agent.Run on a, checked.
func runAgent(a *agent.Agent) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := a.Run(ctx, []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)})
		if err != nil {
			return err
		}
		return checkAnswer(res.Text)
	}
}

// streamAgent returns a conversation of Agent.Stream on a, consumed to its
// end and checked.
func streamAgent(a *agent.Agent) func(context.Context) error {
	return func(ctx context.Context) error {
		for e, err := range a.Stream(ctx, []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}) {
			if err != nil {
				return err
			}
			if e.Kind == agent.EventDone {
				return checkAnswer(e.Result.Text)
			}
		}
		return errors.New("Agent.Stream ended without EventDone")
	}
}

// sleepyRawTools returns sc's tools as the raw loop's, each sleeping d,
// honouring its context, before answering.
func sleepyRawTools(sc scenario, d time.Duration) map[string]rawTool {
	tools := map[string]rawTool{}
	for _, t := range sc.toolSpecs() {
		tools[t.Name] = func(ctx context.Context, args map[string]any) map[string]any {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return map[string]any{"error": ctx.Err().Error()}
			}
			return rawWeather(ctx, args)
		}
	}
	return tools
}

// loadSleep is how long the tool of the throughput measurement sleeps.
const loadSleep = 20 * time.Millisecond

// kibs formats bytes as KiB, joined for a table row.
func kibs(bytes []float64) string {
	out := make([]string, len(bytes))
	for i, b := range bytes {
		out[i] = fmt.Sprintf("%.2f KiB", b/1024)
	}
	return strings.Join(out, " | ")
}

// settledGoroutines returns the number of goroutines once it is back to
// want, or after 5 s: closed connections' goroutines take a moment.
func settledGoroutines(want int) int {
	got := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); got > want && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got = runtime.NumGoroutine()
	}
	return got
}

// throughput is what loadThroughput measured.
type throughput struct {
	elapsed      time.Duration
	peakInFlight int32
	peakHeap     float64 // bytes
}

// loadThroughput starts n conversations of the loop that newLoop makes at
// once on the fake at url, and samples the heap meanwhile.
func loadThroughput(url string, n int, newLoop func(*genai.Client) (func(context.Context) error, error)) (throughput, error) {
	client, tr, err := newAgentClient(url)
	if err != nil {
		return throughput{}, err
	}
	defer tr.CloseIdleConnections()
	loop, err := newLoop(client)
	if err != nil {
		return throughput{}, err
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

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
			if err := loop(context.Background()); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	if f := failed.Load(); f > 0 {
		return throughput{}, fmt.Errorf("load: %d of %d runs failed, first: %v", f, n, firstErr.Load())
	}
	return throughput{elapsed: elapsed, peakInFlight: peakInFlight.Load(), peakHeap: float64(peak.Load()) - float64(before.HeapAlloc)}, nil
}

// held is what loadHeld measured: per contestant, in names' order, the
// live heap per run at each point, in bytes.
type held struct {
	names        []string
	model, tools []float64
}

// loadHeld measures what each of n runs holds, for each loop that -load
// compares, on the fake in srv.
func loadHeld(srv *child, sc scenario, n int) (held, error) {
	loops := []struct {
		name string
		loop func(client *genai.Client, g *gate) (func(context.Context) error, error)
	}{
		{"raw genai loop", func(client *genai.Client, g *gate) (func(context.Context) error, error) {
			return rawLoop(client, sc, g.rawTools(sc)), nil
		}},
		{"agent.Run", func(client *genai.Client, g *gate) (func(context.Context) error, error) {
			a, err := agent.New(agent.Config{Models: client.Models, Model: benchModel, Tools: g.toolset(sc)})
			return runAgent(a), err
		}},
		{"raw genai streaming loop", func(client *genai.Client, g *gate) (func(context.Context) error, error) {
			return rawStreamLoop(client, sc, g.rawTools(sc)), nil
		}},
		{"Agent.Stream", func(client *genai.Client, g *gate) (func(context.Context) error, error) {
			a, err := agent.New(agent.Config{Models: client.Models, Model: benchModel, Tools: g.toolset(sc)})
			return streamAgent(a), err
		}},
	}
	var h held
	idle := runtime.NumGoroutine()
	// The first pass, not counted, leaves behind what the runtime keeps
	// once it has made it (the goroutines' descriptors), so that no
	// contestant pays for it.
	for i, l := range append(loops[:1:1], loops...) {
		client, tr, err := newAgentClient(srv.URL())
		if err != nil {
			return h, err
		}
		g := &gate{}
		loop, err := l.loop(client, g)
		if err != nil {
			return h, err
		}
		model, tools, err := heldHeap(srv, g, n, n*sc.calls, loop, tr.CloseIdleConnections)
		tr.CloseIdleConnections()
		settledGoroutines(idle) // the closed connections' goroutines are gone before the next baseline
		if err != nil {
			return h, fmt.Errorf("held heap of %s: %w", l.name, err)
		}
		if i == 0 {
			continue
		}
		h.names = append(h.names, l.name)
		h.model, h.tools = append(h.model, model), append(h.tools, tools)
	}
	return h, nil
}

// heldHeap starts n runs of loop at once and returns the live heap per run
// while all of them wait for their first model answer, each on its own
// connection, then while all wait in their calls tool calls, once the
// connections are closed (closeIdle closes them).
func heldHeap(srv *child, g *gate, n, calls int, loop func(context.Context) error, closeIdle func()) (model, tools float64, err error) {
	const limit = 2 * time.Minute // a hang guard: every step takes well under a second
	live := func() uint64 {
		// Two collections: the first moves what sync.Pools hold to their
		// victim caches, the second frees it.
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	perRun := func() float64 { return (float64(live()) - float64(before)) / float64(n) }
	if err := srv.hold(n); err != nil {
		return 0, 0, err
	}
	g.arm(calls)
	errs := make(chan error, n)
	failed := make(chan struct{})
	var once sync.Once
	for range n {
		go func() {
			err := loop(context.Background())
			if err != nil {
				once.Do(func() { close(failed) })
			}
			errs <- err
		}()
	}
	// Whatever happens, let every run finish before returning.
	defer func() {
		srv.release()
		g.open()
		for range n {
			if e := <-errs; e != nil && err == nil {
				err = e
			}
		}
	}()
	if err := srv.waitHeld(failed, limit); err != nil {
		return 0, 0, err
	}
	quiesce()
	model = perRun()
	if err := srv.release(); err != nil {
		return 0, 0, err
	}
	if err := g.wait(failed, limit); err != nil {
		return 0, 0, err
	}
	// A run in its tools holds no connection: the transport keeps idle
	// ones for the next requests, whose number is its own choice.
	closeIdle()
	quiesce()
	return model, perRun(), nil
}

// quiesce waits, for at most 2 s, until the number of goroutines has not
// changed for 60 ms.
func quiesce() {
	last, still := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(2 * time.Second); still < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
}

// A gate holds tool calls, as a barrier: the calls of the held heap's
// second point.
type gate struct {
	barrier
	all <-chan struct{} // closed when the awaited calls are in
}

// arm makes the next calls calls wait.
func (g *gate) arm(calls int) { g.all = g.barrier.arm(calls) }

// wait waits for the awaited calls, or until failed is closed, or for at
// most limit.
func (g *gate) wait(failed <-chan struct{}, limit time.Duration) error {
	select {
	case <-g.all:
		return nil
	case <-failed:
		return errors.New("runs ended before their tool calls")
	case <-time.After(limit):
		return fmt.Errorf("the tool calls did not all arrive within %v", limit)
	}
}

// toolset returns sc's tools as toolset tools that pass the gate.
func (g *gate) toolset(sc scenario) *toolset.Set {
	var tools []*toolset.Tool
	for _, t := range sc.toolSpecs() {
		tools = append(tools, toolset.MustFunc(t.Name, t.Description,
			func(ctx context.Context, in toolsetWeatherIn) (string, error) {
				g.pass(ctx)
				return weather(in.City), nil
			}))
	}
	return toolset.MustNew(tools...)
}

// rawTools returns sc's tools as the raw loop's, passing the gate.
func (g *gate) rawTools(sc scenario) map[string]rawTool {
	tools := map[string]rawTool{}
	for _, t := range sc.toolSpecs() {
		tools[t.Name] = func(ctx context.Context, args map[string]any) map[string]any {
			g.pass(ctx)
			return rawWeather(ctx, args)
		}
	}
	return tools
}
