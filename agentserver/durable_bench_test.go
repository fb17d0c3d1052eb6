package agentserver_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// countingJournal counts a Journaler's writes and times each.
type countingJournal struct {
	session.Journaler
	writes atomic.Int64
	failed atomic.Int64 // writes that returned an error
	claims atomic.Int64 // ClaimRuns, which are not counted in writes

	mu    sync.Mutex
	steps []time.Duration // BeginRun and AppendRun: the writes of a run's steps
	ends  []time.Duration // EndRun and Append: the save at the run's end
}

func (c *countingJournal) timed(into *[]time.Duration, start time.Time, err *error) {
	d := time.Since(start)
	c.writes.Add(1)
	if *err != nil {
		c.failed.Add(1)
	}
	c.mu.Lock()
	*into = append(*into, d)
	c.mu.Unlock()
}

func (c *countingJournal) BeginRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) (err error) {
	defer c.timed(&c.steps, time.Now(), &err)
	return c.Journaler.BeginRun(ctx, id, run, claim, entries)
}

func (c *countingJournal) AppendRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) (err error) {
	defer c.timed(&c.steps, time.Now(), &err)
	return c.Journaler.AppendRun(ctx, id, run, claim, entries)
}

func (c *countingJournal) EndRun(ctx context.Context, id, run string, claim session.Claim, contents []*genai.Content) (err error) {
	defer c.timed(&c.ends, time.Now(), &err)
	return c.Journaler.EndRun(ctx, id, run, claim, contents)
}

func (c *countingJournal) ClaimRun(ctx context.Context, id, run string, claim session.Claim) error {
	c.claims.Add(1)
	return c.Journaler.ClaimRun(ctx, id, run, claim)
}

func (c *countingJournal) Append(ctx context.Context, id string, contents []*genai.Content) (err error) {
	defer c.timed(&c.ends, time.Now(), &err)
	return c.Journaler.Append(ctx, id, contents)
}

// report reports the writes per run, those that failed, and the p50 and
// p99 of the writes' durations, in µs.
func (c *countingJournal) report(b *testing.B, runs int) {
	b.ReportMetric(float64(c.writes.Load())/float64(runs), "writes/run")
	b.ReportMetric(float64(c.failed.Load())/float64(runs), "failed/run")
	b.ReportMetric(float64(c.claims.Load())/float64(runs), "claims/run")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range []struct {
		name string
		ds   []time.Duration
	}{{"step", c.steps}, {"end", c.ends}} {
		if len(t.ds) == 0 {
			continue
		}
		slices.Sort(t.ds)
		at := func(q float64) float64 { return float64(t.ds[int(q*float64(len(t.ds)-1))]) / 1e3 }
		b.ReportMetric(at(0.50), t.name+"-p50-µs")
		b.ReportMetric(at(0.99), t.name+"-p99-µs")
	}
}

// benchStore opens the store a benchmark's name starts with: sqlite (a
// file), postgres (a database of its own: skipped without a server, see
// internal/pgtest), or else session.Memory.
func benchStore(b *testing.B, name string) session.Journaler {
	switch {
	case strings.HasPrefix(name, "sqlite"):
		s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "threads.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	case strings.HasPrefix(name, "postgres"):
		s, err := pgstore.Open(context.Background(), pgtest.Database(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	return session.NewMemory()
}

// servedRunModes are the stores and the two ways of saving a run.
var servedRunModes = []struct {
	name      string
	journaled bool
}{{"sqlite/journal", true}, {"sqlite/end-only", false}, {"memory/journal", true}, {"memory/end-only", false},
	{"postgres/journal", true}, {"postgres/end-only", false}}

// servedRunServer serves the scripted two-turn run (two calls, then an
// answer in 40 pieces) on store, counted, journaled or saved at its end only.
func servedRunServer(b *testing.B, db session.Journaler, journaled bool) (*agentserver.Server, *countingJournal) {
	counted := &countingJournal{Journaler: db}
	var store session.Store = counted
	if !journaled {
		store = appendOnly{counted}
	}
	weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: scripted{}, Model: "m", Tools: toolset.MustNew(weather)})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a, Store: store, Logger: slog.New(slog.DiscardHandler),
		MaxRuns: -1, MaxRunsPerUser: -1, MaxThreadsPerUser: -1, MaxBytesPerUser: -1}) // one user, a thread per run
	if err != nil {
		b.Fatal(err)
	}
	return srv, counted
}

