package agent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// progressLog checks what a run hands out of its calls' progress: every
// EventToolProgress of a call comes between the call's EventToolCall and
// its EventToolResult, on one goroutine at a time.
type progressLog struct {
	t      *testing.T
	mu     sync.Mutex
	events []*agent.Event
	busy   bool
	// on, when set, is called with each event, outside the lock.
	on func(e *agent.Event)
}

func (l *progressLog) Observe(_ context.Context, e *agent.Event) {
	l.record(e)
}

func (l *progressLog) record(e *agent.Event) {
	l.mu.Lock()
	if l.busy {
		l.t.Errorf("%v handed out while another event was", e.Kind)
	}
	l.busy = true
	l.events = append(l.events, e)
	l.mu.Unlock()
	if l.on != nil {
		l.on(e)
	}
	l.mu.Lock()
	l.busy = false
	l.mu.Unlock()
}

// progress returns the progress events of call index of turn, and checks
// that they all come after its EventToolCall and before its
// EventToolResult.
func (l *progressLog) progress(turn, index int) []toolset.Progress {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []toolset.Progress
	called, resulted := false, false
	for _, e := range l.events {
		if e.Turn != turn || e.Index != index {
			continue
		}
		switch e.Kind {
		case agent.EventToolCall:
			called = true
		case agent.EventToolResult:
			resulted = true
		case agent.EventToolProgress:
			if !called || resulted {
				l.t.Errorf("call %d.%d: progress %+v came outside its call and result (called %v, resulted %v)", turn, index, *e.Progress, called, resulted)
			}
			if e.Call == nil || e.Tool == nil || e.Progress == nil {
				l.t.Errorf("call %d.%d: progress event without its call, tool or progress: %+v", turn, index, e)
				continue
			}
			out = append(out, *e.Progress)
		}
	}
	if !resulted {
		l.t.Errorf("call %d.%d has no result", turn, index)
	}
	return out
}

// progressRun scripts srv for a turn of calls and an answer.
func progressRun(srv *fake.Server, calls ...*genai.FunctionCall) {
	srv.Enqueue(fake.Calls(calls...), fake.Text("done"))
}

// A call's reports reach a Stream consumer and the Observer, in order,
// with the call they belong to, between its EventToolCall and its
// EventToolResult.
func TestStreamToolProgress(t *testing.T) {
	srv := newServer(t)
	seen := make(chan float64, 1)
	steps := tool("build", func(ctx context.Context, _ map[string]any) (any, error) {
		for i := 1; i <= 3; i++ {
			toolset.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("step %d", i))
			// Each report is seen before the next is made: none coalesce.
			select {
			case got := <-seen:
				if got != float64(i) {
					return nil, fmt.Errorf("the consumer saw %v after report %d", got, i)
				}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return "built", nil
	})
	obs := &progressLog{t: t}
	a := newAgent(t, srv, toolset.MustNew(steps), func(c *agent.Config) {
		c.Observer = obs
		c.ProgressInterval = -1
	})
	progressRun(srv, fake.Call("build", nil))
	consumer := &progressLog{t: t}
	for e, err := range a.Stream(context.Background(), user("build it")) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		consumer.record(e)
		if e.Kind == agent.EventToolProgress {
			if e.Call.Name != "build" || e.Tool.Name != "build" || e.Turn != 0 || e.Index != 0 {
				t.Errorf("progress event of %s (tool %s) at %d.%d; want build at 0.0", e.Call.Name, e.Tool.Name, e.Turn, e.Index)
			}
			seen <- e.Progress.Done
		}
	}
	want := "[{1 3 step 1} {2 3 step 2} {3 3 step 3}]"
	for name, l := range map[string]*progressLog{"consumer": consumer, "observer": obs} {
		if got := fmt.Sprint(l.progress(0, 0)); got != want {
			t.Errorf("the %s saw progress %s; want %s", name, got, want)
		}
	}
}

