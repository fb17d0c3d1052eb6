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

// The AI SDK's own client on a server that keeps files: a tool's chart
// and CSV reach the chat as file parts whose URLs download them, and a
// user's upload (a file part) is kept as a file of the thread, which the
// stored messages link.
func TestOfficialClientFiles(t *testing.T) {
	node := jstest.Node(t)
	e := newEnv(t, servertest.Charts, servertest.Limits(0, 0), servertest.Artifacts(nil))
	e.Model.SetReplyFunc(servertest.Scripted)
	out := node.Run(t, time.Minute, "aisdk.mjs", "CHAT_URL="+e.HTTP.URL+"/api/chat", "SCENARIOS=only:files")
	if !strings.Contains(out, "ok only:files\n") {
		t.Fatalf("the files scenario did not pass:\n%s", out)
	}
	list, err := e.Srv.Artifacts().Store().List(bg, "local", "js-files")
	if err != nil || len(list) != 3 {
		t.Errorf("the thread's files: %+v, %v; want chart.png, data.csv and note.txt", list, err)
	}
}
