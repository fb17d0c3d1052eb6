// Package demoeval evaluates the examples' demo agent (the chat's tools:
// get_weather, current_time, calculate) with an ADK eval set,
// demo.evalset.json, and its criteria, test_config.json, under go test:
//
//	go test ./examples/eval            # offline: the fake plays Gemini and the judge
//	go test ./examples/eval -v         # the same, with the report's table
//
// TestDemo runs the set on the offline model, judge included. TestRecorded
// replays a recording of the set's traffic (testdata/geminitest): the way
// a set recorded once against Gemini runs in CI with no key. The package
// holds the agent ([NewAgent]) and the offline model's side ([Model]); the
// tests are the example.
package demoeval

import (
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"google.golang.org/genai"
)

// Instructions is the demo agent's system instruction.
const Instructions = "You are a helpful assistant. Use the tools when they help: get_weather for the weather " +
	"(it is made-up demo data, say so), current_time for the time in a place, calculate for any arithmetic. " +
	"Answer in one or two short sentences."

// NewAgent returns the demo agent on models: the demo tools, current_time
// reading clock, so that its answers do not change from one run to the
// next.
func NewAgent(models agent.Models, model string, clock func() time.Time) (*agent.Agent, error) {
	return agent.New(agent.Config{
		Models:         models,
		Model:          model,
		Name:           "demo_agent",
		Tools:          demotools.New(clock),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(Instructions, genai.RoleUser)},
	})
}

// Clock is the time the eval runs at: 3 January 2026, 09:30 UTC.
func Clock() time.Time { return time.Date(2026, 1, 3, 9, 30, 0, 0, time.UTC) }
