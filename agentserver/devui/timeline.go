package devui

import (
	"encoding/json"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/memory"
)

// runSummary describes a recorded run in a list.
type runSummary struct {
	ID     string            `json:"id"`
	Thread string            `json:"thread"`
	State  agentserver.State `json:"state"`
	// WaitingFor is what a waiting run waits for: approval, when any of
	// its calls waits for one, else browser.
	WaitingFor agentserver.PendingKind `json:"waitingFor,omitempty"`
	Started    time.Time               `json:"started"`
	DurationMs float64                 `json:"durationMs"`
	ModelCalls int                     `json:"modelCalls"`
	ToolCalls  int                     `json:"toolCalls"`
	Usage      usageJSON               `json:"usage"`
	Message    string                  `json:"message,omitempty"` // the new message's text, cut
	// Tools are the names of the tools the run called, each once, in the
	// order of their first call.
	Tools []string `json:"tools"`
}

// timeline is a recorded run as the page draws it: every span, its
// times in milliseconds from the run's start.
type timeline struct {
	runSummary
	// Now is the time of the answer, from the run's start: where the
	// spans still open end for now.
	Now       float64           `json:"now"`
	Truncated bool              `json:"truncated,omitempty"`
	Done      *agentserver.Done `json:"done,omitempty"`
	Spans     []spanJSON        `json:"spans"`
}

// usageJSON is an agent.Usage as the page shows it. The input billed is
// split in two: FullPrice at the full input price (agent.Usage's
// UncachedTokens), Cached read from a cache at the cached price; the two
// add up to Input plus ToolUse.
type usageJSON struct {
	Input     int `json:"input"`
	Output    int `json:"output"`
	Thoughts  int `json:"thoughts"`
	Cached    int `json:"cached"`
	FullPrice int `json:"fullPrice"`
	ToolUse   int `json:"toolUse,omitempty"`
	Total     int `json:"total"`
}

func usageOf(u agent.Usage) usageJSON {
	return usageJSON{Input: u.PromptTokens, Output: u.CandidatesTokens, Thoughts: u.ThoughtsTokens,
		Cached: u.CachedTokens, FullPrice: u.UncachedTokens(), ToolUse: u.ToolUsePromptTokens, Total: u.TotalTokens}
}

type spanJSON struct {
	ID     int    `json:"id"`
	Parent int    `json:"parent"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Agent  string `json:"agent,omitempty"`
	Turn   int    `json:"turn"`
	// Start and End are in milliseconds from the run's start; End is
	// absent while the span is open.
	Start float64  `json:"start"`
	End   *float64 `json:"end,omitempty"`

	// Model calls.
	Attempt    int        `json:"attempt,omitempty"`
	Stream     bool       `json:"stream,omitempty"`
	FirstToken *float64   `json:"firstToken,omitempty"`
	Usage      *usageJSON `json:"usage,omitempty"`
	Finish     string     `json:"finishReason,omitempty"`
	Calls      int        `json:"calls,omitempty"`  // function calls in the response
	Failed     string     `json:"failed,omitempty"` // the API's status of a failed call
	Reason     string     `json:"reason,omitempty"` // why it is retried, as the server says it
	Retried    bool       `json:"retried,omitempty"`
	BackoffMs  float64    `json:"backoffMs,omitempty"`

	// Tool calls.
	Index    int             `json:"index"`
	CallID   string          `json:"callId,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	Denied   bool            `json:"denied,omitempty"`
	RunStart *float64        `json:"runStart,omitempty"` // when the tool began to run, after any wait
	Wait     *waitJSON       `json:"wait,omitempty"`
	// Parallel counts the other calls of the same turn that ran at the
	// same time as this one: those in flight together, from the moment
	// the loop started them (after their waits; for a turn with more calls
	// than the agent runs at once, from when each began to run) to their
	// end.
	Parallel int `json:"parallel"`
	dispatch *float64

	// Memory searches and ingests.
	Memory *memoryJSON `json:"memory,omitempty"`
}

// memoryJSON is what a memory span says: a search's query, how it ranked
// and what it found, or the memories a run's end stored.
type memoryJSON struct {
	Query    string           `json:"query,omitempty"`
	Hybrid   bool             `json:"hybrid,omitempty"`
	Fallback bool             `json:"fallback,omitempty"` // embeddings failed: lexical only
	Error    string           `json:"error,omitempty"`
	Memories []memoryItemJSON `json:"memories"`
}

