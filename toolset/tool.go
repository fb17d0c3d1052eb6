package toolset

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxNameLen is the longest tool name Gemini accepts everywhere: the v1beta
// API allows 64 characters (the SDK's doc says 128, the API proto 64).
const MaxNameLen = 64

// ErrInvalidTool is wrapped by every error that reports a tool which cannot
// be used: a bad name, a missing Run function, an input schema that is not an
// object schema or does not resolve.
var ErrInvalidTool = errors.New("invalid tool")

// ErrDuplicateTool is wrapped by the error [New] returns when two tools share
// a name.
var ErrDuplicateTool = errors.New("duplicate tool name")

// A Tool is a function a model can call.
//
// Build one with [Define] or [Func]. A Tool written as a literal is accepted
// too: [New], [Tool.Execute] and the Gemini adapter check and prepare it the
// same way Define does, once. A Tool must not be modified after it has been
// used.
type Tool struct {
	// Name is what the model calls the tool by. It must start with a letter
	// or an underscore, continue with letters, digits, '_', '.', ':' or '-',
	// and be at most [MaxNameLen] characters long.
	Name string

	// Description tells the model what the tool does and when to use it.
	Description string

	// InputSchema describes the arguments: a JSON Schema of type "object".
	// Nil means the tool takes no parameters.
	InputSchema *jsonschema.Schema

	// Run does the work. It receives arguments that have already been
	// validated against InputSchema, never nil, and must not modify them:
	// they are the model's call, which a conversation's history keeps. Its
	// output must be encodable as JSON. Run should return promptly when
	// ctx is done.
	Run func(ctx context.Context, args map[string]any) (any, error)

	// ReadOnly says that the tool does not modify its environment: calling
	// it has no effect but its output. It is MCP's readOnlyHint.
	ReadOnly bool

	// Idempotent says that calling the tool again with the same arguments
	// has no effect beyond the first call's. It is MCP's idempotentHint.
	//
	// Both default to false, the safe side: a runtime that lost track of
	// a call (its process died while the call ran) calls again only a
	// tool that says one of them (see [Tool.SafeToRepeat]).
	Idempotent bool

	// prep caches the *prepared state: the checked definition and the
	// resolved schema. An atomic.Value (rather than a sync.Once) keeps Tool
	// copyable, which Define's by-value argument needs.
	prep atomic.Value
}

// prepared is what a Tool needs at run time, computed once from its
// definition.
type prepared struct {
	src         *jsonschema.Schema // InputSchema as it was when prepared
	schema      *jsonschema.Schema // the effective schema: src, or the empty object schema
	resolved    *jsonschema.Resolved
	fast        *fastSchema  // the schema compiled for the fast path, or nil: see validate.go
	recursive   *schemaGraph // the graph of a recursive schema, whose arguments' depth is checked: see schemasize.go
	hasDefaults bool         // some property declares a default: arguments are copied and filled in
	err         error        // why the tool cannot be used, if it cannot
}

// Define checks t and returns it ready to use: the name follows Gemini's
// rule, Run is set, and InputSchema is an object schema that resolves. The
// schema is resolved once here and kept for validating every call. The
// error, which wraps [ErrInvalidTool], names the tool and what is wrong.
func Define(t Tool) (*Tool, error) {
	tool := &Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Run: t.Run,
		ReadOnly: t.ReadOnly, Idempotent: t.Idempotent}
	if p := tool.prepare(); p.err != nil {
		return nil, p.err
	}
	return tool, nil
}

// MustDefine is like [Define] but panics if the tool is invalid. Use it for
// tools defined at package level, where an invalid definition is a bug.
func MustDefine(t Tool) *Tool {
	tool, err := Define(t)
	if err != nil {
		panic(err)
	}
	return tool
}

// Check reports whether t can be used, with the same error [Define] would
// return. It prepares a Tool written as a literal.
func (t *Tool) Check() error {
	if t == nil {
		return fmt.Errorf("toolset: %w: nil *Tool", ErrInvalidTool)
	}
	return t.prepare().err
}

