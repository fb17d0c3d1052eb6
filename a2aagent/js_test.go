package a2aagent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/jstest"
)

// @a2a-js/sdk's client, from Node, against the tests' server in another
// process, in its default mode (A2A 1.0) over JSON-RPC and over
// HTTP+JSON, and in its legacy mode (A2A 0.3 on the wire, every answer
// translated to 1.0 shapes and checked): the card and a streamed run with
// tasks/get, progress, approvals through input-required (a decided and an
// unknown call refused), cancel, resubscribe after the client drops,
// another user's task, push notifications to a webhook of its own on
// loopback, ListTasks (1.0; legacy's client has none), bad
// requests of the binding, and every request at the mode's endpoint.
func TestJSClient(t *testing.T) {
	node := jstest.Node(t)
	srv := startServer(t)
	for _, mode := range []string{"jsonrpc", "rest", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			key := "js" + mode
			out := node.Run(t, 2*time.Minute, "a2a.mjs", "A2A_URL="+srv.URL, "A2A_MODE="+mode, "A2A_KEY="+key)
			for _, s := range []string{"stream", "progress", "approval", "cancel", "resubscribe", "otherUser", "push", "listTasks", "badRequests", "endpoints"} {
				if !strings.Contains(out, "ok "+s+"\n") {
					t.Errorf("scenario %s did not pass:\n%s", s, out)
				}
			}
			if line := srv.next("stopped " + key + "1"); !strings.Contains(line, "context canceled") {
				t.Errorf("the canceled task's tool: %q", line)
			}
		})
	}
}
