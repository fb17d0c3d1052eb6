package main

// -live: the chat over Gemini's Live API (package geminilive).

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"google.golang.org/genai"
)

// defaultLiveModel is the Live model -live uses with an API key, unless
// -model says otherwise.
const defaultLiveModel = "gemini-3.8-live"

// liveChat is the chat's live session: one for the whole chat, so that
// the model keeps the conversation.
type liveChat struct {
	s      *geminilive.Session
	events chan liveItem // the session's events, read by a goroutine of the chat's
	done   chan struct{} // closed by close: the goroutine stops
	ended  chan struct{} // closed when the goroutine has
	// stale counts the answers stopped (Ctrl-C) whose turn has not ended:
	// their events are dropped.
	stale int
}

type liveItem struct {
	ev  *geminilive.Event
	err error
}

// startLive connects a live session of a, answered in audio (Gemini's
// Live models speak: the chat prints the transcription of what they say,
// and plays nothing).
func startLive(ctx context.Context, client *genai.Client, a *agent.Agent) (*liveChat, error) {
	s, err := geminilive.Connect(ctx, client, a, geminilive.Config{})
	if err != nil {
		return nil, fmt.Errorf("connecting the live session: %w", err)
	}
	l := &liveChat{s: s, events: make(chan liveItem), done: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(l.ended)
		for ev, err := range s.Events() {
			select {
			case l.events <- liveItem{ev, err}:
			case <-l.done:
				return
			}
		}
		close(l.events)
	}()
	return l, nil
}

// close ends the session and waits for the goroutine reading it.
func (l *liveChat) close() {
	close(l.done)
	l.s.Close()
	<-l.ended
}

// askLive sends one message over the live session and prints the answer
// as ask prints a run's: the model's words, each tool call and its result;
// a call that needs approval is asked at the prompt.
func (c *chat) askLive(ctx context.Context, message string) {
	actx, done := c.answering(ctx)
	defer done()
	l := c.live

	p := printer{out: c.out, st: c.st, verbose: c.opts.verbose, live: c.opts.live, width: c.width(), atLineStart: true}
	defer p.stopSpinner()
	if !c.opts.interactive {
		defer fmt.Fprintln(c.out) // a blank line between answers
	}
	err := l.s.SendText(message)
	if err == nil {
		p.startSpinner()
		err = c.liveAnswer(actx, &p)
	}
	p.clearBars()
	p.endLine()
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		l.stale++
		fmt.Fprintln(c.out, c.st.dim("(answer stopped)"))
	default:
		fmt.Fprintln(c.out, c.st.err("error: "+err.Error()))
	}
}

// liveAnswer prints the session's events until the model's turn ends.
func (c *chat) liveAnswer(ctx context.Context, p *printer) error {
	l := c.live
	index := map[string]int{} // each call's position in the answer, for its progress bar
	for {
		if err := ctx.Err(); err != nil { // stopped, though events wait
			return err
		}
		var it liveItem
		var ok bool
		select {
		case it, ok = <-l.events:
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case !ok:
			return geminilive.ErrClosed
		case it.err != nil:
			return it.err
		}
		ev := it.ev
		if l.stale > 0 { // an answer stopped before: dropped, its calls denied
			switch ev.Kind {
			case geminilive.EventApproval:
				_ = l.s.Decide(ev.Call.ID, false)
			case geminilive.EventTurnComplete:
				l.stale--
			}
			continue
		}
		ae := &agent.Event{Call: ev.Call, Tool: ev.Tool, Text: ev.Text, Progress: ev.Progress}
		if ev.Call != nil {
			i, seen := index[ev.Call.ID]
			if !seen {
				i = len(index)
				index[ev.Call.ID] = i
			}
			ae.Index = i
		}
		switch ev.Kind {
		case geminilive.EventText, geminilive.EventOutputTranscript:
			p.stopSpinner()
			ae.Kind = agent.EventText
		case geminilive.EventThought:
			ae.Kind = agent.EventThought
		case geminilive.EventToolCall:
			p.stopSpinner()
			ae.Kind = agent.EventToolCall
		case geminilive.EventToolProgress:
			ae.Kind = agent.EventToolProgress
		case geminilive.EventToolResult:
			ae.Kind, ae.ToolResult, ae.Duration = agent.EventToolResult, ev.Result, ev.Result.Duration
		case geminilive.EventToolCancelled:
			p.finished(0, ae.Index)
			p.line(c.st.dim("(" + ev.Call.Name + " cancelled)"))
			continue
		case geminilive.EventApproval:
			p.event(&agent.Event{Kind: agent.EventApproval})
			if err := l.s.Decide(ev.Call.ID, c.approve(ctx, ev.Call)); err != nil {
				return err
			}
			p.atLineStart = true
			continue
		case geminilive.EventTurnComplete:
			return nil
		default:
			continue
		}
		p.event(ae)
	}
}
