package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrInvalidArguments is wrapped by [Result.Err] when the model's arguments
// do not match the tool's input schema.
var ErrInvalidArguments = errors.New("invalid arguments")

// ErrOutputNotJSON is wrapped by [Result.Err] when a tool's output cannot be
// encoded as JSON.
var ErrOutputNotJSON = errors.New("output cannot be encoded as JSON")

// ErrDenied is wrapped by [Result.Err] when the call was refused rather
// than run: a person denied it, or it needed approval that never came
// (agent.ErrDenied wraps it). Encoders mark such an answer as a denial
// (geminiadapter.Response adds "denied": true), so that a stored history
// tells a denial from a failure.
var ErrDenied = errors.New("tool call denied")

// A PanicError is the [Result.Err] of a call whose Run panicked. The stack is
// kept for logs; the model only sees the panic value.
type PanicError struct {
	Tool  string // the tool's name
	Value any    // the value passed to panic
	Stack []byte // the goroutine's stack when it panicked
}

// Error says which tool panicked and with what value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("tool %s panicked: %v", e.Tool, e.Value)
}

// Result is the outcome of one tool call.
type Result struct {
	// Output is what Run returned when IsError is false, and a message for
	// the model saying what went wrong when it is true.
	Output any

	// IsError reports a failed call.
	IsError bool

	// Media is binary content the tool handed back besides Output, through
	// a [MediaOutput]: images, audio... It is nil for most tools, and on
	// failure.
	Media []Media

	// Err is the Go error behind a failed call, for logs and hooks: it
	// wraps [ErrInvalidArguments], [ErrOutputNotJSON], [ErrInvalidMedia], a
	// [*PanicError], the context's error, or the error Run returned; a
	// call refused rather than run wraps [ErrDenied]. It is nil on success
	// and is never sent to the model (only whether it wraps [ErrDenied]
	// is: see geminiadapter.Response).
	Err error
}

// errorResult builds the result of a failed call.
func errorResult(err error, format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true, Err: err}
}

// Execute validates args against the tool's schema and runs the tool.
//
// Execute never panics and never returns a Go error: every failure is a
// Result with IsError set and a message the model can act on. Nil args are
// treated as an empty object. args is not modified, at any depth: when the
// schema declares defaults, they are applied to a copy, so that the
// caller's value (a model's function call, which a history keeps) may be
// read concurrently while Execute runs.
//
// When ctx is done before Run returns, Execute returns at once with an error
// result, even if Run ignores its context: Run then keeps its goroutine until
// it returns, and its result is discarded. A Run that honours ctx leaks
// nothing.
func (t *Tool) Execute(ctx context.Context, args map[string]any) Result {
	if t == nil {
		return errorResult(ErrInvalidTool, "tool is nil")
	}
	p := t.prepare()
	if p.err != nil {
		return errorResult(p.err, "tool %s cannot be used: %v", t.Name, p.err)
	}
	if ctx.Err() != nil {
		return cancelled(ctx, t.Name, "was not run")
	}
	if args == nil {
		args = map[string]any{}
	}
	args, fail := t.checkArgs(p, args)
	if fail != nil {
		return *fail
	}
	if ctx.Done() == nil {
		return t.run(ctx, args)
	}
	// Run on its own goroutine so that a Run that ignores ctx cannot hold
	// the caller past ctx's end.
	c := callPool.Get().(*call)
	c.t, c.ctx, c.args = t, ctx, args
	go c.start()
	select {
	case r := <-c.done:
		// The goroutine is done with c: it sent its last word.
		c.t, c.ctx, c.args = nil, nil, nil
		callPool.Put(c)
		return r
	case <-ctx.Done():
		// The goroutine may still be running: c is left to it, and to the
		// garbage collector.
		return cancelled(ctx, t.Name, "was stopped")
	}
}

// checkArgs applies the schema's defaults to a copy of args and validates
// the result. A panic in jsonschema-go (a Go value no JSON decoding
// produces, a schema it cannot handle) fails the check rather than crashing
// the caller.
func (t *Tool) checkArgs(p *prepared, args map[string]any) (_ map[string]any, fail *Result) {
	defer func() {
		if v := recover(); v != nil {
			r := errorResult(fmt.Errorf("%w: checking them panicked: %v", ErrInvalidArguments, v),
				"invalid arguments for %s: they could not be checked: %v", t.Name, v)
			fail = &r
		}
	}()
	if p.recursive != nil {
		// The expansion of a recursive schema grows with the arguments'
		// depth, and so does the work of validating them.
		if err := p.recursive.checkDepth(valueDepth(args)); err != nil {
			r := errorResult(fmt.Errorf("%w: %w", ErrInvalidArguments, err),
				"invalid arguments for %s: they nest too deep to be checked against the tool's recursive schema", t.Name)
			return nil, &r
		}
	}
	if p.hasDefaults {
		// ApplyDefaults writes into every object it walks, nested ones
		// included: it works on a copy of each, so that the model's
		// arguments, which the history keeps and events hand out, never
		// change. A variable of its own: taking args' address would move it
		// to the heap on every call.
		filled := cloneObjects(p.schema, args)
		if err := p.resolved.ApplyDefaults(&filled); err != nil {
			r := errorResult(fmt.Errorf("%w: %v", ErrInvalidArguments, err),
				"invalid arguments for %s: %v", t.Name, err)
			return nil, &r
		}
		args = filled
	}
	// The fast path answers for common schemas and arguments; jsonschema-go
	// has the last word, and writes the message.
	if p.fast == nil || p.fast.validate(args) != pass {
		if err := p.resolved.Validate(args); err != nil {
			msg := validationMessage(err)
			r := errorResult(fmt.Errorf("%w: %s", ErrInvalidArguments, msg),
				"invalid arguments for %s: %s", t.Name, msg)
			return nil, &r
		}
	}
	return args, nil
}

