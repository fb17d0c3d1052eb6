package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// TestFigures measures the figures of BENCHMARKS.md ("Served runs on
// Temporal (issue 34)"): FLEET_FIGURES=1 runs it, without -race, on the
// store of TOOLNEXUS_PG_URL; -run 'TestFigures/NAME' measures one of
// its parts. waiting-day waits FLEET_WAIT (10m unless set).
func TestFigures(t *testing.T) {
	if os.Getenv("FLEET_FIGURES") != "1" {
		t.Skip("FLEET_FIGURES=1 measures the figures of BENCHMARKS.md")
	}
	t.Logf("load average before: %s", loadavg())
	t.Run("failover", failOver)
	t.Run("failover-killed", failOverKilled)
	t.Run("cpu", cpuPerRun)
	t.Run("waiting", waitingRun)
	t.Run("runs-per-second", runsPerSecond)
	t.Run("waiting-day", waitingDay)
	t.Logf("load average after: %s", loadavg())
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

// cpu returns the process's CPU time so far, user and system.
func cpu(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// failOver times, over 20 runs, how long a client waits for the first
// record of a run on B once A closes: the run waits for an approval on
// A; A closes (its server, then its worker and client); the client
// resumes the stream on B. It then approves on B, which ends the run.
func failOver(t *testing.T) {
	f := newFleet(t)
	f.a.stop(t)
	var total, stops []time.Duration
	for i := range 20 {
		a := f.instance()
		thread := id(fmt.Sprintf("failover-%d", i))
		model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "lou"})), fake.Text("Sent to Lou."))
		msgs := []any{userMessage("u1", "Email Lou")}
		r1 := do(t, a, "POST", "/api/chat", map[string]any{"id": thread, "messages": msgs})
		ids := approvalIDs(r1)
		if len(ids) != 1 {
			t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
		}
		start := time.Now()
		a.stop(t)
		stopped := time.Since(start)
		resp, err := http.Get(f.b.http.URL + "/api/chat/" + thread + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		first := time.Duration(0)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") && first == 0 {
				first = time.Since(start)
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || first == 0 {
			t.Fatalf("resumed on B: %d", resp.StatusCode)
		}
		total, stops = append(total, first), append(stops, stopped)
		msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{approvalPart(ids[0], true)}})
		if r2 := do(t, f.b, "POST", "/api/chat", map[string]any{"id": thread, "messages": msgs}); !slices.Contains(r2.types(), "tool-output-available") {
			t.Fatalf("approved on B: %d %v %s", r2.status, r2.types(), r2.body)
		}
	}
	t.Logf("fail-over, 20 runs: A's close to the first record on B: p50 %v p99 %v (max %v); of which A's close itself: p50 %v p99 %v",
		quantile(total, .5), quantile(total, .99), slices.Max(total), quantile(stops, .5), quantile(stops, .99))
}

// cpuPerRun compares the CPU time of the test process (which holds the
// Temporal server, the workers and the servers) per served run, one
// model turn that answers text, on the in-process runner and on the
// Temporal one, on the same agent and store.
func cpuPerRun(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	local, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close(ctx)
	const n = 50
	measure := func(name string, r agentserver.Runner) (time.Duration, time.Duration) {
		run := func(i int) {
			model.Enqueue(fake.Text("Hello."))
			thread := id(fmt.Sprintf("cpu-%s-%d", name, i))
			_, cur, err := r.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread,
				Message: genai.NewContentFromText("Hi", genai.RoleUser)})
			if err != nil {
				t.Fatal(err)
			}
			readUntil(t, cur, agentserver.KindDone)
			cur.Close()
		}
		for i := range 5 { // warm up
			run(n + i)
		}
		c0, w0 := cpu(t), time.Now()
		for i := range n {
			run(i)
		}
		return (cpu(t) - c0) / n, time.Since(w0) / n
	}
	idle0, idleW := cpu(t), time.Now()
	time.Sleep(3 * time.Second)
	idle := time.Duration(float64(cpu(t)-idle0) / time.Since(idleW).Seconds())
	localCPU, localWall := measure("local", local.Runner())
	tCPU, tWall := measure("temporal", f.a.runner)
	t.Logf("CPU per served run (%d runs, one text turn): in process %v (wall %v); on Temporal %v (wall %v): %.1fx; the process idles at %v CPU per second",
		n, localCPU, localWall, tCPU, tWall, float64(tCPU)/float64(localCPU), idle)
}

