package agentserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
)

// A stream cut by a Runner that could not read its run says why; any
// other cut says the server is shutting down.
func TestAbortReason(t *testing.T) {
	unavailable := &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "runner_unavailable",
		Message: "the run service did not answer for 30s", Err: errors.New("deadline")}
	closing := &agentserver.Error{Status: http.StatusServiceUnavailable, Code: "closing", Message: "the server is shutting down", Err: agentserver.ErrClosed}
	for _, tc := range []struct {
		err       error
		code, msg string
		cut       bool
	}{
		{unavailable, "runner_unavailable", "the run service did not answer for 30s", false},
		{fmt.Errorf("reading: %w", unavailable), "runner_unavailable", "the run service did not answer for 30s", false},
		{closing, "stream_cut", "the stream was cut: the server is shutting down", true},
		{agentserver.ErrClosed, "stream_cut", "the stream was cut: the server is shutting down", true},
		{context.Canceled, "stream_cut", "the stream was cut: the server is shutting down", true},
	} {
		code, msg, cut := agentserver.AbortReason(tc.err)
		if code != tc.code || msg != tc.msg || cut != tc.cut {
			t.Errorf("AbortReason(%v) = %q, %q, %v; want %q, %q, %v", tc.err, code, msg, cut, tc.code, tc.msg, tc.cut)
		}
	}
}
