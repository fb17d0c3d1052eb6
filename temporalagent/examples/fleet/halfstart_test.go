package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/temporalagent/examples/internal/devtemporal"
	"go.temporal.io/sdk/client"
	"google.golang.org/genai"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// lossyClient returns a Temporal client whose connection loses the
// answers to StartWorkflowExecution while lose is set (Temporal gets the
// request and starts the workflow; the client hears Unavailable), and
// loses the requests too while drop is set (nothing reaches Temporal).
func lossyClient(t *testing.T, f *fleet, lose, drop *atomic.Bool) client.Client {
	t.Helper()
	proxy := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if !strings.HasSuffix(method, "/StartWorkflowExecution") {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		if drop.Load() {
			return status.Error(codes.Unavailable, "the request was lost")
		}
		err := invoker(ctx, method, req, reply, cc, opts...)
		if lose.Load() {
			return status.Error(codes.Unavailable, "the reply was lost")
		}
		return err
	}
	c, err := client.Dial(client.Options{HostPort: f.ts.GetFrontendHostPort(), Namespace: f.ts.GetDefaultNamespace(), Logger: devtemporal.QuietLogger,
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(proxy)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A run whose start reached Temporal but whose answer was lost is not
// half started: Start asks Temporal whether the thread's workflow is the
// run's before it drops the run's journal, and it is, so Start succeeds;
// the run finishes and is saved once. A start that did not reach
// Temporal fails with 503 and leaves the thread free.
func TestStartReplyLost(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	var lose, drop atomic.Bool
	runner, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: lossyClient(t, f, &lose, &drop), TaskQueue: f.queue,
		Agent: "mail", Store: f.store, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	// The answer is lost: the run goes on.
	lose.Store(true)
	model.Enqueue(fake.Text("Hello Ivy."))
	thread := "/" + id("reply-lost")
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	info, cur, err := runner.Start(sctx, &agentserver.Input{Thread: thread, Conversation: id("reply-lost"),
		Message: genai.NewContentFromText("Greet Ivy", genai.RoleUser)})
	cancel()
	if err != nil {
		t.Fatalf("Start whose answer was lost: %v", err)
	}
	lose.Store(false)
	recs := readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	if d := recs[len(recs)-1].Done; d.State != agentserver.StateDone || d.Text != "Hello Ivy." {
		t.Fatalf("done %+v (%v)", d, kinds(recs))
	}
	if got, err := f.b.runner.Lookup(ctx, info.ID); err != nil || got.State != agentserver.StateDone {
		t.Errorf("Lookup on B: %+v, %v", got, err)
	}
	saved, err := f.store.Load(ctx, thread)
	if err != nil || len(saved) != 2 {
		t.Fatalf("saved %d contents, %v", len(saved), err)
	}

	// The request is lost: nothing runs, the thread is free.
	drop.Store(true)
	sctx, cancel = context.WithTimeout(ctx, 3*time.Second)
	_, cur, err = runner.Start(sctx, &agentserver.Input{Thread: thread, Conversation: id("reply-lost"),
		Message: genai.NewContentFromText("Greet Ivy again", genai.RoleUser)})
	cancel()
	if !isError(err, http.StatusServiceUnavailable, "runner_unavailable") || cur != nil {
		t.Fatalf("Start whose request was lost: %v", err)
	}
	if _, err := f.store.LoadRun(ctx, thread); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("the thread's journal after the lost start: %v", err)
	}
	drop.Store(false)
	model.Enqueue(fake.Text("Hello again."))
	_, cur, err = runner.Start(ctx, &agentserver.Input{Thread: thread, Conversation: id("reply-lost"),
		Message: genai.NewContentFromText("Greet Ivy again", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	if saved, err := f.store.Load(ctx, thread); err != nil || len(saved) != 4 {
		t.Fatalf("saved %d contents, %v", len(saved), err)
	}
}
