package eval_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A set built in Go, run against an agent on the fake, scored with a
// trajectory and a ROUGE-1 metric. In a test, eval.Test runs the same set
// as subtests.
func Example() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(req *geminitest.Request) *geminitest.Reply {
		if rs := req.LastFunctionResponses("get_weather"); len(rs) > 0 {
			return geminitest.Text(fmt.Sprintf("It is %v.", rs[0].Response["result"]))
		}
		return geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"}))
	})
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "sunny in " + in.City, nil
		})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: toolset.MustNew(weather)})
	if err != nil {
		fmt.Println(err)
		return
	}
	set := &eval.Set{ID: "weather", Cases: []eval.Case{{
		ID: "paris",
		Turns: []eval.Turn{eval.UserTurn("What's the weather in Paris?").
			WithCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}).
			WithResponse("It is sunny in Paris today.")},
	}}}
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: a, Metrics: []eval.Metric{
		eval.ToolTrajectory{Threshold: 1},
		eval.ResponseMatch{Threshold: 0.8},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rep.Cases[0].Metrics {
		fmt.Printf("%s: %.2f (threshold %.1f) %v\n", m.Metric, m.Value, m.Threshold, m.Status)
	}
	run := rep.Cases[0].Runs[0]
	fmt.Println("answer:", run.Turns[0].ResponseText())
	fmt.Println("calls:", len(run.Turns[0].Calls()), "model calls:", run.ModelCalls)
	// Output:
	// tool_trajectory_avg_score: 1.00 (threshold 1.0) PASSED
	// response_match_score: 0.91 (threshold 0.8) PASSED
	// answer: It is sunny in Paris.
	// calls: 1 model calls: 2
}

// ROUGE-1 as ADK's response_match_score computes it: stemmed unigrams, so
// that "runs" matches "running".
func ExampleRouge1() {
	s := eval.Rouge1("The agent runs the tools.", "The agent is running its tools")
	fmt.Printf("precision %.2f, recall %.2f, F %.2f\n", s.Precision, s.Recall, s.F)
	// Output:
	// precision 0.80, recall 0.67, F 0.73
}

// An eval set in ADK's format, with its case's expected tool use.
func ExampleParse() {
	set, err := eval.Parse([]byte(`{
	  "eval_set_id": "weather",
	  "eval_cases": [{
	    "eval_id": "paris",
	    "conversation": [{
	      "user_content": {"parts": [{"text": "Weather in Paris?"}], "role": "user"},
	      "final_response": {"parts": [{"text": "Sunny."}], "role": "model"},
	      "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]}
	    }]
	  }]
	}`), "weather.evalset.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	turn := set.Cases[0].Turns[0]
	fmt.Println(set.ID, set.Cases[0].ID, turn.UserText(), turn.Calls()[0].Name, turn.Calls()[0].Args["city"])

	_, err = eval.Parse([]byte(`{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"final_response": {}}]}]}`), "broken.evalset.json")
	fmt.Println(err)
	// Output:
	// weather paris Weather in Paris? get_weather Paris
	// eval: broken.evalset.json: eval_cases[0].conversation[0].user_content: required
}

// A metric written in Go: the share of turns whose answer is at most 40
// bytes.
func ExampleTurnFunc() {
	short := eval.TurnFunc("short_answer", 1, func(_ context.Context, actual, _ *eval.Turn) (float64, string, error) {
		if n := len(actual.ResponseText()); n > 40 {
			return 0, fmt.Sprintf("the answer is %d bytes long", n), nil
		}
		return 1, "", nil
	})
	in := &eval.Input{Actual: []eval.Turn{
		eval.UserTurn("Weather?").WithResponse("Sunny."),
		eval.UserTurn("Details?").WithResponse(strings.Repeat("Very detailed. ", 5)),
	}}
	s, _ := short.Evaluate(context.Background(), in)
	fmt.Println(s.Value, s.Turns[1].Reason)
	// Output:
	// 0.5 the answer is 75 bytes long
}
