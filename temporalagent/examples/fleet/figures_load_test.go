package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/api/adminservice/v1"
	"google.golang.org/genai"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// chatRun posts one short run to base's AI SDK route (a new thread, one
// model turn that answers text) and reads its stream to the end: the
// stream ends with the run's done record, which follows the save.
func chatRun(ctx context.Context, hc *http.Client, base, thread string) error {
	body, err := json.Marshal(map[string]any{"id": thread, "messages": []any{userMessage("u1", "Hi")}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/chat", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("thread %s: reading the stream: %w", thread, err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"type":"finish"`)) || !bytes.Contains(b, []byte("Hello.")) {
		return fmt.Errorf("thread %s: %d %s", thread, resp.StatusCode, b)
	}
	return nil
}

// load is what one load measurement found.
type load struct {
	runs       int
	perSecond  float64
	cpuPerRun  time.Duration
	cores      float64 // the process's CPU time over the wall time
	failed     int     // runs that failed, left out of runs/s
	p50, p99   time.Duration
	loadBefore string
	loadAfter  string
}

func (l load) String() string {
	return fmt.Sprintf("%.1f runs/s (%d failed), CPU %v per run (%.2f cores busy), run p50 %v p99 %v (load average %s → %s)",
		l.perSecond, l.failed, l.cpuPerRun.Round(10*time.Microsecond), l.cores, l.p50.Round(time.Millisecond), l.p99.Round(time.Millisecond),
		firstField(l.loadBefore), firstField(l.loadAfter))
}

func firstField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return s
	}
	return f[0]
}

// drive runs n short runs through clients concurrent clients, run k on
// bases[k%len(bases)] (round robin), after warm runs that are not
// counted.
func drive(t *testing.T, name string, bases []string, clients, warm, n int) load {
	t.Helper()
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 2 * time.Minute}
	defer hc.CloseIdleConnections()
	// A run that fails is counted, and left out of the latencies: under
	// load a cursor's query can fail, which cuts the stream.
	batch := func(prefix string, count int) ([]time.Duration, int, error) {
		var next atomic.Int64
		lat := make([]time.Duration, count)
		errs := make([]error, count)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for {
					k := int(next.Add(1) - 1)
					if k >= count {
						return
					}
					model.Enqueue(fake.Text("Hello."))
					start := time.Now()
					errs[k] = chatRun(ctx, hc, bases[k%len(bases)], id(fmt.Sprintf("%s-%s-%d", name, prefix, k)))
					lat[k] = time.Since(start)
				}
			})
		}
		wg.Wait()
		var ok []time.Duration
		var first error
		for k, err := range errs {
			if err == nil {
				ok = append(ok, lat[k])
			} else if first == nil {
				first = err
			}
		}
		if len(ok) == 0 || len(errs)-len(ok) > count/10 {
			t.Fatalf("%s: %d of %d runs failed, the first: %v", name, count-len(ok), count, first)
		}
		return ok, count - len(ok), first
	}
	batch("warm", warm)
	l := load{runs: n, loadBefore: loadavg()}
	c0, w0 := cpu(t), time.Now()
	lat, failed, first := batch("run", n)
	l.failed = failed
	if first != nil {
		t.Logf("%s: %d of %d runs failed, the first: %.300s", name, failed, n, first)
	}
	wall := time.Since(w0)
	l.perSecond = float64(n-failed) / wall.Seconds()
	used := cpu(t) - c0
	l.cpuPerRun, l.cores = used/time.Duration(n), used.Seconds()/wall.Seconds()
	l.p50, l.p99 = quantile(lat, .5), quantile(lat, .99)
	l.loadAfter = loadavg()
	return l
}

// unbounded lifts the per-user bounds of the store and of runs in flight
// (every client of the load figures is the one user of requests without
// Authenticate): it gives the instance a server of its
// own on a new runner of its client.
func (f *fleet) unbounded(t *testing.T, in *instance) {
	t.Helper()
	ctx := context.Background()
	if err := in.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	in.http.Close()
	var err error
	in.runner, err = temporalagent.NewRunner(temporalagent.RunnerConfig{Client: in.c, TaskQueue: f.queue, Agent: "mail", Store: f.store,
		PollInterval: 10 * time.Millisecond, RunTimeout: f.runTimeout})
	if err != nil {
		t.Fatal(err)
	}
	in.srv, err = agentserver.New(unboundedConfig(agentserver.Config{Agent: f.agent, Store: f.store, Runner: in.runner}))
	if err != nil {
		t.Fatal(err)
	}
	in.http = httptest.NewServer(routes(in.srv))
}

func unboundedConfig(c agentserver.Config) agentserver.Config {
	c.MaxRunsPerUser, c.MaxThreadsPerUser, c.MaxBytesPerUser = -1, -1, -1
	return c
}