// cloneObjects copies m and, recursively, every object value of m whose
// property schema declares properties: the objects ApplyDefaults walks and
// writes into. Arrays and other values are shared; ApplyDefaults never
// enters them.
func cloneObjects(s *jsonschema.Schema, m map[string]any) map[string]any {
	c := maps.Clone(m)
	for name, ps := range s.Properties {
		if ps == nil || len(ps.Properties) == 0 {
			continue
		}
		if sub, ok := c[name].(map[string]any); ok {
			c[name] = cloneObjects(ps, sub)
		}
	}
	return c
}

// A call hands one Execute's Run to a goroutine and its result back. Calls
// are pooled, with their channel and their bound start function, so that a
// call with a cancellable context allocates neither: only a call whose
// result was received goes back to the pool.
type call struct {
	t     *Tool
	ctx   context.Context
	args  map[string]any
	done  chan Result // buffered: the goroutine never blocks on it
	start func()      // c.run
}

var callPool = sync.Pool{New: func() any {
	c := &call{done: make(chan Result, 1)}
	c.start = c.run
	return c
}}

func (c *call) run() { c.done <- c.t.run(c.ctx, c.args) }

// run calls Run, turning a panic, an error and an output that is not JSON
// into error results.
func (t *Tool) run(ctx context.Context, args map[string]any) (r Result) {
	defer func() {
		if v := recover(); v != nil {
			err := &PanicError{Tool: t.Name, Value: v, Stack: debug.Stack()}
			r = errorResult(err, "tool %s failed: it panicked: %v", t.Name, v)
		}
	}()
	out, err := t.Run(ctx, args)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return cancelled(ctx, t.Name, "was stopped")
		}
		return errorResult(err, "%s", err.Error())
	}
	out, media, fail := splitMedia(t.Name, out)
	if fail != nil {
		return *fail
	}
	if err := checkJSON(out); err != nil {
		return errorResult(fmt.Errorf("tool %s: %w: %v", t.Name, ErrOutputNotJSON, err),
			"tool %s failed: its output cannot be encoded as JSON: %v", t.Name, err)
	}
	return Result{Output: out, Media: media}
}

// cancelled is the result of a call that ctx ended. The message uses ctx's
// cause, so a caller that sets one (a tool timeout, say) is quoted.
func cancelled(ctx context.Context, name, what string) Result {
	cause := context.Cause(ctx)
	return errorResult(cause, "tool %s %s: %v", name, what, cause)
}

// CheckOutput reports whether v can be sent to a model as a tool's output:
// whether it can be encoded as JSON. The error wraps [ErrOutputNotJSON].
// Execute checks every output Run returns with it; use it for outputs made
// elsewhere, such as an answer given in place of running a tool.
func CheckOutput(v any) error {
	if err := checkJSON(v); err != nil {
		return fmt.Errorf("%w: %w", ErrOutputNotJSON, err)
	}
	return nil
}

// checkJSON reports whether v can be encoded as JSON. Values of the kinds
// JSON decoding produces are always encodable (but for non-finite floats);
// anything else is encoded to find out.
func checkJSON(v any) error {
	switch v := v.(type) {
	case nil, string, bool, int, int64, int32, uint, uint64, uint32:
		return nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("unsupported value: %v", v)
		}
		return nil
	case json.RawMessage:
		if !json.Valid(v) {
			return errors.New("json.RawMessage holds invalid JSON")
		}
		return nil
	}
	_, err := json.Marshal(v)
	return err
}

// pathRE finds the JSON pointers jsonschema-go names in a validation error:
// "validating /properties/city: ...".
var pathRE = regexp.MustCompile(`validating (/[^:]*): `)

// ratRE and zerosRE find the numbers jsonschema-go prints as rationals and
// as fixed-point decimals ("0/1 is less than 1.000000").
var (
	ratRE   = regexp.MustCompile(`\b(\d+)/1\b`)
	zerosRE = regexp.MustCompile(`\b(\d+)(?:\.0+|(\.\d*[1-9])0+)\b`)
)

// validationMessage rewrites a jsonschema-go validation error for a model:
// numbers are printed plainly, and the innermost failing location becomes an argument path such as
// `argument "address.city"` or `argument "tags[]"`.
func validationMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "validating root: ")
	msg = zerosRE.ReplaceAllString(ratRE.ReplaceAllString(msg, "$1"), "$1$2")
	locs := pathRE.FindAllStringSubmatchIndex(msg, -1)
	if len(locs) == 0 {
		return msg
	}
	last := locs[len(locs)-1]
	path := argumentPath(msg[last[2]:last[3]])
	rest := strings.TrimPrefix(msg[last[1]:], "type: ")
	if path == "" {
		return rest
	}
	return fmt.Sprintf("argument %q: %s", path, rest)
}

// argumentPath turns a JSON pointer into a schema ("/properties/a/items")
// into a dotted argument path ("a[]").
func argumentPath(pointer string) string {
	var b strings.Builder
	segs := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "patternProperties":
			if i+1 < len(segs) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				i++
				b.WriteString(strings.NewReplacer("~1", "/", "~0", "~").Replace(segs[i]))
			}
		case "items", "additionalItems":
			b.WriteString("[]")
		case "prefixItems":
			if i+1 < len(segs) {
				i++
				b.WriteString("[" + segs[i] + "]")
			}
		case "additionalProperties":
			b.WriteString(".*")
		}
	}
	return b.String()
}
