package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolnexus/toolnexus-go/internal/modelname"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// OutputStrategy says how a typed run ([RunTyped]) gets its typed answer
// from the model.
type OutputStrategy int

const (
	// OutputAuto picks the strategy per backend and model: OutputNative
	// when the request carries no tools, or when the backend and model
	// accept a response schema together with function declarations;
	// OutputTool everywhere else, unknown models included, since a tool
	// works with every model that calls functions.
	//
	// Who accepts what is not documented in one place, and Google's own
	// frameworks disagree; this is what is known (agent.Config.Backend
	// names the backend):
	//
	//   - Gemini 1.x and 2.x on the Gemini API refuse it: 400 "Function
	//     calling with a response mime type: 'application/json' is
	//     unsupported" (reports for gemini-1.5-flash, gemini-2.5-flash,
	//     gemini-2.5-flash-lite and gemini-2.5-pro:
	//     google-gemini/deprecated-generative-ai-swift#195,
	//     symfony/ai#1777, google/adk-python#5735); google/adk-go says the
	//     Gemini API never accepts it.
	//   - Gemini 3 accepts it: Google's Gemini 3 developer guide,
	//     "Structured Outputs with tools"
	//     (https://ai.google.dev/gemini-api/docs/gemini-3); pydantic-ai
	//     enables it for Gemini 3 and later.
	//   - Vertex AI accepts it from Gemini 2.0 on: google/adk-go
	//     (CanUseOutputSchemaWithTools) and ADK Python use it there.
	//
	// Genkit (genkit-ai/genkit#5401, May 2026) says the Gemini API has
	// accepted it since Gemini 2.0; the refusals above, captured in 2026,
	// say otherwise, and the default follows the captures. Forcing
	// OutputNative tries it anyway.
	OutputAuto OutputStrategy = iota

	// OutputNative asks for the answer as JSON: T's schema is sent as the
	// response schema (responseMimeType "application/json" with
	// responseSchema, or responseJsonSchema when the schema says more than
	// genai.Schema can), together with the tools. The model calls tools
	// as usual and answers with JSON text, which is decoded. On the last
	// turn Config.MaxTurns allows, function calling is turned off (mode
	// NONE), so that the model answers. Where the backend refuses the
	// combination, every model call fails with the API's 400.
	OutputNative

	// OutputTool adds a final-answer tool (OutputConfig.ToolName) whose
	// parameters are T's schema, and tells the model, in the system
	// instruction, to give its answer by calling it; the call's validated
	// arguments are the answer, and the run ends with that turn. On the
	// last turn Config.MaxTurns allows, and after a refused answer, the
	// model is made to call it (function calling mode ANY, with only that
	// function allowed). The call goes through Config.Intercept and
	// Config.NeedsApproval like any call.
	OutputTool
)

var outputStrategyNames = [...]string{OutputAuto: "auto", OutputNative: "native", OutputTool: "tool"}

// String returns "auto", "native" or "tool".
func (s OutputStrategy) String() string {
	if s >= 0 && int(s) < len(outputStrategyNames) {
		return outputStrategyNames[s]
	}
	return "OutputStrategy(" + strconv.Itoa(int(s)) + ")"
}

// Defaults of the OutputConfig fields whose zero value means "the default".
const (
	DefaultMaxOutputReasks = 2
	DefaultOutputToolName  = "final_answer"
)

// OutputConfig configures typed runs (see [RunTyped]). The zero value is
// ready to use: the strategy is chosen per backend and model, a refused
// answer is asked again twice, and the final-answer tool is called
// "final_answer".
type OutputConfig struct {
	// Strategy forces a strategy; zero (OutputAuto) chooses one.
	Strategy OutputStrategy

	// MaxReasks bounds how many times a refused answer (one that does not
	// validate, or text where a final-answer call was due) is sent back to
	// the model with the reason. Zero means DefaultMaxOutputReasks (2); a
	// negative value means none. Re-asks are model turns that
	// Config.MaxTurns does not count.
	MaxReasks int

	// ToolName names the final-answer tool of OutputTool. Zero means
	// DefaultOutputToolName ("final_answer"). It must follow the tool-name
	// rule and not be the name of one of the agent's tools.
	ToolName string
}