type memoryItemJSON struct {
	ID      string      `json:"id"`
	Kind    memory.Kind `json:"kind"`
	Text    string      `json:"text"`
	Author  string      `json:"author,omitempty"`
	Thread  string      `json:"thread,omitempty"`
	Message int         `json:"message"`
	Time    time.Time   `json:"time"`
	Lexical int         `json:"lexical,omitempty"`
	Vector  int         `json:"vector,omitempty"`
}

func memoryOf(e *memory.Event) *memoryJSON {
	j := &memoryJSON{Query: cut(e.Query, 2000), Hybrid: e.Hybrid, Fallback: e.Fallback, Memories: []memoryItemJSON{}}
	if e.Err != nil {
		j.Error = cut(e.Err.Error(), 2000)
	}
	item := func(m memory.Memory) memoryItemJSON {
		return memoryItemJSON{ID: m.ID, Kind: m.Kind, Text: cut(m.Text, 2000), Author: m.Author, Thread: m.Thread, Message: m.Message, Time: m.Time}
	}
	for _, r := range e.Results {
		it := item(r.Memory)
		it.Lexical, it.Vector = r.Lexical, r.Vector
		j.Memories = append(j.Memories, it)
	}
	for _, m := range e.Memories {
		j.Memories = append(j.Memories, item(m))
	}
	return j
}

type waitJSON struct {
	Kind agentserver.PendingKind `json:"kind"` // approval, browser
	From float64                 `json:"from"`
	// To is when the call was decided.
	To *float64 `json:"to,omitempty"`
	// Resumed is when every call of its pause was decided, and the run
	// went on: a call decided before the others waits for their
	// decisions, from To to Resumed, before it runs. Absent while the
	// others wait.
	Resumed  *float64 `json:"resumed,omitempty"`
	Approved bool     `json:"approved,omitempty"`
	Expired  bool     `json:"expired,omitempty"`
}

// ms returns t in milliseconds from base.
func ms(t, base time.Time) float64 {
	return float64(t.Sub(base).Microseconds()) / 1000
}

func msPtr(t, base time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	v := ms(t, base)
	return &v
}

// summary describes the run. rec.mu is held.
func (rec *runRec) summary(now time.Time) runSummary {
	root := rec.spans[0]
	s := runSummary{ID: rec.id, Thread: rec.thread, State: rec.state, WaitingFor: rec.waitingFor(), Started: root.start, Tools: []string{}}
	end := root.end
	if end.IsZero() {
		end = now
	}
	s.DurationMs = ms(end, root.start)
	var usage agent.Usage
	for _, sp := range rec.spans {
		switch sp.kind {
		case "model":
			s.ModelCalls++
			if sp.usage != nil {
				usage = usage.Plus(*sp.usage)
			}
		case "tool":
			s.ToolCalls++
			if !slices.Contains(s.Tools, sp.name) {
				s.Tools = append(s.Tools, sp.name)
			}
		}
	}
	s.Usage = usageOf(usage)
	if rec.done != nil {
		s.Usage = usageOf(rec.done.Usage)
	}
	if rec.message != nil {
		var text []rune
		for _, p := range rec.message.Parts {
			if !p.Thought {
				text = append(text, []rune(p.Text)...)
			}
		}
		if len(text) > 200 {
			text = append(text[:199], '…')
		}
		s.Message = string(text)
	}
	return s
}

// timeline describes the run span by span; maxParallel is how many
// calls the served agent runs at once. rec.mu is held.
func (rec *runRec) timeline(now time.Time, maxParallel int) *timeline {
	base := rec.spans[0].start
	t := &timeline{runSummary: rec.summary(now), Now: ms(now, base), Truncated: rec.truncated, Done: rec.done,
		Spans: make([]spanJSON, len(rec.spans))}
	for i, sp := range rec.spans {
		j := spanJSON{ID: sp.id, Parent: sp.parent, Kind: sp.kind, Name: sp.name, Agent: sp.agent, Turn: sp.turn,
			Start: ms(sp.start, base), End: msPtr(sp.end, base), Index: sp.index}
		switch sp.kind {
		case "model":
			j.Attempt, j.Stream, j.FirstToken = sp.attempt, sp.stream, msPtr(sp.firstToken, base)
			if sp.usage != nil {
				u := usageOf(*sp.usage)
				j.Usage = &u
			}
			j.Finish = string(sp.finish)
			if r := sp.response; r != nil && len(r.Candidates) > 0 && r.Candidates[0] != nil && r.Candidates[0].Content != nil {
				for _, p := range r.Candidates[0].Content.Parts {
					if p.FunctionCall != nil {
						j.Calls++
					}
				}
			}
			if sp.response == nil && !sp.end.IsZero() {
				j.Retried, j.Failed, j.BackoffMs = true, sp.failed, float64(sp.backoff.Microseconds())/1000
				if sp.parent == 0 {
					j.Reason = rec.retries[[2]int{sp.turn, sp.attempt}]
				}
			}
		case "tool":
			rec.toolJSON(sp, &j, base)
		case "memory":
			j.Memory = memoryOf(sp.memory)
		}
		t.Spans[i] = j
	}
	markParallel(t.Spans, t.Now, maxParallel)
	return t
}

