package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Models is the part of the Gemini client the loop uses. *genai.Models
// satisfies it: pass client.Models.
type Models interface {
	GenerateContent(ctx context.Context, model string, contents []*genai.Content,
		config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error)
	GenerateContentStream(ctx context.Context, model string, contents []*genai.Content,
		config *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error]
}

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultMaxTurns        = 10
	DefaultMaxParallel     = 8
	DefaultMaxCallsPerTurn = 64
	DefaultMaxOutputBytes  = 1 << 20
)

// Config configures an [Agent]. Only Models and Model are required: every
// other zero field takes the default its comment names.
type Config struct {
	// Models makes the model calls: client.Models of a *genai.Client.
	Models Models

	// Model names the model, e.g. "gemini-2.5-flash".
	Model string

	// Tools are the tools the model may call. Nil or empty means none: the
	// request then carries no tools and no tool config.
	Tools *toolset.Set

	// GenerateConfig is sent with every model call: system instruction,
	// sampling, thinking, tool config… The loop adds the tools' declarations
	// to a copy of it, made once in New; the value given is never modified.
	GenerateConfig *genai.GenerateContentConfig

	// Declarations says how tools are declared to the model (see
	// geminiadapter.Options).
	Declarations geminiadapter.Options

	// MaxTurns bounds the model turns of a run. Zero means
	// DefaultMaxTurns (10). Retries and re-asks of a turn do not count.
	MaxTurns int

	// MaxParallel bounds the tool calls running at once. Zero means
	// DefaultMaxParallel (8).
	MaxParallel int

	// MaxCallsPerTurn bounds the function calls run for one model turn.
	// Calls beyond it are answered with an error and not run. Zero means
	// DefaultMaxCallsPerTurn (64).
	MaxCallsPerTurn int

	// ToolTimeout bounds each tool call. Zero means no bound.
	ToolTimeout time.Duration

	// MaxOutputBytes bounds the JSON size of one tool output sent back to
	// the model. A larger output is cut, and the model is told it was and
	// how large it was. Zero means DefaultMaxOutputBytes (1 MiB); a negative
	// value means no bound.
	MaxOutputBytes int

	// Retry says how failed model calls are retried.
	Retry RetryPolicy

	// Intercept, when set, is called before each call of a known tool runs
	// (see [Interceptor]).
	Intercept Interceptor

	// Observer, when set, sees every step of every run.
	Observer Observer

	// Logger receives the loop's logs: retries at Warn, steps at Debug.
	// Nil means silent.
	Logger *slog.Logger
}

// An Interceptor decides about a tool call before it runs: it returns nil to
// let the tool run, or a result to send the model instead of running the
// tool. [Deny] refuses the call with a reason; [Answer] answers it. This is
// what approval prompts are built on.
//
// Calls of one turn run concurrently, so an Interceptor is called
// concurrently: one that prompts a person must serialize the prompts
// itself. It is not called for unknown tools or calls over the per-turn
// cap. A panic in it is recovered and answers the call with an error.
type Interceptor func(ctx context.Context, call *genai.FunctionCall) *toolset.Result

// Deny returns the result that refuses a call: the model receives
// {"error": reason}.
func Deny(reason string) *toolset.Result {
	return &toolset.Result{Output: reason, IsError: true, Err: ErrDenied}
}

// Answer returns the result that answers a call without running its tool:
// the model receives {"result": output}.
func Answer(output any) *toolset.Result {
	return &toolset.Result{Output: output}
}

// ErrDenied is the Err of a result made by [Deny].
var ErrDenied = errors.New("agent: tool call denied")

// An Agent runs tool-call loops with one configuration. It is immutable and
// safe for concurrent use: any number of runs may share it.
type Agent struct {
	models         Models
	model          string
	tools          *toolset.Set
	config         *genai.GenerateContentConfig // the copy sent with every call
	maxTurns       int
	maxParallel    int
	maxCalls       int
	toolTimeout    time.Duration
	maxOutputBytes int
	retry          RetryPolicy
	intercept      Interceptor
	observer       Observer
	logger         *slog.Logger
	unknownTool    string // the list of tools an unknown-tool error gives
}

