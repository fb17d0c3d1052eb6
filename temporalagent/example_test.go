package temporalagent_test

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/otelagent"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// Example shows the whole flow on a Temporal cluster: workers hold the
// agents, and any process starts runs, follows them and decides their
// approvals.
func Example() {
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: "localhost:7233"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	gemini, err := genai.NewClient(ctx, nil) // GEMINI_API_KEY, on the worker only
	if err != nil {
		panic(err)
	}
	weather := toolset.MustFunc("get_weather", "The weather in a city",
		func(ctx context.Context, in city) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: gemini.Models, Model: "gemini-3.5-flash", Tools: toolset.MustNew(weather)})
	if err != nil {
		panic(err)
	}

	// A worker: it holds the agent under a name.
	w := worker.New(c, "agents", worker.Options{})
	if err := temporalagent.Register(w, temporalagent.Agent{
		Name:  "weather",
		Agent: a,
		Tools: map[string]temporalagent.ToolOptions{"get_weather": {Idempotent: true}},
	}); err != nil {
		panic(err)
	}
	if err := w.Start(); err != nil {
		panic(err)
	}
	defer w.Stop()

	// A client, in this process or any other.
	ac := temporalagent.NewClient(c, "agents")
	run, err := ac.Start(ctx, client.StartWorkflowOptions{ID: "weather-1"}, "weather",
		genai.Text("What is the weather in Paris?"))
	if err != nil {
		panic(err)
	}
	progress, err := run.Progress(ctx)
	if err == nil {
		for _, p := range progress.Pending {
			_ = run.Approve(ctx, p.ID) // or run.Deny(ctx, p.ID, "why")
		}
	}
	res, err := run.Result(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
}

// ExampleTypedResult makes a durable run give a Go value, as
// agent.RunTyped does: the worker holds the typed agent that agent.Typed
// makes, and the client decodes the answer.
func ExampleTypedResult() {
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: "localhost:7233"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	gemini, err := genai.NewClient(ctx, nil)
	if err != nil {
		panic(err)
	}
	weather := toolset.MustFunc("get_weather", "The weather in a city",
		func(ctx context.Context, in city) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: gemini.Models, Model: "gemini-3.5-flash", Tools: toolset.MustNew(weather)})
	if err != nil {
		panic(err)
	}
	type Forecast struct {
		City  string `json:"city"`
		Sunny bool   `json:"sunny"`
	}
	typed, err := agent.Typed[Forecast](a)
	if err != nil {
		panic(err)
	}
	w := worker.New(c, "agents", worker.Options{})
	if err := temporalagent.Register(w, temporalagent.Agent{Name: "forecast", Agent: typed}); err != nil {
		panic(err)
	}
	if err := w.Start(); err != nil {
		panic(err)
	}
	defer w.Stop()

	run, err := temporalagent.NewClient(c, "agents").Start(ctx, client.StartWorkflowOptions{}, "forecast",
		genai.Text("Is it sunny in Paris?"))
	if err != nil {
		panic(err)
	}
	f, _, err := temporalagent.TypedResult[Forecast](ctx, run)
	if err != nil {
		panic(err) // an *agent.OutputError when no valid answer came
	}
	fmt.Println(f.City, f.Sunny)
}

// city is the weather tool's input.
type city struct {
	City string `json:"city"`
}

// scripted is a Models that calls get_weather, then answers with the
// tool's result: a stand-in for Gemini in tests.
type scripted struct{}

func (scripted) GenerateContent(ctx context.Context, model string, contents []*genai.Content,
	config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	last := contents[len(contents)-1]
	part := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}}
	if fr := last.Parts[0].FunctionResponse; fr != nil {
		part = genai.NewPartFromText(fmt.Sprint("It is ", fr.Response["result"], "."))
	}
	return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
		Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{part}}, FinishReason: genai.FinishReasonStop}}}, nil
}

func (scripted) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content,
	config *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	panic("not used")
}

// ExampleRunResult runs a durable agent in the Temporal SDK's test
// environment, with no server: the way to test an application's agents
// and their tools as workflows.
func ExampleRunResult() {
	weather := toolset.MustFunc("get_weather", "The weather in a city",
		func(ctx context.Context, in city) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: scripted{}, Model: "scripted", Tools: toolset.MustNew(weather)})
	if err != nil {
		panic(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	if err := temporalagent.Register(env, temporalagent.Agent{Name: "weather", Agent: a}); err != nil {
		panic(err)
	}
	env.ExecuteWorkflow(temporalagent.WorkflowName, temporalagent.Input{Agent: "weather", Contents: genai.Text("Weather in Paris?")})
	var out temporalagent.Output
	err = env.GetWorkflowError()
	if err == nil {
		err = env.GetWorkflowResult(&out)
	}
	res, err := temporalagent.RunResult(&out, err)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println(len(res.Turns), "turns;", res.Turns[0].Calls[0].Name, "returned", res.Turns[0].Results[0].Output)
	// Output:
	// It is sunny in Paris.
	// 2 turns; get_weather returned sunny in Paris
}

// Example_tracing traces a durable run with otelagent, in the Temporal
// SDK's test environment: the run's spans are agent.Run's, under the span
// of the context it was started with. On a cluster, the workers' agents
// have the Observer, and the Client carries the caller's span:
// temporalagent.NewClient(c, "agents", temporalagent.WithObserver(obs)).
func Example_tracing() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans),
		sdktrace.WithIDGenerator(otelagent.NewIDGenerator(nil))) // on the workers: see Tracing
	obs := otelagent.New(otelagent.WithTracerProvider(tp))
	weather := toolset.MustFunc("get_weather", "The weather in a city",
		func(ctx context.Context, in city) (string, error) { return "sunny in " + in.City, nil })
	a, err := agent.New(agent.Config{Models: scripted{}, Model: "scripted", Name: "weather", Tools: toolset.MustNew(weather),
		Observer: obs})
	if err != nil {
		panic(err)
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	if err := temporalagent.Register(env, temporalagent.Agent{Name: "weather", Agent: a}); err != nil {
		panic(err)
	}

	ctx, span := tp.Tracer("app").Start(context.Background(), "handle request")
	env.ExecuteWorkflow(temporalagent.WorkflowName, temporalagent.Input{Agent: "weather", Contents: genai.Text("Weather in Paris?"),
		Context: obs.Carry(ctx)}) // what Client.Start does WithObserver
	span.End()
	if err := env.GetWorkflowError(); err != nil {
		panic(err)
	}

	// Each span, indented under its parent, in the order they started.
	ended := spans.Ended()
	slices.SortFunc(ended, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	depth := map[trace.SpanID]int{}
	for _, s := range ended {
		d, ok := depth[s.Parent().SpanID()]
		if !ok {
			d = -1
		}
		depth[s.SpanContext().SpanID()] = d + 1
		fmt.Println(strings.Repeat("  ", d+1) + s.Name())
	}
	// Output:
	// handle request
	//   invoke_agent weather
	//     generate_content scripted
	//     execute_tool get_weather
	//     generate_content scripted
}
