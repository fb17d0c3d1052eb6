package a2aagent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/jstest"
)

// @a2a-js/sdk's client in its legacy mode (A2A 0.3 on the wire, every
// answer translated to 1.0 shapes and checked), from Node, against the
// tests' server in another process: the card and a streamed run with
// tasks/get, approvals through input-required (a decided and an unknown
// call refused), cancel, resubscribe after the client drops, another
// user's task.
func TestJSClient(t *testing.T) {
	node := jstest.Node(t)
	srv := startServer(t)
	out := node.Run(t, 2*time.Minute, "a2a.mjs", "A2A_URL="+srv.URL)
	for _, s := range []string{"stream", "approval", "cancel", "resubscribe", "otherUser"} {
		if !strings.Contains(out, "ok "+s+"\n") {
			t.Errorf("scenario %s did not pass:\n%s", s, out)
		}
	}
	if line := srv.next("stopped js1"); !strings.Contains(line, "context canceled") {
		t.Errorf("the canceled task's tool: %q", line)
	}
}
