package agentserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A running call's progress is in the run's log, as KindProgress records
// between its call and its result, the last its last report; a reader
// that attaches later reads them too.
func TestProgressRecords(t *testing.T) {
	crawl := toolset.MustDefine(toolset.Tool{Name: "crawl", Description: "crawls three pages",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			for i := 1; i <= 3; i++ {
				toolset.ReportProgress(ctx, float64(i), 3, fmt.Sprint("page ", i))
			}
			return "three pages", nil
		}})
	h := newHarness(t, harnessOpts{agent: func(c *agent.Config) {
		c.Tools = toolset.MustNew(append(c.Tools.Tools(), crawl)...)
	}})
	h.model.Enqueue(fake.Calls(fake.Call("crawl", nil), call("Paris")), fake.Text("Crawled."))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Crawl"})
	if resp.status != 200 {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	check := func(events []event) {
		t.Helper()
		var id string
		var got []agentserver.Progress
		resulted := false
		for _, e := range events {
			switch {
			case e.Kind == agentserver.KindToolCall && e.Call.Name == "crawl":
				id = e.Call.ID
			case e.Kind == agentserver.KindProgress:
				if id == "" || e.Call.ID != id || resulted || e.Turn != 0 {
					t.Errorf("progress record %+v outside crawl's call (%q) and result", e.Record, id)
				}
				got = append(got, *e.Progress)
			case e.Kind == agentserver.KindToolResult && e.Call.ID == id:
				resulted = true
			}
		}
		if !resulted || len(got) == 0 || got[len(got)-1] != (agentserver.Progress{Done: 3, Total: 3, Message: "page 3"}) {
			t.Errorf("crawl's progress %+v (result: %v); want its reports, the last page 3 of 3, before its result", got, resulted)
		}
	}
	check(resp.events)
	// The log as a reader that attaches afterwards reads it.
	cur, err := h.srv.Attach(bg, "alice", resp.run(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var logged []event
	for {
		rec, ok, err := cur.Next(bg, 0)
		if err != nil || !ok {
			break
		}
		logged = append(logged, event{Record: rec})
		if rec.Kind == agentserver.KindDone {
			break
		}
	}
	if len(logged) > 1 { // the log of a run read to its end may be cut to its last record
		check(logged)
	}
}
