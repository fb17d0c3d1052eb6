package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
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
	// DefaultMaxContinuations: 16 continuations of 65,536 output tokens
	// each, Gemini's most per streamed request, more than fill the
	// 1,048,576-token context window of the models that decode longest.
	DefaultMaxContinuations = 16
)

// Config configures an [Agent]. Only Models and Model are required: every
// other zero field takes the default its comment names.
type Config struct {
	// Models makes the model calls: client.Models of a *genai.Client, or,
	// for Gemini's Interactions API, geminiinteractions.New(client, …).
	Models Models

	// Model names the model, e.g. "gemini-2.5-flash".
	Model string

	// Name names the agent in its events (Event.Agent) and in usage
	// breakdowns (Result.Agents). Optional; an agent run as a tool (see
	// [AsTool]) takes the tool's name instead.
	Name string

	// Backend is the API that Models talks to: genai.BackendGeminiAPI or
	// genai.BackendVertexAI (see genai.ClientConfig.Backend). Zero means
	// the Gemini API. Only typed runs read it, to choose how to ask for a
	// typed answer (see [OutputStrategy]); on Vertex AI, saying so lets
	// Gemini 2 models use the native strategy.
	Backend genai.Backend

	// Output configures typed runs: [RunTyped], [StreamTyped] and agents
	// run by [AsTypedTool]. The zero value picks the strategy per backend
	// and model, and re-asks DefaultMaxOutputReasks times.
	Output OutputConfig

	// Tools are the tools the model may call. Nil or empty means none: the
	// request then carries no tools and no tool config.
	Tools *toolset.Set

	// BuiltinTools are Gemini's built-in tools, which the API runs itself,
	// beside the functions of Tools: genai.Tool values each setting one of
	// GoogleSearch, CodeExecution, URLContext, FileSearch or GoogleMaps
	// (or one of Vertex AI's own, such as EnterpriseWebSearch), and no
	// FunctionDeclarations. The loop never runs them: it keeps what the
	// model content says of them in the history, reports them as events,
	// and puts the answer's grounding in the Result (see the package
	// documentation, "Built-in tools").
	BuiltinTools []*genai.Tool

	// GenerateConfig is sent with every model call: system instruction,
	// sampling, thinking, tool config… The loop adds the tools' declarations
	// to a copy of it, made once in New; the value given is never modified.
	GenerateConfig *genai.GenerateContentConfig

	// Declarations says how tools are declared to the model (see
	// geminiadapter.Options).
	Declarations geminiadapter.Options

	// MaxTurns bounds the model turns of a run. Zero means
	// DefaultMaxTurns (10). Retries and re-asks of a turn do not count,
	// nor the turn a resumed run answers without a model call.
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

	// ProgressInterval is the least time between two EventToolProgress
	// events of one call: the reports a tool makes in between (see
	// [toolset.ReportProgress]) are coalesced, the latest kept, and the
	// last one before the call's result always arrives, before its
	// EventToolResult. Zero means toolset.DefaultProgressInterval
	// (100 ms); a negative value sets no time limit, and reports are then
	// coalesced only while the consumer is busy. Reports cost nothing
	// when nobody listens: a run with no Observer that is not a Stream
	// hands them to no one.
	ProgressInterval time.Duration

	// MaxOutputBytes bounds the JSON size of one tool output sent back to
	// the model. A larger output is cut, and the model is told it was and
	// how large it was. Zero means DefaultMaxOutputBytes (1 MiB); a negative
	// value means no bound.
	MaxOutputBytes int

	// Retry says how failed model calls are retried.
	Retry RetryPolicy

	// MaxContinuations bounds the continuation requests of one answer.
	// When the API cuts an answer at its per-request output limit (finish
	// reason CONTINUATION, with a continuation token), the loop sends the
	// same request again with the token, and merges the answers (see the
	// package documentation, "Long answers"). Zero means
	// DefaultMaxContinuations (16); a negative value turns continuation
	// off, and a cut answer then ends the run with ErrContinuation.
	MaxContinuations int

	// ForceEveryTurn keeps a forcing function calling config (mode ANY,
	// with or without AllowedFunctionNames) on every model call of a run.
	// By default it applies to the first model call of each run only, and
	// later calls use mode AUTO: a model forced to call a tool on every
	// turn could never answer (OpenAI Agents resets its tool choice the
	// same way).
	ForceEveryTurn bool

	// Intercept, when set, is called before each call of a known tool runs
	// (see [Interceptor]).
	Intercept Interceptor

	// NeedsApproval, when set, picks the calls that must be approved before
	// they run (see [Approval]). With [Agent.Stream] the consumer decides
	// each of them in band, through an EventApproval event; with
	// [Agent.Run], which has no consumer, Intercept decides them, and
	// without an Interceptor they are denied.
	NeedsApproval func(call *genai.FunctionCall) bool

	// PrepareHistory, when set, is called before each turn's model call
	// with the contents about to be sent, and may return shorter ones (see
	// [HistoryFunc]).
	PrepareHistory HistoryFunc

	// Observer, when set, sees every step of every run. An Observer that
	// also implements [ContextObserver] chooses the contexts of the run's
	// steps.
	Observer Observer

	// Logger receives the loop's logs: retries at Warn, steps at Debug.
	// Nil means silent.
	Logger *slog.Logger

	// Files, when set, keeps the files tools make beside the history:
	// the media a tool returns with their data are kept by it, and the
	// history, the events and the Result hold references to them; before
	// each model call the references are resolved into what the API takes
	// (see [FileKeeper]; package artifact's Keeper is one). Nil keeps
	// media inline, in the history, as they came.
	Files FileKeeper

	// Cache, when set, turns on explicit context caching: the system
	// instruction, tool declarations and tool config every request
	// repeats are cached once and named in each request (see the package
	// documentation, "Context caching"). Nil means off. An agent with a
	// Cache should be closed ([Agent.Close]) to delete its caches. New
	// refuses it on a Models that takes no explicit caches
	// ([ExplicitCacher]).
	Cache *CachePolicy
}

