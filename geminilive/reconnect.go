package geminilive

import (
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
	"google.golang.org/genai"
)

// ErrTooManyReconnects is the cause of the end of a session that lost its
// connection Config.MaxReconnects times in a row without a model turn in
// between: the session's error wraps it and the last connection's error.
var ErrTooManyReconnects = errors.New("geminilive: too many reconnections without a model turn")

// The reconnection policy's constants.
const (
	// DefaultMaxReconnects is Config.MaxReconnects's zero value.
	DefaultMaxReconnects = 3
	// DefaultReconnectDelay is Config.ReconnectDelay's zero value.
	DefaultReconnectDelay = 500 * time.Millisecond
	// MaxReconnectDelay caps the growth of the wait between two
	// reconnections (which jitter then moves by up to half of it).
	MaxReconnectDelay = 20 * time.Second
	// StableConnection is how long a connection must have lasted for its
	// end to start a new count of reconnections, even with no model turn
	// on it: the service ends each connection after about 10 minutes, with
	// a goAway, also in a session where the user says nothing.
	StableConnection = time.Minute
	// DefaultSetupTimeout is Config.SetupTimeout's zero value.
	DefaultSetupTimeout = 30 * time.Second
)

// reconnects counts the reconnections of a session since its last model
// turn, and paces them. The session's reader alone uses it.
type reconnects struct {
	max     int // reconnections allowed in a row
	n       int // reconnections in the current row
	opened  time.Time
	backoff *backoff.ExponentialBackOff
}

func newReconnects(cfg *Config, now time.Time) *reconnects {
	r := &reconnects{max: cfg.MaxReconnects, opened: now}
	switch {
	case r.max == 0:
		r.max = DefaultMaxReconnects
	case r.max < 0:
		r.max = 0
	}
	delay := cfg.ReconnectDelay
	if delay <= 0 {
		delay = DefaultReconnectDelay
	}
	r.backoff = backoff.NewExponentialBackOff(backoff.WithInitialInterval(delay), backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5), backoff.WithMaxInterval(max(delay, MaxReconnectDelay)), backoff.WithMaxElapsedTime(0))
	return r
}

// progress records a model turn: the row ends.
func (r *reconnects) progress() { r.n = 0 }

// connected records a connection opened at now.
func (r *reconnects) connected(now time.Time) { r.opened = now }

// lost records that the connection ended at now: one that lasted
// StableConnection ends the row.
func (r *reconnects) lost(now time.Time) {
	if now.Sub(r.opened) >= StableConnection {
		r.n = 0
	}
}

// next returns how long to wait before the next reconnection: none for
// the first of a row, then growing exponentially, with jitter; false
// once the row has had max reconnections.
func (r *reconnects) next() (time.Duration, bool) {
	if r.n >= r.max {
		return 0, false
	}
	r.n++
	if r.n == 1 {
		r.backoff.Reset()
		return 0, true
	}
	return r.backoff.NextBackOff(), true
}

// isProgress reports whether msg is the model's turn at work: content,
// a transcription, a tool call or its cancellation. A setupComplete, a
// resumption handle, usage or a goAway is not.
func isProgress(msg *genai.LiveServerMessage) bool {
	return msg.ServerContent != nil || msg.ToolCall != nil || msg.ToolCallCancellation != nil
}