// A tool that reports a million times gives a bounded number of events,
// the last of them its last report, before its result: with an interval
// longer than the call, the first report and the last; with no interval,
// a consumer that is busy while the tool reports sees the reports
// coalesced into the latest.
func TestToolProgressMillionReports(t *testing.T) {
	const n = 1_000_000
	for _, c := range []struct {
		name     string
		interval time.Duration
		stream   bool
	}{
		{"interval/Stream", time.Hour, true},
		{"interval/Run", time.Hour, false},
		{"busy consumer/Stream", -1, true},
		{"busy consumer/Run", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t)
			reported := make(chan struct{})
			flood := tool("flood", func(ctx context.Context, _ map[string]any) (any, error) {
				for i := 1; i <= n; i++ {
					toolset.ReportProgress(ctx, float64(i), n, "counting")
				}
				close(reported)
				return "counted", nil
			})
			obs := &progressLog{t: t}
			first := true
			wait := func(e *agent.Event) {
				// The consumer is busy with the first report until the
				// tool has made all of them.
				if e.Kind == agent.EventToolProgress && first {
					first = false
					<-reported
				}
			}
			a := newAgent(t, srv, toolset.MustNew(flood), func(cfg *agent.Config) {
				cfg.Observer = obs
				cfg.ProgressInterval = c.interval
			})
			progressRun(srv, fake.Call("flood", nil))
			if c.stream {
				for e, err := range a.Stream(context.Background(), user("count")) {
					if err != nil {
						t.Fatalf("Stream: %v", err)
					}
					wait(e)
				}
			} else {
				obs.on = wait
				if _, err := a.Run(context.Background(), user("count")); err != nil {
					t.Fatalf("Run: %v", err)
				}
			}
			got := obs.progress(0, 0)
			if len(got) == 0 || len(got) > 2 || got[len(got)-1].Done != n {
				t.Fatalf("the observer saw %d progress events (%v); want one or two, the last %d", len(got), got, n)
			}
		})
	}
}

