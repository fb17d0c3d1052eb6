package agentserver_test

import (
	"context"
	"testing"
)

// Done is closed once Close has ended the server's runs, not before.
func TestDone(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	select {
	case <-h.srv.Done():
		t.Fatal("Done is closed before Close")
	default:
	}
	if err := h.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-h.srv.Done() // a hang here is the failure
}
