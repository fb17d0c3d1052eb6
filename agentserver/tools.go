package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/schemajson"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// MaxSchemaDepth bounds how deeply the schema of a browser tool nests
// (JSON objects and arrays, counted alike: an object's property is two
// levels, an array's items one): one that nests deeper is refused (400,
// schema_too_deep) before it is decoded.
const MaxSchemaDepth = schemajson.MaxDepth

// DecodeToolSchema decodes the schema (parameters) of the browser tool
// name, as a request sends it: nil for none (no bytes, or null). Its time
// and memory are linear in the schema's size, unlike jsonschema-go's own
// decoding (Schema.UnmarshalJSON), which decodes each level's subtree
// again at every level; a schema that nests deeper than MaxSchemaDepth is
// refused without being decoded (400, code schema_too_deep), one that is
// no JSON Schema is a 400 bad_tool. Every protocol of this module decodes
// its requests' browser tools with it, and so does [ToolDecl]'s
// UnmarshalJSON (a journal's declarations, a Runner's payloads).
func DecodeToolSchema(name string, data []byte) (*jsonschema.Schema, error) {
	s, err := schemajson.Decode(data)
	switch {
	case errors.Is(err, schemajson.ErrTooDeep):
		return nil, BadRequest(0, "schema_too_deep", "browser tool %q: its schema nests more than %d levels deep (objects and arrays)",
			truncate(name, 100), MaxSchemaDepth)
	case err != nil:
		return nil, BadRequest(0, "bad_tool", "browser tool %q: its schema is not a JSON Schema: %v", truncate(name, 100), err)
	}
	return s, nil
}

// UnmarshalJSON decodes a declaration, its schema with
// [DecodeToolSchema]: in time linear in its size, and refused when it
// nests deeper than MaxSchemaDepth.
func (d *ToolDecl) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p, err := DecodeToolSchema(raw.Name, raw.Parameters)
	if err != nil {
		return err
	}
	*d = ToolDecl{Name: raw.Name, Description: raw.Description, Parameters: p}
	return nil
}

// errBrowserTool is what a browser tool's Run returns. The loop never
// runs one: each of their calls waits for the browser's result, which
// answers it (see run.needsApproval).
var errBrowserTool = errors.New("this tool runs in the browser, not on the server")

// BrowserTools returns the tools that stand for browser tools in a run:
// their declarations, validated as the agent's own tools are by
// toolset.Define, each with a Run that fails (the loop never runs one: a
// runtime answers their calls with the browser's results). A bad
// declaration is a 400 *Error (bad_tool), and a schema over toolset's
// budget is refused with its own code, schema_too_large, matching
// toolset.ErrSchemaTooLarge. A [Runner] that runs the loop elsewhere
// (temporalagent's) rebuilds a run's browser tools with it.
func BrowserTools(decls []ToolDecl) ([]*toolset.Tool, error) { return browserTools(decls) }

func browserTools(decls []ToolDecl) ([]*toolset.Tool, error) {
	if len(decls) == 0 {
		return nil, nil
	}
	tools := make([]*toolset.Tool, len(decls))
	for i, d := range decls {
		if err := checkTypes(d.Parameters); err != nil {
			return nil, BadRequest(0, "bad_tool", "browser tool %d (%s): %v", i, d.Name, err)
		}
		t, err := toolset.Define(toolset.Tool{
			Name: d.Name, Description: d.Description, InputSchema: d.Parameters,
			Run: func(context.Context, map[string]any) (any, error) { return nil, errBrowserTool },
		})
		if errors.Is(err, toolset.ErrSchemaTooLarge) {
			return nil, newError(http.StatusBadRequest, "schema_too_large", fmt.Errorf("%w: %w", ErrBadRequest, err),
				"browser tool %d: %v", i, err)
		}
		if err != nil {
			return nil, BadRequest(0, "bad_tool", "browser tool %d: %v", i, err)
		}
		tools[i] = t
	}
	return tools, nil
}

// checkTools validates browser tools against the agent: as tools
// (toolset.Define), as declarations Gemini takes (the agent's
// geminiadapter conversion, which agent.With makes), and against the
// agent's own tools' names.
func checkTools(ctx context.Context, a *agent.Agent, decls []ToolDecl, max int) error {
	if len(decls) > max {
		return BadRequest(0, "too_many_tools", "%d browser tools; at most %d are taken", len(decls), max)
	}
	if len(decls) > 0 && ctx.Err() != nil {
		return clientGone() // nobody reads the answer
	}
	tools, err := browserTools(decls)
	if err != nil || len(tools) == 0 {
		return err
	}
	if err := a.With(agent.Overrides{Tools: tools}).Steps().Err(); err != nil {
		return BadRequest(0, "bad_tool", "browser tools: %v", unwrapWith(err))
	}
	return nil
}

// unwrapWith drops agent.With's prefix from its error.
func unwrapWith(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return fmt.Errorf("%w", err)
}

// jsonTypes are the type names of JSON Schema.
var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}

var (
	schemaType      = reflect.TypeFor[*jsonschema.Schema]()
	schemaSliceType = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMapType   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// checkTypes refuses a schema that names a type JSON Schema does not
// have, at any depth. toolset.Define takes such a schema (jsonschema-go
// does not check type names), and the adapter would send it to Gemini as
// it is, which a browser's declaration must not get to do.
func checkTypes(s *jsonschema.Schema) error {
	if s == nil {
		return nil
	}
	types := s.Types
	if s.Type != "" {
		types = append(types, s.Type)
	}
	for _, t := range types {
		if !jsonTypes[t] {
			return fmt.Errorf("unknown type %q", t)
		}
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Type() {
		case schemaType:
			if err := checkTypes(f.Interface().(*jsonschema.Schema)); err != nil {
				return err
			}
		case schemaSliceType:
			for _, c := range f.Interface().([]*jsonschema.Schema) {
				if err := checkTypes(c); err != nil {
					return err
				}
			}
		case schemaMapType:
			for _, c := range f.Interface().(map[string]*jsonschema.Schema) {
				if err := checkTypes(c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
