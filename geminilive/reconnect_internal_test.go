package geminilive

import (
	"testing"
	"time"
)

// The waits of a row of reconnections: none for the first, then
// ReconnectDelay doubled each time up to MaxReconnectDelay, each moved by
// at most half of itself; the row ends at MaxReconnects, and starts again
// after a model turn or a connection that lasted StableConnection.
func TestReconnectsPolicy(t *testing.T) {
	const d = 100 * time.Millisecond
	now := time.Now()
	r := newReconnects(&Config{MaxReconnects: 12, ReconnectDelay: d}, now)
	nominal := time.Duration(0)
	var waits []time.Duration
	for i := range 12 {
		w, ok := r.next()
		if !ok {
			t.Fatalf("reconnection %d refused", i+1)
		}
		waits = append(waits, w)
		switch {
		case i == 0 && w != 0:
			t.Errorf("the first reconnection waits %v", w)
		case i > 0 && (w < nominal/2 || w > nominal*3/2+1):
			t.Errorf("reconnection %d waits %v, want %v ± 50%%", i+1, w, nominal)
		}
		if i == 0 {
			nominal = d
		} else {
			nominal = min(2*nominal, MaxReconnectDelay)
		}
	}
	if _, ok := r.next(); ok {
		t.Error("a 13th reconnection in a row")
	}
	if waits[11] > MaxReconnectDelay*3/2+1 {
		t.Errorf("waits %v: not capped", waits)
	}
	r.progress()
	if w, ok := r.next(); !ok || w != 0 {
		t.Errorf("after a model turn: %v %v, want a reconnection at once", w, ok)
	}
	r.connected(now)
	r.lost(now.Add(StableConnection - time.Second))
	if w, ok := r.next(); !ok || w == 0 {
		t.Errorf("a short connection: %v %v, want the row to go on", w, ok)
	}
	r.connected(now)
	r.lost(now.Add(StableConnection))
	if w, ok := r.next(); !ok || w != 0 {
		t.Errorf("after a connection that lasted: %v %v, want a new row", w, ok)
	}

	if _, ok := newReconnects(&Config{MaxReconnects: -1}, now).next(); ok {
		t.Error("MaxReconnects < 0 reconnects")
	}
	zero := newReconnects(&Config{}, now)
	for i := range DefaultMaxReconnects {
		if _, ok := zero.next(); !ok {
			t.Fatalf("the zero Config refuses reconnection %d", i+1)
		}
	}
	if _, ok := zero.next(); ok {
		t.Errorf("the zero Config allows more than %d", DefaultMaxReconnects)
	}
}