// New checks cfg and returns an Agent. The tools are converted to
// declarations here, once: a tool the adapter cannot declare is an error.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Models == nil:
		return nil, errors.New("agent: Config.Models is nil (pass client.Models)")
	case cfg.Model == "":
		return nil, errors.New("agent: Config.Model is empty")
	case cfg.MaxTurns < 0, cfg.MaxParallel < 0, cfg.MaxCallsPerTurn < 0, cfg.ToolTimeout < 0:
		return nil, fmt.Errorf("agent: negative limit in Config (MaxTurns %d, MaxParallel %d, MaxCallsPerTurn %d, ToolTimeout %v)",
			cfg.MaxTurns, cfg.MaxParallel, cfg.MaxCallsPerTurn, cfg.ToolTimeout)
	}
	a := &Agent{
		models:         cfg.Models,
		model:          cfg.Model,
		tools:          cfg.Tools,
		maxTurns:       orDefault(cfg.MaxTurns, DefaultMaxTurns),
		maxParallel:    orDefault(cfg.MaxParallel, DefaultMaxParallel),
		maxCalls:       orDefault(cfg.MaxCallsPerTurn, DefaultMaxCallsPerTurn),
		toolTimeout:    cfg.ToolTimeout,
		maxOutputBytes: orDefault(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		retry:          cfg.Retry.withDefaults(),
		intercept:      cfg.Intercept,
		observer:       cfg.Observer,
		logger:         cfg.Logger,
	}
	if a.tools == nil {
		a.tools = toolset.MustNew()
	}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	config, err := requestConfig(cfg.GenerateConfig, a.tools, cfg.Declarations)
	if err != nil {
		return nil, err
	}
	a.config = config
	a.unknownTool = "available tools: none"
	if names := a.tools.Names(); len(names) > 0 {
		a.unknownTool = "available tools: " + strings.Join(names, ", ")
	}
	return a, nil
}

// requestConfig returns the config every model call sends: a copy of the
// caller's, with the tools' declarations added. It also fills in what the
// SDK would otherwise write into the config on each call (a system
// instruction's role, the HTTP headers map), so that concurrent runs can
// share the copy without racing and the caller's value stays untouched.
func requestConfig(given *genai.GenerateContentConfig, tools *toolset.Set, opts geminiadapter.Options) (*genai.GenerateContentConfig, error) {
	var c genai.GenerateContentConfig
	if given != nil {
		c = *given
	}
	c.Tools = append([]*genai.Tool(nil), c.Tools...)
	if tools.Len() > 0 {
		group, err := opts.Tools(tools.Tools()...)
		if err != nil {
			return nil, fmt.Errorf("agent: declaring tools: %w", err)
		}
		c.Tools = append(c.Tools, group...)
	}
	if len(c.Tools) == 0 {
		c.Tools = nil
	}
	if !hasDeclarations(c.Tools) {
		// The API refuses a function calling config without declarations.
		c.ToolConfig = nil
	}
	if si := c.SystemInstruction; si != nil && si.Role == "" {
		c.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: si.Parts}
	}
	if h := c.HTTPOptions; h != nil && h.Headers == nil {
		h2 := *h
		h2.Headers = http.Header{}
		c.HTTPOptions = &h2
	}
	return &c, nil
}

func hasDeclarations(tools []*genai.Tool) bool {
	for _, t := range tools {
		if t != nil && len(t.FunctionDeclarations) > 0 {
			return true
		}
	}
	return false
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Run runs the tool-call loop on contents until the model answers without
// calling a tool. See the package documentation for the contract.
//
// contents is not modified. On failure Run returns the partial Result (never
// nil) with the error.
func (a *Agent) Run(ctx context.Context, contents []*genai.Content) (*Result, error) {
	r := a.newRun(ctx, contents, nil)
	err := r.loop()
	r.finish(err)
	return r.result, err
}

// Run is New followed by Agent.Run, for a single run.
func Run(ctx context.Context, cfg Config, contents []*genai.Content) (*Result, error) {
	a, err := New(cfg)
	if err != nil {
		return &Result{History: append([]*genai.Content(nil), contents...)}, err
	}
	return a.Run(ctx, contents)
}