// An Interceptor decides about a tool call before it runs: it returns nil to
// let the tool run, or a result to send the model instead of running the
// tool. [Deny] refuses the call with a reason; [Answer] answers it. A
// result it returns goes through the same checks as a tool's: an output
// that cannot be encoded as JSON becomes an error result, and an output
// over Config.MaxOutputBytes is cut.
//
// Calls of one turn run concurrently, so an Interceptor is called
// concurrently: one that prompts a person must serialize the prompts
// itself, or, with [Agent.Stream], leave approvals to the consumer (see
// Config.NeedsApproval). It is not called for unknown tools, calls over the
// per-turn cap, or once the run's context is done. ctx is the call's
// context, the one the tool would run with. A panic in it is recovered and
// answers the call with an error.
type Interceptor func(ctx context.Context, call *genai.FunctionCall) *toolset.Result

// Deny returns the result that refuses a call: the model receives
// {"error": reason, "denied": true} (see geminiadapter.Response), and the
// stored history keeps it so, a denial told from a failure.
func Deny(reason string) *toolset.Result {
	return &toolset.Result{Output: reason, IsError: true, Err: ErrDenied}
}

// Answer returns the result that answers a call without running its tool:
// the model receives {"result": output}. output must be encodable as JSON;
// if it is not, the model receives an error instead.
func Answer(output any) *toolset.Result {
	return &toolset.Result{Output: output}
}

// ErrDenied is the Err of a result made by [Deny], and of a call that
// needed approval and was not approved. It wraps [toolset.ErrDenied], so
// the call's answer is marked as a denial ("denied": true) for the model
// and in the stored history; [geminiadapter.Denied] reads it back.
var ErrDenied = fmt.Errorf("agent: %w", toolset.ErrDenied)

