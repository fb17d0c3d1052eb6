package aisdk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/jstest"
)

// The AI SDK's own client code (the Chat useChat runs, its transport's
// chunk schema, readUIMessageStream, validateUIMessages) against the
// handler: a run, an approval round trip and a denial, a browser tool
// round trip, a resume after a reload, a failure, a refused regenerate,
// a call's progress as transient data parts, a stop through the cancel
// route and the next message, each chat's stored messages through
// validateUIMessages and a chat that goes on from them.
func TestOfficialClient(t *testing.T) {
	node := jstest.Node(t)
	e := newEnv(t, servertest.NeedsOslo, servertest.Limits(0, 0)) // the defaults
	e.Model.SetReplyFunc(servertest.Scripted)
	out := node.Run(t, 2*time.Minute, "aisdk.mjs", "CHAT_URL="+e.HTTP.URL+"/api/chat")
	for _, s := range []string{"run", "raw", "approval", "browserTool", "resume", "failure", "regenerate", "progress", "stop", "history"} {
		if !strings.Contains(out, "ok "+s+"\n") {
			t.Errorf("scenario %s did not pass:\n%s", s, out)
		}
	}
	threads, err := e.Srv.Threads(bg, "local", agentserver.ThreadsOptions{})
	if err != nil || len(threads.Threads) != 9 {
		t.Errorf("threads %+v %v, want one per scenario", threads, err)
	}
}
