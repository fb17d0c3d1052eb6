package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// RunTyped runs a's loop on contents, as [Agent.Run] does, and returns the
// model's final answer as a T: a Go value rather than text, after the model
// has used the tools it needed.
//
//	type Invoice struct {
//		Customer string  `json:"customer"`
//		Total    float64 `json:"total" jsonschema:"the total in euros"`
//	}
//	inv, res, err := agent.RunTyped[Invoice](ctx, a, genai.Text("Bill ACME for last month."))
//
// T's JSON Schema is inferred as [toolset.Func] infers a tool's input
// schema: the exported fields of a struct become required properties
// (optional with omitempty or omitzero), and `jsonschema:"..."` tags become
// the descriptions the model reads. A T whose schema is not an object (a
// slice, a string, a pointer to a struct...) is asked for as the property
// "value" of an object.
// The answer is validated against the schema and decoded into T by
// toolset's machinery, the one that checks every tool call.
//
// # Strategies
//
// Gemini can be asked for a typed answer in two ways, and which one works
// depends on the backend and the model (see [OutputStrategy]): with
// OutputNative, T's schema goes in the request as the response schema,
// together with the tools, and the model's final text is JSON; with
// OutputTool, a final-answer tool whose parameters are T's schema is added,
// and the model answers by calling it. By default (OutputAuto) the run uses
// the native strategy where the backend and model are known to accept a
// response schema with function declarations, or when the agent has no
// tools, and the tool strategy elsewhere. Config.Output.Strategy, or
// [Overrides].Output for some runs, forces either. With either, the last
// turn Config.MaxTurns allows makes the model answer rather than call
// tools.
//
// # Refused answers
//
// An answer that does not validate (not JSON, a missing field, a value of
// the wrong type...) is not the end: the model is told why, and asked
// again. So is text where a final-answer call was due, which is the usual
// way models ignore a final-answer tool. Re-asks are bounded by
// OutputConfig.MaxReasks and do not count against Config.MaxTurns; each is
// reported as an EventRetry whose Err wraps [ErrInvalidOutput]. When they
// run out, the run ends with an [*OutputError] (errors.Is
// [ErrInvalidOutput]) that carries the last answer as the model gave it
// and the partial Result.
//
// Every other failure is Run's, with Run's errors. Result.Output holds the
// answer too (as an any), and Result.History ends with the turn that gave
// it: with the tool strategy, the final-answer call and its response, so
// the history can be continued.
func RunTyped[T any](ctx context.Context, a *Agent, contents []*genai.Content) (T, *Result, error) {
	var zero T
	b, err := typedAgent[T](a)
	if err != nil {
		return zero, &Result{History: slices.Clone(contents)}, err
	}
	res, err := b.Run(ctx, contents)
	if err != nil {
		return zero, res, err
	}
	v, _ := res.Output.(T) // nil when T is an interface and the answer null
	return v, res, nil
}

// StreamTyped is [Agent.Stream] for a typed run: it runs the loop as
// [RunTyped] does and yields its events as Stream does. The typed answer
// comes at the end: the Result of the last event (EventDone) holds it in
// Output, a T, when the run succeeded.
//
//	for e, err := range agent.StreamTyped[Invoice](ctx, a, contents) {
//		…
//		if e.Kind == agent.EventDone && err == nil {
//			inv := e.Result.Output.(Invoice)
//		}
//	}
//
// With the native strategy the EventText events carry the answer's JSON as
// it is generated.
func StreamTyped[T any](ctx context.Context, a *Agent, contents []*genai.Content) iter.Seq2[*Event, error] {
	b, err := typedAgent[T](a)
	if err != nil {
		b = &Agent{err: err} // its Stream yields the error in EventDone
	}
	return b.Stream(ctx, contents)
}

// typedAgent returns the agent a typed run of a for T runs on.
func typedAgent[T any](a *Agent) (*Agent, error) {
	if a == nil {
		return nil, errors.New("agent: typed run of a nil *Agent")
	}
	if a.err != nil {
		return a, nil // its runs fail with a.err
	}
	p, err := planFor[T](a.outputConfig.toolName())
	if err != nil {
		return nil, err
	}
	return a.typed(p), nil
}

// An outputPlan is what typed runs for one type T need: it is made once
// per type and tool name.
type outputPlan struct {
	// tool is the final-answer tool of OutputTool: the model is told that
	// its answer was accepted, or, by Execute, why it was not.
	tool *toolset.Tool
	// check validates an answer and decodes it, for both strategies: its
	// Output is the T. It has tool's name and schema.
	check *toolset.Tool
	// schema is T's schema: the native response schema.
	schema *jsonschema.Schema
	// wrapped is set when T is not an object: answers are {"value": T}.
	wrapped bool
}

type planKey struct {
	typ  reflect.Type
	name string
}

// plans caches the outputPlan of each type and tool name.
var plans sync.Map // planKey -> *outputPlan

// valueOf is the object a T that is not one is asked for in.
type valueOf[T any] struct {
	Value T `json:"value"`
}

