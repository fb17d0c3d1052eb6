package agent

import (
	"fmt"
	"slices"
	"time"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Overrides change an agent's settings for some of its runs (see
// [Agent.With]). Every zero field keeps the agent's setting.
type Overrides struct {
	// GenerateConfig replaces Config.GenerateConfig: sampling, thinking,
	// safety, tool config… The agent's tool declarations are added to it
	// as New does, without being converted again.
	GenerateConfig *genai.GenerateContentConfig

	// SystemInstruction replaces the system instruction, of GenerateConfig
	// when it is set, else of the agent's config.
	SystemInstruction *genai.Content

	// Tools are added to the agent's tools; only they are converted to
	// declarations. A name the agent already has is an error.
	Tools []*toolset.Tool

	// BuiltinTools are added to the agent's built-in tools (see
	// Config.BuiltinTools).
	BuiltinTools []*genai.Tool

	// Observer sees the runs' events too, after the agent's own observer.
	Observer Observer

	// Output changes how typed runs ask for a typed answer: each field
	// that is not zero replaces the agent's (see [OutputConfig]).
	Output OutputConfig

	// Intercept, NeedsApproval and PrepareHistory replace the agent's.
	Intercept      Interceptor
	NeedsApproval  func(call *genai.FunctionCall) bool
	PrepareHistory HistoryFunc

	// The limits replace the agent's when they are not zero, with the
	// meanings they have in [Config]; a negative value is an error, but for
	// MaxOutputBytes, where it means no bound.
	MaxTurns        int
	MaxParallel     int
	MaxCallsPerTurn int
	ToolTimeout     time.Duration
	MaxOutputBytes  int

	// MaxContinuations replaces Config.MaxContinuations when it is not
	// zero; negative turns continuation off.
	MaxContinuations int

	// Files replaces Config.Files when it is set.
	Files FileKeeper
}

// With returns an agent that runs like a, with the changes o makes: a
// system instruction, extra tools, an observer or limits for one run, or
// for a family of runs, without the cost of [New]. It shares a's client,
// tools and the declarations New converted; only o.Tools are converted.
// a is not modified.
//
//	res, err := a.With(agent.Overrides{
//		SystemInstruction: genai.NewContentFromText("Answer in French.", genai.RoleUser),
//		MaxTurns:          3,
//	}).Run(ctx, contents)
//
// With does not fail: when o cannot be applied (a duplicate or invalid
// tool, a negative limit), every run of the returned agent fails at once
// with the error, and returns a Result holding the input.
func (a *Agent) With(o Overrides) *Agent {
	b := *a
	if a.err == nil {
		if err := b.apply(o); err != nil {
			b.err = fmt.Errorf("agent: With: %w", err)
		}
	}
	return &b
}

func (a *Agent) apply(o Overrides) error {
	if o.MaxTurns < 0 || o.MaxParallel < 0 || o.MaxCallsPerTurn < 0 || o.ToolTimeout < 0 {
		return fmt.Errorf("negative limit in Overrides (MaxTurns %d, MaxParallel %d, MaxCallsPerTurn %d, ToolTimeout %v)",
			o.MaxTurns, o.MaxParallel, o.MaxCallsPerTurn, o.ToolTimeout)
	}
	a.maxTurns = orDefault(o.MaxTurns, a.maxTurns)
	a.maxParallel = orDefault(o.MaxParallel, a.maxParallel)
	a.maxCalls = orDefault(o.MaxCallsPerTurn, a.maxCalls)
	a.maxOutputBytes = orDefault(o.MaxOutputBytes, a.maxOutputBytes)
	if o.ToolTimeout > 0 {
		a.toolTimeout = o.ToolTimeout
	}
	if err := o.Output.check(); err != nil {
		return fmt.Errorf("Overrides.Output: %w", err)
	}
	a.outputConfig = a.outputConfig.with(o.Output)
	if o.Intercept != nil {
		a.intercept = o.Intercept
	}
	if o.NeedsApproval != nil {
		a.needsApproval = o.NeedsApproval
	}
	if o.PrepareHistory != nil {
		a.prepareHistory = o.PrepareHistory
	}
	if o.Files != nil {
		a.files = o.Files
	}
	if o.Observer != nil {
		a.setObserver(Observers(a.observer, o.Observer))
	}
	if len(o.BuiltinTools) > 0 {
		a.x.builtins = slices.Concat(a.x.builtins, o.BuiltinTools)
	}
	if o.MaxContinuations != 0 {
		a.x.maxContinuations = o.MaxContinuations
	}
	if o.GenerateConfig == nil && o.SystemInstruction == nil && len(o.Tools) == 0 &&
		len(o.BuiltinTools) == 0 && o.MaxContinuations == 0 {
		return nil // the request configs are the agent's
	}
	if len(o.Tools) > 0 {
		set, err := toolset.New(append(a.tools.Tools(), o.Tools...)...)
		if err != nil {
			return err
		}
		extra, err := a.decls.Tools(o.Tools...)
		if err != nil {
			return fmt.Errorf("declaring tools: %w", err)
		}
		group := &genai.Tool{FunctionDeclarations: extra[0].FunctionDeclarations}
		if a.group != nil {
			group.FunctionDeclarations = slices.Concat(a.group.FunctionDeclarations, extra[0].FunctionDeclarations)
		}
		a.tools, a.group = set, group
	}
	if o.GenerateConfig != nil {
		a.given = o.GenerateConfig
	}
	if o.SystemInstruction != nil {
		given := genai.GenerateContentConfig{}
		if a.given != nil {
			given = *a.given
		}
		given.SystemInstruction = o.SystemInstruction
		a.given = &given
	}
	return a.prepare()
}
