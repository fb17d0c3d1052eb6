package main

import (
	"context"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/sdk/client"
	"google.golang.org/genai"
	"google.golang.org/grpc"
)

// A cursor that follows a run waiting for a decision asks Temporal less
// and less often, down to once per MaxWaitingPollInterval, rather than
// every PollInterval for as long as the run waits; and once the decision
// comes, it reads the rest of the run.
func TestWaitingRunPolledLessOften(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "di"})), fake.Text("Sent to Di."))
	in := &agentserver.Input{Thread: "/" + id("backoff"), Conversation: id("backoff"), Message: genai.NewContentFromText("Email Di", genai.RoleUser)}
	info, cur, err := f.a.runner.Start(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	pause := readUntil(t, cur, agentserver.KindPause)
	cur.Close()

	rc, queries := f.countingClient(t, "/QueryWorkflow")
	const poll = 10 * time.Millisecond
	follower, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: rc, TaskQueue: f.queue, Agent: "mail", Store: f.store, PollInterval: poll})
	if err != nil {
		t.Fatal(err)
	}
	fc, err := follower.Attach(ctx, info.ID, int64(len(pause)))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	// Three seconds of waiting: every 10 ms would be about 300 queries;
	// doubling from 10 ms to 1 s is about 10 (fewer on a slow machine).
	const wait = 3 * time.Second
	if _, ok, err := fc.Next(ctx, wait); ok || err != nil {
		t.Fatalf("Next on a waiting run: %v, %v", ok, err)
	}
	n := queries.n.Load()
	t.Logf("%d queries in %v of waiting (PollInterval %v, MaxWaitingPollInterval %v)", n, wait, poll, temporalagent.MaxWaitingPollInterval)
	if limit := int64(wait/temporalagent.MaxWaitingPollInterval) + 15; n > limit {
		t.Errorf("%d queries of a waiting run in %v; want at most %d", n, wait, limit)
	}

	last := pause[len(pause)-1]
	dc, err := f.b.runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: last.Pending[0].Call.ID, Approved: true}})
	if err != nil {
		t.Fatal(err)
	}
	dc.Close()
	rest := readUntil(t, fc, agentserver.KindDone)
	if got := rest[len(rest)-1]; got.Done == nil || got.Done.State != agentserver.StateDone {
		t.Errorf("the follower's last record: %+v", got)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
}

// countingClient returns a Temporal client of the fleet's server that
// counts its requests of method (a suffix of the gRPC method's name),
// closed when the test ends.
func (f *fleet) countingClient(t *testing.T, method string) (client.Client, *counting) {
	t.Helper()
	n := &counting{method: method}
	c, err := client.Dial(client.Options{HostPort: f.ts.GetFrontendHostPort(), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger,
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(n.intercept)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, n
}