// waitingRun reads the Temporal history of a run that waits for an
// approval, and what 50 waiting runs add to the process's heap.
func waitingRun(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n = 50
	h0 := heap()
	var runs []string
	for i := range n {
		model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "max"})))
		thread := id(fmt.Sprintf("waiting-%d", i))
		info, cur, err := f.a.runner.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread,
			Message: genai.NewContentFromText("Email Max", genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		readUntil(t, cur, agentserver.KindPause)
		cur.Close()
		runs = append(runs, info.ID)
	}
	h1 := heap()
	wid := "agentserver//" + id("waiting-0")
	d, err := f.a.c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		t.Fatal(err)
	}
	events, size := d.GetWorkflowExecutionInfo().GetHistoryLength(), d.GetWorkflowExecutionInfo().GetHistorySizeBytes()
	time.Sleep(3 * time.Second)
	d, err = f.a.c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	it := f.a.c.GetWorkflowHistory(ctx, wid, "", false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_"))
	}
	t.Logf("a waiting run: %d history events, %d bytes (%d events 3s later): %v", events, size, d.GetWorkflowExecutionInfo().GetHistoryLength(), kinds)
	t.Logf("%d waiting runs add %d KiB to the heap of the process (Temporal server, workers' caches, clients): %d KiB each",
		n, (int64(h1)-int64(h0))>>10, (int64(h1)-int64(h0))/n>>10)
	for _, id := range runs {
		if err := f.a.runner.Cancel(ctx, id); err != nil {
			t.Error(err)
		}
	}
}

// proxy forwards TCP connections to addr until cut, which closes its
// listener and every connection at once: what a killed process's peers
// see.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, addr string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(u, c); u.Close() })
			p.wg.Go(func() { io.Copy(c, u); c.Close() })
		}
	})
	return p
}

func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// failOverKilled is failOver with A killed rather than closed: A's
// connections to Temporal are cut at once, so that its worker tells
// Temporal nothing. A's worker alone polls the queue until the run waits
// (so that the workflow is in its cache and on its sticky queue); B's
// starts then, as a worker of another instance that is up already.
func failOverKilled(t *testing.T) {
	f := newFleet(t)
	f.a.stop(t)
	queue := f.queue + "-killed"
	rb, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: f.b.c, TaskQueue: queue, Agent: "mail", Store: f.store, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	newWorker := func(c client.Client) worker.Worker {
		w := worker.New(c, queue, worker.Options{})
		if err := temporalagent.Register(w, temporalagent.Agent{Name: "mail", Agent: f.agent}); err != nil {
			t.Fatal(err)
		}
		if err := temporalagent.RegisterStore(w, f.store); err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	const n = 20
	var total []time.Duration
	for i := range n {
		p := newProxy(t, f.ts.GetFrontendHostPort())
		c, err := client.Dial(client.Options{HostPort: p.ln.Addr().String(), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger})
		if err != nil {
			t.Fatal(err)
		}
		wa := newWorker(c)
		ra, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: c, TaskQueue: queue, Agent: "mail", Store: f.store, PollInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		thread := id(fmt.Sprintf("killed-%d", i))
		model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "ned"})), fake.Text("Sent to Ned."))
		ctx := context.Background()
		info, cur, err := ra.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread, Message: genai.NewContentFromText("Email Ned", genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		pause := readUntil(t, cur, agentserver.KindPause)
		cur.Close()
		wb := newWorker(f.b.c)
		start := time.Now()
		p.cut()
		cur, err = rb.Attach(ctx, info.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, ok, err := cur.Next(rctx, time.Minute)
		cancel()
		cur.Close()
		if err != nil || !ok {
			t.Fatalf("the first record on B: %v %v", ok, err)
		}
		total = append(total, time.Since(start))
		cur, err = rb.Decide(ctx, info.ID, []agentserver.Decision{{CallID: pause[len(pause)-1].Pending[0].Call.ID, Approved: true}})
		if err != nil {
			t.Fatal(err)
		}
		readUntil(t, cur, agentserver.KindDone)
		cur.Close()
		wb.Stop()
		wa.Stop()
		c.Close()
	}
	t.Logf("fail-over, A's connections cut (%d runs): the first record on B after p50 %v p99 %v; all: %v",
		n, quantile(total, .5), quantile(total, .99), total)
}
