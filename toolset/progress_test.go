package toolset_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// recorder is a listener that keeps every report, and fails the test if
// it is called by two goroutines at once.
type recorder struct {
	t      *testing.T
	busy   atomic.Bool
	mu     sync.Mutex
	got    []toolset.Progress
	notify chan struct{} // when set, receives a value after each report (non-blocking)
}

func (r *recorder) OnProgress(p toolset.Progress) {
	if !r.busy.CompareAndSwap(false, true) {
		r.t.Errorf("OnProgress(%v) called while another report was being handed on", p)
	}
	defer r.busy.Store(false)
	r.mu.Lock()
	r.got = append(r.got, p)
	r.mu.Unlock()
	if r.notify != nil {
		select {
		case r.notify <- struct{}{}:
		default:
		}
	}
}

func (r *recorder) reports() []toolset.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]toolset.Progress(nil), r.got...)
}

func TestReportProgressNobodyListens(t *testing.T) {
	ctx := context.Background()
	if toolset.WantsProgress(ctx) {
		t.Error("WantsProgress(Background) = true")
	}
	toolset.ReportProgress(ctx, 1, 2, "nobody hears this") // must not panic
	toolset.ReportProgress(context.TODO(), 1, 2, "")
}

func TestReportProgressReachesTheListener(t *testing.T) {
	rec := &recorder{t: t}
	ctx := toolset.WithProgress(context.Background(), rec)
	if !toolset.WantsProgress(ctx) {
		t.Error("WantsProgress = false under WithProgress")
	}
	derived, cancel := context.WithCancel(context.WithValue(ctx, struct{ k int }{1}, "x"))
	defer cancel()
	toolset.ReportProgress(derived, 3, 10, "step 3")
	toolset.ReportProgress(ctx, 4, 0, "")
	toolset.ReportProgress(ctx, math.NaN(), 10, "dropped: done is NaN")
	toolset.ReportProgress(ctx, math.Inf(1), 10, "dropped: done is infinite")
	toolset.ReportProgress(ctx, 5, math.NaN(), "total NaN: unknown")
	toolset.ReportProgress(ctx, 6, -3, "negative total: unknown")
	toolset.ReportProgress(ctx, 7, math.Inf(1), "infinite total: unknown")
	want := []toolset.Progress{
		{Done: 3, Total: 10, Message: "step 3"},
		{Done: 4},
		{Done: 5, Message: "total NaN: unknown"},
		{Done: 6, Message: "negative total: unknown"},
		{Done: 7, Message: "infinite total: unknown"},
	}
	got := rec.reports()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reports = %v, want %v", got, want)
	}
}

func TestReportProgressCutsLongMessages(t *testing.T) {
	rec := &recorder{t: t}
	ctx := toolset.WithProgress(context.Background(), rec)
	long := strings.Repeat("é", toolset.MaxProgressMessage) // 2 bytes each
	toolset.ReportProgress(ctx, 1, 1, "x"+long)
	got := rec.reports()[0].Message
	if len(got) > toolset.MaxProgressMessage || !utf8.ValidString(got) || !strings.HasPrefix(got, "xéé") {
		t.Errorf("message cut to %d bytes (valid UTF-8: %v), want at most %d, valid, from the start", len(got), utf8.ValidString(got), toolset.MaxProgressMessage)
	}
	if len(got) < toolset.MaxProgressMessage-1 {
		t.Errorf("message cut to %d bytes, more than needed", len(got))
	}
}

func TestWithProgressNilHidesTheListenerAbove(t *testing.T) {
	rec := &recorder{t: t}
	ctx := toolset.WithProgress(toolset.WithProgress(context.Background(), rec), nil)
	if toolset.WantsProgress(ctx) {
		t.Error("WantsProgress = true under WithProgress(ctx, nil)")
	}
	toolset.ReportProgress(ctx, 1, 2, "hidden")
	inner := &recorder{t: t}
	toolset.ReportProgress(toolset.WithProgress(ctx, inner), 2, 2, "inner")
	if len(rec.reports()) != 0 || len(inner.reports()) != 1 {
		t.Errorf("outer got %v, inner got %v; want nothing, then the inner report", rec.reports(), inner.reports())
	}
}

