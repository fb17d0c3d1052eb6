package toolset

import (
	"context"
	"math"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress is how far a tool call has come, as the tool reports it with
// [ReportProgress].
type Progress struct {
	// Done is the work done so far, in the tool's own units (items, bytes,
	// steps…).
	Done float64

	// Total is the whole work, in the same units; 0 when the tool does
	// not know it.
	Total float64

	// Message says, for a person, what the tool is doing; it may be
	// empty. It is at most MaxProgressMessage bytes.
	Message string
}

// Fraction returns Done/Total, between 0 and 1, and whether the total is
// known.
func (p Progress) Fraction() (float64, bool) {
	if p.Total <= 0 {
		return 0, false
	}
	return min(max(p.Done/p.Total, 0), 1), true
}

// MaxProgressMessage is the longest Progress.Message, in bytes: a longer
// message is cut, at a character boundary.
const MaxProgressMessage = 1024

// DefaultProgressInterval is the least time between two progress reports
// of one call that the runtimes of this module hand on (to a Stream
// consumer and an Observer, to an MCP client, to a durable run's
// heartbeat): the reports a tool makes in between are coalesced, the
// latest kept. See [ProgressPacer].
const DefaultProgressInterval = 100 * time.Millisecond

// A ProgressListener receives the progress reports of tool calls, from
// any goroutine of the tools, concurrently: OnProgress must be safe for
// that, and should return quickly, since the tool waits for it.
type ProgressListener interface {
	OnProgress(p Progress)
}

// ProgressFunc adapts a function to a [ProgressListener].
type ProgressFunc func(p Progress)

// OnProgress calls f(p).
func (f ProgressFunc) OnProgress(p Progress) { f(p) }

type progressKey struct{}

// WithProgress returns a copy of ctx under which [ReportProgress] hands
// each report to l: the runtime that runs a tool (the agent loop, an MCP
// server, a durable run's activity) gives the tool such a context. A
// listener replaces any that ctx had; a nil l makes the reports of the
// tools run under the returned context go nowhere.
func WithProgress(ctx context.Context, l ProgressListener) context.Context {
	if l == nil {
		l = noListener{} // a value still, which hides the listeners above
	}
	return context.WithValue(ctx, progressKey{}, l)
}

// noListener stands for a nil listener in a context.
type noListener struct{}

func (noListener) OnProgress(Progress) {}

// listener returns the listener of ctx, nil when there is none.
func listener(ctx context.Context) ProgressListener {
	l, _ := ctx.Value(progressKey{}).(ProgressListener)
	if _, none := l.(noListener); none {
		return nil
	}
	return l
}

// WantsProgress reports whether anyone listens to the progress of the
// tool that ctx belongs to: a tool whose reports cost something to make
// (a message formatted, a count taken) can skip them when nobody does.
func WantsProgress(ctx context.Context) bool { return listener(ctx) != nil }

// ReportProgress reports how far the tool call that ctx belongs to has
// come: done of total units of work (total 0 when unknown), and what it
// is doing, for a person (message, which may be empty). Call it from the
// tool's Run with the context Run received, or one derived from it, from
// any goroutine, as often as it suits the tool: where nobody listens it
// does nothing, and where someone does, the runtime coalesces the reports
// so that a tool that reports a million times floods no one (the latest
// report always arrives, the last one before the result included).
//
// Done and total are in the tool's units: a listener that shows a
// percentage divides them (see [Progress.Fraction]). A report whose done
// is not a finite number is dropped; a total that is not a positive
// finite number counts as unknown. A message over [MaxProgressMessage]
// bytes is cut.
func ReportProgress(ctx context.Context, done, total float64, message string) {
	l := listener(ctx)
	if l == nil || math.IsNaN(done) || math.IsInf(done, 0) {
		return
	}
	if !(total > 0) || math.IsInf(total, 0) { // NaN too
		total = 0
	}
	if len(message) > MaxProgressMessage {
		message = cutMessage(message)
	}
	l.OnProgress(Progress{Done: done, Total: total, Message: message})
}

// cutMessage cuts a message to at most MaxProgressMessage bytes, at a
// character boundary.
func cutMessage(s string) string {
	n := MaxProgressMessage
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// A ProgressPacer is a [ProgressListener] that hands the reports it
// receives on to another listener, To, paced: at most one report per
// Interval, and one at a time. A report that comes while To is busy with
// another, or sooner than Interval after the last one To received, is
// held; a later report replaces it, so that only the latest is held, and
// it is handed on once To is free and Interval has passed (by the
// goroutine that reported, or by a timer). [ProgressPacer.Close] hands on
// the one held, if any, at once: the latest report always arrives.
//
// To receives the reports on the goroutines of the tool that makes them,
// or of the pacer's timer, never two at once. It must not panic.
//
// Set To and Interval before the first report, and do not change them.
// The zero Interval hands each report on as soon as To is free, which
// coalesces reports only while To is busy; a negative one too.
type ProgressPacer struct {
	To       ProgressListener
	Interval time.Duration

	mu      sync.Mutex
	idle    sync.Cond // signalled when a hand-on ends, for Close
	latest  Progress  // the report held, when held is set
	held    bool
	sending bool        // To is busy with a report
	closed  bool        // Close was called: later reports are dropped
	next    time.Time   // when the next report may be handed on
	timer   *time.Timer // hands on the report held once next has come
	armed   bool        // timer is set to fire
}

// OnProgress hands p on to To, or holds it (see [ProgressPacer]).
func (pp *ProgressPacer) OnProgress(p Progress) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.closed {
		return
	}
	pp.latest, pp.held = p, true
	pp.handOnLocked(false)
}

// handOnLocked hands the report held on to To, unless To is busy (the
// goroutine it is busy on will hand it on next) or it is too early (the
// timer will, when now is set; the caller, Close, does otherwise). The
// lock is released while To runs.
func (pp *ProgressPacer) handOnLocked(now bool) {
	for pp.held && !pp.sending {
		if !now && !pp.closed && pp.Interval > 0 { // once closed, Close waits: no timer
			if pp.armed {
				return // the timer will
			}
			if wait := time.Until(pp.next); wait > 0 {
				pp.armed = true
				if pp.timer == nil {
					pp.timer = time.AfterFunc(wait, pp.fire)
				} else {
					pp.timer.Reset(wait)
				}
				return
			}
		}
		p := pp.latest
		pp.held, pp.sending = false, true
		pp.mu.Unlock()
		pp.handOn(p)
		pp.mu.Lock()
		pp.sending = false
		if pp.Interval > 0 {
			pp.next = time.Now().Add(pp.Interval)
		}
		if pp.idle.L != nil {
			pp.idle.Broadcast()
		}
	}
}

// handOn hands p to To. A panic in To leaves the pacer as it found it,
// locked, for the panic to go on up through the caller's unlocking.
func (pp *ProgressPacer) handOn(p Progress) {
	ok := false
	defer func() {
		if !ok {
			pp.mu.Lock()
			pp.sending = false
			if pp.idle.L != nil {
				pp.idle.Broadcast()
			}
		}
	}()
	pp.To.OnProgress(p)
	ok = true
}

// fire is the timer's: the report held may be handed on.
func (pp *ProgressPacer) fire() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.armed = false
	pp.handOnLocked(false)
}

// Close ends the pacer: the report held, if any, is handed on to To
// before Close returns, as soon as a report To is busy with is done, and
// reports that come later are dropped. After Close returns, To receives
// nothing more. Close may be called more than once.
func (pp *ProgressPacer) Close() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.closed = true
	if pp.timer != nil && pp.armed {
		pp.timer.Stop()
		pp.armed = false
	}
	for pp.sending {
		if pp.idle.L == nil {
			pp.idle.L = &pp.mu
		}
		pp.idle.Wait()
	}
	pp.handOnLocked(true)
}