// check reports what is wrong with c, if anything.
func (c OutputConfig) check() error {
	if c.Strategy < OutputAuto || c.Strategy > OutputTool {
		return fmt.Errorf("unknown Strategy %v", c.Strategy)
	}
	if c.ToolName != "" {
		if _, err := toolset.Define(toolset.Tool{Name: c.ToolName, Run: func(context.Context, map[string]any) (any, error) { return nil, nil }}); err != nil {
			return fmt.Errorf("ToolName: %w", err)
		}
	}
	return nil
}

// with returns c with the fields of o that are not zero.
func (c OutputConfig) with(o OutputConfig) OutputConfig {
	if o.Strategy != OutputAuto {
		c.Strategy = o.Strategy
	}
	if o.MaxReasks != 0 {
		c.MaxReasks = o.MaxReasks
	}
	if o.ToolName != "" {
		c.ToolName = o.ToolName
	}
	return c
}

func (c OutputConfig) maxReasks() int {
	switch {
	case c.MaxReasks < 0:
		return 0
	case c.MaxReasks == 0:
		return DefaultMaxOutputReasks
	}
	return c.MaxReasks
}

func (c OutputConfig) toolName() string {
	if c.ToolName == "" {
		return DefaultOutputToolName
	}
	return c.ToolName
}

// strategy returns the strategy a typed run of a uses: the one forced, or
// the one OutputAuto picks.
func (a *Agent) strategy() OutputStrategy {
	switch {
	case a.outputConfig.Strategy != OutputAuto:
		return a.outputConfig.Strategy
	case len(a.config.Tools) == 0, schemaWithTools(a.backend, a.model):
		return OutputNative
	}
	return OutputTool
}

// schemaWithTools reports whether a model on a backend is known to accept
// a response schema together with function declarations (see OutputAuto
// for the sources): Gemini 3 and later everywhere, Gemini 2 on Vertex AI.
// A model whose version its name does not tell is not.
func schemaWithTools(backend genai.Backend, model string) bool {
	major, _, ok := modelname.Major(strings.ToLower(model))
	return ok && (major >= 3 || backend == genai.BackendVertexAI && major >= 2)
}

// ErrInvalidOutput is the kind of an [OutputError], for errors.Is: a typed
// run ended without a valid typed answer.
var ErrInvalidOutput = errors.New("agent: no valid typed answer")

// An OutputError ends a typed run whose model gave no valid typed answer
// after every re-ask: its answers did not validate against T's schema, or
// it kept answering in text where a final-answer call was due. It matches
// [ErrInvalidOutput] with errors.Is.
type OutputError struct {
	// Strategy is the strategy the run used.
	Strategy OutputStrategy

	// Raw is the last answer refused, as the model gave it: the text of
	// its last turn (OutputNative, or text where a call was due), or the
	// final-answer call's arguments as JSON.
	Raw string

	// Err says why it was refused; it is what the model was told.
	Err error

	// Reasks counts the times the model was asked again.
	Reasks int

	// Result is the run's partial result, the one the typed run returns
	// next to the error.
	Result *Result
}

// Error says that no valid answer came, after how many re-asks, and why
// the last one was refused.
func (e *OutputError) Error() string {
	return fmt.Sprintf("%v (strategy %v, %d re-asks): %v", ErrInvalidOutput, e.Strategy, e.Reasks, e.Err)
}

// Is reports whether target is ErrInvalidOutput.
func (e *OutputError) Is(target error) bool { return target == ErrInvalidOutput }

// Unwrap returns why the last answer was refused.
func (e *OutputError) Unwrap() error { return e.Err }