// runsPerSecond measures served runs per second with one instance and
// with two (the requests spread round robin over them), each instance an
// agentserver.Server on the Temporal runner with a worker of its own, at
// a fixed number of concurrent clients, against the in-process runner.
// Every run is a new thread whose one model turn answers text, posted to
// the AI SDK route and read to the end of its stream, its save included.
// The whole fleet (Temporal server, instances, workers, fake model,
// clients) is this one process on the machine's cores.
func runsPerSecond(t *testing.T) {
	const clients, warm, n = 8, 24, 200

	one := newFleet(t)
	one.b.stop(t)
	one.unbounded(t, one.a)
	l1 := drive(t, "rps-one", []string{one.a.http.URL}, clients, warm, n)
	one.a.stop(t)

	two := newFleet(t)
	two.unbounded(t, two.a)
	two.unbounded(t, two.b)
	l2 := drive(t, "rps-two", []string{two.a.http.URL, two.b.http.URL}, clients, warm, n)
	two.a.stop(t)
	two.b.stop(t)

	local, err := agentserver.New(unboundedConfig(agentserver.Config{Agent: two.agent, Store: two.store}))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(routes(local))
	ll := drive(t, "rps-local", []string{hs.URL}, clients, warm, n)
	if err := local.Close(context.Background()); err != nil {
		t.Error(err)
	}
	hs.Close()

	t.Logf("runs per second, %d runs after %d, %d concurrent clients, one text turn each:", n, warm, clients)
	t.Logf("  one instance on Temporal:  %v", l1)
	t.Logf("  two instances on Temporal: %v", l2)
	t.Logf("  one instance in process:   %v", ll)
	t.Logf("  two / one: %.2fx runs/s, %.2fx CPU per run; in process / one on Temporal: %.1fx runs/s",
		l2.perSecond/l1.perSecond, float64(l2.cpuPerRun)/float64(l1.cpuPerRun), ll.perSecond/l1.perSecond)
}

// heap returns the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// counting is a gRPC interceptor that counts the calls of one method.
type counting struct {
	method string
	n      atomic.Int64
}