// serveRun serves one run on a new thread and reads its log to its end.
func serveRun(b *testing.B, srv *agentserver.Server, thread string) {
	ctx := context.Background()
	att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: thread,
		Message: genai.NewContentFromText("Weather in Paris and Tokyo?", genai.RoleUser)})
	if err != nil {
		b.Error(err)
		return
	}
	defer att.Cursor.Close()
	for {
		rec, _, err := att.Cursor.Next(ctx, time.Minute)
		if err != nil {
			b.Error(err)
			return
		}
		if rec.Kind == agentserver.KindDone {
			return
		}
	}
}

// cpuTime returns the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// appendOnly hides a store's journal: runs are saved when they end.
type appendOnly struct{ session.Store }

// A served run of two turns and two tool calls (the scripted model: the
// calls, then an answer in 40 pieces) on SQLite, session.Memory and
// PostgreSQL (skipped without a server: see internal/pgtest):
// journaled step by step, or saved at its end only. writes/run counts the
// store's writes, cpu-ns/run the process's CPU time (user and system) per
// run, step-p50-µs and step-p99-µs the time each write of a step took
// (BeginRun, AppendRun), end-p50-µs and end-p99-µs the save at the end
// (EndRun, or Append).
func BenchmarkServedRun(b *testing.B) {
	for _, tc := range servedRunModes {
		b.Run(tc.name, func(b *testing.B) {
			srv, counted := servedRunServer(b, benchStore(b, tc.name), tc.journaled)
			defer srv.Close(context.Background())
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				n++
				serveRun(b, srv, "t"+strconv.Itoa(n))
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/run")
			counted.report(b, n)
		})
	}
}

// The same run, 100 at a time: each iteration starts 100 runs on 100
// threads at once and reads each to its end. runs/s is the throughput,
// cpu-ns/run the process's CPU time per run (PostgreSQL's own is not in it).
func BenchmarkServedRunConcurrent(b *testing.B) {
	const runs = 100
	for _, tc := range servedRunModes {
		b.Run(tc.name, func(b *testing.B) {
			srv, counted := servedRunServer(b, benchStore(b, tc.name), tc.journaled)
			defer srv.Close(context.Background())
			n := 0
			cpu0 := cpuTime()
			start := time.Now()
			for b.Loop() {
				var wg sync.WaitGroup
				for range runs {
					n++
					thread := "t" + strconv.Itoa(n)
					wg.Go(func() { serveRun(b, srv, thread) })
				}
				wg.Wait()
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "runs/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/run")
			counted.report(b, n)
		})
	}
}

