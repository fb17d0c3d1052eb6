package agentserver_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
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

// countingJournal counts a Journaler's writes.
type countingJournal struct {
	session.Journaler
	writes atomic.Int64
}

func (c *countingJournal) BeginRun(ctx context.Context, id, run string, entries [][]byte) error {
	c.writes.Add(1)
	return c.Journaler.BeginRun(ctx, id, run, entries)
}

func (c *countingJournal) AppendRun(ctx context.Context, id, run string, entries [][]byte) error {
	c.writes.Add(1)
	return c.Journaler.AppendRun(ctx, id, run, entries)
}

func (c *countingJournal) EndRun(ctx context.Context, id, run string, contents []*genai.Content) error {
	c.writes.Add(1)
	return c.Journaler.EndRun(ctx, id, run, contents)
}

func (c *countingJournal) Append(ctx context.Context, id string, contents []*genai.Content) error {
	c.writes.Add(1)
	return c.Journaler.Append(ctx, id, contents)
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
// journaled step by step, or saved at its end only. writes/run counts the store's writes,
// cpu-ns/run the process's CPU time (user and system) per run.
func BenchmarkServedRun(b *testing.B) {
	for _, tc := range []struct {
		name      string
		journaled bool
	}{{"sqlite/journal", true}, {"sqlite/end-only", false}, {"memory/journal", true}, {"memory/end-only", false},
		{"postgres/journal", true}, {"postgres/end-only", false}} {
		journaled := tc.journaled
		b.Run(tc.name, func(b *testing.B) {
			var db session.Journaler = session.NewMemory()
			switch {
			case strings.HasPrefix(tc.name, "sqlite"):
				s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "threads.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				db = s
			case strings.HasPrefix(tc.name, "postgres"):
				s, err := pgstore.Open(context.Background(), pgtest.Database(b))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				db = s
			}
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
				MaxThreadsPerUser: -1, MaxBytesPerUser: -1}) // one user, a thread per run
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close(context.Background())
			ctx := context.Background()
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				n++
				att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: "t" + strconv.Itoa(n),
					Message: genai.NewContentFromText("Weather in Paris and Tokyo?", genai.RoleUser)})
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, _, err := att.Cursor.Next(ctx, time.Minute); err != nil {
						break
					}
				}
				att.Cursor.Close()
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/run")
			b.ReportMetric(float64(counted.writes.Load())/float64(n), "writes/run")
		})
	}
}

// How long New takes to recover 1,000 runs that wait for an approval on
// SQLite, until every one waits again (each a journal of three entries:
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

	for b.Loop() {
		b.StopTimer()
		db, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "threads.db"))
		if err != nil {
			b.Fatal(err)
		}
		for i := range runs {
			if err := db.BeginRun(ctx, "agentserver/alice/t"+strconv.Itoa(i), "run_"+strconv.Itoa(i), journal.Entries); err != nil {
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
}