// A report held back by the interval comes once the interval has
// passed, with no later report to carry it.
func TestToolProgressHeldReportArrives(t *testing.T) {
	srv := newServer(t)
	seen := make(chan float64, 4)
	slow := tool("slow", func(ctx context.Context, _ map[string]any) (any, error) {
		toolset.ReportProgress(ctx, 1, 2, "")
		toolset.ReportProgress(ctx, 2, 2, "") // likely held: within the interval
		for {
			select {
			case d := <-seen:
				if d == 2 {
					return "ok", nil
				}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	})
	a := newAgent(t, srv, toolset.MustNew(slow), func(c *agent.Config) { c.ProgressInterval = time.Millisecond })
	progressRun(srv, fake.Call("slow", nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	for e, err := range a.Stream(ctx, user("go")) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if e.Kind == agent.EventToolProgress {
			seen <- e.Progress.Done
		}
	}
}

// Reports from several goroutines of one tool, and from calls running in
// parallel, each reach the events of their own call, the last report of
// each call last.
func TestToolProgressConcurrent(t *testing.T) {
	for _, maxParallel := range []int{0, 1} { // all at once; one at a time, through the dispatcher
		t.Run(fmt.Sprint("MaxParallel=", maxParallel), func(t *testing.T) {
			srv := newServer(t)
			busy := tool("busy", func(ctx context.Context, args map[string]any) (any, error) {
				name := args["name"].(string)
				var wg sync.WaitGroup
				for g := range 4 {
					wg.Go(func() {
						for i := range 500 {
							toolset.ReportProgress(ctx, float64(i), 500, fmt.Sprintf("%s/%d", name, g))
						}
					})
				}
				wg.Wait()
				toolset.ReportProgress(ctx, 500, 500, name+" done")
				return name, nil
			})
			obs := &progressLog{t: t}
			a := newAgent(t, srv, toolset.MustNew(busy), func(c *agent.Config) {
				c.Observer, c.MaxParallel = obs, maxParallel
			})
			names := []string{"a", "b", "c"}
			var calls []*genai.FunctionCall
			for _, n := range names {
				calls = append(calls, fake.Call("busy", map[string]any{"name": n}))
			}
			progressRun(srv, calls...)
			if _, err := a.Run(context.Background(), user("go")); err != nil {
				t.Fatalf("Run: %v", err)
			}
			for i, n := range names {
				got := obs.progress(0, i)
				if len(got) == 0 || got[len(got)-1].Message != n+" done" {
					t.Errorf("call %d: progress %v; want its own, ending with %q", i, got, n+" done")
				}
				for _, p := range got {
					if p.Message[0] != n[0] {
						t.Errorf("call %d (%s) was handed another call's progress: %+v", i, n, p)
					}
				}
			}
		})
	}
}

// Reports a tool makes after its call's result (from a goroutine it left
// running) are dropped, even while the turn's other calls run.
func TestNoToolProgressAfterTheResult(t *testing.T) {
	srv := newServer(t)
	resulted := make(chan struct{}) // the observer saw quick's result
	late := make(chan struct{})     // quick's goroutine reported after it
	quick := tool("quick", func(ctx context.Context, _ map[string]any) (any, error) {
		toolset.ReportProgress(ctx, 1, 2, "before the result")
		go func() {
			<-resulted
			for i := range 1000 {
				toolset.ReportProgress(ctx, float64(2+i), 2, "after the result")
			}
			close(late)
		}()
		return "quick", nil
	})
	waiter := tool("waiter", func(ctx context.Context, _ map[string]any) (any, error) {
		select {
		case <-late:
			return "waited", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	obs := &progressLog{t: t}
	obs.on = func(e *agent.Event) {
		if e.Kind == agent.EventToolResult && e.Call.Name == "quick" {
			close(resulted)
		}
	}
	a := newAgent(t, srv, toolset.MustNew(quick, waiter), func(c *agent.Config) {
		c.Observer, c.ProgressInterval = obs, -1
	})
	progressRun(srv, fake.Call("quick", nil), fake.Call("waiter", nil))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := obs.progress(0, 0); fmt.Sprint(got) != "[{1 2 before the result}]" {
		t.Errorf("quick's progress = %v; want its one report before the result", got)
	}
}

// A consumer that stops on a progress event stops the run and cancels the
// tool, which reports no more; a tool that runs past ToolTimeout has its
// last report before its (timed out) result.
func TestToolProgressCancellation(t *testing.T) {
	t.Run("consumer stops", func(t *testing.T) {
		srv := newServer(t)
		stopped := make(chan error, 1)
		forever := tool("forever", func(ctx context.Context, _ map[string]any) (any, error) {
			for i := 0; ; i++ {
				toolset.ReportProgress(ctx, float64(i), 0, "")
				if ctx.Err() != nil {
					stopped <- ctx.Err()
					return nil, ctx.Err()
				}
				time.Sleep(time.Millisecond)
			}
		})
		obs := &progressLog{t: t}
		a := newAgent(t, srv, toolset.MustNew(forever), func(c *agent.Config) { c.Observer = obs })
		srv.Enqueue(fake.Calls(fake.Call("forever", nil)))
		for e := range a.Stream(context.Background(), user("go")) {
			if e.Kind == agent.EventToolProgress {
				break
			}
		}
		select {
		case err := <-stopped:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the tool stopped with %v; want context.Canceled", err)
			}
		case <-time.After(time.Minute): // a hang guard
			t.Fatal("the tool was not cancelled")
		}
		obs.progress(0, 0) // checks the order, and that the result came
		if last := obs.events[len(obs.events)-1]; last.Kind != agent.EventDone {
			t.Errorf("the observer's events end with %v; want Done", last.Kind)
		}
	})
	t.Run("ToolTimeout", func(t *testing.T) {
		srv := newServer(t)
		hangs := tool("hangs", func(ctx context.Context, _ map[string]any) (any, error) {
			toolset.ReportProgress(ctx, 1, 10, "started")
			toolset.ReportProgress(ctx, 2, 10, "stuck")
			<-ctx.Done()
			return nil, ctx.Err()
		})
		obs := &progressLog{t: t}
		a := newAgent(t, srv, toolset.MustNew(hangs), func(c *agent.Config) {
			c.Observer, c.ToolTimeout, c.ProgressInterval = obs, 10*time.Millisecond, time.Hour
		})
		progressRun(srv, fake.Call("hangs", nil))
		res, err := a.Run(context.Background(), user("go"))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if r := res.Turns[0].Results[0]; !errors.Is(r.Err, agent.ErrToolTimeout) {
			t.Errorf("result = %v; want a timeout", r.Err)
		}
		if got := obs.progress(0, 0); len(got) == 0 || got[len(got)-1].Message != "stuck" {
			t.Errorf("progress = %v; want the last report, stuck, before the result", got)
		}
	})
}

// A run with no Observer that is not a Stream listens to no progress.
func TestRunWithoutListenerWantsNoProgress(t *testing.T) {
	srv := newServer(t)
	wants := make(chan bool, 2)
	probe := tool("probe", func(ctx context.Context, _ map[string]any) (any, error) {
		wants <- toolset.WantsProgress(ctx)
		toolset.ReportProgress(ctx, 1, 1, "nobody hears this")
		return "ok", nil
	})
	a := newAgent(t, srv, toolset.MustNew(probe))
	progressRun(srv, fake.Call("probe", nil))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	progressRun(srv, fake.Call("probe", nil))
	for range a.Stream(context.Background(), user("go")) {
	}
	if plain, stream := <-wants, <-wants; plain || !stream {
		t.Errorf("WantsProgress in a plain Run = %v, in a Stream = %v; want false, true", plain, stream)
	}
}

// An agent run as a tool: its own tools' progress reaches the calling
// run's observer as its other events do (Agent, Parent), and its turns
// are the progress of the call it serves.
func TestAsToolProgress(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	tm.add("researcher", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text("found it")
		}
		return fake.Calls(fake.Call("crawl", nil))
	})
	tm.add("coordinator", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text("done")
		}
		return fake.Calls(fake.Call("researcher", map[string]any{"request": "find it"}))
	})
	crawl := tool("crawl", func(ctx context.Context, _ map[string]any) (any, error) {
		for i := 1; i <= 3; i++ {
			toolset.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("page %d", i))
		}
		return "pages", nil
	})
	researcher := member(t, srv, "researcher", toolset.MustNew(crawl), func(c *agent.Config) { c.ProgressInterval = time.Hour })
	obs := &eventLog{}
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, researcher, "researcher")), func(c *agent.Config) {
		c.Observer, c.ProgressInterval = obs, -1
	})
	var mine []string
	for e, err := range coordinator.Stream(context.Background(), user("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == agent.EventToolProgress {
			if e.Call.Name != "researcher" || e.Agent != "coordinator" {
				t.Errorf("the coordinator's consumer got progress of %s from %s", e.Call.Name, e.Agent)
			}
			mine = append(mine, fmt.Sprintf("%v %s", e.Progress.Done, e.Progress.Message))
		}
	}
	// Each of the researcher's turns is a report; a busy consumer may see
	// fewer (they coalesce), but never the order changed, and always the
	// last.
	all := []string{"0 turn 1: asking the model", "0 turn 1: calling crawl", "1 turn 2: asking the model"}
	if len(mine) == 0 || mine[len(mine)-1] != all[len(all)-1] {
		t.Errorf("the coordinator's consumer saw the researcher's turns as %q; want (some of) %q, ending with the last", mine, all)
	}
	var crawled []*agent.Event
	for _, e := range obs.of(agent.EventToolProgress) {
		if e.Agent == "researcher" {
			crawled = append(crawled, e)
		}
	}
	if len(crawled) == 0 {
		t.Fatal("the coordinator's observer saw no progress of the researcher's crawl")
	}
	last := crawled[len(crawled)-1]
	if last.Call.Name != "crawl" || last.Progress.Message != "page 3" || last.Parent == nil || last.Parent.Call.Name != "researcher" {
		t.Errorf("the researcher's last progress event: %s %+v, parent %+v; want crawl's page 3, under the researcher's call", last.Call.Name, last.Progress, last.Parent)
	}
}

// BenchmarkReportProgressInRun measures toolset.ReportProgress in a tool
// run by the loop: in a plain Run (nobody listens) and in a Stream (the
// loop listens: the reports are paced, and all but the first within the
// interval are held). One run makes b.N reports: the run's own cost is
// spread over them.
func BenchmarkReportProgressInRun(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "Run"
		if stream {
			name = "Stream"
		}
		b.Run(name, func(b *testing.B) {
			srv := fake.NewServer()
			defer srv.Close()
			n := 0
			loop := tool("loop", func(ctx context.Context, _ map[string]any) (any, error) {
				for i := range n {
					toolset.ReportProgress(ctx, float64(i), float64(n), "working")
				}
				return "done", nil
			})
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Tools: toolset.MustNew(loop)})
			if err != nil {
				b.Fatal(err)
			}
			srv.Enqueue(fake.Calls(fake.Call("loop", nil)), fake.Text("done"))
			n = b.N
			b.ReportAllocs()
			b.ResetTimer()
			if stream {
				for _, err := range a.Stream(context.Background(), user("go")) {
					if err != nil {
						b.Fatal(err)
					}
				}
			} else if _, err := a.Run(context.Background(), user("go")); err != nil {
				b.Fatal(err)
			}
		})
	}
}