// How long New takes to recover 1,000 runs that wait for an approval, on
// SQLite and PostgreSQL, until every one waits again (each a journal of three entries:
// the run, the turn that made the call, the pause).
func BenchmarkRecoverWaitingRuns(b *testing.B) {
	const runs = 1000
	m := fake.NewServer()
	defer m.Close()
	weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(weather),
		NeedsApproval: func(*genai.FunctionCall) bool { return true }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)}

	// One real run that waits, whose journal every thread gets a copy of.
	seed := session.NewMemory()
	cfg.Store = seed
	srv, err := agentserver.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	m.Enqueue(fake.Calls(call("Paris")))
	att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: "seed", Message: genai.NewContentFromText("Weather in Paris?", genai.RoleUser)})
	if err != nil {
		b.Fatal(err)
	}
	for {
		rec, _, err := att.Cursor.Next(ctx, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if rec.Kind == agentserver.KindPause {
			break
		}
	}
	att.Cursor.Close()
	journal, err := seed.LoadRun(ctx, "agentserver/alice/seed")
	if err != nil {
		b.Fatal(err)
	}
	srv.Close(ctx)

	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				var db interface {
					session.Journaler
					Close() error
				}
				var err error
				if name == "sqlite" {
					db, err = sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "threads.db"))
				} else {
					db, err = pgstore.Open(ctx, pgtest.Database(b))
				}
				if err != nil {
					b.Fatal(err)
				}
				for i := range runs {
					if err := db.BeginRun(ctx, "agentserver/alice/t"+strconv.Itoa(i), "run_"+strconv.Itoa(i), session.Claim{}, journal.Entries); err != nil {
						b.Fatal(err)
					}
				}
				cfg.Store = db
				b.StartTimer()
				srv, err := agentserver.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				for i := range runs {
					for {
						info, err := srv.Current(ctx, "alice", "t"+strconv.Itoa(i))
						if err != nil {
							b.Fatal(err)
						}
						if info.State == agentserver.StateWaiting {
							break
						}
						time.Sleep(100 * time.Microsecond)
					}
				}
				b.StopTimer()
				srv.Close(ctx)
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(runs, "runs")
		})
	}
}

// waitingRuns is how many runs BenchmarkWaitingRunsHeld makes wait: 10,000
// unless AGENTSERVER_WAITING_RUNS says otherwise.
func waitingRuns() int {
	if n, err := strconv.Atoi(os.Getenv("AGENTSERVER_WAITING_RUNS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// What runs that wait for a decision hold in the process (the scripted
// model's two calls, both needing approval; 10,000 runs, or
// AGENTSERVER_WAITING_RUNS): the live heap and the goroutine stacks they
// add (runtime.MemStats after a GC), and their goroutines
// (runtime.NumGoroutine), per run, once the workers that ran them have
// idled out. end-only is a store that is not a Journaler (each waiting
// run parked in the process); journal the same runs journaled, parked in
// the store (the Memory's figures count its journals, which it holds in
// the process); sqlite/recovered the runs a second Server found in the
// journals the first left at Close.
func BenchmarkWaitingRunsHeld(b *testing.B) {
	runs := waitingRuns()
	for _, name := range []string{"memory/end-only", "memory/journal", "sqlite/journal", "sqlite/recovered", "postgres/journal"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
			a, err := agent.New(agent.Config{Models: scripted{}, Model: "m", Tools: toolset.MustNew(weather),
				NeedsApproval: func(*genai.FunctionCall) bool { return true }})
			if err != nil {
				b.Fatal(err)
			}
			cfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler),
				MaxRuns: -1, MaxRunsPerUser: -1, MaxThreadsPerUser: -1, MaxBytesPerUser: -1}
			for b.Loop() {
				cfg.Store = benchStore(b, name) // Close leaves the runs in their journals: a new store each time
				if strings.HasSuffix(name, "end-only") {
					cfg.Store = appendOnly{cfg.Store}
				}
				srv, err := agentserver.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				heap0, stack0, g0 := held()
				for i := range runs {
					att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: "t" + strconv.Itoa(i),
						Message: genai.NewContentFromText("Weather in Paris and Tokyo?", genai.RoleUser)})
					if err != nil {
						b.Fatal(err)
					}
					for {
						rec, _, err := att.Cursor.Next(ctx, time.Minute)
						if err != nil {
							b.Fatal(err)
						}
						if rec.Kind == agentserver.KindPause {
							break
						}
					}
					att.Cursor.Close()
				}
				if name == "sqlite/recovered" {
					srv.Close(ctx) // leaves the runs in their journals
					heap0, stack0, g0 = held()
					srv, err = agentserver.New(cfg)
					if err != nil {
						b.Fatal(err)
					}
				}
				for i := range runs {
					for {
						info, err := srv.Current(ctx, "alice", "t"+strconv.Itoa(i))
						if err != nil {
							b.Fatal(err)
						}
						if info.State == agentserver.StateWaiting {
							break
						}
						time.Sleep(100 * time.Microsecond)
					}
				}
				time.Sleep(11 * time.Second) // the workers that ran the runs idle out (workerIdle)
				heap1, stack1, g1 := held()
				heap, stack := float64(heap1)-float64(heap0), float64(stack1)-float64(stack0)
				b.ReportMetric(heap/float64(runs), "heap-B/run")
				b.ReportMetric(stack/float64(runs), "stack-B/run")
				b.ReportMetric((heap+stack)/float64(runs), "B/run")
				b.ReportMetric(float64(g1-g0)/float64(runs), "goroutines/run")
				if js, ok := cfg.Store.(session.Journaler); ok {
					// What the store's journals hold (in the heap for a Memory).
					n, err := journalBytes(ctx, js)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(n)/float64(runs), "journal-B/run")
				}
				srv.Close(ctx)
			}
		})
	}
}