func TestProgressFraction(t *testing.T) {
	for _, c := range []struct {
		p     toolset.Progress
		f     float64
		known bool
	}{
		{toolset.Progress{Done: 1, Total: 4}, 0.25, true},
		{toolset.Progress{Done: 5, Total: 4}, 1, true},
		{toolset.Progress{Done: -1, Total: 4}, 0, true},
		{toolset.Progress{Done: 3}, 0, false},
	} {
		if f, known := c.p.Fraction(); f != c.f || known != c.known {
			t.Errorf("%+v.Fraction() = %v, %v; want %v, %v", c.p, f, known, c.f, c.known)
		}
	}
}

// Without an interval, reports made one after another each reach To, in
// order, at once.
func TestProgressPacerWithoutIntervalHandsEachOn(t *testing.T) {
	rec := &recorder{t: t}
	pp := &toolset.ProgressPacer{To: rec}
	for i := range 100 {
		pp.OnProgress(toolset.Progress{Done: float64(i), Total: 99})
		if n := len(rec.reports()); n != i+1 {
			t.Fatalf("after report %d, To got %d reports", i, n)
		}
	}
	pp.Close()
	pp.OnProgress(toolset.Progress{Done: 100, Total: 99, Message: "after Close"})
	if got := rec.reports(); len(got) != 100 || got[99].Done != 99 {
		t.Errorf("To got %d reports, the last %v; want 100, the last 99", len(got), got[len(got)-1])
	}
}

// A million reports within one interval reach To as two: the first, at
// once, and the last, which Close hands on.
func TestProgressPacerCoalescesAMillionReports(t *testing.T) {
	rec := &recorder{t: t}
	pp := &toolset.ProgressPacer{To: rec, Interval: time.Hour}
	for i := 1; i <= 1_000_000; i++ {
		pp.OnProgress(toolset.Progress{Done: float64(i), Total: 1_000_000, Message: "item"})
	}
	if got := rec.reports(); len(got) != 1 || got[0].Done != 1 {
		t.Fatalf("before Close, To got %v; want the first report only", got)
	}
	pp.Close()
	got := rec.reports()
	if len(got) != 2 || got[1].Done != 1_000_000 {
		t.Fatalf("after Close, To got %v; want the first and the last", got)
	}
	pp.Close() // a second Close hands on nothing more
	if n := len(rec.reports()); n != 2 {
		t.Errorf("after a second Close, To got %d reports", n)
	}
}

// A report held back by the interval is handed on by the pacer's timer,
// with no later report and no Close.
func TestProgressPacerTimerHandsOnTheReportHeld(t *testing.T) {
	rec := &recorder{t: t, notify: make(chan struct{}, 1)}
	pp := &toolset.ProgressPacer{To: rec, Interval: time.Millisecond}
	defer pp.Close()
	pp.OnProgress(toolset.Progress{Done: 1})
	<-rec.notify
	pp.OnProgress(toolset.Progress{Done: 2}) // likely within the interval: held
	pp.OnProgress(toolset.Progress{Done: 3})
	deadline := time.After(time.Minute) // a hang guard
	for {
		got := rec.reports()
		if got[len(got)-1].Done == 3 {
			break
		}
		select {
		case <-rec.notify:
		case <-deadline:
			t.Fatalf("the report held never reached To: it got %v", got)
		}
	}
}

