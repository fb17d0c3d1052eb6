package jstest

import (
	"strings"
	"testing"
	"time"
)

// The installed Node is 22 or newer and loads both clients.
func TestInstalled(t *testing.T) {
	r := Node(t)
	out := r.Run(t, time.Minute, "selfcheck.mjs")
	if !strings.HasPrefix(out, "ok node v22.") {
		t.Errorf("selfcheck printed %q", out)
	}
}
