package session_test

import (
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
)

func TestMemoryContract(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Store { return session.NewMemory() })
}

func TestMemoryZeroValue(t *testing.T) {
	sessiontest.Run(t, func(*testing.T) session.Store { return new(session.Memory) })
}