// An Agent runs tool-call loops with one configuration. It is immutable and
// safe for concurrent use: any number of runs may share it. Only the
// caches of Config.Cache change under it, safely; [Agent.Close] deletes
// them.
type Agent struct {
	models         Models
	model          string
	name           string
	backend        genai.Backend
	outputConfig   OutputConfig
	output         *typedOutput // set on the agent a typed run runs on (see typed.go)
	link           *agentLink   // set on the agent a tool made by AsTool runs (see astool.go)
	tools          *toolset.Set
	decls          geminiadapter.Options
	given          *genai.GenerateContentConfig // Config.GenerateConfig, as given
	group          *genai.Tool                  // the tools' declarations, converted once, or nil
	config         *genai.GenerateContentConfig // the copy sent with the first model call of a run
	later          *genai.GenerateContentConfig // the copy sent with later calls: config, unless it forces calls
	forceEveryTurn bool
	maxTurns       int
	maxParallel    int
	maxCalls       int
	toolTimeout    time.Duration
	progressEvery  time.Duration // the ProgressPacer's Interval: 0 for none
	maxOutputBytes int
	retry          RetryPolicy
	intercept      Interceptor
	needsApproval  func(*genai.FunctionCall) bool
	prepareHistory HistoryFunc
	observer       Observer
	scoper         ContextObserver // observer, when it implements ContextObserver
	logger         *slog.Logger
	cache          *cacher // Config.Cache's, shared with the agents derived by With; nil when off
	files          FileKeeper
	unknownTool    string // the list of tools an unknown-tool error gives
	err            error  // why With could not derive the agent: every run fails with it

	// x is what built-in tools, continuation and service tiers need (see
	// features.go).
	x features
	// mediaInResponses says whether the model takes tools' media in
	// function responses (geminiadapter.MediaInResponses), decided once.
	mediaInResponses bool
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
	if err := cfg.Output.check(); err != nil {
		return nil, fmt.Errorf("agent: Config.Output: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cache, err := newCacher(cfg.Cache, cfg.Models, cfg.Model, logger)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		models:         cfg.Models,
		model:          cfg.Model,
		name:           cfg.Name,
		backend:        cfg.Backend,
		outputConfig:   cfg.Output,
		tools:          cfg.Tools,
		decls:          cfg.Declarations,
		given:          cfg.GenerateConfig,
		maxTurns:       orDefault(cfg.MaxTurns, DefaultMaxTurns),
		maxParallel:    orDefault(cfg.MaxParallel, DefaultMaxParallel),
		maxCalls:       orDefault(cfg.MaxCallsPerTurn, DefaultMaxCallsPerTurn),
		toolTimeout:    cfg.ToolTimeout,
		progressEvery:  progressInterval(cfg.ProgressInterval),
		maxOutputBytes: orDefault(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		retry:          cfg.Retry.withDefaults(),
		intercept:      cfg.Intercept,
		needsApproval:  cfg.NeedsApproval,
		prepareHistory: cfg.PrepareHistory,
		forceEveryTurn: cfg.ForceEveryTurn,
		logger:         logger,
		cache:          cache,
		files:          cfg.Files,
		x:              features{builtins: cfg.BuiltinTools, maxContinuations: cfg.MaxContinuations},

		mediaInResponses: geminiadapter.MediaInResponses(cfg.Model),
	}
	if a.tools == nil {
		a.tools = toolset.MustNew()
	}
	a.setObserver(cfg.Observer)
	if a.tools.Len() > 0 {
		group, err := a.decls.Tools(a.tools.Tools()...)
		if err != nil {
			return nil, fmt.Errorf("agent: declaring tools: %w", err)
		}
		a.group = group[0]
	}
	if err := a.prepare(); err != nil {
		return nil, err
	}
	return a, nil
}

// setObserver installs o, noting whether it chooses the steps' contexts.
func (a *Agent) setObserver(o Observer) {
	a.observer = o
	a.scoper, _ = o.(ContextObserver)
}

// prepare computes what runs send and say from the agent's tools, group
// and given config: the request configs and the unknown-tool message.
func (a *Agent) prepare() error {
	config, err := requestConfig(a.given, a.group)
	if err != nil {
		return err
	}
	if err := a.x.prepare(config, a.group, a.backend); err != nil {
		return err
	}
	a.config, a.later = config, config
	if fc := functionCalling(config); fc != nil && fc.Mode == genai.FunctionCallingConfigModeAny && !a.forceEveryTurn {
		later := *config
		tc := *config.ToolConfig
		tc.FunctionCallingConfig = &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}
		later.ToolConfig = &tc
		a.later = &later
	}
	a.unknownTool = "available tools: none"
	if names := a.tools.Names(); len(names) > 0 {
		a.unknownTool = "available tools: " + strings.Join(names, ", ")
	}
	return nil
}

// requestConfig returns the config model calls send: a copy of the caller's,
// with the tools' declarations added. It also fills in what the SDK would
// otherwise write into the config on each call (a system instruction's
// role, the HTTP headers map), so that concurrent runs can share the copy
// without racing and the caller's value stays untouched.
func requestConfig(given *genai.GenerateContentConfig, group *genai.Tool) (*genai.GenerateContentConfig, error) {
	var c genai.GenerateContentConfig
	if given != nil {
		c = *given
	}
	if fc := functionCalling(&c); fc != nil && fc.StreamFunctionCallArguments != nil && *fc.StreamFunctionCallArguments {
		// Vertex would stream each call's arguments in pieces. The loop
		// runs a call only once it is whole, so the pieces would gain
		// nothing, and generateContent refuses the setting.
		return nil, errors.New("agent: ToolConfig.FunctionCallingConfig.StreamFunctionCallArguments is not supported: the loop runs whole function calls")
	}
	c.Tools = append([]*genai.Tool(nil), c.Tools...)
	if group != nil {
		c.Tools = append(c.Tools, group)
	}
	if len(c.Tools) == 0 {
		c.Tools = nil
	}
	if tc := c.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil && !hasDeclarations(c.Tools) {
		// The API refuses a function calling config without declarations;
		// the rest of the tool config (retrieval, say) still applies.
		rest := *tc
		rest.FunctionCallingConfig = nil
		c.ToolConfig = &rest
		if reflect.ValueOf(rest).IsZero() {
			c.ToolConfig = nil
		}
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

// functionCalling returns c's function calling config, or nil.
func functionCalling(c *genai.GenerateContentConfig) *genai.FunctionCallingConfig {
	if c.ToolConfig == nil {
		return nil
	}
	return c.ToolConfig.FunctionCallingConfig
}

func hasDeclarations(tools []*genai.Tool) bool {
	for _, t := range tools {
		if t != nil && len(t.FunctionDeclarations) > 0 {
			return true
		}
	}
	return false
}

// progressInterval returns the pacing of progress events that
// Config.ProgressInterval asks for.
func progressInterval(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return toolset.DefaultProgressInterval
	case d < 0:
		return 0
	}
	return d
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
	if a.err != nil {
		return &Result{History: slices.Clone(contents)}, a.err
	}
	r := a.newRun(ctx, contents, nil)
	err := r.loop()
	r.finish(err)
	return r.result, err
}

// Run is New followed by Agent.Run, for a single run.
func Run(ctx context.Context, cfg Config, contents []*genai.Content) (*Result, error) {
	a, err := New(cfg)
	if err != nil {
		return &Result{History: slices.Clone(contents)}, err
	}
	return a.Run(ctx, contents)
}
