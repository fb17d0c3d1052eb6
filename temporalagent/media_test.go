package temporalagent

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// chartTool returns a caption and an image of size bytes.
func chartTool(size int) *toolset.Set {
	return toolset.MustNew(toolset.MustFunc("chart", "Draws a chart", func(ctx context.Context, in struct{}) (toolset.MediaOutput, error) {
		return toolset.MediaOutput{Output: "a bar chart", Media: []toolset.Media{
			{MIMEType: "image/png", Data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, size/4)},
		}}, nil
	}))
}

func chartScript() []*fake.Reply {
	return []*fake.Reply{fake.Calls(fake.Call("chart", map[string]any{})), fake.Text("Here is your chart.")}
}

// TestMediaSameWireAsRun: media a tool hands back reach the model as
// agent.Run sends them (in the function response's parts for a model that
// takes them, described in words for one that does not), and come back in
// the result's turns.
func TestMediaSameWireAsRun(t *testing.T) {
	for _, model := range []string{testModel, "gemini-2.5-flash"} {
		t.Run(model, func(t *testing.T) {
			setModel := func(c *agent.Config) { c.Model = model }
			direct, durable := newServer(t), newServer(t)
			direct.Enqueue(chartScript()...)
			durable.Enqueue(chartScript()...)

			want, err := newAgent(t, direct, chartTool(1000), setModel).Run(context.Background(), user("Chart?"))
			if err != nil {
				t.Fatalf("agent.Run: %v", err)
			}
			env := newEnv(t, Agent{Name: "chart", Agent: newAgent(t, durable, chartTool(1000), setModel)})
			got, err := execute(env, "chart", user("Chart?"))
			if err != nil {
				t.Fatalf("durable run: %v", err)
			}
			sameRequests(t, durable, direct, 2)
			inParts := bytes.Contains(durable.Requests()[1].Body, []byte(`"inlineData"`))
			if wantParts := model == testModel; inParts != wantParts {
				t.Errorf("media in the function response's parts = %v, want %v", inParts, wantParts)
			}
			res, w := got.Turns[0].Results[0], want.Turns[0].Results[0]
			if len(w.Media) != 1 {
				t.Fatalf("agent.Run's result has %d media, want 1", len(w.Media))
			}
			if model == testModel && (len(res.Media) != 1 || !bytes.Equal(res.Media[0].Data, w.Media[0].Data) || res.Media[0].MIMEType != "image/png") {
				t.Errorf("the durable result's media = %d, want Run's 1000-byte image/png", len(res.Media))
			}
		})
	}
}

// TestMediaTooLargeForAPayload: media larger than a durable run carries
// per output are left out, and the model is told so, rather than failing
// the activity's result or the workflow history.
func TestMediaTooLargeForAPayload(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(chartScript()...)
	env := newEnv(t, Agent{Name: "chart", Agent: newAgent(t, srv, chartTool(64<<10)), MaxOutputBytes: 16 << 10})
	got, err := execute(env, "chart", user("Chart?"))
	if err != nil {
		t.Fatalf("durable run: %v", err)
	}
	res := got.Turns[0].Results[0]
	out, _ := res.Output.(string)
	if !res.IsError || len(res.Media) != 0 || !strings.Contains(out, "65536 bytes of media") {
		t.Errorf("the answer = %v %q with %d media, want an error naming the media's size and no media", res.IsError, out, len(res.Media))
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || bytes.Contains(reqs[1].Body, []byte(`"inlineData"`)) {
		t.Errorf("the second request carries media, or was not made")
	}
}

// TestAnswersMadeForTheModelCalled: the content answering a turn's calls
// is made for the model that made the calls, as the workflow recorded it
// with the response, not for the one the worker's agent names when the
// workflow makes the content: a worker whose configuration changed since,
// or a replay on such a worker, makes the content the worker that saw the
// response made. Here the worker's agent moves, while the turn's call
// runs, from a Gemini 3 model, which takes media from tools, to
// gemini-2.5-flash, which does not; the run then continues as new,
// carrying the content.
func TestAnswersMadeForTheModelCalled(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(chartScript()...)
	var h *host
	later := newAgent(t, srv, chartTool(1000), func(c *agent.Config) { c.Model = "gemini-2.5-flash" })
	chart := toolset.MustNew(toolset.MustFunc("chart", "Draws a chart", func(ctx context.Context, in struct{}) (toolset.MediaOutput, error) {
		next, err := newHost([]Agent{{Name: "chart", Agent: later}})
		if err != nil {
			return toolset.MediaOutput{}, err
		}
		h.agents["chart"] = next.agents["chart"] // the workers' configuration changes
		return toolset.MediaOutput{Output: "a bar chart", Media: []toolset.Media{{MIMEType: "image/png", Data: []byte("\x89PNG")}}}, nil
	}))
	h, err := newHost([]Agent{{Name: "chart", Agent: newAgent(t, srv, chart), ContinueAsNewEvery: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet)
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(h.run, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(h.model, activity.RegisterOptions{Name: ModelActivityName})
	env.RegisterActivityWithOptions(h.tool, activity.RegisterOptions{Name: ToolActivityName})
	env.ExecuteWorkflow(WorkflowName, runInput{Agent: "chart", Contents: user("Chart?")})
	in, ok := continued(t, env)
	if !ok {
		t.Fatalf("err = %v, want a continue-as-new after the first turn", env.GetWorkflowError())
	}
	if len(in.Contents) != 3 || len(in.Contents[2].Parts) != 1 || in.Contents[2].Parts[0].FunctionResponse == nil {
		t.Fatalf("carried history = %d contents, want the question, the call and its answer", len(in.Contents))
	}
	if parts := in.Contents[2].Parts[0].FunctionResponse.Parts; len(parts) != 1 || parts[0].InlineData == nil {
		t.Errorf("the answer to %s's call: %d media parts, want the image, as that model takes media (it was made for the worker's new model)",
			testModel, len(parts))
	}
}
