package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"go.temporal.io/api/enums/v1"
)

// TestApprovalFromAnotherProcess: a run waits for approval of its two pay
// calls, with no worker busy, while its other call runs; a client in
// another process approves one and denies the other (and sees its
// decisions about an unknown id and an already-decided call rejected);
// the run then completes. The rejected decisions left no trace in the
// workflow history.
func TestApprovalFromAnotherProcess(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.start("approve", "p1", "pay p1")
	e.waitFor(hangGuard, "the pay calls to wait for approval", func() bool {
		p, err := run.Progress(context.Background())
		return err == nil && len(p.Pending) == 2
	})
	p, err := run.Progress(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Pending[0].ID != "0.0" || p.Pending[0].Call.Name != "pay" || p.Pending[1].Call.Args["amount"] != 500.0 {
		t.Errorf("pending = %+v", p.Pending)
	}
	if n := count(e.records(), "paid_5"); n != 0 {
		t.Fatalf("pay ran %d times before approval", n)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = e.environ("approver", envRun+"="+run.ID())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("approver process: %v\n%s", err, out)
	}

	res, err := result(t, run, hangGuard)
	if err != nil {
		t.Fatal(err)
	}
	answers := res.History[2].Parts
	if answers[0].FunctionResponse.Response["result"] != "paid" || answers[1].FunctionResponse.Response["error"] != "too much" ||
		answers[2].FunctionResponse.Response["result"] != "sunny in Oslo" {
		t.Errorf("answers = %v, %v, %v", answers[0].FunctionResponse.Response, answers[1].FunctionResponse.Response, answers[2].FunctionResponse.Response)
	}
	recs := e.records()
	if count(recs, "paid_5") != 1 || count(recs, "paid_500") != 0 {
		t.Errorf("records = %v, want 5 paid once and 500 never", recs)
	}
	accepted := 0
	iter := e.ts.GetDefaultClient().GetWorkflowHistory(context.Background(), run.ID(), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
			accepted++
		}
		// Neither the worker's credentials nor the HTTP headers genai
		// records on a response enter the history.
		if text := ev.String(); strings.Contains(text, fake.APIKey) || strings.Contains(text, "sdkHttpResponse") {
			t.Errorf("event %d holds a credential or HTTP headers: %s", ev.GetEventId(), text)
		}
	}
	if accepted != 2 {
		t.Errorf("%d updates in the history, want 2: the rejected ones leave no trace", accepted)
	}
}
