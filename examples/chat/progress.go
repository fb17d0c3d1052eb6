package main

// How the chat shows the progress of running tool calls: in a terminal, a
// live bar per running call, below the lines printed, redrawn as reports
// come (ANSI cursor movement); in piped output, plain lines, one each time
// a call's progress passes another tenth (or, with no total, says
// something new).

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A running call whose progress is shown.
type running struct {
	turn, index int
	name        string
	p           toolset.Progress
	reports     int // reports seen: the spinner of a bar with no total
	shown       int // piped: the tenth, or the report, last printed; -1 for none
	said        string
}

// barWidth is the width of a progress bar; the call's text after it is
// cut to the terminal's width.
const barWidth = 20

// progress shows a call's progress report.
func (p *printer) progress(e *agent.Event) {
	r := p.call(e.Turn, e.Index, e.Call.Name)
	r.p = *e.Progress
	r.reports++
	if p.live {
		p.redraw()
		return
	}
	// Piped: a line when the call passes another tenth of its total, or,
	// without one, when its message changes.
	step, known := r.p.Fraction()
	if known {
		if tenth := int(math.Floor(step * 10)); tenth > r.shown {
			r.shown = tenth
			p.line(p.st.dim(fit("… "+r.name+" ", r.text(), "", p.width)))
		}
		return
	}
	if r.p.Message != r.said {
		r.said = r.p.Message
		p.line(p.st.dim(fit("… "+r.name+" ", r.text(), "", p.width)))
	}
}

// call returns the running call at turn and index, adding it if it is new.
func (p *printer) call(turn, index int, name string) *running {
	for _, r := range p.running {
		if r.turn == turn && r.index == index {
			return r
		}
	}
	r := &running{turn: turn, index: index, name: name, shown: -1}
	p.running = append(p.running, r)
	return r
}

// finished forgets the running call at turn and index, whose result came.
func (p *printer) finished(turn, index int) {
	p.running = slices.DeleteFunc(p.running, func(r *running) bool { return r.turn == turn && r.index == index })
}

// text is a call's progress as words: the percentage and the message.
func (r *running) text() string {
	msg := r.p.Message
	if f, ok := r.p.Fraction(); ok {
		return strings.TrimSpace(fmt.Sprintf("%3.0f%% %s", 100*f, msg))
	}
	return msg
}

// bar is a call's live line: its name, a bar (a moving block when the
// total is unknown) and its text, cut to fit a line width columns wide.
func (r *running) bar(width int) string {
	var b strings.Builder
	if f, ok := r.p.Fraction(); ok {
		full := int(math.Round(f * barWidth))
		b.WriteString(strings.Repeat("█", full))
		b.WriteString(strings.Repeat("░", barWidth-full))
	} else {
		at := r.reports % (barWidth - 2)
		b.WriteString(strings.Repeat("░", at))
		b.WriteString("███")
		b.WriteString(strings.Repeat("░", barWidth-3-at))
	}
	return fit(fmt.Sprintf("  %s [%s] ", shorten(r.name, 24), b.String()), r.text(), "", width)
}

// redraw draws the running calls' bars again, below what was printed.
func (p *printer) redraw() {
	p.clearBars()
	p.endLine()
	for _, r := range p.running {
		fmt.Fprintln(p.out, p.st.tool(r.bar(p.width)))
	}
	p.drawn = len(p.running)
}

// clearBars erases the bars drawn, leaving the cursor where they began.
// It erases the spinner too: every output starts here.
func (p *printer) clearBars() {
	p.stopSpinner()
	if p.drawn > 0 {
		fmt.Fprintf(p.out, "\x1b[%dA\r\x1b[J", p.drawn) // up to the first bar's line, and erase down
		p.drawn = 0
	}
}
