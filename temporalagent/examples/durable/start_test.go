package main

import (
	"context"
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus-go/temporalagent"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/genai"
)

// TestStartWithTheIDOfARunningRun: starting a run with the ID of a run in
// progress fails with ErrRunExists, rather than returning the run in
// progress as if it were the new one and dropping the new input; with
// WorkflowIDConflictPolicy USE_EXISTING, the caller asks for the run in
// progress, and gets it.
func TestStartWithTheIDOfARunningRun(t *testing.T) {
	e := newEnv(t) // no worker: the run stays in progress
	id := e.queue + "-twice"
	first := e.start("weather", "twice", "weather w1 Paris")
	t.Cleanup(func() { _ = e.ts.GetDefaultClient().TerminateWorkflow(context.Background(), id, "", "test over") })
	second := []*genai.Content{genai.NewContentFromText("weather w2 Tokyo", genai.RoleUser)}

	run, err := e.c.Start(context.Background(), client.StartWorkflowOptions{ID: id}, "weather", second)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.Is(err, temporalagent.ErrRunExists) || !errors.As(err, &started) {
		t.Fatalf("Start with the ID of a run in progress = %v, %v; want ErrRunExists and Temporal's WorkflowExecutionAlreadyStarted", run, err)
	}

	run, err = e.c.Start(context.Background(), client.StartWorkflowOptions{ID: id,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, "weather", second)
	if err != nil || run.ID() != first.ID() {
		t.Fatalf("Start asking for the run in progress = %v, %v; want the run %s", run, err, first.ID())
	}
	d, err := e.ts.GetDefaultClient().DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := d.GetWorkflowExecutionInfo().GetHistoryLength(); n > 3 {
		t.Errorf("the run's history has %d events: the second Start did more than find it", n)
	}
}
