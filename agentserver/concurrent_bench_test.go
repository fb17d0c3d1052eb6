package agentserver_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// dbCPU returns the CPU time (user and system) the PostgreSQL server of
// .ci/postgres used so far, its processes together: the postmaster's own
// and its reaped children's (backends whose connection closed), and its
// live children's, from /proc. It returns false without TOOLNEXUS_PG_DIR
// or /proc: the database's share is then not measured.
func dbCPU() (time.Duration, bool) {
	dir := os.Getenv("TOOLNEXUS_PG_DIR")
	if dir == "" {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	pm := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	ticks := func(pid string, children bool) (ppid string, t int64, ok bool) {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return "", 0, false
		}
		// The fields after the command's closing parenthesis: state (3),
		// ppid (4), … utime (14), stime (15), cutime (16), cstime (17).
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		n := 2 // utime, stime
		if children {
			n = 4
		}
		for i := range n {
			v, _ := strconv.ParseInt(f[11+i], 10, 64)
			t += v
		}
		return f[1], t, true
	}
	_, total, ok := ticks(pm, true)
	if !ok {
		return 0, false
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		if ppid, t, ok := ticks(p.Name(), false); ok && ppid == pm {
			total += t
		}
	}
	return time.Duration(total) * (time.Second / 100), true // USER_HZ is 100 on Linux
}

// cpuMeter measures the CPU time of the process and of the database's
// server, from its start.
type cpuMeter struct {
	proc, db time.Duration
	dbOK     bool
}

func startCPU() cpuMeter {
	db, ok := dbCPU()
	return cpuMeter{proc: cpuTime(), db: db, dbOK: ok}
}

// report reports the CPU time per run since m started: the process's
// (cpu-ns/run), and on PostgreSQL its server's (db-cpu-ns/run) and both
// (total-cpu-ns/run).
func (m cpuMeter) report(b *testing.B, store string, runs int) {
	proc := cpuTime() - m.proc
	b.ReportMetric(float64(proc)/float64(runs), "cpu-ns/run")
	if db, ok := dbCPU(); ok && m.dbOK && strings.HasPrefix(store, "postgres") {
		b.ReportMetric(float64(db-m.db)/float64(runs), "db-cpu-ns/run")
		b.ReportMetric(float64(proc+db-m.db)/float64(runs), "total-cpu-ns/run")
	}
}

// firstBytes are the results of one sitting of BenchmarkThousandRuns,
// per store, for the ratios against session.Memory's.
var firstBytes = struct {
	sync.Mutex
	p99 map[string]time.Duration
	rps map[string]float64
}{p99: map[string]time.Duration{}, rps: map[string]float64{}}

// thousandRuns is how many runs BenchmarkThousandRuns starts at once.
const thousandRuns = 1000

// 1,000 users start a run each at once, over HTTP (the AI SDK's protocol),
// on a server with MaxRuns 2,000, journaled on session.Memory, SQLite and
// PostgreSQL (skipped without a server, see internal/pgtest): the run of
// BenchmarkServedRun (a turn of two calls, then an answer in 40 pieces).
// failures counts the runs whose response was not a stream that ended
// the run (a 503, an error event), first-byte-p50-ms and -p99-ms the time
// from the request to its response's first byte, runs/s the 1,000 runs
// over the time until the last stream ended; p99-vs-memory and
// runs/s-vs-memory are the ratios to session.Memory's in the same sitting
// (run memory first: -bench 'ThousandRuns/(memory|sqlite|postgres)').
func BenchmarkThousandRuns(b *testing.B) {
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			db := benchStore(b, name)
			counted := &countingJournal{Journaler: db}
			weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
			a, err := agent.New(agent.Config{Models: scripted{}, Model: "m", Tools: toolset.MustNew(weather)})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := agentserver.New(agentserver.Config{Agent: a, Store: counted, Logger: slog.New(slog.DiscardHandler),
				MaxRuns: 2 * thousandRuns, MaxRunsPerUser: -1, MaxThreadsPerUser: -1, MaxBytesPerUser: -1,
				Authenticate: func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close(context.Background())
			hs := httptest.NewServer(aisdk.Handler(srv))
			defer hs.Close()
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = thousandRuns
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}

			var failures atomic.Int64
			var firstErr atomic.Value
			var sitting, runs int
			var first []time.Duration
			var elapsed time.Duration
			cpu := startCPU()
			for b.Loop() {
				sitting++
				times := make([]time.Duration, thousandRuns)
				var wg sync.WaitGroup
				start := time.Now()
				for i := range thousandRuns {
					wg.Go(func() {
						d, err := thousandRun(hc, hs.URL, fmt.Sprintf("u%d-%d", sitting, i))
						times[i] = d
						if err != nil {
							failures.Add(1)
							firstErr.CompareAndSwap(nil, err)
						}
					})
				}
				wg.Wait()
				elapsed += time.Since(start)
				runs += thousandRuns
				first = append(first, times...)
			}
			cpu.report(b, name, runs)
			slices.Sort(first)
			p := func(q float64) time.Duration { return first[int(q*float64(len(first)-1))] }
			b.ReportMetric(float64(failures.Load()), "failures")
			b.ReportMetric(float64(p(0.5))/1e6, "first-byte-p50-ms")
			b.ReportMetric(float64(p(0.99))/1e6, "first-byte-p99-ms")
			rps := float64(runs) / elapsed.Seconds()
			b.ReportMetric(rps, "runs/s")
			b.ReportMetric(float64(counted.failed.Load()), "store-failures")
			firstBytes.Lock()
			firstBytes.p99[name], firstBytes.rps[name] = p(0.99), rps
			if m, ok := firstBytes.p99["memory"]; ok && name != "memory" {
				b.ReportMetric(float64(p(0.99))/float64(m), "p99-vs-memory")
				b.ReportMetric(rps/firstBytes.rps["memory"], "runs/s-vs-memory")
			}
			firstBytes.Unlock()
			if err, _ := firstErr.Load().(error); err != nil {
				b.Logf("%d runs failed; the first: %v", failures.Load(), err)
			}
		})
	}
}

// thousandRun runs one run for user over the AI SDK's route, and returns
// the time to its response's first byte, and an error unless the
// response was a stream that ended the run.
func thousandRun(hc *http.Client, base, user string) (time.Duration, error) {
	body := `{"id":"t","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"Weather in Paris and Tokyo?"}]}]}`
	req, err := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", user)
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return time.Since(start), err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	_, err = br.Peek(1)
	d := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		msg, _ := br.ReadString('\n')
		return d, fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(msg))
	}
	if err != nil {
		return d, err
	}
	var last string
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && data != "[DONE]" {
			last = data
		}
		if strings.Contains(line, `"type":"error"`) {
			return d, fmt.Errorf("an error event: %s", line)
		}
		if err != nil {
			break
		}
	}
	if !strings.Contains(last, `"finishReason":"stop"`) {
		return d, fmt.Errorf("the stream ended with %s", last)
	}
	return d, nil
}

var _ session.Journaler = (*countingJournal)(nil)
