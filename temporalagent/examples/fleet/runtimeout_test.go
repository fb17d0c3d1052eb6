package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The fleet command's -run-timeout and -approval-timeout reach the Runner
// and the workers it makes: a run bounded to 2 s ends failed ("timeout")
// while it waits; a call whose approval waits past -approval-timeout is
// denied and the run goes on to its answer.
func TestRunTimeoutFlags(t *testing.T) {
	ts := shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t) // for its agent and store
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name                 string
		run, approval        time.Duration
		code                 string // the run's failure, "" when it succeeds
		expired              bool
		replies              []*fake.Reply
		wantText, wantResult string
	}{
		{name: "run timeout", run: 2 * time.Second, code: "timeout",
			replies: []*fake.Reply{fake.Calls(fake.Call("send_email", map[string]any{"to": "max"}))}},
		{name: "approval timeout", run: time.Hour, approval: time.Second, expired: true,
			replies:  []*fake.Reply{fake.Calls(fake.Call("send_email", map[string]any{"to": "ned"})), fake.Text("Not sent.")},
			wantText: "Not sent.", wantResult: "was not run"},
	} {
		opts := options{temporal: ts.GetFrontendHostPort(), namespace: ts.GetDefaultNamespace(),
			queue: fmt.Sprintf("fleet-flags-%d", queues.Add(1)), runTimeout: tc.run, approvalTimeout: tc.approval}
		runner, stop, err := temporalRunner(opts, logger)(ctx, f.agent, f.store)
		if err != nil {
			t.Fatal(err)
		}
		model.Enqueue(tc.replies...)
		thread := "/" + id("flags-"+strings.ReplaceAll(tc.name, " ", "-"))
		_, cur, err := runner.Start(ctx, &agentserver.Input{Thread: thread, Conversation: thread[1:],
			Message: genai.NewContentFromText("Email them", genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		recs := readUntil(t, cur, agentserver.KindDone)
		cur.Close()
		done := recs[len(recs)-1].Done
		expired := false
		for _, rec := range recs {
			if rec.Kind == agentserver.KindDecision && rec.Decision.Expired {
				expired = true
			}
			if rec.Kind == agentserver.KindToolResult && !strings.Contains(rec.Result.Error, tc.wantResult) {
				t.Errorf("%s: the call's result %+v", tc.name, rec.Result)
			}
		}
		switch {
		case tc.code != "" && (done.Error == nil || done.Error.Code != tc.code):
			t.Errorf("%s: done %+v, want %s", tc.name, done, tc.code)
		case tc.code == "" && (done.State != agentserver.StateDone || done.Text != tc.wantText):
			t.Errorf("%s: done %+v", tc.name, done)
		case expired != tc.expired:
			t.Errorf("%s: a decision expired: %v, want %v (%v)", tc.name, expired, tc.expired, kinds(recs))
		}
		if err := runner.Close(ctx); err != nil {
			t.Error(err)
		}
		stop()
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}

	// A negative -approval-timeout is refused before anything starts.
	err := run(ctx, options{addr: "127.0.0.1:0", temporal: ts.GetFrontendHostPort(), approvalTimeout: -time.Second}, logger)
	if err == nil || !strings.Contains(err.Error(), "-approval-timeout") {
		t.Errorf("run with a negative -approval-timeout: %v", err)
	}
}
