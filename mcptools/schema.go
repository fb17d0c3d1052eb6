package mcptools

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/internal/schemajson"
)

// inputSchema converts a tool's input schema, as the client receives it (a
// map[string]any, or any value that marshals to a JSON Schema), into the
// schema a toolset tool validates its arguments with. No schema means no
// parameters; a schema without a type is taken as an object schema, as MCP
// requires one. Whether the result can be used (an object schema that
// resolves) is [toolset.Define]'s to say.
func inputSchema(raw any) (*jsonschema.Schema, error) {
	if raw == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("input schema cannot be encoded: %v", err)
	}
	// Decoded in time linear in its size, its nesting bounded: a server's
	// schema is not trusted to be small (jsonschema-go's own decoding costs
	// the square of its depth).
	s, err := schemajson.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("input schema is not a JSON Schema: %v", err)
	}
	if s == nil {
		s = &jsonschema.Schema{}
	}
	if s.Type == "" && len(s.Types) == 0 {
		s.Type = "object"
	}
	return s, nil
}