func (c *counting) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if strings.HasSuffix(method, c.method) {
		c.n.Add(1)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// waitingDay measures what runs waiting for an approval cost while they
// wait, with a RunTimeout of two days: what grows with the wait and what
// does not. FLEET_WAIT (a Go duration, 10m unless set) is how long they
// wait: half of it without a reader, half with readers attached. The
// instance B is stopped, so that A's worker alone holds the workflows.
func waitingDay(t *testing.T) {
	wait := 10 * time.Minute
	if s := os.Getenv("FLEET_WAIT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 2*time.Second {
			t.Fatalf("FLEET_WAIT=%q: want a duration of 2s or more", s)
		}
		wait = d
	}
	const n, readers = 200, 10
	f := newFleetTimeout(t, 48*time.Hour)
	f.b.stop(t)
	ctx := context.Background()

	h0 := heap()
	runs := make([]string, n)
	for i := range n {
		model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "day"})))
		thread := id(fmt.Sprintf("day-%d", i))
		info, cur, err := f.a.runner.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread,
			Message: genai.NewContentFromText("Email Day", genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		readUntil(t, cur, agentserver.KindPause)
		cur.Close()
		runs[i] = info.ID
	}
	hCached := heap()

	conn, err := grpc.NewClient(f.ts.GetFrontendHostPort(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	admin := adminservice.NewAdminServiceClient(conn)
	wid := "agentserver//" + id("day-0")
	type persisted struct {
		events, bytes, state int64
		timers, activities   int
		kinds                []string
	}
	measure := func() persisted {
		d, err := f.a.c.DescribeWorkflowExecution(ctx, wid, "")
		if err != nil {
			t.Fatal(err)
		}
		if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Fatalf("the waiting run is %v", s)
		}
		p := persisted{events: d.GetWorkflowExecutionInfo().GetHistoryLength(), bytes: d.GetWorkflowExecutionInfo().GetHistorySizeBytes()}
		ms, err := admin.DescribeMutableState(ctx, &adminservice.DescribeMutableStateRequest{Namespace: f.ts.GetDefaultNamespace(),
			Execution: &common.WorkflowExecution{WorkflowId: wid}})
		if err != nil {
			t.Fatal(err)
		}
		db := ms.GetDatabaseMutableState()
		p.state, p.timers, p.activities = int64(proto.Size(db)), len(db.GetTimerInfos()), len(db.GetActivityInfos())
		it := f.a.c.GetWorkflowHistory(ctx, wid, "", false, 0)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			p.kinds = append(p.kinds, strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_"))
		}
		return p
	}
	p0 := measure()

	// Evicted from the worker's cache, each run is replayed by the next
	// query that reaches it.
	worker.PurgeStickyWorkflowCache()
	hEvicted := heap()
	var replays []time.Duration
	for _, r := range runs {
		start := time.Now()
		cur, err := f.a.runner.Attach(ctx, r, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := cur.Next(ctx, time.Minute); err != nil || !ok {
			t.Fatalf("after eviction, the first record: %v %v", ok, err)
		}
		replays = append(replays, time.Since(start))
		cur.Close()
	}
	hReplayed := heap()

	// Half the wait without a reader, half with readers attached, each
	// on a runner of the default poll interval.
	half := wait / 2
	c0, w0 := cpu(t), time.Now()
	time.Sleep(half)
	idle := float64(cpu(t)-c0) / time.Since(w0).Minutes()
	idleLoad := loadavg()
	pHalf := measure()
	kib := func(a, b uint64) float64 { return float64(int64(b)-int64(a)) / 1024 / n }
	t.Logf("a run waiting for approval, RunTimeout 48h, %v of waiting:", wait)
	t.Logf("  history at the start of the wait: %d events, %d bytes; %v later: %d events, %d bytes; events %v",
		p0.events, p0.bytes, half, pHalf.events, pHalf.bytes, pHalf.kinds)
	t.Logf("  mutable state in the Temporal store (proto size): %d bytes at the start, %d after %v; %d timer(s), %d activities pending",
		p0.state, pHalf.state, half, pHalf.timers, pHalf.activities)
	t.Logf("  heap per waiting run (%d runs): %.1f KiB in A's worker cache and the server; %.1f KiB after PurgeStickyWorkflowCache; %.1f KiB after a query replayed each",
		n, kib(h0, hCached), kib(h0, hEvicted), kib(h0, hReplayed))
	t.Logf("  the first query after eviction (replay of %d events): p50 %v p99 %v", p0.events, quantile(replays, .5), quantile(replays, .99))

	rc, queries := f.countingClient(t, "/QueryWorkflow")
	rr, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: rc, TaskQueue: f.queue, Agent: "mail", Store: f.store, RunTimeout: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// The readers end when stop is called: an error before that is the
	// Temporal service's, counted and read again from where it failed.
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var ended atomic.Value
	c1, w1 := cpu(t), time.Now()
	for i := range readers {
		wg.Go(func() {
			var at int64
			for rctx.Err() == nil {
				cur, err := rr.Attach(rctx, runs[i], at)
				if err != nil {
					failed.Add(1)
					continue
				}
				for {
					rec, ok, err := cur.Next(rctx, time.Hour)
					if err != nil {
						if rctx.Err() == nil {
							failed.Add(1)
						}
						break
					}
					if ok {
						at = rec.Offset + 1
						if rec.Kind == agentserver.KindDone {
							ended.Store(fmt.Errorf("run %s ended while it waited", runs[i]))
						}
					}
				}
				cur.Close()
			}
		})
	}
	time.Sleep(half)
	stop()
	wg.Wait()
	read := time.Since(w1)
	withReaders := float64(cpu(t)-c1) / read.Minutes()
	if err, _ := ended.Load().(error); err != nil {
		t.Fatal(err)
	}
	q := queries.n.Load()
	p1 := measure()
	if err := rr.Close(ctx); err != nil {
		t.Error(err)
	}
	perReader := time.Duration((withReaders - idle) / readers)
	perQuery := time.Duration((withReaders - idle) * read.Minutes() / float64(q))
	t.Logf("  history %v later: %d events, %d bytes; mutable state %d bytes", wait, p1.events, p1.bytes, p1.state)
	t.Logf("  process CPU per minute: %v with no reader (load %s); %v with %d readers polling every %v (load %s): %d queries in %v, %d failed",
		time.Duration(idle), firstField(idleLoad), time.Duration(withReaders), readers, temporalagent.DefaultPollInterval, firstField(loadavg()),
		q, read.Round(time.Second), failed.Load())
	t.Logf("  an attached reader costs %v CPU per minute (%v per query, the Temporal server's share included): %v per day",
		perReader, perQuery, perReader*24*60)
	t.Logf("  extrapolated to 10,000 runs waiting a day: history %.1f MiB and mutable state %.1f MiB in the store (neither grows with the wait); worker cache %.0f MiB if all stay cached (the SDK's default cache holds 10,000 workflows)",
		float64(p1.bytes)*1e4/(1<<20), float64(p1.state)*1e4/(1<<20), (kib(h0, hCached)-kib(h0, hEvicted))*1e4/1024)
	if p1.events != p0.events || p1.bytes != p0.bytes || pHalf.events != p0.events {
		t.Errorf("the history grew while the run waited: %+v, %+v, then %+v", p0, pHalf, p1)
	}
	for _, r := range runs {
		if err := f.a.runner.Cancel(ctx, r); err != nil {
			t.Error(err)
		}
	}
}
