// Command bench measures the cost of the Gemini tool-call loop itself
// (everything but model latency and tool time) for several implementations,
// the contestants: a hand loop on the raw genai client (the floor),
// Genkit Go, eino and langchaingo, and whatever else registers itself (see
// contestant).
//
// Every contestant holds the same scripted conversations (see scenarios)
// with its own instance of the same fake Gemini server (see server), in one
// process. After a warm-up, the rounds are interleaved: each round runs
// every contestant once, in an order rotated from round to round, so that
// drift of a noisy machine spreads over all of them. One measurement is
// -loops whole conversations, timed with time.Since, with the allocations
// counted from runtime.MemStats.Mallocs (after a runtime.GC). Allocations
// include the fake server's, which are small and the same for everyone.
// The tables give medians across rounds, the spread of the time, and the
// ratios to the raw loop.
//
//	go run . [-loops 300] [-rounds 5] [-scenario all|two-call,...] [-only raw,genkit,...]
//	go run . -only raw -scenario long20 -cpuprofile cpu.prof -memprofile mem.prof
//	go run . -fanout -load 1000
//	go run . -scenario two-call -only raw,agent-stream,session-stream,served-aisdk,served-agui
//	go run . -serve-load 1000 -serve-latency 3000
//
// Every request is checked by the server; a contestant that sends a
// malformed conversation fails the run instead of being measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	loops, rounds, warmup int
	timeout               time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.loops, "loops", 300, "conversations per measurement")
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds: measurements per contestant and scenario")
	flag.IntVar(&o.warmup, "warmup", 30, "conversations run by each contestant before the first round")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "abort if one measurement takes longer")
	scenarioFlag := flag.String("scenario", "all", `scenarios to run: "all" or a comma-separated list of `+scenarioNames())
	only := flag.String("only", "", "contestants to run, comma-separated keys (default all: "+contestantKeys()+")")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (combine with -only and -scenario)")
	fanout := flag.Bool("fanout", false, "measure the fan-out of 8 sleeping tool calls instead of the scenarios")
	load := flag.Int("load", 0, "run `n` conversations at once, the fake server in a child process, and report throughput, heap (peak, and held per run) and goroutines, instead of the scenarios")
	serveLoad := flag.Int("serve-load", 0, "hold `n` served runs in flight, without then with a stream open each, and report the memory of each (instead of the scenarios)")
	serveLatency := flag.Int("serve-latency", 0, "stream `n` chunks of text and report the latency the serving layer adds to each (instead of the scenarios)")
	serveClient := flag.String("serve-client", "", "internal: the client process of -serve-load, streaming from `url`")
	serveClientN := flag.Int("serve-client-n", 0, "internal: the streams -serve-client opens")
	serveClientSeq := flag.String("serve-client-seq", "", "internal: -serve-client holds its conversations one after the other over this `protocol`")
	serveCPU := flag.String("serve-cpu", "", "serve over `protocol` (aisdk or agui) the -loops conversations a client in another process holds, one after the other (for callgrind: the server's instructions only)")
	memprofile := flag.String("memprofile", "", "write an allocation profile (every allocation sampled) to `file` at the end; this slows the run, so its timings are not comparable")
	apis := flag.Int("apis", 0, "instead of the scenarios, run `n` 30-turn conversations on generateContent and on the Interactions API and report the bytes each turn sends and the client's CPU per turn (-only takes gc-raw, gc-agent, ix-raw, ix-agent, gc-trim, ix-trim)")
	flag.Parse()
	if sc := os.Getenv(serveEnv); sc != "" {
		if err := serveChild(sc); err != nil {
			fatalf("%s: %v", serveEnv, err)
		}
		return
	}
	if *apis > 0 {
		printMachine(os.Stdout)
		if err := runAPIs(os.Stdout, *apis, *only); err != nil {
			fatalf("apis: %v", err)
		}
		return
	}

	if o.loops < 1 || o.rounds < 1 || o.warmup < 0 {
		fatalf("-loops and -rounds must be positive, -warmup not negative")
	}
	selected, err := selectContestants(*only)
	if err != nil {
		fatalf("%v", err)
	}
	scs, err := selectScenarios(*scenarioFlag)
	if err != nil {
		fatalf("%v", err)
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 1
	}
	installTracerProvider()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fatalf("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("%v", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	if *serveClient != "" {
		if err := runServeClient(*serveClient, *serveClientN, *serveClientSeq); err != nil {
			fatalf("serve client: %v", err)
		}
		return
	}
	if *serveCPU != "" {
		if err := runServeCPU(os.Stdout, *serveCPU, o.loops); err != nil {
			fatalf("serve cpu: %v", err)
		}
		return
	}
	printMachine(os.Stdout)
	if *serveLoad > 0 || *serveLatency > 0 {
		if *serveLoad > 0 {
			if err := runServeLoad(os.Stdout, *serveLoad); err != nil {
				fatalf("serve load: %v", err)
			}
		}
		if *serveLatency > 0 {
			if err := runServeLatency(os.Stdout, *serveLatency, time.Millisecond); err != nil {
				fatalf("serve latency: %v", err)
			}
		}
		return
	}
	if *fanout || *load > 0 {
		if *fanout {
			if err := runFanout(os.Stdout, o.rounds); err != nil {
				fatalf("fan-out: %v", err)
			}
		}
		if *load > 0 {
			if err := runLoad(os.Stdout, *load); err != nil {
				fatalf("load: %v", err)
			}
		}
		return
	}
	fmt.Printf("%d loops per measurement, %d interleaved rounds, %d warm-up loops; medians across rounds.\n", o.loops, o.rounds, o.warmup)
	for _, sc := range scs {
		rows, err := runScenario(sc, selected, o, os.Stderr)
		if err != nil {
			fatalf("%s: %v", sc.name, err)
		}
		printTable(os.Stdout, sc, o, rows)
	}

	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			fatalf("%v", err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fatalf("%v", err)
		}
		f.Close()
	}
}