// toolJSON fills in what a tool span says.
func (rec *runRec) toolJSON(sp *span, j *spanJSON, base time.Time) {
	j.CallID = sp.callID
	if sp.call != nil {
		j.Args = valueJSON(sp.call.Args)
		if len(sp.call.Args) == 0 {
			j.Args = json.RawMessage("{}")
		}
	}
	runStart := sp.start
	if !sp.waitFrom.IsZero() {
		w := &waitJSON{Kind: sp.waitKind, From: ms(sp.waitFrom, base), To: msPtr(sp.waitTo, base), Resumed: msPtr(sp.resumed, base)}
		if d := sp.decision; d != nil {
			w.Approved, w.Expired = d.Approved || (d.Kind == agentserver.WaitBrowser && d.Error == ""), d.Expired
		}
		j.Wait = w
		switch {
		case !sp.resumed.IsZero():
			runStart = sp.resumed
		case sp.waitTo.IsZero() || sp.end.IsZero():
			// Waiting for its own decision, or, decided, for the others'
			// (or never decided, its run over): it did not run.
			runStart = time.Time{}
		default:
			runStart = sp.waitTo // a log read from the middle of a pause
		}
	}
	if r := sp.result; r != nil {
		if r.IsError {
			j.Error = cut(fmtOutput(r.Output), 2000)
			j.Denied = errorsIsDenied(r)
		} else {
			j.Output = valueJSON(r.Output)
		}
	}
	dispatch := runStart
	if r := sp.result; r != nil && !runStart.IsZero() {
		if rs := sp.end.Add(-r.Duration); rs.After(runStart) {
			runStart = rs
		}
	}
	j.RunStart, j.dispatch = msPtr(runStart, base), msPtr(dispatch, base)
}

// markParallel sets each tool span's Parallel: how many calls of the
// same agent run and turn ran at the same time as it (their running
// parts overlap).
func markParallel(spans []spanJSON, now float64, maxParallel int) {
	type interval struct{ from, to float64 }
	calls := map[[2]int]int{} // by parent and turn
	for i := range spans {
		if spans[i].Kind == "tool" {
			calls[[2]int{spans[i].Parent, spans[i].Turn}]++
		}
	}
	// A call of a turn the loop ran all at once ran from when the loop
	// started it: the duration it measured itself ends when the call
	// returned, which the run reports a moment later.
	for i := range spans {
		s := &spans[i]
		if s.Kind == "tool" && s.RunStart != nil && s.Parent == 0 && calls[[2]int{s.Parent, s.Turn}] <= maxParallel && s.dispatch != nil {
			s.RunStart = s.dispatch
		}
	}
	running := func(s *spanJSON) (interval, bool) {
		if s.Kind != "tool" || s.RunStart == nil {
			return interval{}, false
		}
		to := now
		if s.End != nil {
			to = *s.End
		}
		return interval{*s.RunStart, to}, true
	}
	for i := range spans {
		a, ok := running(&spans[i])
		if !ok {
			continue
		}
		for k := range spans {
			if k == i || spans[k].Parent != spans[i].Parent || spans[k].Turn != spans[i].Turn {
				continue
			}
			if b, ok := running(&spans[k]); ok && a.from < b.to && b.from < a.to {
				spans[i].Parallel++
			}
		}
	}
}

// fmtOutput returns a failed call's output, the message the model read.
func fmtOutput(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(valueJSON(v))
}

// cut cuts s to at most n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// errorsIsDenied reports whether a call was denied rather than run.
func errorsIsDenied(r *agent.ToolResult) bool { return errors.Is(r.Err, agent.ErrDenied) }