// SafeToRepeat reports whether a call of t may be made again when it is
// not known whether it ran: t is ReadOnly or Idempotent. It is false for a
// nil *Tool.
func (t *Tool) SafeToRepeat() bool {
	return t != nil && (t.ReadOnly || t.Idempotent)
}

// Schema returns the tool's effective input schema: InputSchema, or an empty
// object schema when InputSchema is nil. It must not be modified.
func (t *Tool) Schema() *jsonschema.Schema {
	return t.prepare().schema
}

// prepare returns the tool's prepared state, computing it on first use. It
// is safe for concurrent use: racing callers compute the same value and one
// of them is kept.
func (t *Tool) prepare() *prepared {
	if p, ok := t.prep.Load().(*prepared); ok && p.src == t.InputSchema {
		return p
	}
	p := newPrepared(t)
	t.prep.Store(p)
	return p
}

func newPrepared(t *Tool) *prepared {
	p := &prepared{src: t.InputSchema, schema: t.InputSchema}
	fail := func(format string, args ...any) *prepared {
		p.err = fmt.Errorf("toolset: %w %q: %s", ErrInvalidTool, t.Name, fmt.Sprintf(format, args...))
		return p
	}
	if msg := checkName(t.Name); msg != "" {
		return fail("%s", msg)
	}
	if t.Run == nil {
		return fail("Run is nil")
	}
	if p.schema == nil {
		p.schema = &jsonschema.Schema{Type: "object"}
	}
	if typ := schemaType(p.schema); typ != "object" {
		if typ == "" {
			return fail(`input schema must have "type": "object"`)
		}
		return fail(`input schema must have "type": "object", not %q`, typ)
	}
	// Measure the schema before jsonschema-go works on it: resolving is
	// linear, but validating (the defaults now, the arguments later)
	// follows every reference as many times as it is reached.
	g, err := newSchemaGraph(p.schema)
	if err != nil {
		if _, rerr := p.schema.Resolve(nil); rerr != nil {
			err = rerr // jsonschema-go's word on what it does not resolve
		}
		return fail("input schema does not resolve: %v", err)
	}
	size, err := g.measure()
	if err == nil {
		err = g.checkDefaults()
	}
	if err != nil {
		if errors.Is(err, ErrSchemaTooLarge) {
			p.err = fmt.Errorf("toolset: %w %q: input %w", ErrInvalidTool, t.Name, err)
			return p
		}
		return fail("input schema: %v", err)
	}
	if size.Recursive {
		p.recursive = g
	}
	resolved, err := p.schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return fail("input schema does not resolve: %v", err)
	}
	p.resolved = resolved
	p.fast = compileSchema(p.schema)
	p.hasDefaults = hasPropertyDefaults(p.schema)
	return p
}

// schemaType returns the schema's single type: Type, or Types when it holds
// exactly one.
func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	if len(s.Types) == 1 {
		return s.Types[0]
	}
	if len(s.Types) > 1 {
		return fmt.Sprint(s.Types)
	}
	return ""
}

// hasPropertyDefaults reports whether a default is declared on any property
// of s, at any depth, which is where ApplyDefaults looks.
func hasPropertyDefaults(s *jsonschema.Schema) bool {
	for _, ps := range s.Properties {
		if ps == nil {
			continue
		}
		if ps.Default != nil || hasPropertyDefaults(ps) {
			return true
		}
	}
	return false
}

// checkName returns what is wrong with name under Gemini's rule, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "name is empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("name is %d characters long; at most %d are allowed", len(name), MaxNameLen)
	}
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_'
		if i == 0 && !letter {
			return fmt.Sprintf("name must start with a letter or an underscore, not %q", r)
		}
		if !letter && !(r >= '0' && r <= '9') && r != '.' && r != ':' && r != '-' {
			return fmt.Sprintf("name contains %q; only letters, digits and _ . : - are allowed", r)
		}
	}
	return ""
}
