package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// TestRunProgressShowsToolProgress: a tool's progress rides on its
// activity's heartbeats, and a client reads it with Run.Progress while
// the call runs, on a real Temporal server; once the run is over,
// nothing is running.
func TestRunProgressShowsToolProgress(t *testing.T) {
	e := newEnv(t)
	gemini := fake.NewServer()
	defer gemini.Close()
	gemini.Enqueue(fake.Calls(fake.Call("crawl", nil)), fake.Text("crawled"))

	next := make(chan struct{})
	crawl := toolset.MustDefine(toolset.Tool{Name: "crawl", Description: "crawls three pages",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			for i := 1; i <= 3; i++ {
				toolset.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("page %d", i))
				select { // the test reads the progress before the tool goes on
				case <-next:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return "three pages", nil
		}})
	a, err := agent.New(agent.Config{Models: gemini.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(crawl)})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(e.ts.GetDefaultClient(), e.queue, worker.Options{})
	// A short heartbeat timeout: the SDK sends a heartbeat at most every
	// 80% of it, the latest progress kept, so reports arrive within it.
	if err := temporalagent.Register(w, temporalagent.Agent{Name: "crawler", Agent: a,
		Tools: map[string]temporalagent.ToolOptions{"crawl": {HeartbeatTimeout: time.Second}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	run, err := e.c.Start(context.Background(), client.StartWorkflowOptions{ID: e.queue + "-crawl"}, "crawler",
		[]*genai.Content{genai.NewContentFromText("crawl", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	for page := 1; page <= 3; page++ {
		var tp temporalagent.ToolProgress
		e.waitFor(time.Minute, fmt.Sprintf("the progress of page %d", page), func() bool {
			p, err := run.Progress(context.Background())
			if err != nil {
				t.Fatalf("Progress: %v", err)
			}
			if len(p.Tools) == 1 && p.Tools[0].Progress != nil && p.Tools[0].Progress.Done == float64(page) {
				tp = p.Tools[0]
				return true
			}
			return false
		})
		want := toolset.Progress{Done: float64(page), Total: 3, Message: fmt.Sprintf("page %d", page)}
		if tp.Turn != 0 || tp.Index != 0 || tp.Name != "crawl" || *tp.Progress != want || tp.At.IsZero() {
			t.Errorf("Tools[0] = %+v (%+v); want call 0.0 of crawl at %+v, with the heartbeat's time", tp, *tp.Progress, want)
		}
		next <- struct{}{}
	}
	res, err := result(t, run, time.Minute)
	if err != nil || res.Text != "crawled" {
		t.Fatalf("Result = %+v, %v", res, err)
	}
	p, err := run.Progress(context.Background())
	if err != nil || !p.Done || len(p.Tools) != 0 {
		t.Errorf("Progress after the run = %+v, %v; want done, with no tool running", p, err)
	}
}
