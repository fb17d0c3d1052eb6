package agentserver_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/session"
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
// calls, then an answer in 40 pieces) on SQLite: journaled step by step,
// or saved at its end only. writes/run counts the store's writes,
// cpu-ns/run the process's CPU time (user and system) per run.
func BenchmarkServedRunSQLite(b *testing.B) {
	for _, journaled := range []bool{true, false} {
		name := "journal"
		if !journaled {
			name = "end-only"
		}
		b.Run(name, func(b *testing.B) {
			db, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "threads.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
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
