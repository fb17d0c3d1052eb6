package agent

import (
	"fmt"
	"strings"
	"sync"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// callProgress carries one call's progress reports to the run's
// goroutine, which hands them out as EventToolProgress events: events are
// handed out there only, one at a time (see [Observer]).
//
// The tool reports to pacer (toolset.ReportProgress finds it in the
// call's context), which paces the reports (Config.ProgressInterval) and
// hands them, one at a time, to the callProgress. It keeps the latest
// that the run's goroutine has not taken, and tells that goroutine, by
// sending the call's index on ready, when one is waiting and none was:
// the channel holds at most one index per call, so that sending never
// blocks, and reports that come while the run's goroutine is busy
// (handing out another event, waiting for a Stream consumer) coalesce.
type callProgress struct {
	pacer toolset.ProgressPacer
	i     int
	ready chan<- int

	mu      sync.Mutex
	latest  toolset.Progress
	pending bool // latest waits for the run's goroutine, and i is on ready
}

// OnProgress keeps p for the run's goroutine; the pacer calls it.
func (c *callProgress) OnProgress(p toolset.Progress) {
	c.mu.Lock()
	c.latest = p
	if !c.pending {
		c.pending = true
		c.ready <- c.i
	}
	c.mu.Unlock()
}

// take returns the report waiting, if any.
func (c *callProgress) take() (toolset.Progress, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.latest, c.pending
	c.pending = false
	return p, ok
}

// listen gives each call of plans that runs its tool a progress listener
// in its context, and returns the channel on which they say that a report
// waits.
func (r *run) listen(plans []callPlan) <-chan int {
	ready := make(chan int, len(plans))
	for i := range plans {
		p := &plans[i]
		if p.answer != nil {
			continue // nothing runs
		}
		c := &callProgress{i: i, ready: ready}
		c.pacer.To, c.pacer.Interval = c, r.a.progressEvery
		p.progress = c
		p.ctx = toolset.WithProgress(p.ctx, &c.pacer)
	}
	return ready
}

// progress hands out the report of call i that waits, if any.
func (r *run) progress(turn, i int, call *genai.FunctionCall, p *callPlan) {
	if p.progress == nil {
		return
	}
	if pr, ok := p.progress.take(); ok {
		r.emit(p.ctx, &Event{Kind: EventToolProgress, Turn: turn, Index: i, Call: call, Tool: p.tool, Progress: &pr})
	}
}

// progressDone ends the reports of call i, whose result is in: the last
// one it made, if it was not handed out yet, is handed out now, before
// the result; later ones are dropped.
func (r *run) progressDone(turn, i int, call *genai.FunctionCall, p *callPlan) {
	if p.progress == nil {
		return
	}
	p.progress.pacer.Close() // hands the report it held to p.progress
	r.progress(turn, i, call, p)
}

// reportTurn reports, for a run of an agent called as a tool (AsTool),
// the turn the run is in as progress of the call it serves: done is the
// turns the run has completed, the total unknown (the model decides when
// it is done), and the message says what the turn does.
func (r *run) reportTurn(turn int, calls []*genai.FunctionCall) {
	if !toolset.WantsProgress(r.ctx) {
		return
	}
	msg := fmt.Sprintf("turn %d: asking the model", turn+1)
	if len(calls) > 0 {
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = c.Name
		}
		msg = fmt.Sprintf("turn %d: calling %s", turn+1, strings.Join(names, ", "))
	}
	toolset.ReportProgress(r.ctx, float64(turn), 0, msg)
}