const finalAnswerDescription = "Gives your final answer, and ends the task. Call it once you have everything you need, " +
	"with the whole answer as its arguments."

// planFor returns the outputPlan of T, with a final-answer tool named name.
func planFor[T any](name string) (*outputPlan, error) {
	key := planKey{reflect.TypeFor[T](), name}
	if p, ok := plans.Load(key); ok {
		return p.(*outputPlan), nil
	}
	schema, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("agent: typed answer %v: cannot infer its JSON Schema: %w", key.typ, err)
	}
	p := &outputPlan{schema: schema, wrapped: schema.Type != "object"}
	if p.wrapped {
		p.tool, p.check, err = finalAnswerTools(name, func(in valueOf[T]) any { return in.Value })
	} else {
		p.tool, p.check, err = finalAnswerTools(name, func(in T) any { return in })
	}
	if err != nil {
		return nil, fmt.Errorf("agent: typed answer %v: %w", key.typ, err)
	}
	actual, _ := plans.LoadOrStore(key, p)
	return actual.(*outputPlan), nil
}

// accepted is the final-answer tool's output: the answer is in the call.
const accepted = "final answer accepted"

// finalAnswerTools returns the final-answer tool and its checker for
// answers given as W, which answer returns the T of.
func finalAnswerTools[W any](name string, answer func(W) any) (tool, check *toolset.Tool, err error) {
	tool, err = toolset.Func(name, finalAnswerDescription, func(context.Context, W) (string, error) { return accepted, nil })
	if err != nil {
		return nil, nil, err
	}
	check, err = toolset.Func(name, finalAnswerDescription, func(_ context.Context, in W) (any, error) { return answer(in), nil })
	return tool, check, err
}

// decode validates a native answer, the model's JSON text, and decodes it.
// The error says why it was refused, for the model.
func (p *outputPlan) decode(text string) (any, error) {
	s := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		// A model may fence its JSON in Markdown: ```json … ```.
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest[i+1:]), "```"))
		}
	}
	if s == "" {
		return nil, errors.New("the answer is empty; it must be JSON")
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	args, ok := v.(map[string]any)
	if p.wrapped {
		args = map[string]any{"value": v}
	} else if !ok {
		return nil, fmt.Errorf("the answer must be a JSON object, not %s", jsonKind(v))
	}
	v, err := p.answer(args)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "invalid arguments for "+p.tool.Name+": ")
		return nil, fmt.Errorf("the answer does not match the response schema: %s", msg)
	}
	return v, nil
}

// answer validates an answer's arguments and decodes them into the T. The
// error is the message a tool call with these arguments gets.
func (p *outputPlan) answer(args map[string]any) (any, error) {
	res := p.check.Execute(context.Background(), args) // Run does not block: no goroutine without a Done channel
	if res.IsError {
		return nil, errors.New(fmt.Sprint(res.Output))
	}
	return res.Output, nil
}

// typedOutput is what the agent of a typed run adds to the loop.
type typedOutput struct {
	plan      *outputPlan
	strategy  OutputStrategy // OutputNative or OutputTool
	maxReasks int
	// forced is the request config that makes the model call the
	// final-answer tool (OutputTool); final turns function calling off
	// (OutputNative, when there are declarations). nil otherwise.
	forced, final *genai.GenerateContentConfig
}

// typedRun is a typed run's state.
type typedRun struct {
	o      *typedOutput // nil for a run that is not typed
	reasks int          // model turns made to ask again for a refused answer
	force  bool         // the next turn must call the final-answer tool
}

// toolInstruction is added to the system instruction with OutputTool.
const toolInstruction = "When you have the final answer, give it by calling the %s function with the answer as its arguments. " +
	"Do not write the answer as text."

// typed returns the agent that typed runs of a for plan run on: a copy of
// a with the response schema or the final-answer tool, and the loop's
// typedOutput. A copy that cannot be made fails its runs, as With's do.
func (a *Agent) typed(p *outputPlan) *Agent {
	o := &typedOutput{plan: p, strategy: a.strategy(), maxReasks: a.outputConfig.maxReasks()}
	var b *Agent
	if o.strategy == OutputTool {
		si := &genai.Content{Role: genai.RoleUser}
		if a.given != nil && a.given.SystemInstruction != nil {
			si.Parts = slices.Clone(a.given.SystemInstruction.Parts)
		}
		si.Parts = append(si.Parts, genai.NewPartFromText(fmt.Sprintf(toolInstruction, p.tool.Name)))
		b = a.With(Overrides{Tools: []*toolset.Tool{p.tool}, SystemInstruction: si})
	} else {
		b = a.With(Overrides{GenerateConfig: nativeConfig(a.given, p.schema, a.decls)})
	}
	if b.err != nil {
		return b
	}
	if o.strategy == OutputTool {
		o.forced = withCalling(b.later, &genai.FunctionCallingConfig{
			Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{p.tool.Name}})
	} else if hasDeclarations(b.later.Tools) {
		o.final = withCalling(b.later, &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone})
	}
	b.output = o
	return b
}

