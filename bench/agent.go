package main

import (
	"context"
	"errors"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The agent contestants are this module's loop: agent.Run, and Agent.Stream
// consumed to its end. Both get the scenario's tools as toolset tools (typed
// Func tools whose arguments are validated and decoded on every call) and an
// agent built once, in setup.
func init() {
	register(contestant{key: "agent-run", name: "toolnexus agent.Run", setup: setupAgent(false, nil)})
	register(contestant{key: "agent-stream", name: "toolnexus Agent.Stream", setup: setupAgent(true, nil)})
}

// observerFor returns the Observer an agent contestant records into, given
// its genai client, and what releases it.
type observerFor func(client *genai.Client) (agent.Observer, func())

// setupAgent sets up an agent contestant: Run, or Stream consumed to its
// end, with the Observer observe returns (none when observe is nil).
func setupAgent(stream bool, observe observerFor) func(url string, sc scenario) (func(context.Context) error, func(), error) {
	return func(url string, sc scenario) (func(context.Context) error, func(), error) {
		client, err := newClient(url, nil)
		if err != nil {
			return nil, nil, err
		}
		set, err := toolset.New(toolsetTools(sc)...)
		if err != nil {
			return nil, nil, err
		}
		var (
			obs     agent.Observer
			cleanup func()
		)
		if observe != nil {
			obs, cleanup = observe(client)
		}
		a, err := newBenchAgent(client, set, sc, obs)
		if err != nil {
			if cleanup != nil {
				cleanup()
			}
			return nil, nil, err
		}
		contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}
		if !stream {
			return func(ctx context.Context) error {
				res, err := a.Run(ctx, contents)
				if err != nil {
					return err
				}
				return checkAnswer(res.Text)
			}, cleanup, nil
		}
		return func(ctx context.Context) error {
			for ev, err := range a.Stream(ctx, contents) {
				if err != nil {
					return err
				}
				if ev.Kind == agent.EventDone {
					return checkAnswer(ev.Result.Text)
				}
			}
			return errors.New("agent-stream: the stream ended without EventDone")
		}, cleanup, nil
	}
}

// newBenchAgent returns the agent of the agent contestants: tools on
// client's models, with the scenario's turn limit.
func newBenchAgent(client *genai.Client, tools *toolset.Set, sc scenario, obs agent.Observer) (*agent.Agent, error) {
	return agent.New(agent.Config{
		Models:   client.Models,
		Model:    benchModel,
		Tools:    tools,
		MaxTurns: sc.requests(),
		Observer: obs,
	})
}