// fatalf prints a message and exits with status 1.
func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

// scenarioNames lists the scenario names, for the flag's help.
func scenarioNames() string {
	names := make([]string, len(scenarios))
	for i, sc := range scenarios {
		names[i] = sc.name
	}
	return strings.Join(names, ", ")
}

// A row is one contestant's results for one scenario.
type row struct {
	c           contestant
	unsupported bool
	ns, allocs  []float64 // per loop, one value per round
	notes       string    // tolerated wire deviations seen by the server
}

// An entry is a contestant set up for a scenario.
type entry struct {
	row     *row
	srv     *server
	loop    func(context.Context) error
	cleanup func()
}

// runScenario sets every contestant up for sc, warms each up, runs the
// interleaved rounds and tears everything down. Progress goes to progress.
func runScenario(sc scenario, cs []contestant, o options, progress io.Writer) ([]*row, error) {
	var rows []*row
	var entries []*entry
	defer func() {
		for _, e := range entries {
			if e.cleanup != nil {
				e.cleanup()
			}
			e.srv.Close()
		}
	}()
	for _, c := range cs {
		r := &row{c: c}
		rows = append(rows, r)
		srv := newServer(sc)
		loop, cleanup, err := c.setup(srv.URL(), sc)
		if errors.Is(err, errUnsupported) {
			r.unsupported = true
			srv.Close()
			continue
		}
		if err != nil {
			srv.Close()
			return nil, fmt.Errorf("%s: setup: %w", c.key, err)
		}
		entries = append(entries, &entry{row: r, srv: srv, loop: loop, cleanup: cleanup})
	}

	for _, e := range entries {
		fmt.Fprintf(progress, "%s: warming up %s\n", sc.name, e.row.c.key)
		if _, _, err := measure(e, o.warmup, o.timeout); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", e.row.c.key, err)
		}
	}
	for round := range o.rounds {
		fmt.Fprintf(progress, "%s: round %d/%d\n", sc.name, round+1, o.rounds)
		for i := range entries {
			e := entries[(i+round)%len(entries)]
			ns, allocs, err := measure(e, o.loops, o.timeout)
			if err != nil {
				return nil, fmt.Errorf("%s: round %d: %w", e.row.c.key, round+1, err)
			}
			e.row.ns = append(e.row.ns, ns)
			e.row.allocs = append(e.row.allocs, allocs)
		}
	}
	for _, e := range entries {
		e.row.notes = e.srv.notes()
	}
	return rows, nil
}