// Reports from many goroutines reach To one at a time, the last one
// made is the last To gets, and nothing reaches To after Close.
func TestProgressPacerConcurrentReports(t *testing.T) {
	for _, interval := range []time.Duration{0, time.Microsecond, time.Hour} {
		t.Run(interval.String(), func(t *testing.T) {
			rec := &recorder{t: t}
			pp := &toolset.ProgressPacer{To: rec, Interval: interval}
			ctx := toolset.WithProgress(context.Background(), pp)
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 2000 {
						toolset.ReportProgress(ctx, float64(i), 2000, fmt.Sprint("goroutine ", g))
					}
				})
			}
			wg.Wait()
			toolset.ReportProgress(ctx, 2000, 2000, "done")
			pp.Close()
			got := rec.reports()
			if len(got) == 0 || got[len(got)-1].Message != "done" {
				t.Fatalf("To got %d reports, the last %v; want the last one made, done", len(got), got[len(got)-1:])
			}
			n := len(got)
			toolset.ReportProgress(ctx, 2001, 2000, "after Close")
			if len(rec.reports()) != n {
				t.Error("a report made after Close reached To")
			}
		})
	}
}

// A listener that panics leaves the pacer usable.
func TestProgressPacerSurvivesAPanickingListener(t *testing.T) {
	calls := 0
	pp := &toolset.ProgressPacer{To: toolset.ProgressFunc(func(p toolset.Progress) {
		calls++
		if p.Done == 1 {
			panic("listener failed")
		}
	})}
	func() {
		defer func() { recover() }()
		pp.OnProgress(toolset.Progress{Done: 1})
	}()
	pp.OnProgress(toolset.Progress{Done: 2})
	pp.Close()
	if calls != 2 {
		t.Errorf("the listener was called %d times, want 2", calls)
	}
}

func ExampleReportProgress() {
	countLines := toolset.MustFunc("count_lines", "Counts the lines of the files given",
		func(ctx context.Context, in struct {
			Files []string `json:"files"`
		}) (int, error) {
			lines := 0
			for i, f := range in.Files {
				lines += strings.Count(f, "\n")
				// Cheap enough for every item: nothing happens where
				// nobody listens, and a listener sees what it can take.
				toolset.ReportProgress(ctx, float64(i+1), float64(len(in.Files)), fmt.Sprintf("file %d", i+1))
			}
			return lines, nil
		})

	// The agent loop, an MCP server or a durable run listens; here, a
	// function does.
	ctx := toolset.WithProgress(context.Background(), toolset.ProgressFunc(func(p toolset.Progress) {
		f, _ := p.Fraction()
		fmt.Printf("%3.0f%% %s\n", 100*f, p.Message)
	}))
	res := countLines.Execute(ctx, map[string]any{"files": []any{"a\nb\n", "c\n", "d\ne\nf\n"}})
	fmt.Println(res.Output)
	// Output:
	//  33% file 1
	//  67% file 2
	// 100% file 3
	// 6
}

// BenchmarkReportProgress measures a report where nobody listens (a
// plain run), and where a listener does: directly, and through a pacer
// that holds it (what the agent loop and an MCP server do between two
// reports handed on).
func BenchmarkReportProgress(b *testing.B) {
	base, cancel := context.WithCancel(context.Background()) // as a tool's context, a few layers deep
	defer cancel()
	base = context.WithValue(base, struct{ k int }{1}, 1)
	b.Run("nobody", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			toolset.ReportProgress(base, float64(i), 1e9, "working")
		}
	})
	b.Run("listener", func(b *testing.B) {
		var last toolset.Progress
		ctx := toolset.WithProgress(base, toolset.ProgressFunc(func(p toolset.Progress) { last = p }))
		b.ReportAllocs()
		for i := range b.N {
			toolset.ReportProgress(ctx, float64(i), 1e9, "working")
		}
		_ = last
	})
	b.Run("paced", func(b *testing.B) {
		pp := &toolset.ProgressPacer{To: toolset.ProgressFunc(func(toolset.Progress) {}), Interval: time.Hour}
		ctx := toolset.WithProgress(base, pp)
		b.ReportAllocs()
		for i := range b.N {
			toolset.ReportProgress(ctx, float64(i), 1e9, "working")
		}
		pp.Close()
	})
}
