package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"google.golang.org/genai"
)

// A Simulator plays the user of a scenario case (ADK's user simulator):
// given the scenario and the conversation so far, it writes the user's
// next message, or says the conversation is over. It must be safe for
// concurrent use: runs of different cases call it at once.
type Simulator interface {
	Next(ctx context.Context, sc *Scenario, conversation []Turn) (SimulatedTurn, error)
}

// SimulatedTurn is a simulated user's next move.
type SimulatedTurn struct {
	// Message is the user's next message; nil when Done.
	Message *genai.Content
	// Done says the user has nothing more to say.
	Done bool
	// Usage counts the tokens spent writing it.
	Usage agent.Usage
}

// DefaultSimulatorTurns is UserSimulator.MaxTurns's default: ADK's
// max_allowed_invocations.
const DefaultSimulatorTurns = 20

// UserSimulator is a [Simulator] on a Gemini model, as ADK's
// LlmBackedUserSimulator: the first message is the scenario's starting
// prompt, and each next one is the model's, told the plan, the persona and
// the conversation so far (text only: tool calls and thoughts left out);
// it ends the conversation when the plan is done, or after MaxTurns
// messages. Only Models is required.
type UserSimulator struct {
	// Models makes the simulator's model calls: client.Models.
	Models agent.Models
	// Model is the model; zero means DefaultJudgeModel, ADK's default.
	Model string
	// Backend is the backend Models talks to.
	Backend genai.Backend
	// MaxTurns bounds the user's messages, the starting prompt counted;
	// zero means DefaultSimulatorTurns.
	MaxTurns int
	// GenerateConfig is sent with every call; the simulator's
	// instructions replace its system instruction.
	GenerateConfig *genai.GenerateContentConfig
	// Retry says how failed calls are retried.
	Retry agent.RetryPolicy
}

// simulatedMessage is the simulator model's typed answer.
type simulatedMessage struct {
	Finished bool   `json:"finished" jsonschema:"true when the plan is complete and the user has nothing more to say"`
	Message  string `json:"message" jsonschema:"the user's next message to the agent; empty when finished"`
}

const simulatorInstructions = `You play the user of an AI agent, to test it. ` +
	`You follow a conversation plan, and write, each time you are asked, the user's next message to the agent, as that user would write it: ` +
	`short, in the user's own words, one step of the plan at a time, reacting to what the agent said. ` +
	`Never play the agent, and never say you are simulating. ` +
	`When every step of the plan is done, or the agent cannot go on, answer finished instead of a message.`

// Next returns the user's next message.
func (s *UserSimulator) Next(ctx context.Context, sc *Scenario, conversation []Turn) (SimulatedTurn, error) {
	if len(conversation) == 0 {
		return SimulatedTurn{Message: genai.NewContentFromText(sc.StartingPrompt, genai.RoleUser)}, nil
	}
	maxTurns := s.MaxTurns
	if maxTurns == 0 {
		maxTurns = DefaultSimulatorTurns
	}
	if len(conversation) >= maxTurns {
		return SimulatedTurn{Done: true}, nil
	}
	if s.Models == nil {
		return SimulatedTurn{}, errors.New("eval: UserSimulator.Models is nil")
	}
	cfg := &genai.GenerateContentConfig{}
	if s.GenerateConfig != nil {
		*cfg = *s.GenerateConfig
	}
	cfg.SystemInstruction = genai.NewContentFromText(simulatorInstructions, genai.RoleUser)
	model := s.Model
	if model == "" {
		model = DefaultJudgeModel
	}
	a, err := agent.New(agent.Config{Models: s.Models, Model: model, Backend: s.Backend, Name: "user_simulator",
		GenerateConfig: cfg, MaxTurns: 1, Retry: s.Retry})
	if err != nil {
		return SimulatedTurn{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<conversation_plan>\n%s\n</conversation_plan>\n\n", sc.Plan)
	if len(sc.Persona) > 0 {
		fmt.Fprintf(&b, "<persona>\n%s\n</persona>\n\n", persona(sc.Persona))
	}
	b.WriteString("<conversation>\n")
	for _, t := range conversation {
		fmt.Fprintf(&b, "user: %s\n\n", t.UserText())
		for _, r := range t.Intermediate {
			for _, p := range r.Parts {
				fmt.Fprintf(&b, "agent: %s\n\n", p.Text)
			}
		}
		if t.Response != nil {
			for _, p := range t.Response.Parts {
				if p != nil && p.Text != "" && !p.Thought {
					fmt.Fprintf(&b, "agent: %s\n\n", p.Text)
				}
			}
		}
	}
	b.WriteString("</conversation>\n\nWrite the user's next message, or say the conversation is finished.")
	v, res, err := agent.RunTyped[simulatedMessage](ctx, a, genai.Text(b.String()))
	out := SimulatedTurn{}
	if res != nil {
		out.Usage = res.Usage
	}
	if err != nil {
		return out, err
	}
	if v.Finished || strings.TrimSpace(v.Message) == "" {
		out.Done = true
		return out, nil
	}
	out.Message = genai.NewContentFromText(v.Message, genai.RoleUser)
	return out, nil
}

// persona describes user_persona for the simulator's model: the id of a
// prebuilt persona as it is, an object as its JSON.
func persona(raw []byte) string {
	var id string
	if err := json.Unmarshal(raw, &id); err == nil {
		return "You are a user of the kind ADK calls " + id + "."
	}
	return string(raw)
}

// simulate plays a scenario case: the simulator writes each user message,
// the agent answers it, until the simulator is done.
func (r *runner) simulate(ctx context.Context, c *Case, run *Run) {
	if r.opts.Simulator == nil {
		run.Skipped = "the case is a scenario, and Options.Simulator is nil: nobody plays the user"
		return
	}
	history, err := r.begin(ctx, c, run)
	if err != nil {
		run.Err = err
		return
	}
	for i := 1; ; i++ {
		next, err := r.opts.Simulator.Next(ctx, c.Scenario, run.Turns)
		run.SimulatorUsage = run.SimulatorUsage.Plus(next.Usage)
		switch {
		case err != nil:
			run.Err = fmt.Errorf("turn %d: the simulated user failed: %w", i, err)
			return
		case next.Done:
			return
		case next.Message == nil:
			run.Err = fmt.Errorf("turn %d: the simulated user wrote no message", i)
			return
		}
		if history, err = r.turn(ctx, run, c, i-1, history, next.Message); err != nil {
			run.Err = fmt.Errorf("turn %d: %w", i, err)
			return
		}
	}
}