// measure runs loops conversations of e and returns the time and the
// allocations per conversation. It fails if a loop fails, if the server saw
// a malformed request, or if not every loop ended with the scripted answer.
// A measurement that outlives timeout aborts the process: a hung contestant
// must not hang the run.
func measure(e *entry, loops int, timeout time.Duration) (ns, allocs float64, err error) {
	if loops == 0 {
		return 0, 0, nil
	}
	watchdog := time.AfterFunc(timeout, func() {
		fmt.Fprintf(os.Stderr, "bench: %s: %d loops took more than %v; aborting\n", e.row.c.key, loops, timeout)
		os.Exit(2)
	})
	defer watchdog.Stop()

	ctx := context.Background()
	answers := e.srv.answers.Load()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := range loops {
		if err := e.loop(ctx); err != nil {
			return 0, 0, fmt.Errorf("loop %d: %w", i+1, errors.Join(err, e.srv.Err()))
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)

	if err := e.srv.Err(); err != nil {
		return 0, 0, fmt.Errorf("malformed request: %w", err)
	}
	if got := e.srv.answers.Load() - answers; got != int64(loops) {
		return 0, 0, fmt.Errorf("%d loops but %d scripted answers served", loops, got)
	}
	n := float64(loops)
	return float64(elapsed.Nanoseconds()) / n, float64(after.Mallocs-before.Mallocs) / n, nil
}

// printMachine prints what the numbers were measured on.
func printMachine(w io.Writer) {
	fmt.Fprintf(w, "Machine: %s %s/%s, %d CPUs (GOMAXPROCS %d)", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0))
	if m := cpuModel(); m != "" {
		fmt.Fprintf(w, ", %s", m)
	}
	fmt.Fprintln(w, ".")
}

// cpuModel returns the CPU model from /proc/cpuinfo, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// printTable prints the markdown table of one scenario, then the notes.
func printTable(w io.Writer, sc scenario, o options, rows []*row) {
	fmt.Fprintf(w, "\n### %s: %s\n\n", sc.name, sc.about)
	fmt.Fprintf(w, "%d requests per loop; %d tool(s) declared; %d loops × %d rounds.\n\n", sc.requests(), sc.tools, o.loops, o.rounds)
	fmt.Fprintln(w, "| contestant | µs/loop (median) | spread (min–max) | allocs/loop (median) | time vs raw | allocs vs raw |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	var baseNS, baseAllocs float64
	for _, r := range rows {
		if r.c.key == baselineKey && !r.unsupported {
			baseNS, baseAllocs = median(r.ns), median(r.allocs)
		}
	}
	for _, r := range rows {
		if r.unsupported {
			fmt.Fprintf(w, "| %s | n/a | n/a | n/a | n/a | n/a |\n", r.c.name)
			continue
		}
		ns, allocs := median(r.ns), median(r.allocs)
		lo, hi := minMax(r.ns)
		fmt.Fprintf(w, "| %s | %s | %s–%s | %s | %s | %s |\n", r.c.name,
			micros(ns), micros(lo), micros(hi), thousands(allocs), ratio(ns, baseNS), ratio(allocs, baseAllocs))
	}
	var notes []string
	for _, r := range rows {
		if r.notes != "" {
			notes = append(notes, fmt.Sprintf("- %s: %s.", r.c.name, r.notes))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nWire notes (deviations the fake server tolerates and counts; the real API may not):\n\n%s\n", strings.Join(notes, "\n"))
	}
}

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// minMax returns the smallest and largest of xs.
func minMax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

// micros formats nanoseconds as whole microseconds with thousands separators.
func micros(ns float64) string { return thousands(ns / 1e3) }

// thousands formats x rounded to an integer, with commas between thousands.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ratio formats x/base, or "–" without a baseline.
func ratio(x, base float64) string {
	if base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x/base)
}