// nativeConfig returns given with T's schema as the response schema: a
// genai.Schema when the adapter can convert it faithfully (and decls does
// not force JSON Schema), else the JSON Schema itself.
func nativeConfig(given *genai.GenerateContentConfig, schema *jsonschema.Schema, decls geminiadapter.Options) *genai.GenerateContentConfig {
	var c genai.GenerateContentConfig
	if given != nil {
		c = *given
	}
	c.ResponseMIMEType = "application/json"
	c.ResponseSchema, c.ResponseJsonSchema = nil, nil
	if !decls.ForceJSONSchema {
		if s, err := geminiadapter.Schema(schema); err == nil {
			c.ResponseSchema = s
			return &c
		}
	}
	c.ResponseJsonSchema = schema
	return &c
}

// withCalling returns a copy of c with fc as its function calling config.
func withCalling(c *genai.GenerateContentConfig, fc *genai.FunctionCallingConfig) *genai.GenerateContentConfig {
	out := *c
	var tc genai.ToolConfig
	if c.ToolConfig != nil {
		tc = *c.ToolConfig
	}
	tc.FunctionCallingConfig = fc
	out.ToolConfig = &tc
	return &out
}

// typedConfig returns the request config of a typed run's turn: on the
// last turn MaxTurns allows (and the re-asks after it), the model must
// answer; with the tool strategy, a re-ask must call the final-answer tool
// too.
func (r *run) typedConfig(turn int, config *genai.GenerateContentConfig) *genai.GenerateContentConfig {
	o := r.typed.o
	last := r.counted(turn) >= r.a.maxTurns-1
	switch {
	case o.forced != nil && (last || r.typed.force):
		return o.forced
	case o.final != nil && last:
		return o.final
	}
	return config
}

// typedTurnDone decides about a typed run's turn, once its calls have run:
// done with the answer in r.result.Output, done with an *OutputError when
// the re-asks ran out, or not done, the loop going on, when the turn
// called tools or its answer is asked again.
func (r *run) typedTurnDone(turn int, t *Turn) (done bool, err error) {
	tt := r.a.Steps().TypedTurn(t, TypedState{Reasks: r.typed.reasks, Force: r.typed.force})
	r.typed.reasks, r.typed.force = tt.Next.Reasks, tt.Next.Force
	if tt.Done {
		if tt.Err != nil {
			tt.Err.Result = r.result
			return true, tt.Err
		}
		r.result.Output = tt.Output
		return true, nil
	}
	if tt.Ask != nil {
		r.add(tt.Ask)
	}
	if tt.Retry != nil {
		r.retrying(r.ctx, turn, t.Attempts, tt.Retry, 0)
	}
	return false, nil
}

// typedVerdict is what a typed run's turn gave: the answer, a refused
// answer, or neither (a turn of other calls).
type typedVerdict struct {
	answered bool   // the turn gave a valid answer: output
	output   any    // the answer, decoded into the run's T
	raw      string // a refused answer, as the model gave it
	why      error  // why it was refused; nil when nothing was
	ask      string // the user message that asks again, if one is needed
}

// decide judges a typed run's turn, once its calls have run. It has no
// effect: the loop, or a runtime driving Steps, acts on the verdict.
func (o *typedOutput) decide(t *Turn) typedVerdict {
	var content *genai.Content // the answer's; a resumed turn has none, and calls
	if t.Response != nil {
		content = t.Response.Candidates[0].Content
	}
	var v typedVerdict
	switch {
	case o.strategy == OutputTool:
		name := o.plan.tool.Name
		for i, call := range t.Calls {
			res := t.Results[i]
			if call.Name != name {
				continue
			}
			if res.Output == accepted && !res.IsError {
				// The tool accepted the arguments: they validate.
				out, err := o.plan.answer(call.Args)
				if err == nil {
					return typedVerdict{answered: true, output: out}
				}
				v.raw, _ = marshalText(call.Args)
				v.why = err
			} else if res.IsError {
				v.raw, _ = marshalText(call.Args)
				v.why = res.Err
				if v.why == nil {
					v.why = errors.New(fmt.Sprint(res.Output))
				}
			}
		}
		switch {
		case v.why != nil:
			// The call's error response tells the model what was wrong.
		case len(t.Calls) > 0:
			return typedVerdict{} // a turn of other calls
		default:
			v.raw = text(content)
			v.why = fmt.Errorf("the answer came as text; it must be given by calling %s", name)
			v.ask = fmt.Sprintf("Give your final answer by calling the %s function, with arguments that match its parameters. "+
				"Do not answer in text.", name)
		}
	case len(t.Calls) > 0:
		return typedVerdict{} // OutputNative: the model still uses tools
	default:
		v.raw = text(content)
		out, err := o.plan.decode(v.raw)
		if err == nil {
			return typedVerdict{answered: true, output: out}
		}
		v.why = err
		v.ask = fmt.Sprintf("Your answer was refused: %v. Answer again with only JSON that matches the response schema.", err)
	}
	return v
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// marshalText returns v's JSON as a string.
func marshalText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
