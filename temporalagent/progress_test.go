package temporalagent

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
)

// A tool's progress rides on its activity's heartbeat (the call and the
// latest report, which Run.Progress reads), and reaches the agent's
// Observer as EventToolProgress events, the last report before the
// result.
func TestToolProgressHeartbeats(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Calls(fake.Call("build", nil)), fake.Text("built"))
	beat := make(chan ToolProgress, 16)
	seen := make(chan struct{})
	build := toolset.MustDefine(toolset.Tool{Name: "build", Description: "builds in three steps",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			toolset.ReportProgress(ctx, 1, 3, "step 1")
			select { // the first heartbeat is sent at once; the SDK batches later ones
			case <-seen:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			toolset.ReportProgress(ctx, 2, 3, "step 2")
			toolset.ReportProgress(ctx, 3, 3, "step 3")
			return "built", nil
		}})
	var log eventLog
	a := newAgent(t, srv, toolset.MustNew(build), func(c *agent.Config) { c.Observer = &log })
	env := newEnv(t, Agent{Name: "b", Agent: a})
	first := true
	env.SetOnActivityHeartbeatListener(func(info *activity.Info, details converter.EncodedValues) {
		if info.ActivityType.Name != ToolActivityName {
			return
		}
		var tp ToolProgress
		if err := details.Get(&tp); err != nil {
			t.Errorf("heartbeat details: %v", err)
			return
		}
		beat <- tp
		if first && tp.Progress != nil {
			first = false
			close(seen)
		}
	})
	res, err := execute(env, "b", user("build it"))
	if err != nil || res.Text != "built" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	close(beat)
	var got []string
	for tp := range beat {
		got = append(got, fmt.Sprintf("%d.%d %s %+v", tp.Turn, tp.Index, tp.Name, tp.Progress))
	}
	if len(got) == 0 || got[0] != "0.0 build &{Done:1 Total:3 Message:step 1}" {
		t.Errorf("heartbeats = %q; want the call and its first report first", got)
	}
	// The Observer's events: the call's progress between its call and
	// its result, the last report last.
	var progress []string
	for _, e := range log.events {
		switch e.Kind {
		case agent.EventToolProgress:
			if e.Call.Name != "build" || e.Tool == nil {
				t.Errorf("progress event of %+v", e.Call)
			}
			progress = append(progress, e.Progress.Message)
		case agent.EventToolResult:
			progress = append(progress, "result")
		}
	}
	if n := len(progress); n < 3 || progress[0] != "step 1" || progress[n-2] != "step 3" || progress[n-1] != "result" {
		t.Errorf("the Observer saw %q; want step 1, maybe step 2, step 3, then the result", progress)
	}
}
