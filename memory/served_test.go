package memory_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/memory/internal/servedtest"
	"github.com/toolnexus/toolnexus-go/session"
)

// A served agent remembers across a user's threads: in memory.
func TestServedRemembers(t *testing.T) {
	svc, err := memory.New(memory.Config{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	servedtest.RememberAcrossThreads(t, session.NewMemory(), svc)
}