// How long after a decision the run it wakes shows its next record: the
// time from Submit with the approval of a waiting run's two calls to the
// first record after the decisions (a call's result), p50 and p99 over
// the iterations, in µs. Each iteration makes a run wait first
// (untimed). The run is parked in the store: the decision takes it from
// there (memory, sqlite, postgres).
func BenchmarkDecisionToNextRecord(b *testing.B) {
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
			a, err := agent.New(agent.Config{Models: scripted{}, Model: "m", Tools: toolset.MustNew(weather),
				NeedsApproval: func(*genai.FunctionCall) bool { return true }})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := agentserver.New(agentserver.Config{Agent: a, Store: benchStore(b, name), Logger: slog.New(slog.DiscardHandler),
				MaxRuns: -1, MaxRunsPerUser: -1, MaxThreadsPerUser: -1, MaxBytesPerUser: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close(ctx)
			next := func(c agentserver.Cursor, until func(agentserver.Record) bool) {
				for {
					rec, _, err := c.Next(ctx, time.Minute)
					if err != nil {
						b.Fatal(err)
					}
					if until(rec) {
						return
					}
				}
			}
			var took []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				thread := "t" + strconv.Itoa(i)
				att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Message: genai.NewContentFromText("Weather?", genai.RoleUser)})
				if err != nil {
					b.Fatal(err)
				}
				var pending []agentserver.Pending
				next(att.Cursor, func(rec agentserver.Record) bool { pending = rec.Pending; return rec.Kind == agentserver.KindPause })
				att.Cursor.Close()
				ds := make([]agentserver.Decision, len(pending))
				for j, p := range pending {
					ds[j] = agentserver.Decision{CallID: p.Call.ID, Approved: true}
				}
				b.StartTimer()
				start := time.Now()
				att, err = srv.Submit(ctx, "alice", agentserver.Request{Thread: thread, Decisions: ds})
				if err != nil {
					b.Fatal(err)
				}
				next(att.Cursor, func(rec agentserver.Record) bool { return rec.Kind != agentserver.KindDecision })
				took = append(took, time.Since(start))
				b.StopTimer()
				next(att.Cursor, func(rec agentserver.Record) bool { return rec.Kind == agentserver.KindDone })
				att.Cursor.Close()
				b.StartTimer()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e3, "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100])/1e3, "p99-µs")
		})
	}
}

// journalBytes returns the size of the entries of the store's journals.
func journalBytes(ctx context.Context, js session.Journaler) (int64, error) {
	var n int64
	opts := session.ListOptions{Limit: session.MaxPageSize}
	for {
		p, err := js.ListRuns(ctx, opts)
		if err != nil {
			return 0, err
		}
		for _, j := range p.Journals {
			n += j.Bytes
		}
		if opts.Cursor = p.Next; opts.Cursor == "" {
			return n, nil
		}
	}
}

// held returns the live heap, the goroutine stacks in use and the number
// of goroutines, after a GC.
func held() (heap, stack uint64, goroutines int) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()
}
