package agui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/jstest"
)

// @ag-ui/client's HttpAgent, which applies its schemas and verifier to
// every event, against the handler: a run, an approval round trip (and a
// denial) through interrupts and resume, a frontend tool round trip, a
// reconnect with connectAgent, a reload by a page that knows nothing
// while a run waits for approval (the messages route, connect, resume),
// a failure, a refused tool, a call's
// progress as an activity message, a stop through the cancel route and
// the next message, each thread's stored messages through the client's
// own event schema and an agent that goes on from them.
func TestOfficialClient(t *testing.T) {
	node := jstest.Node(t)
	e := newEnv(t, servertest.NeedsOslo, servertest.Limits(0, 0)) // the defaults
	e.Model.SetReplyFunc(servertest.Scripted)
	out := node.Run(t, 2*time.Minute, "agui.mjs", "AGUI_URL="+e.HTTP.URL+"/agui")
	for _, s := range []string{"run", "approval", "frontendTool", "connect", "reload", "failure", "badTool", "progress", "stop", "history"} {
		if !strings.Contains(out, "ok "+s+"\n") {
			t.Errorf("scenario %s did not pass:\n%s", s, out)
		}
	}
}

// @ag-ui/client's HttpAgent on a server that keeps files: a tool's chart
// and CSV come as URL media parts of its result, which download them; a
// user's upload is kept as a file of the thread, which the messages
// route links.
func TestOfficialClientFiles(t *testing.T) {
	node := jstest.Node(t)
	e := newEnv(t, servertest.Charts, servertest.Limits(0, 0), servertest.Artifacts(nil))
	e.Model.SetReplyFunc(servertest.Scripted)
	out := node.Run(t, time.Minute, "agui.mjs", "AGUI_URL="+e.HTTP.URL+"/agui", "SCENARIOS=only:files")
	if !strings.Contains(out, "ok only:files\n") {
		t.Fatalf("the files scenario did not pass:\n%s", out)
	}
	list, err := e.Srv.Artifacts().Store().List(context.Background(), "local", "ag-files")
	if err != nil || len(list) != 3 {
		t.Errorf("the thread's files: %+v, %v; want chart.png, data.csv and note.txt", list, err)
	}
}
